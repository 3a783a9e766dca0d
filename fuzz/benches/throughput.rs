//! Throughput of the fuzz loop on one core, measured through the very
//! function a `schedra fuzz` worker calls per case
//! (`campaign::case::run_case_timed`): seed bytes, compile options,
//! generation, compile, verify, source and output runs on two seeds, plus
//! the campaign's soundness check (every 4th case) and parser round trip
//! (every 16th). Prints execs/s and the time per stage.
//!
//! By default the generator makes ~50-instruction programs without a
//! pressure burst; `BENCH_SWARM=1` uses the swarm configurations the
//! campaign draws instead (bigger programs).
//!
//! `BENCH_CORE=1` leaves out the soundness and round-trip checks (generate
//! + compile + verify + run alone).
//!
//! Run: `cargo bench -p schedra-fuzz --bench throughput` (environment:
//! `BENCH_TARGET` = v3d71|gen8|r600, `BENCH_INSTS` = body budget,
//! `BENCH_SECS` = measuring time, `BENCH_SWARM=1`, `BENCH_CORE=1`).

/// The schedra binary's allocator, so the figures are what a campaign sees.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use schedra_fuzz::campaign::case::{run_case_timed, Plan};
use schedra_fuzz::gen::Config;
use schedra_fuzz::oracle::StageTimes;
use std::time::{Duration, Instant};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let tname: String = env("BENCH_TARGET", "v3d71".to_string());
    let Some(target) = schedra_ir::target::by_name(&tname) else {
        eprintln!("unknown target {tname}");
        return;
    };
    let insts: u16 = env("BENCH_INSTS", 50);
    let secs: f64 = env("BENCH_SECS", 10.0);
    let swarm = std::env::var("BENCH_SWARM").is_ok();
    let cfg = Config { max_insts: insts, pressure: 0, ..Config::default() };
    let fixed = if swarm { None } else { Some(&cfg) };
    let mut plan = Plan::campaign(None, schedra_verify::VerifyOptions { timeout_ms: 2000 });
    let core = std::env::var("BENCH_CORE").is_ok();
    if core {
        (plan.soundness_every, plan.roundtrip_every) = (0, 0);
    }
    schedra_fuzz::oracle::install_panic_hook();
    let mut times = StageTimes::default();
    let (mut n, mut found) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs {
        let out = run_case_timed(1, n, target, &plan, fixed, &mut times);
        found += u64::from(out.finding.is_some());
        n += 1;
    }
    let total = start.elapsed();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n.max(1) as f64;
    let other = total.saturating_sub(times.generate + times.compile + times.verify + times.run);
    let what = if swarm { "swarm configurations".to_string() } else { format!("{insts}-instruction budget") };
    let what = if core { format!("{what}, no soundness/round trip") } else { format!("{what}, campaign plan") };
    println!("throughput {tname} ({what}): {n} cases in {:.1}s = {:.0} execs/s on one core ({found} findings)", total.as_secs_f64(), n as f64 / total.as_secs_f64());
    println!(
        "per case: generate {:.1} us, compile {:.1} us, verify {:.1} us, run x4 {:.1} us, soundness + round trip + rest {:.1} us",
        per(times.generate),
        per(times.compile),
        per(times.verify),
        per(times.run),
        per(other)
    );
}
