//! Robustness of the `schedra` binary on adversarial inputs: every
//! subcommand, given malformed, huge, out-of-range or misplaced input, ends
//! with the status cli.md documents (0/1/2/3) and a message — never a panic
//! (status 101), a signal (stack overflow aborts) or a hang (each run is
//! killed after [`LIMIT`] and the test fails).
//!
//! The inputs are generated here: broken headers and blocks, registers at
//! the top of (and past) each register file, size suffixes, machine ops in
//! wrong/unknown/duplicated slots, long chains, wide lines and bundles,
//! random bytes, directories and missing paths, and extreme flag values.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a single run may take before it counts as a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// What one run of the binary did.
struct Run {
    code: i32,
    stderr: String,
}

/// A scratch directory of this test process.
fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedra-robust-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Write `bytes` to a file named `name` in the scratch directory.
fn file(name: &str, bytes: impl AsRef<[u8]>) -> String {
    let p = scratch().join(name);
    std::fs::write(&p, bytes).expect("write case");
    p.to_str().expect("utf-8 path").to_string()
}

/// Run `schedra ARGS` (standard input from `stdin` or empty); fails the test
/// on a signal, a panic or a run longer than [`LIMIT`].
fn schedra_in(args: &[&str], stdin: Option<&str>) -> Run {
    let dir = scratch();
    let (out, err) = (dir.join(format!("{}.out", unique())), dir.join(format!("{}.err", unique())));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedra"));
    cmd.args(args)
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"));
    match stdin {
        Some(path) => cmd.stdin(std::fs::File::open(path).expect("stdin file")),
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd.spawn().expect("the schedra binary runs");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("schedra {args:?} hangs (killed after {LIMIT:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = String::from_utf8_lossy(&std::fs::read(&err).unwrap_or_default()).into_owned();
    let _ = (std::fs::remove_file(&out), std::fs::remove_file(&err));
    let Some(code) = status.code() else { panic!("schedra {args:?} was killed by a signal ({status:?}):\n{stderr}") };
    assert_ne!(code, 101, "schedra {args:?} panicked:\n{stderr}");
    Run { code, stderr }
}

fn schedra(args: &[&str]) -> Run {
    schedra_in(args, None)
}

/// A number unique within this process, for scratch file names.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Assert the status is one of `want`.
fn expect(args: &[&str], want: &[i32]) -> Run {
    let r = schedra(args);
    assert!(want.contains(&r.code), "schedra {args:?}: status {} (want {want:?}):\n{}", r.code, r.stderr);
    r
}

/// Assert status 2 with a one-line `path:line:col: message` first line.
fn bad_input(args: &[&str], path: &str) {
    let r = expect(args, &[2]);
    let first = r.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest = first.strip_prefix(path).and_then(|s| s.strip_prefix(':'));
    let located = rest.is_some_and(|s| {
        let mut parts = s.splitn(3, ':');
        let num = |p: Option<&str>| p.is_some_and(|x| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit()));
        num(parts.next()) && num(parts.next()) && parts.next().is_some_and(|m| !m.trim().is_empty())
    });
    assert!(located, "schedra {args:?}: expected `{path}:line:col: message`, got:\n{}", r.stderr);
}

#[path = "support/rng.rs"]
mod rng;
use rng::bytes;

const V: &str = "target v3d71\n";
const VM: &str = "target v3d71\nform machine\ninput $rf1\n";
const THREAD_END: &str = " { add: tlbw $rf4 ; sig: thrsw }\n { }\n { }\n end\n";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/spec")
}

fn example(case: &str, f: &str) -> String {
    examples().join(case).join(f).to_str().expect("utf-8 path").to_string()
}

