//! The bug zoo (docs/bugzoo.md): one minimized program per injectable fault
//! in `corpus/bugzoo/<fault-name>.ir`.
//!
//! Each file's header comment names its fault (`# fault: NAME`), the
//! verifier kind the fault produces (`# kind: KIND`) and the compile options
//! the campaign used (`# options: --sched S --ra R [--stress-regalloc N]`). For every file this
//! test compiles and verifies it through the library:
//!
//! - with the fault injected under those options: not proven, and the
//!   primary (first) violation has the documented kind;
//! - without the fault, in all four `--sched`/`--ra` modes: proven (both
//!   without `--stress-regalloc` and with the header's count, if any).
//!
//! It also requires a file for every fault of `Fault::all()`, so a new fault
//! without a zoo case fails here, and at most 12 instructions per case (the
//! zoo's size goal) unless the header says why not (`# oversize: REASON`,
//! reported in docs/bugzoo.md as a goal not met).

use schedra_compiler::{compile, Fault, Options, Ra, Sched};
use schedra_ir::{parse::parse, Program};
use schedra_verify::{verify, Verdict, VerifyOptions};
use std::path::PathBuf;

fn zoo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/bugzoo")
}

/// What a case's header says.
#[derive(Debug)]
struct Header {
    fault: Fault,
    kind: String,
    opts: Options,
    oversize: Option<String>,
}

/// The value of the header line `# key: value`, if present.
fn header_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("# {key}:");
    text.lines().take_while(|l| l.starts_with('#') || l.trim().is_empty()).find_map(|l| l.strip_prefix(prefix.as_str())).map(str::trim)
}

/// Parse the `# options:` line (the campaign's own reader of the options
/// it prints), with the zoo case's fault injected.
fn parse_options(line: &str, fault: Fault) -> Result<Options, String> {
    let o = schedra_fuzz::campaign::parse_options_line(line)?;
    Ok(Options { inject: Some(fault), ..o })
}

fn parse_header(name: &str, text: &str) -> Result<Header, String> {
    let fname = header_value(text, "fault").ok_or("no `# fault:` line")?;
    let fname = fname.split_whitespace().next().unwrap_or_default();
    let fault = Fault::from_name(fname).ok_or_else(|| format!("unknown fault {fname:?}"))?;
    if name != format!("{}.ir", fault.name()) {
        return Err(format!("file name {name} does not match fault {fault}"));
    }
    let kind = header_value(text, "kind").and_then(|k| k.split_whitespace().next()).ok_or("no `# kind:` line")?.to_string();
    let opts = parse_options(header_value(text, "options").ok_or("no `# options:` line")?, fault)?;
    let oversize = header_value(text, "oversize").map(str::to_string);
    Ok(Header { fault, kind, opts, oversize })
}

/// Every zoo case: file name, text, header, program.
fn cases() -> Vec<(String, Header, Program)> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(zoo_dir()).expect("corpus/bugzoo exists");
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".ir") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap_or_else(|err| panic!("{name}: {err}"));
        let header = parse_header(&name, &text).unwrap_or_else(|err| panic!("{name}: bad header: {err}"));
        let program = parse(text.as_bytes(), None).unwrap_or_else(|err| panic!("{name}: does not parse: {err:?}"));
        out.push((name, header, program));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Compile `p` under `o` and verify the result.
fn check(p: &Program, o: &Options) -> Result<schedra_verify::Report, String> {
    let compiled = compile(p, o).map_err(|e| format!("compile error: {e}"))?;
    Ok(verify(p, &compiled.program, &VerifyOptions::default()))
}

#[test]
fn every_fault_has_a_zoo_case() {
    let have: Vec<String> = cases().into_iter().map(|(n, _, _)| n).collect();
    for f in Fault::all() {
        let want = format!("{}.ir", f.name());
        assert!(have.contains(&want), "fault {f} has no corpus/bugzoo/{want}");
    }
    assert_eq!(have.len(), Fault::all().len(), "one case per fault: {have:?}");
}

