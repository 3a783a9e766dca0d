//! Profiling driver for the fuzz loop: runs `PROFILE_CASES` (default 50)
//! v3d71 cases through `campaign::case::run_case_timed`, exactly like
//! `benches/throughput.rs` (the function a `schedra fuzz` worker calls),
//! with the ~50-instruction configuration (`PROFILE_SWARM=1`: the swarm
//! configurations), so that `valgrind --tool=callgrind` gives a repeatable
//! instruction count per case.
//!
//! `PROFILE_ONE=K` runs only case K of the campaign with seed
//! `PROFILE_SEED` (default 0) under its swarm configuration and prints its
//! stage times. With `PROFILE_DUMP=DIR` it instead writes that case's
//! source (`src.ir`), compiled output (`out.s`) and soundness mutant
//! (`mutant.s`, when the case has one) to `DIR`, for `schedra verify`.
//!
//! Run: `cargo build --release -p schedra-fuzz --example profile_case` then
//! `valgrind --tool=callgrind target/release/examples/profile_case`;
//! per stage: `callgrind_annotate --inclusive=yes callgrind.out.* | grep -E
//! 'gen::generate_with|compile_ok|verify_proves|source_outcomes|behaviour_differs|soundness'`.

/// The schedra binary's allocator, so the figures are what a campaign sees.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    if let Some(k) = std::env::var("PROFILE_ONE").ok().and_then(|v| v.parse::<u64>().ok()) {
        // One campaign case (campaign seed `PROFILE_SEED`, default 0, swarm
        // configuration) with its stage times: for cases that stall a run.
        let seed = std::env::var("PROFILE_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        if let Ok(dir) = std::env::var("PROFILE_DUMP") {
            dump(seed, k, target, std::path::Path::new(&dir));
            return;
        }
        let start = std::time::Instant::now();
        let out = run_case_timed(seed, k, target, &plan, None, &mut times);
        println!("case {k}: {:?} total, {times:?}, finding: {}", start.elapsed(), out.finding.is_some());
        return;
    }
    if std::env::var("PROFILE_STAGE").is_ok_and(|s| s == "run") {
        runs_only(cases, target, &cfg);
        return;
    }
    let mut found = 0u64;
    for n in 0..cases {
        found += u64::from(run_case_timed(1, n, target, &plan, fixed, &mut times).finding.is_some());
    }
    println!("{cases} cases, {found} findings");
}

/// `PROFILE_STAGE=run`: generate and compile `cases` programs first, then
/// only run them as oracle (c) does (source and output on two seeds), so
/// that the interpreters' share can be read without the other stages'.
fn runs_only(cases: u64, target: &'static schedra_ir::Target, cfg: &Config) {
    use arbitrary::Unstructured;
    use schedra_fuzz::campaign::case::{case_seed, run_seeds, CASE_BYTES};
    let mut progs = Vec::new();
    for n in 0..cases {
        let cs = case_seed(1, n);
        let data = schedra_fuzz::gen::seed_bytes(cs, CASE_BYTES);
        let mut u = Unstructured::new(&data);
        let Ok(p) = schedra_fuzz::gen::generate(&mut u, target, cfg) else { continue };
        let Ok(c) = schedra_compiler::compile(&p, &Default::default()) else { continue };
        progs.push((p, c.program, run_seeds(cs)));
    }
    let mut differ = 0;
    for (p, m, seeds) in &progs {
        let Ok(expect) = schedra_fuzz::oracle::source_outcomes(p, seeds) else { continue };
        differ += usize::from(!matches!(schedra_fuzz::oracle::behaviour_differs(m, seeds, &expect), Ok(None)));
    }
    println!("{} programs run, {differ} differ", progs.len());
}

/// `PROFILE_DUMP=DIR`: write case `index`'s source, compiled output and
/// soundness mutant (derived exactly as `campaign::case::run_case` does)
/// to `DIR`.
fn dump(seed: u64, index: u64, target: &'static schedra_ir::Target, dir: &std::path::Path) {
    use arbitrary::Unstructured;
    use schedra_fuzz::campaign::case::{case_seed, options, CASE_BYTES};
    let data = schedra_fuzz::gen::seed_bytes(case_seed(seed, index), CASE_BYTES);
    let mut u = Unstructured::new(&data);
    let opts = options(&mut u, None);
    let Ok(case) = schedra_fuzz::gen::GeneratedCase::for_target(&mut u, target) else { return eprintln!("case {index}: no program") };
    let Ok(compiled) = schedra_compiler::compile(&case.program, &opts) else { return eprintln!("case {index}: compile failed") };
    let print = schedra_ir::print::print;
    let mut files = vec![("src.ir", print(&case.program)), ("out.s", print(&compiled.program))];
    if let Some((mutant, m)) = schedra_fuzz::mutate::mutate(&compiled.program, &mut u) {
        println!("case {index}: options {opts:?}, mutation {m}");
        files.push(("mutant.s", print(&mutant)));
    }
    for (name, text) in files {
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(dir.join(name), text)) {
            eprintln!("{}: {e}", dir.join(name).display());
        }
    }
}