/// Inputs that do not parse or are not valid source programs.
fn malformed() -> Vec<String> {
    let mut v = vec![
        file("empty.ir", ""),
        file("header.ir", "shader x\ntarget v3d71\nstage fragment\n"),
        file("label_only.ir", format!("{V}b0:\n")),
        file("no_term.ir", format!("{V}b0:\n %a = ldunif 0\n tlbw %a\n")),
        file("non_utf8.ir", b"target v3d71\nb0:\n \xff\xfe %a = ldunif 0\n end\n".as_slice()),
        file("non_utf8_comment.ir", b"target v3d71\n# \xff\nb0:\n end\n".as_slice()),
        file("nul.ir", b"target v3d71\nb0:\x00\n end\n".as_slice()),
        file("size0.ir", format!("{V}b0:\n %a:0 = ldunif 0\n tlbw %a\n end\n")),
        file("size256.ir", format!("{V}b0:\n %a:256 = ldunif 0\n tlbw %a\n end\n")),
        file("size255.ir", format!("{V}b0:\n %a:255 = ldunif 0\n tlbw %a\n end\n")),
        file("size4.ir", format!("{V}b0:\n %a:4 = ldunif 0\n tlbw %a\n end\n")),
        file("rf64.ir", format!("{V}b0:\n $rf64 = mov 1\n tlbw $rf64\n end\n")),
        file("g126_4.ir", "target gen8\ninput %x:4 = $g126:4\nb0:\n send.eot %x\n end\n"),
        file("r128.ir", "target r600\ninput %x = $R128.x\nb0:\n export 0, %x\n end\n"),
        file("ops100k.ir", format!("{V}b0:\n %a = ldunif 0\n %b = add {}\n tlbw %b\n end\n", vec!["%a"; 100_000].join(", "))),
        file("brnz_label.ir", format!("{V}b0:\n brnz b1, b1, b1\nb1:\n end\n")),
        file("huge_imm.ir", format!("{V}b0:\n %a = mov 99999999999999999999\n tlbw %a\n end\n")),
        file("unreachable.ir", format!("{V}b0:\n end\nb1:\n jmp b1\n")),
        file("unknown_target.ir", "target nope\nb0:\n end\n"),
    ];
    for seed in 1..=4 {
        v.push(file(&format!("random{seed}.bin"), bytes(seed, 4096)));
    }
    v.extend(fixtures());
    v
}

/// The bad-input fixtures of `tests/malformed/` (one per validation rule;
/// `tests/fmt.rs` checks their messages).
fn fixtures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/malformed")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ir" || x == "s"))
        .filter_map(|p| p.to_str().map(str::to_string))
        .collect();
    v.sort();
    assert!(v.len() >= 40, "expected the malformed fixtures, found {}", v.len());
    v
}

#[test]
fn malformed_input_is_located_bad_input_everywhere() {
    for path in malformed() {
        let p = path.as_str();
        bad_input(&["fmt", p], p);
        bad_input(&["run", p], p);
        bad_input(&["compile", p], p);
        bad_input(&["verify", p], p);
        bad_input(&["reduce", p], p);
        // As the machine file: bad input when it does not parse, a
        // violation when it parses (a source where a machine is expected).
        let mul = example("v3d71-mul", "src.ir");
        if expect(&["verify", &mul, p], &[1, 2]).code == 2 {
            bad_input(&["verify", &mul, p], p);
        }
    }
}

#[test]
fn missing_paths_directories_and_misplaced_forms() {
    let dir = scratch().join("a-directory");
    std::fs::create_dir_all(&dir).expect("dir");
    let dir = dir.to_str().expect("utf-8");
    let missing = scratch().join("does-not-exist.ir");
    let missing = missing.to_str().expect("utf-8");
    for p in [dir, missing] {
        for sub in ["fmt", "run", "compile", "verify", "reduce"] {
            bad_input(&[sub, p], p);
        }
    }
    // A machine file where a source is expected is bad input; a source file
    // where a machine program is expected is a structure violation.
    let mach = example("v3d71-mul", "out.s");
    for sub in ["compile", "verify", "reduce"] {
        bad_input(&[sub, &mach], &mach);
    }
    let src = example("v3d71-mul", "src.ir");
    expect(&["verify", &src, &src], &[1]);
    expect(&["verify", "-", "-"], &[2]);
    // Standard input works as a path.
    assert_eq!(schedra_in(&["fmt", "-"], Some(&src)).code, 0);
}

#[test]
fn registers_at_the_top_of_each_file_and_odd_control_flow() {
    let ok = [
        file("rf63.ir", format!("{V}b0:\n $rf63 = mov 1\n tlbw $rf63\n end\n")),
        file("g127.ir", "target gen8\ninput %x:2 = $g2:2\nb0:\n $g127 = mov $g2\n %t:4 = send.tex %x\n send.eot %t\n end\n"),
        file("r127w.ir", "target r600\nb0:\n $R127.w = mov 1.0\n export 0, $R127.w\n end\n"),
        file("brnz_imm.ir", format!("{V}b0:\n brnz 1, b1, b2\nb1:\n jmp b3\nb2:\n jmp b3\nb3:\n end\n")),
        file("empty_block.ir", format!("{V}b0:\n end\n")),
    ];
    for p in &ok {
        expect(&["fmt", p], &[0]);
        expect(&["run", p], &[0]);
        expect(&["compile", p], &[0]);
        expect(&["verify", p], &[0]);
    }
    // Loops that never end: run stops on fuel (status 1), the compiler and
    // the verifier handle them like any loop.
    let self_loop = file("self_loop.ir", format!("{V}b0:\n jmp b0\n"));
    let inf = file("inf.ir", format!("{V}b0:\n %a = ldunif 0\n jmp b1\nb1:\n %a = add %a, 1\n jmp b1\n"));
    for p in [&self_loop, &inf] {
        expect(&["run", p], &[1]);
        expect(&["run", p, "--fuel", "0"], &[1]);
        expect(&["compile", p], &[0]);
        expect(&["verify", p], &[0]);
    }
    let m_loop = file("m_loop.s", format!("{VM}b0:\n {{ sig: ldunif 0 }}\n jmp b0\n"));
    expect(&["run", &m_loop], &[1]);
}

