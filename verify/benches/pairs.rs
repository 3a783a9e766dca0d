//! The verifier over a directory of source/machine pairs: one JSON report
//! per pair on standard output, and the verify-only time per pair on
//! standard error. Used to check that a change to the verifier changes no
//! verdict and no report (diff the outputs of two builds; `time_ms` is
//! zeroed so that the lines are deterministic) and to time it without the
//! compiler or the generator.
//!
//! A pair is `NAME.ir` (source) and `NAME.s` (machine) in the directory;
//! pairs are taken in name order. A source that does not parse or
//! validate, or a machine file that does not parse, prints `NAME bad-input`.
//!
//! Run: `cargo bench -p schedra-verify --bench pairs -- DIR > out.jsonl`
//! (see `scripts/verify_baseline.sh` for building a directory of pairs and
//! comparing two runs).

use schedra_verify::{verify, VerifyOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `.ir` files of `dir`, in name order.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ir"))
        .collect();
    files.sort();
    files
}

/// The report line of one pair (`time_ms` zeroed), and the verify time.
fn check(src_path: &Path) -> (String, Duration) {
    let name = src_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let (Ok(src_text), Ok(mach_text)) = (std::fs::read(src_path), std::fs::read(src_path.with_extension("s"))) else {
        return (format!("{name} unreadable"), Duration::ZERO);
    };
    let Ok(src) = schedra_ir::parse::parse(&src_text, None) else { return (format!("{name} bad-input"), Duration::ZERO) };
    if schedra_ir::validate::validate(&src).is_err() {
        return (format!("{name} bad-input"), Duration::ZERO);
    }
    let Ok(mach) = schedra_ir::parse::parse(&mach_text, Some(src.target)) else { return (format!("{name} bad-input"), Duration::ZERO) };
    let opts = VerifyOptions { timeout_ms: 10_000 };
    let start = Instant::now();
    let mut report = verify(&src, &mach, &opts);
    let took = start.elapsed();
    report.time_ms = 0.0;
    (format!("{name} {}", report.to_json()), took)
}

fn main() {
    let Some(dir) = std::env::args().skip(1).find(|a| !a.starts_with("--")) else {
        eprintln!("usage: cargo bench -p schedra-verify --bench pairs -- DIR");
        std::process::exit(2);
    };
    let files = sources(Path::new(&dir));
    let mut total = Duration::ZERO;
    for f in &files {
        let (line, took) = check(f);
        total += took;
        println!("{line}");
    }
    let per = total.as_secs_f64() * 1e6 / files.len().max(1) as f64;
    eprintln!("{} pairs, verify {:.1} ms total, {per:.1} us per pair", files.len(), total.as_secs_f64() * 1e3);
}
