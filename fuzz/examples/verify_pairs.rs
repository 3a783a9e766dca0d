//! Writes source/machine pairs (`NNNNN.ir` / `NNNNN.s`) for checking that a
//! verifier change keeps every report (`cargo bench -p schedra-verify
//! --bench pairs -- DIR`, see docs/performance.md "Verifier cost per fuzz
//! case"): every corpus shader (bugzoo and regressions included) in the
//! four compiler modes with 2 mutants each, then PER_TARGET generated
//! programs per target (modes in rotation) with 3 mutants each
//! (`schedra_fuzz::mutate`). Deterministic for a given compiler and
//! generator; run from the repository root.
//!
//! Run: `cargo run --release -p schedra-fuzz --example verify_pairs -- DIR [PER_TARGET]`
use arbitrary::Unstructured;
use schedra_compiler::{compile, Options, Ra, Sched};
use schedra_fuzz::gen::{seed_bytes, GeneratedCase};
use schedra_fuzz::mutate::mutate;
use schedra_ir::Program;

const MODES: [(Ra, Sched); 4] = [(Ra::Split, Sched::TopDown), (Ra::Split, Sched::BottomUp), (Ra::Graph, Sched::TopDown), (Ra::Graph, Sched::BottomUp)];

/// Write pair number `n` and count it.
fn write(dir: &str, n: &mut usize, src: &Program, mach: &Program) {
    let _ = std::fs::write(format!("{dir}/{:05}.ir", *n), schedra_ir::print::print(src));
    let _ = std::fs::write(format!("{dir}/{:05}.s", *n), schedra_ir::print::print(mach));
    *n += 1;
}

/// Write the pair and up to `k` mutants of its machine program.
fn with_mutants(dir: &str, n: &mut usize, src: &Program, mach: &Program, seed: u64, k: u64) {
    write(dir, n, src, mach);
    for j in 0..k {
        let data = seed_bytes(seed.wrapping_mul(31).wrapping_add(j), 256);
        let mut u = Unstructured::new(&data);
        if let Some((m, _)) = mutate(mach, &mut u) {
            write(dir, n, src, &m);
        }
    }
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: verify_pairs DIR [PER_TARGET]");
        std::process::exit(2);
    };
    let per_target: u64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(150);
    let mut n = 0usize;
    let mut files: Vec<_> = corpus_sources("corpus");
    files.sort();
    for (fi, path) in files.iter().enumerate() {
        let Ok(text) = std::fs::read(path) else { continue };
        let Ok(src) = schedra_ir::parse::parse(&text, None) else { continue };
        for (mi, (ra, sched)) in MODES.iter().enumerate() {
            let Ok(c) = compile(&src, &Options { ra: *ra, sched: *sched, ..Options::default() }) else { continue };
            with_mutants(&dir, &mut n, &src, &c.program, (fi * 4 + mi) as u64, 2);
        }
    }
    eprintln!("corpus pairs: {n}");
    for target in schedra_ir::target::generated() {
        for i in 0..per_target {
            let data = seed_bytes(0xba5e ^ (i << 8) ^ target.name.len() as u64, 4096);
            let mut u = Unstructured::new(&data);
            let Ok(case) = GeneratedCase::for_target(&mut u, target) else { continue };
            let (ra, sched) = MODES[(i % 4) as usize];
            let Ok(c) = compile(&case.program, &Options { ra, sched, ..Options::default() }) else { continue };
            with_mutants(&dir, &mut n, &case.program, &c.program, i ^ 0x77, 3);
        }
    }
    eprintln!("total pairs: {n}");
}

/// The `.ir` files one directory below `root`.
fn corpus_sources(root: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(root).into_iter().flatten().flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ir"))
        .collect()
}