/// Machine programs that parse but are wrong: a violation for `verify`, a
/// runtime error or a run for `run`, never a crash.
#[test]
fn broken_machine_programs_are_violations() {
    let v3d = [
        "{ mul: fadd $rf4, $rf1, $rf1 }",
        "{ foo: fadd $rf4, $rf1, $rf1 }",
        "{ add: fadd $rf4, $rf1, $rf1 ; add: fadd $rf5, $rf1, $rf1 }",
        "{ add: frobnicate $rf4, $rf1 }",
        "{ add: fadd }",
        "{ add: fadd $rf4, $rf1, $rf1, $rf1, $rf2 }",
        "{ add: fadd 3, $rf1, $rf1 }",
        "{ add: fadd $rf4, b0, $rf1 }",
        "{ sig: ldunif $rf3 }",
        "{ sig: ldunifrf 3 }",
        "{ add: tlbw 99999 }",
        "{ add: add $rf99, $rf1, $rf1 }",
        "{ add: add $rf4:255, $rf1:255, 1 }",
    ];
    let src = example("v3d71-mul", "src.ir");
    for (i, b) in v3d.iter().enumerate() {
        let p = file(&format!("m{i}.s"), format!("{VM}b0:\n {b}\n{THREAD_END}"));
        expect(&["fmt", &p], &[0]);
        expect(&["run", &p], &[0, 1]);
        expect(&["verify", &src, &p], &[1]);
        expect(&["verify", &src, &p, "--json"], &[1]);
    }
    let r600 = [
        "{ x: muladd $R2.x, $R1.x, $R1.y, $R1.z, $R1.w }",
        "{ x: recip $R2.x, $R1.x }",
        "{ x: mov $R2.y, $R1.x }",
        "{ cf: export $R1.x, $R1.x }",
        "{ x: muladd $R2.x, 1.0, 2.0, 3.0 ; y: muladd $R2.y, 4.0, 5.0, 6.0 }",
    ];
    let src = example("r600-swap", "src.ir");
    for (i, b) in r600.iter().enumerate() {
        let p = file(&format!("r{i}.s"), format!("target r600\nform machine\ninput $R1.x\ninput $R1.y\nb0:\n {b}\n {{ cf: export 0, $R1.x }}\n end\n"));
        expect(&["run", &p], &[0, 1]);
        expect(&["verify", &src, &p], &[1]);
    }
    // Different blocks than the source; unreachable blocks.
    let p = file("blocks.s", format!("{VM}b0:\n jmp b9\nb9:\n{THREAD_END}"));
    expect(&["verify", &example("v3d71-mul", "src.ir"), &p], &[1]);
}

/// Sizes that would make quadratic or recursive code blow up.
#[test]
fn huge_programs_end() {
    let blocks: String = (0..20_000).map(|i| format!("b{i}:\n jmp b{}\n", i + 1)).collect();
    let p = file("blocks20k.ir", format!("{V}{blocks}b20000:\n %a = ldunif 0\n tlbw %a\n end\n"));
    expect(&["fmt", &p], &[0]);
    expect(&["run", &p], &[0]);
    let chain: String = (1..50_000).map(|i| format!(" %a{i} = add %a{}, 1\n", i - 1)).collect();
    let p = file("chain50k.ir", format!("{V}b0:\n %a0 = ldunif 0\n{chain} tlbw %a49999\n end\n"));
    expect(&["fmt", &p], &[0]);
    expect(&["run", &p], &[0]);
    let chain: String = (1..5_000).map(|i| format!(" %a{i} = fmul %a{}, %a{}\n", i - 1, i - 1)).collect();
    let p = file("chain5k.ir", format!("{V}b0:\n %a0 = ldvary 0\n{chain} tlbw %a4999\n end\n"));
    expect(&["verify", &p], &[0]);
    let bundles = " { add: add $rf4, $rf4, 1 }\n".repeat(50_000);
    let p = file("chain50k.s", format!("{VM}b0:\n {{ sig: ldunif 0 }}\n {{ add: mov $rf4, $rf0 }}\n{bundles}{THREAD_END}"));
    expect(&["fmt", &p], &[0]);
    expect(&["run", &p], &[0]);
    expect(&["verify", &example("v3d71-mul", "src.ir"), &p], &[1]);
    let wide = vec!["add: mov $rf4, 1"; 100_000].join(" ; ");
    let p = file("wide.s", format!("{VM}b0:\n {{ {wide} }}\n{THREAD_END}"));
    expect(&["verify", &example("v3d71-mul", "src.ir"), &p], &[1]);
    let wide = vec!["x: mov $R2.x, $R1.x"; 100_000].join(" ; ");
    let p = file("wide_r600.s", format!("target r600\nform machine\ninput $R1.x\ninput $R1.y\nb0:\n {{ {wide} }}\n {{ cf: export 0, $R1.x }}\n end\n"));
    expect(&["verify", &example("r600-swap", "src.ir"), &p], &[1]);
}

