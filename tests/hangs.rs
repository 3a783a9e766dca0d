//! Faults that make the compiler loop forever (`Fault::hangs`) and the
//! campaign's deadlines for them (docs/fuzzing.md, "Deadlines and `timeout`
//! findings").
//!
//! - `tests/hangs/<fault>.ir` (one per hang fault, a campaign's `min.ir`):
//!   `schedra compile` with the fault (under the options of its
//!   `# reproduce:` line) is still running after three seconds (it is
//!   killed), and without the fault the program compiles and is proven in
//!   all four `--sched`/`--ra` modes;
//! - a short one-job campaign with `sched-stuck-ready` (seed 4, whose case
//!   12 hangs) reports a `timeout` finding, saved with its case, filed under
//!   the fault as its root cause, and its worker replaced (the campaign goes
//!   on running cases).

use schedra_compiler::{compile, Fault, Options, Ra, Sched};
use schedra_ir::parse::parse;
use schedra_verify::{verify, Verdict, VerifyOptions};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn case_path(f: Fault) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/hangs/{}.ir", f.name()))
}

/// Whether `schedra ARGS` is still running after `limit` (then it is killed).
fn still_running_after(args: &[&str], limit: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("schedra runs");
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    true
}

#[test]
fn every_hang_fault_has_a_case_that_hangs_only_with_it() {
    for &f in Fault::hangs() {
        let path = case_path(f);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let p = parse(text.as_bytes(), None).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        let file = path.to_string_lossy().into_owned();
        // The options it hangs under: its `# reproduce:` line's.
        let flags = text.lines().find_map(|l| l.strip_prefix("# reproduce: schedra compile min.ir ")).unwrap_or_else(|| panic!("{f}: no reproduce line"));
        assert!(flags.contains(&format!("--inject {f}")), "{f}: {flags}");
        let mut args = vec!["compile", file.as_str()];
        args.extend(flags.split_whitespace());
        assert!(still_running_after(&args, Duration::from_secs(3)), "{f}: the compiler finished under {flags}");
        for sched in [Sched::TopDown, Sched::BottomUp] {
            for ra in [Ra::Split, Ra::Graph] {
                let o = Options { sched, ra, ..Options::default() };
                let out = compile(&p, &o).unwrap_or_else(|e| panic!("{f}: {o:?}: {e}"));
                let r = verify(&p, &out.program, &VerifyOptions::default());
                assert_eq!(r.verdict, Verdict::Proven, "{f}: {o:?}: {:?}", r.violations.first());
            }
        }
        assert!(!Fault::all().contains(&f), "{f} hangs: it is not among the faults that terminate");
    }
}

#[test]
fn a_campaign_records_a_hang_as_a_timeout_and_goes_on() {
    let out = std::env::temp_dir().join(format!("schedra-hang-campaign-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let dir = out.to_string_lossy().into_owned();
    let o = Command::new(env!("CARGO_BIN_EXE_schedra"))
        .args(["fuzz", "--target", "v3d71", "--jobs", "1", "--time", "15s", "--seed", "4", "--inject", "sched-stuck-ready", "--stage-timeout", "3s", "--no-reduce", "--json", "--out", &dir])
        .output()
        .expect("schedra fuzz runs");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let findings = summary["findings"].as_array().expect("findings");
    let timeout = findings.iter().find(|f| f["kind"] == "timeout").unwrap_or_else(|| panic!("no timeout finding: {summary}"));
    assert_eq!(timeout["signature"], "timeout/v3d71: compile");
    assert!(summary["stalled"].as_u64().is_some_and(|n| n >= 1), "{summary}");
    let fdir = PathBuf::from(timeout["dir"].as_str().expect("dir"));
    let case = std::fs::read_to_string(fdir.join("case.ir")).expect("case.ir saved");
    assert!(case.contains("--inject sched-stuck-ready"), "reproduce line: {case}");
    assert!(summary["root_causes"][0]["cause"] == "fault sched-stuck-ready", "{summary}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("stalled in compile"), "the progress says the worker stalled: {stderr}");
    let first = timeout["found_s"].as_f64().expect("found_s");
    let execs = summary["execs"].as_u64().expect("execs");
    let window = &summary["first_finding_window"];
    assert!(window["execs_after"].as_u64().is_some_and(|n| n > 0), "cases ran after the hang ({first} s, {execs} execs): {summary}");
    let _ = std::fs::remove_dir_all(&out);
}
