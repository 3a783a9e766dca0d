//! Profiling driver for the fuzz loop: runs `PROFILE_CASES` (default 50)
//! v3d71 cases of generate + compile + verify + run x4, exactly like
//! `benches/throughput.rs`, with no timing, so that
//! `valgrind --tool=callgrind` gives a repeatable instruction count per case.
//!
//! Run: `cargo build --release -p schedra-fuzz --example profile_case` then
//! `valgrind --tool=callgrind target/release/examples/profile_case`.

use arbitrary::Unstructured;
use schedra_fuzz::gen::{generate, seed_bytes, Config};
use schedra_fuzz::interp;

fn main() {
    let cases: u64 = std::env::var("PROFILE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let stage = std::env::var("PROFILE_STAGE").unwrap_or_default();
    let Some(target) = schedra_ir::target::by_name("v3d71") else { return };
    let cfg = Config { max_insts: 50, pressure: 0, ..Config::default() };
    let vopts = schedra_verify::VerifyOptions { timeout_ms: 2000 };
    let mut proven = 0u64;
    for n in 0..cases {
        let data = seed_bytes(n, 8 * 1024);
        let Ok(p) = generate(&mut Unstructured::new(&data), target, &cfg) else { continue };
        if stage == "gen" {
            continue;
        }
        let Ok(c) = schedra_compiler::compile(&p, &Default::default()) else { continue };
        if stage != "compile" {
            let r = schedra_verify::verify(&p, &c.program, &vopts);
            proven += u64::from(r.verdict == schedra_verify::Verdict::Proven);
        }
        for seed in [n, n ^ 0x5eed] {
            let _ = interp::run(&p, seed, 200_000);
            let _ = interp::run(&c.program, seed, 200_000);
        }
    }
    println!("{cases} cases, {proven} proven");
}
