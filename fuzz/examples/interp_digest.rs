//! Equivalence check for interpreter changes: prints one line per
//! (program, seed) with everything a run reports (effects, trace, cycles,
//! stalls, executed, or the error), over the corpus, the spec examples
//! (`corpus/spec`, listed last) and
//! `DIGEST_CASES` (default 2,000) generated programs on every target: the
//! source, its compiled output, and a mutant of the output (so error paths,
//! hazards and stalls are covered too).
//!
//! The generator's bytes are read through `SeedStream` (made only as far
//! as read), so the digest also checks that it gives what reading the full
//! 16 KiB would.
//!
//! Run before and after a change and compare the outputs:
//! `cargo run --release -p schedra-fuzz --example interp_digest > before.txt`

use schedra_fuzz::gen::{generate, Config, SeedStream};
use schedra_fuzz::interp;
use schedra_ir::Program;
use std::path::Path;

fn digest(name: &str, p: &Program) {
    for seed in [0u64, 1, 0x5eed, 0xdead_beef] {
        let line = match interp::run(p, seed, 100_000) {
            Ok(o) => format!("{:?} {:?} c{} s{} e{}", o.effects.channels, o.trace, o.cycles, o.stalls, o.executed),
            Err(e) => format!("error: {e} / {e:?}"),
        };
        println!("{name} {seed}: {line}");
    }
}

/// The program with one text line (chosen by `n`) deleted, if it still
/// parses: undefined registers, missing latency padding, bad labels.
fn cut(name: &str, p: &Program, n: u64) {
    let text = schedra_ir::print::print(p);
    let lines: Vec<&str> = text.lines().collect();
    let k = 2 + (n as usize * 7919) % lines.len().saturating_sub(2).max(1);
    let kept: Vec<&str> = lines.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, l)| *l).collect();
    if let Ok(q) = schedra_ir::parse::parse(kept.join("\n").as_bytes(), None) {
        digest(name, &q);
    }
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut es: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    es.sort();
    for p in es {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ir" || e == "s") {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    files(&root.join("corpus"), &mut paths);
    let spec = root.join("corpus/spec");
    paths.sort_by_key(|p| p.starts_with(&spec)); // stable: the corpus, then the spec examples
    for path in &paths {
        let Ok(text) = std::fs::read(path) else { continue };
        if let Ok(p) = schedra_ir::parse::parse(&text, None) {
            digest(&path.display().to_string(), &p);
        }
    }
    let cases: u64 = std::env::var("DIGEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    for t in schedra_ir::target::generated() {
        for n in 0..cases / 3 + 1 {
            let mut bytes = SeedStream::new(n, 16 * 1024);
            let cfg = if n % 2 == 0 { Config::default() } else { bytes.draw(64, |u| Config::swarm(u).unwrap_or_default()) };
            let Ok(p) = bytes.draw(cfg.byte_hint(), |u| generate(u, t, &cfg)) else { continue };
            let name = format!("{}#{n}", t.name);
            println!("{name} text {:016x}", schedra_fuzz::gen::seed_of(schedra_ir::print::print(&p).as_bytes()));
            digest(&format!("{name} src"), &p);
            cut(&format!("{name} src-cut"), &p, n);
            let Ok(c) = schedra_compiler::compile(&p, &Default::default()) else { continue };
            digest(&format!("{name} out"), &c.program);
            if let Some((m, _)) = bytes.draw(64, |u| schedra_fuzz::mutate::mutate(&c.program, u)) {
                digest(&format!("{name} mutant"), &m);
            }
            cut(&format!("{name} out-cut"), &c.program, n);
        }
    }
}
