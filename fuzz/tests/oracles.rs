//! Bolero properties for the oracles, on generated programs of every
//! target: (a) compiling never panics or fails, (b) the verifier proves the
//! output, (c) source and output behave the same, (d) a mutant of a proven
//! output that behaves differently is never proven, (e) the parser never
//! panics and round-trips. Each property counts its body's executions and
//! asserts the count, so a property that silently never ran fails.
//!
//! The programs are kept small (at most 60 instructions) so that the whole
//! file runs in seconds; `schedra fuzz` and the cargo-fuzz targets explore
//! the large ones.

use arbitrary::Unstructured;
use schedra_fuzz::gen::{generate, seed_bytes, seed_of, Config};
use schedra_fuzz::oracle;
use schedra_ir::Program;
use schedra_verify::VerifyOptions;
use std::sync::atomic::{AtomicUsize, Ordering};

const VOPTS: VerifyOptions = VerifyOptions { timeout_ms: 5000 };

/// A small program for each target, from the property's bytes, plus the
/// rest of the stream (for options and mutations).
fn programs(bytes: &[u8], data: &mut Vec<u8>) -> Vec<Program> {
    *data = seed_bytes(seed_of(bytes), 16 * 1024);
    let mut u = Unstructured::new(data);
    let mut out = Vec::new();
    for t in schedra_ir::target::generated() {
        let Ok(mut cfg) = Config::swarm(&mut u) else { break };
        cfg.max_insts = cfg.max_insts.min(60);
        cfg.pressure = 0;
        if let Ok(p) = generate(&mut u, t, &cfg) {
            out.push(p);
        }
    }
    out
}

fn options(bytes: &[u8]) -> schedra_compiler::Options {
    let data = seed_bytes(seed_of(bytes) ^ 1, 8);
    schedra_fuzz::campaign::case::options(&mut Unstructured::new(&data), None)
}

fn fail(f: oracle::Finding) -> ! {
    let src = f.source.as_ref().map(schedra_ir::print::print).unwrap_or_default();
    panic!("{}\n{}\n{src}", f.signature(), f.message)
}

#[test]
fn compile_verify_and_run_agree() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    bolero::check!().with_max_len(64).with_iterations(60).for_each(|bytes: &[u8]| {
        let mut data = Vec::new();
        let opts = options(bytes);
        for p in programs(bytes, &mut data) {
            let seeds = [seed_of(bytes), 7];
            if let Err(f) = oracle::check_case(&p, &opts, &VOPTS, &seeds) {
                if f.kind != oracle::Kind::Unknown {
                    fail(f);
                }
            }
            RUNS.fetch_add(1, Ordering::Relaxed);
        }
    });
    let n = RUNS.load(Ordering::Relaxed);
    assert!(n >= 150, "the property body ran only {n} times");
}

#[test]
fn mutants_that_misbehave_are_not_proven() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    static TRIED: AtomicUsize = AtomicUsize::new(0);
    bolero::check!().with_max_len(64).with_iterations(60).for_each(|bytes: &[u8]| {
        let mut data = Vec::new();
        let opts = options(bytes);
        let mdata = seed_bytes(seed_of(bytes) ^ 2, 256);
        for p in programs(bytes, &mut data) {
            let Ok(c) = oracle::compile_ok(&p, &opts) else { continue };
            if oracle::verify_proves(&p, &c.program, &VOPTS).is_err() {
                continue;
            }
            let mut u = Unstructured::new(&mdata);
            match oracle::soundness(&p, &c.program, &mut u, &VOPTS) {
                Ok(Some(_)) => {
                    TRIED.fetch_add(1, Ordering::Relaxed);
                }
                Ok(None) => {}
                Err(f) => fail(f),
            }
            RUNS.fetch_add(1, Ordering::Relaxed);
        }
    });
    let (n, tried) = (RUNS.load(Ordering::Relaxed), TRIED.load(Ordering::Relaxed));
    assert!(n >= 100 && tried >= 50, "the property body ran {n} times, {tried} mutants");
}

#[test]
fn every_counterexample_of_a_rejected_mutant_replays() {
    static REJECTED: AtomicUsize = AtomicUsize::new(0);
    static REPLAYED: AtomicUsize = AtomicUsize::new(0);
    bolero::check!().with_max_len(64).with_iterations(40).for_each(|bytes: &[u8]| {
        let mut data = Vec::new();
        let opts = options(bytes);
        let mdata = seed_bytes(seed_of(bytes) ^ 3, 256);
        let mut u = Unstructured::new(&mdata);
        for p in programs(bytes, &mut data) {
            let Ok(c) = oracle::compile_ok(&p, &opts) else { continue };
            if oracle::verify_proves(&p, &c.program, &VOPTS).is_err() {
                continue;
            }
            for _ in 0..2 {
                let Some((mutant, m)) = schedra_fuzz::mutate::mutate(&c.program, &mut u) else { continue };
                let report = oracle::verify_guarded(&p, &mutant, &VOPTS).unwrap_or_else(|f| fail(f));
                if report.verdict != schedra_verify::Verdict::Violation {
                    continue;
                }
                REJECTED.fetch_add(1, Ordering::Relaxed);
                oracle::replays_hold(&p, &mutant, &report, &m).unwrap_or_else(|f| fail(f));
                let n = report.violations.iter().filter(|v| v.counterexample.is_some()).count();
                REPLAYED.fetch_add(n, Ordering::Relaxed);
            }
        }
    });
    let (rejected, replayed) = (REJECTED.load(Ordering::Relaxed), REPLAYED.load(Ordering::Relaxed));
    assert!(rejected >= 40 && replayed >= 20, "{rejected} rejected mutants, {replayed} counterexamples replayed");
}

#[test]
fn parser_never_panics_and_round_trips() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    bolero::check!().with_max_len(4096).with_iterations(2000).for_each(|bytes: &[u8]| {
        oracle::parse_roundtrip(bytes).unwrap_or_else(|f| fail(f));
        RUNS.fetch_add(1, Ordering::Relaxed);
    });
    let n = RUNS.load(Ordering::Relaxed);
    assert!(n >= 2000, "the property body ran only {n} times");
}

#[test]
fn generated_text_round_trips() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    bolero::check!().with_max_len(64).with_iterations(200).for_each(|bytes: &[u8]| {
        let mut data = Vec::new();
        for p in programs(bytes, &mut data) {
            let text = schedra_ir::print::print(&p);
            oracle::parse_roundtrip(text.as_bytes()).unwrap_or_else(|f| fail(f));
            // Damaged text: cut at an arbitrary point; still no panic.
            let cut = (seed_of(bytes) as usize) % text.len().max(1);
            oracle::parse_roundtrip(&text.as_bytes()[..cut]).unwrap_or_else(|f| fail(f));
            RUNS.fetch_add(1, Ordering::Relaxed);
        }
    });
    let n = RUNS.load(Ordering::Relaxed);
    assert!(n >= 500, "the property body ran only {n} times");
}