#[test]
fn each_case_fails_with_its_fault_and_kind() {
    let cases = cases();
    assert!(!cases.is_empty(), "no zoo cases ran");
    for (name, h, p) in &cases {
        let report = check(p, &h.opts).unwrap_or_else(|e| panic!("{name}: with {}: {e}", h.fault));
        assert_ne!(report.verdict, Verdict::Proven, "{name}: proven although {} is injected", h.fault);
        let first = report.violations.first().unwrap_or_else(|| panic!("{name}: not proven but no violation: {report:?}"));
        assert_eq!(first.kind.as_str(), h.kind, "{name}: primary violation is {:?}: {}", first.kind, first.message);
        if let Some(t) = h.fault.target() {
            assert_eq!(p.target.name, t, "{name}: the fault corrupts {t} programs");
        }
    }
}

/// The interpreter checks the hardware rules with its own code: every zoo
/// case whose fault breaks a `slot`, `register` or `hazard` rule compiles,
/// under its fault, to a program that does not run but stops with a rule
/// of that kind, and the campaign's cross-check of the two readings
/// (`oracle::rules_agree`) holds on it. Without the fault, the output runs.
#[test]
fn rule_cases_stop_the_interpreter_with_their_rule() {
    use schedra_fuzz::interp::{self, rules, RunError};
    let mut stopped = Vec::new();
    for (name, h, p) in &cases() {
        if !matches!(h.kind.as_str(), "slot" | "register" | "hazard") || rules::family(p.target).is_none() {
            continue;
        }
        let compiled = compile(p, &h.opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let decoded = interp::prepare(&compiled.program);
        match decoded.run(0, interp::DEFAULT_FUEL) {
            Err(RunError::Rule { kind, .. }) if kind.as_str() == h.kind => stopped.push(name.clone()),
            other => panic!("{name}: expected the interpreter to stop with a {} rule, got {other:?}", h.kind),
        }
        if let Err(f) = schedra_fuzz::oracle::rules_agree(p, &compiled.program, &decoded) {
            panic!("{name}: {}", f.message);
        }
        let fixed = compile(p, &Options { inject: None, ..h.opts }).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(interp::run(&fixed.program, 0, interp::DEFAULT_FUEL).is_ok(), "{name}: the output without the fault does not run");
    }
    eprintln!("stopped with their rule: {stopped:?}");
    assert!(stopped.len() >= 4, "only {stopped:?}");
}

#[test]
fn each_case_is_proven_without_its_fault_in_every_mode() {
    let cases = cases();
    assert!(!cases.is_empty(), "no zoo cases ran");
    for (name, h, p) in &cases {
        let mut stresses = vec![None];
        stresses.extend(h.opts.stress_regalloc.map(Some));
        for stress_regalloc in stresses {
            for sched in [Sched::TopDown, Sched::BottomUp] {
                for ra in [Ra::Split, Ra::Graph] {
                    let o = Options { sched, ra, inject: None, stress_regalloc, post: Default::default() };
                    let report = check(p, &o).unwrap_or_else(|e| panic!("{name}: {o:?}: {e}"));
                    assert_eq!(report.verdict, Verdict::Proven, "{name}: {o:?}: {:?}", report.violations.first());
                }
            }
        }
    }
}

#[test]
fn each_case_is_at_most_twelve_instructions() {
    for (name, h, p) in cases() {
        match &h.oversize {
            None => assert!(p.op_count() <= 12, "{name}: {} instructions", p.op_count()),
            Some(why) => {
                assert!(p.op_count() > 12, "{name}: `# oversize:` on a case of {} instructions", p.op_count());
                assert!(why.split_whitespace().count() >= 5, "{name}: `# oversize:` must say why");
            }
        }
    }
}

#[test]
fn header_parsing_rejects_mismatches() {
    let text = "# fault: sched-ignore-war\n# kind: clobber\n# options: --sched bottomup --ra graph\nshader x\n";
    let h = parse_header("sched-ignore-war.ir", text).expect("valid header");
    assert_eq!((h.fault, h.kind.as_str(), h.opts.sched, h.opts.ra), (Fault::SchedIgnoreWar, "clobber", Sched::BottomUp, Ra::Graph));
    assert_eq!(h.oversize, None);
    assert!(parse_header("other.ir", text).is_err(), "file name must match the fault");
    assert!(parse_header("x.ir", "# fault: no-such-fault\n").is_err());
    assert!(parse_options("--ra wild", Fault::SchedIgnoreWar).is_err());
}
