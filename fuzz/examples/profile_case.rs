//! Profiling driver for the fuzz loop: runs `PROFILE_CASES` (default 50)
//! v3d71 cases through `campaign::case::run_case_timed`, exactly like
//! `benches/throughput.rs` (the function a `schedra fuzz` worker calls),
//! with the ~50-instruction configuration (`PROFILE_SWARM=1`: the swarm
//! configurations), so that `valgrind --tool=callgrind` gives a repeatable
//! instruction count per case.
//!
//! Run: `cargo build --release -p schedra-fuzz --example profile_case` then
//! `valgrind --tool=callgrind target/release/examples/profile_case`;
//! per stage: `callgrind_annotate --inclusive=yes callgrind.out.* | grep -E
//! 'gen::generate_with|compile_ok|verify_proves|source_outcomes|behaviour_differs|soundness'`.

use schedra_fuzz::campaign::case::{run_case_timed, Plan};
use schedra_fuzz::gen::Config;
use schedra_fuzz::oracle::StageTimes;

fn main() {
    let cases: u64 = std::env::var("PROFILE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let Some(target) = schedra_ir::target::by_name("v3d71") else { return };
    let cfg = Config { max_insts: 50, pressure: 0, ..Config::default() };
    let fixed = if std::env::var("PROFILE_SWARM").is_ok() { None } else { Some(&cfg) };
    let plan = Plan::campaign(None, schedra_verify::VerifyOptions { timeout_ms: 2000 });
    schedra_fuzz::oracle::install_panic_hook();
    let mut times = StageTimes::default();
    let mut found = 0u64;
    for n in 0..cases {
        found += u64::from(run_case_timed(1, n, target, &plan, fixed, &mut times).finding.is_some());
    }
    println!("{cases} cases, {found} findings");
}