#[test]
fn extreme_flags() {
    let src = example("v3d71-mul", "src.ir");
    let s = src.as_str();
    for sub in ["fmt", "run", "compile", "verify", "reduce"] {
        expect(&[sub, s, "--target", "nope"], &[2]);
    }
    expect(&["run", s, "--seed", "18446744073709551615"], &[0]);
    expect(&["run", s, "--seed", "18446744073709551616"], &[2]);
    expect(&["run", s, "--fuel", "0"], &[1]);
    expect(&["verify", s, "--timeout-ms", "0"], &[0, 3]);
    expect(&["compile", s, "--inject", "nope"], &[2]);
    expect(&["targets", "nope"], &[2]);
    expect(&["targets"], &[0]);
    // reduce of a program that does not fail.
    expect(&["reduce", s], &[2]);
    expect(&["reduce", s, "--test", "false"], &[2]);
    let out = scratch().join("fuzz-out");
    let out = out.to_str().expect("utf-8");
    expect(&["fuzz", "--time", "0s", "--out", out], &[0]);
    expect(&["fuzz", "--time", "0s", "--jobs", "1", "--out", out, "--json"], &[0]);
    for jobs in ["0", "100000", "18446744073709551615", "18446744073709551616", "-1"] {
        expect(&["fuzz", "--time", "0s", "--jobs", jobs, "--out", out], &[2]);
    }
    expect(&["fuzz", "--time", "99999999999999999999999h", "--out", out], &[2]);
    expect(&["fuzz", "--time", "soon", "--out", out], &[2]);
    expect(&["fuzz", "--target", "nope", "--time", "0s", "--out", out], &[2]);
    expect(&["fuzz", "--time", "0s", "--out", &src], &[2]);
    for seed in 1..=4 {
        let p = file(&format!("artifact{seed}"), bytes(seed, 512));
        expect(&["fuzz", "--decode", &p], &[0, 2]);
    }
    expect(&["fuzz", "--decode", &scratch().to_string_lossy()], &[2]);
}

/// `fuzz --time` is honoured within about a second, even when the time
/// runs out while a finding is being reduced (the injected fault makes
/// findings from the first cases; their reductions outlast the campaign).
#[test]
fn fuzz_ends_on_time() {
    let out = scratch().join("fuzz-on-time");
    let out = out.to_str().expect("utf-8");
    let start = Instant::now();
    expect(&["fuzz", "--time", "2s", "--jobs", "2", "--inject", "v3d-sfu-latency", "--out", out, "--json"], &[0]);
    let took = start.elapsed();
    assert!(took >= Duration::from_secs(2), "the campaign ended early: {took:?}");
    assert!(took < Duration::from_millis(3500), "`--time 2s` took {took:?}");
}

/// Output that cannot be written (`> /dev/full`) is a one-line error and
/// status 2, not a panic in `print!`.
#[test]
fn unwritable_standard_output() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    let src = example("v3d71-mul", "src.ir");
    for args in [vec!["fmt", &src], vec!["run", &src], vec!["compile", &src], vec!["verify", &src, "--json"], vec!["targets"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_schedra"))
            .args(&args)
            .stdout(full.try_clone().expect("dup /dev/full"))
            .stdin(Stdio::null())
            .output()
            .expect("the schedra binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "schedra {args:?} > /dev/full:\n{stderr}");
        assert!(stderr.contains("cannot write standard output"), "schedra {args:?}:\n{stderr}");
    }
}
