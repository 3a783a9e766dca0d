//! Profiling driver for the campaign as `schedra fuzz --target all --jobs 1`
//! runs it: case `k` of seed `PROFILE_SEED` (default 1) on target
//! `k % 5` of `schedra_ir::target::generated()`, swarm configurations,
//! the campaign plan (soundness every 4th case, round trip every 16th),
//! for `PROFILE_SECS` seconds (default 20) or `PROFILE_CASES` cases.
//! Prints, per target, the cases run, their execs/s and the time per case
//! in each stage, so that the slow target and stage can be read off.
//! `PROFILE_TARGET=name` runs that target alone.
//!
//! Run: `cargo run --release -p schedra-fuzz --example profile_campaign`;
//! under `valgrind --tool=callgrind` set `PROFILE_CASES`.

/// The schedra binary's allocator, so the figures are what a campaign sees.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use schedra_fuzz::campaign::case::{run_case_timed, Plan};
use schedra_fuzz::oracle::StageTimes;
use std::time::{Duration, Instant};

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let seed: u64 = env("PROFILE_SEED").unwrap_or(1);
    let secs: f64 = env("PROFILE_SECS").unwrap_or(20.0);
    let cases: Option<u64> = env("PROFILE_CASES");
    let targets: Vec<&'static schedra_ir::Target> = match std::env::var("PROFILE_TARGET") {
        Ok(name) => schedra_ir::target::by_name(&name).into_iter().collect(),
        Err(_) => schedra_ir::target::generated().to_vec(),
    };
    if targets.is_empty() {
        eprintln!("unknown PROFILE_TARGET");
        return;
    }
    let plan = Plan::campaign(None, schedra_verify::VerifyOptions { timeout_ms: 2000 });
    schedra_fuzz::oracle::install_panic_hook();
    let mut per: Vec<(u64, Duration, StageTimes)> = vec![(0, Duration::ZERO, StageTimes::default()); targets.len()];
    let (mut k, mut found) = (0u64, 0u64);
    let start = Instant::now();
    while cases.map_or(start.elapsed().as_secs_f64() < secs, |c| k < c) {
        let i = (k % targets.len() as u64) as usize;
        let t0 = Instant::now();
        let out = run_case_timed(seed, k, targets[i], &plan, None, &mut per[i].2);
        per[i].1 += t0.elapsed();
        per[i].0 += 1;
        found += u64::from(out.finding.is_some());
        k += 1;
    }
    let total = start.elapsed().as_secs_f64();
    println!("{k} cases in {total:.1}s = {:.0} execs/s ({found} findings)", k as f64 / total);
    println!("{:<8} {:>6} {:>8} {:>8} | per case in us: {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}", "target", "cases", "share%", "execs/s", "total", "gen", "compile", "verify", "run", "sound", "rtrip");
    for (t, (n, d, s)) in targets.iter().zip(&per) {
        let us = |x: Duration| x.as_secs_f64() * 1e6 / (*n).max(1) as f64;
        println!(
            "{:<8} {:>6} {:>8.1} {:>8.0} | {:>22.0} {:>7.0} {:>7.0} {:>7.0} {:>7.0} {:>7.0} {:>7.0}",
            t.name,
            n,
            100.0 * d.as_secs_f64() / total,
            *n as f64 / d.as_secs_f64().max(1e-9),
            us(*d),
            us(s.generate),
            us(s.compile),
            us(s.verify),
            us(s.run),
            us(s.soundness),
            us(s.roundtrip)
        );
    }
}
