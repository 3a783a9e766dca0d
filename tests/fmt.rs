//! End-to-end tests of `schedra fmt` and `schedra targets` through the built
//! binary.
//!
//! - Every file in `tests/malformed/` is bad input: `schedra fmt FILE` exits
//!   with status 2 and writes exactly one line to standard error,
//!   `[error: ]path:line:col: message` with line, col >= 1; the file's first
//!   line `# expect: LINE:COL: TEXT` says what that line must contain.
//! - Every corpus program, the spec examples (`corpus/spec`) included,
//!   formats with status 0, and
//!   formatting the output again (through standard input) gives the same text.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn schedra(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedra"));
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("the schedra binary runs");
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes).expect("write stdin");
    }
    child.wait_with_output().expect("schedra finishes")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if exts.iter().any(|x| p.extension().is_some_and(|e| e == *x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Check that `line` is `[error: ]path:L:C: message` and return `L:C: message`.
fn located<'a>(line: &'a str, path: &str) -> Result<&'a str, String> {
    let rest = line.strip_prefix("error: ").unwrap_or(line);
    let rest = rest.strip_prefix(path).and_then(|r| r.strip_prefix(':')).ok_or(format!("does not start with the path: {line}"))?;
    let mut parts = rest.splitn(3, ':');
    let (l, c, msg) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let num = |s: &str| s.parse::<u32>().ok().filter(|&n| n >= 1);
    if num(l).is_none() || num(c).is_none() || !msg.starts_with(' ') || msg.trim().is_empty() {
        return Err(format!("not `path:line:col: message`: {line}"));
    }
    Ok(rest)
}

#[test]
fn malformed_inputs_are_one_located_line_and_status_2() {
    let dir = root().join("tests/malformed");
    let all = files(&dir, &["ir", "s"]);
    assert!(all.len() >= 20, "expected the malformed fixtures, found {}", all.len());
    let mut errs = Vec::new();
    for f in &all {
        let path = f.to_string_lossy().to_string();
        let out = schedra(&["fmt", &path], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let expect = std::fs::read(f).ok().and_then(|b| {
            let first = String::from_utf8_lossy(b.split(|&c| c == b'\n').next().unwrap_or(&[])).to_string();
            first.strip_prefix("# expect: ").map(str::to_string)
        });
        let verdict = match (out.status.code(), lines.as_slice()) {
            (Some(2), [line]) => located(line, &path).and_then(|rest| match &expect {
                Some(e) if !rest.starts_with(e.as_str()) => Err(format!("expected `{e}`, got `{rest}`")),
                _ => Ok(()),
            }),
            (code, _) => Err(format!("status {code:?}, stderr {stderr:?}")),
        };
        if let Err(e) = verdict {
            errs.push(format!("{path}: {e}"));
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn fmt_is_idempotent_on_examples_and_corpus() {
    let all: Vec<PathBuf> = files(&root().join("corpus"), &["ir", "s"]).into_iter().filter(|p| !p.to_string_lossy().contains("malformed")).collect();
    let spec = root().join("corpus/spec");
    assert!(all.iter().filter(|p| p.starts_with(&spec)).count() >= 14, "expected the spec examples under {}", spec.display());
    let mut errs = Vec::new();
    for f in &all {
        let path = f.to_string_lossy().to_string();
        let once = schedra(&["fmt", &path], None);
        if once.status.code() != Some(0) {
            errs.push(format!("{path}: status {:?}: {}", once.status.code(), String::from_utf8_lossy(&once.stderr)));
            continue;
        }
        let twice = schedra(&["fmt", "-"], Some(&once.stdout));
        if twice.status.code() != Some(0) || twice.stdout != once.stdout {
            errs.push(format!("{path}: fmt of fmt differs:\n{}\n---\n{}", String::from_utf8_lossy(&once.stdout), String::from_utf8_lossy(&twice.stdout)));
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn fmt_reads_standard_input_and_reports_it_as_dash() {
    let out = schedra(&["fmt", "-"], Some(b"target v3d71\nb0:\n  tlbw 1\n  end\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "target v3d71\nstage fragment\n\nb0:\n    tlbw 1\n    end\n");
    let out = schedra(&["fmt", "-"], Some(b"b0:\n  end\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(located(String::from_utf8_lossy(&out.stderr).trim_end(), "-").is_ok());
    let out = schedra(&["fmt", "--target", "r600", "-"], Some(b"b0:\n  end\n"));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("target r600"));
}

#[test]
fn missing_file_is_bad_input() {
    let out = schedra(&["fmt", "/nonexistent/x.ir"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

#[test]
fn targets_lists_every_target_and_its_opcodes() {
    let out = schedra(&["targets"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for t in schedra_ir::target::all() {
        assert!(text.contains(t.name) && text.contains(t.summary), "missing {}", t.name);
        for op in t.ops {
            assert!(text.contains(op.name), "{} lacks opcode {}", t.name, op.name);
        }
    }
    let one = schedra(&["targets", "gen8"], None);
    assert_eq!(one.status.code(), Some(0));
    let one = String::from_utf8_lossy(&one.stdout);
    assert!(one.contains("send.tex") && !one.contains("ldvary"));
    assert!(one.contains("clock:          interlocked"), "{one}");
    let v3d = String::from_utf8_lossy(&schedra(&["targets", "v3d71"], None).stdout).to_string();
    assert!(v3d.contains("clock:          not interlocked, padded") && v3d.contains("`thrsw` followed by 2 delay-slot bundles"), "{v3d}");
    let bad = schedra(&["targets", "gen9"], None);
    assert_eq!(bad.status.code(), Some(2));
}
