//! A fixed-seed campaign on every target finds nothing in the compiler as
//! it is: the test `make mutants` runs against every mutant of the
//! compiler's scheduling, allocation, spilling and bundling code
//! (cargo-mutants, `--test-package schedra-fuzz`), so that a mutant is
//! caught exactly when a campaign of this length finds it.
//!
//! The campaign is `schedra fuzz --target all --jobs 1 --seed 1
//! --no-reduce` for `SCHEDRA_CAMPAIGN_SECS` seconds (default 20). The seed
//! fixes the sequence of cases, so two runs differ only in how far they
//! get. Stage deadlines are five times the CLI's (5 s per compile), so an
//! unoptimised build on a loaded machine does not make slow cases into
//! `timeout` findings, while a compiler that loops forever still is one.
//!
//! Beside it, the code-quality check: the shader-db totals of a fixed
//! sample ([`schedra_fuzz::quality`]) are no worse, in any target and mode,
//! than the committed `tests/quality-baseline.tsv`. A heuristic the
//! compiler checks or repairs (a spill victim, a ready-list priority) cannot
//! make the output wrong, only slower; this is the check that sees it.
//! `SCHEDRA_BLESS=1` rewrites the baseline after an intended change. A
//! sample that does not compile within two minutes fails it (a compiler
//! that loops), rather than stalling the test.

use schedra_fuzz::campaign::{self, CampaignOptions};
use schedra_fuzz::phase::Deadlines;
use schedra_fuzz::quality;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The campaign's length: `SCHEDRA_CAMPAIGN_SECS`, else 20 s.
fn campaign_time() -> Duration {
    let secs = std::env::var("SCHEDRA_CAMPAIGN_SECS").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or(20);
    Duration::from_secs(secs.max(1))
}

/// A fresh work directory under the system's temporary directory.
fn work_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    std::env::temp_dir().join(format!("schedra-campaign-clean-{}-{nanos}", std::process::id()))
}

#[test]
fn fixed_seed_campaign_on_every_target_finds_nothing() {
    let out = work_dir();
    let opts = CampaignOptions {
        targets: schedra_ir::target::generated().to_vec(),
        time: campaign_time(),
        seed: 1,
        jobs: 1,
        out: out.clone(),
        inject: None,
        progress: false,
        terminal: false,
        reduce: false,
        timeout_ms: 2000,
        deadlines: Deadlines::with_stage(Duration::from_secs(5)),
        exe: None,
        seeds: Vec::new(),
    };
    let summary = campaign::run(opts).expect("the campaign starts");
    eprintln!("campaign: {} execs in {:.1} s, {} findings", summary.execs, summary.time_s, summary.findings.len());
    assert!(summary.execs > 0, "the campaign ran no case");
    let found: Vec<String> = summary.findings.iter().map(|f| format!("{} ({})", f.signature, f.dir)).collect();
    assert!(found.is_empty(), "the campaign found {} problem(s):\n  {}", found.len(), found.join("\n  "));
    let _ = std::fs::remove_dir_all(&out);
}

/// The longest the quality sample may take to compile (it takes about 2 s
/// in the test profile): past it, the compiler is taken to loop.
const SAMPLE_DEADLINE: Duration = Duration::from_secs(120);

/// The sample's totals, measured on a thread this test stops waiting for
/// after `deadline` (a compiler that loops fails the test instead of
/// stalling it; the thread is left to the process's exit).
fn measure_within(corpus: &Path, deadline: Duration) -> quality::Sample {
    let (tx, rx) = std::sync::mpsc::channel();
    let corpus = corpus.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(quality::measure(&corpus, schedra_ir::target::generated()));
    });
    match rx.recv_timeout(deadline) {
        Ok(r) => r.expect("the sample is readable"),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("the quality sample did not compile within {deadline:?}: the compiler loops"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the quality measurement panicked"),
    }
}

/// The committed totals of the quality sample, relative to this crate.
const BASELINE: &str = "tests/quality-baseline.tsv";

#[test]
fn code_quality_on_the_fixed_sample_is_no_worse_than_the_baseline() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let now = measure_within(&root.join("../corpus"), SAMPLE_DEADLINE);
    let path = root.join(BASELINE);
    if std::env::var_os("SCHEDRA_BLESS").is_some() {
        std::fs::write(&path, quality::print(&now)).expect("the baseline is writable");
        return;
    }
    let text = std::fs::read_to_string(&path).expect("the baseline exists");
    let base = quality::parse(&text).expect("the baseline parses");
    let (worse, better) = quality::regressions(&base, &now);
    for b in &better {
        eprintln!("quality improved: {b} (SCHEDRA_BLESS=1 rewrites {BASELINE})");
    }
    assert!(
        worse.is_empty(),
        "code quality regressed in {} total(s) (if intended, SCHEDRA_BLESS=1 rewrites {BASELINE}):\n  {}",
        worse.len(),
        worse.join("\n  ")
    );
}
