//! The `schedra fuzz` engine: worker threads run cases (see [`case`]) until
//! the time is spent or Ctrl-C, deduplicate findings by signature, write
//! each new one once to the work directory ([`workdir`]), reduce it with
//! `crate::reduce`, show progress ([`progress`]) and end with a
//! [`Summary`].
//!
//! Algorithm: a shared atomic counter hands out case indices; case `k` runs
//! on target `targets[k % n]` with bytes derived from (seed, k), so the
//! sequence of cases is fixed by the seed. A worker that finds a failure
//! claims its signature in the shared set; only the claimant writes and
//! reduces it. The main thread updates the display and, at the deadline or
//! on Ctrl-C, raises the stop flag and returns as soon as no worker is
//! writing a finding: a case still running then (a large program can take
//! seconds to verify) is abandoned, neither counted nor recorded, so the
//! campaign ends within about a tick (100 ms) of `--time`.
//!
//! Invariant: each signature is written at most once per work directory
//! (signatures already there are loaded at start), and everything written
//! stays written when the campaign is interrupted: writes happen only
//! inside a [`Writing`] guard taken before the stop (see its doc), and the
//! main thread waits for every guard to be released.

pub mod case;
pub mod progress;
pub mod workdir;

use crate::gen::Features;
use crate::oracle::{self, Finding};
use crate::reduce::interesting::{failure, Check, Oracle, SameFailure};
use crate::reduce::{self, ReduceOptions};
use progress::{Display, Snapshot};
use schedra_compiler::{Fault, Options, Ra, Sched};
use schedra_ir::Target;
use schedra_verify::VerifyOptions;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workdir::WorkDir;

/// Settings of one campaign.
#[derive(Clone, Debug)]
pub struct CampaignOptions {
    /// Targets, cases spread round-robin over them.
    pub targets: Vec<&'static Target>,
    /// How long to run.
    pub time: Duration,
    /// The campaign seed.
    pub seed: u64,
    /// Worker threads.
    pub jobs: usize,
    /// The work directory.
    pub out: PathBuf,
    /// A compiler fault to inject.
    pub inject: Option<Fault>,
    /// Show progress (bar on a terminal, lines otherwise).
    pub progress: bool,
    /// Whether standard error is a terminal.
    pub terminal: bool,
    /// Reduce new findings (min.ir).
    pub reduce: bool,
    /// Per-query solver timeout.
    pub timeout_ms: u64,
}

/// One new finding of a campaign.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FoundEntry {
    /// Its signature.
    pub signature: String,
    /// Violation kind or finding kind.
    pub kind: String,
    /// The target.
    pub target: String,
    /// Instructions of `min.ir` (of `case.ir` when not reduced).
    pub minimized_instructions: usize,
    /// Its directory.
    pub dir: String,
    /// Seconds from the campaign's start to this finding (before its
    /// reduction): the time-to-find.
    pub found_s: f64,
}

/// What a campaign did: cli.md's `fuzz --json` object.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    /// Cases run.
    pub execs: u64,
    /// Cases per second.
    pub execs_per_sec: f64,
    /// Wall time in seconds.
    pub time_s: f64,
    /// The findings new in this run.
    pub findings: Vec<FoundEntry>,
    /// Generator features exercised.
    pub features: Vec<&'static str>,
    /// Findings already in the work directory when the run started.
    pub resumed: usize,
    /// Whether Ctrl-C ended the run.
    pub interrupted: bool,
    /// Seconds from the start to the first new finding (`null` when none).
    pub first_finding_s: Option<f64>,
}

impl Summary {
    /// The JSON object (one line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// Why a campaign could not start.
#[derive(thiserror::Error, Debug)]
pub enum CampaignError {
    /// The work directory cannot be used.
    #[error("{path}: {source}")]
    WorkDir {
        /// The directory.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// No target to fuzz.
    #[error("no target to fuzz")]
    NoTarget,
    /// Not even one worker thread could be started.
    #[error("cannot start a worker thread: {source}")]
    Thread {
        /// What the system said.
        source: std::io::Error,
    },
}

/// Set by Ctrl-C.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// State shared by the workers and the main thread.
struct Shared {
    opts: CampaignOptions,
    plan: case::Plan,
    dir: WorkDir,
    next: AtomicU64,
    execs: AtomicU64,
    features: AtomicU32,
    stop: AtomicBool,
    running: AtomicUsize,
    /// Workers inside a [`Writing`] guard.
    writing: AtomicUsize,
    seen: Mutex<HashSet<String>>,
    found: Mutex<Vec<FoundEntry>>,
    notes: Mutex<Vec<String>>,
    start: Instant,
    deadline: Instant,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }
}

/// The `--sched/--ra/--inject/--stress-regalloc/--post` flags that reproduce `o`.
pub fn options_line(o: &Options) -> String {
    let sched = match o.sched {
        Sched::TopDown => "topdown",
        Sched::BottomUp => "bottomup",
    };
    let ra = match o.ra {
        Ra::Split => "split",
        Ra::Graph => "graph",
    };
    let inject = o.inject.map(|f| format!(" --inject {f}")).unwrap_or_default();
    let stress = o.stress_regalloc.map(|n| format!(" --stress-regalloc {n}")).unwrap_or_default();
    let post = if o.post == schedra_compiler::Post::Peephole { " --post peephole" } else { "" };
    format!("--sched {sched} --ra {ra}{inject}{stress}{post}")
}

/// Run a campaign. Returns its summary; errors only when it cannot start.
pub fn run(opts: CampaignOptions) -> Result<Summary, CampaignError> {
    if opts.targets.is_empty() {
        return Err(CampaignError::NoTarget);
    }
    let (dir, seen) = WorkDir::open(&opts.out).map_err(|source| CampaignError::WorkDir { path: opts.out.display().to_string(), source })?;
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    INTERRUPTED.store(false, Ordering::Relaxed);
    oracle::install_panic_hook();
    let resumed = seen.len();
    let start = Instant::now();
    let plan = case::Plan::campaign(opts.inject, VerifyOptions { timeout_ms: opts.timeout_ms });
    let shared = Arc::new(Shared {
        start,
        deadline: deadline(start, opts.time),
        plan,
        dir,
        next: AtomicU64::new(0),
        execs: AtomicU64::new(0),
        features: AtomicU32::new(0),
        stop: AtomicBool::new(false),
        running: AtomicUsize::new(opts.jobs.max(1)),
        writing: AtomicUsize::new(0),
        seen: Mutex::new(seen),
        found: Mutex::new(Vec::new()),
        notes: Mutex::new(Vec::new()),
        opts,
    });
    spawn_workers(&shared)?;
    let mut display = Display::new(shared.opts.time, shared.opts.terminal, !shared.opts.progress);
    watch(&shared, &mut display, start);
    display.finish();
    let elapsed = start.elapsed().as_secs_f64();
    let execs = shared.execs.load(Ordering::SeqCst);
    let findings = shared.found.lock().map(|f| f.clone()).unwrap_or_default();
    let first_finding_s = findings.iter().map(|f| f.found_s).min_by(f64::total_cmp);
    Ok(Summary {
        execs,
        execs_per_sec: if elapsed > 0.0 { execs as f64 / elapsed } else { 0.0 },
        time_s: elapsed,
        findings,
        features: Features(shared.features.load(Ordering::SeqCst)).names(),
        resumed,
        interrupted: INTERRUPTED.load(Ordering::SeqCst),
        first_finding_s,
    })
}

/// The campaign's end: `time` after `start`, or a century after it when
/// `time` reaches past what an `Instant` can hold (never a panic).
fn deadline(start: Instant, time: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
    // The last fallback (`start`) cannot happen on a 64-bit clock.
    start.checked_add(time).or_else(|| start.checked_add(CENTURY)).unwrap_or(start)
}

/// Start `opts.jobs` workers (at least one). When the system refuses a
/// thread, the campaign runs with the workers it got; it fails only when it
/// got none.
fn spawn_workers(shared: &Arc<Shared>) -> Result<(), CampaignError> {
    let wanted = shared.opts.jobs.max(1);
    for started in 0..wanted {
        let s = Arc::clone(shared);
        let spawned = std::thread::Builder::new().name(format!("fuzz-{started}")).spawn(move || {
            worker(&s);
            s.running.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(source) = spawned {
            shared.running.fetch_sub(wanted - started, Ordering::SeqCst);
            if started == 0 {
                return Err(CampaignError::Thread { source });
            }
            break;
        }
    }
    Ok(())
}

/// The most the main thread waits after the stop for workers that are
/// writing a finding (a write takes milliseconds; this bounds a stuck disk).
const GRACE: Duration = Duration::from_secs(10);

/// A worker's permission to write to the work directory. Taken only before
/// the stop: the count is raised first and the stop flag read after it
/// (both sequentially consistent), so either the main thread sees the count
/// and waits, or the worker sees the stop and writes nothing.
struct Writing<'a>(&'a Shared);

impl<'a> Writing<'a> {
    /// The guard, or `None` once the campaign is stopping.
    fn enter(shared: &'a Shared) -> Option<Writing<'a>> {
        shared.writing.fetch_add(1, Ordering::SeqCst);
        let guard = Writing(shared);
        let stopped = shared.stop.load(Ordering::SeqCst) || shared.stopping();
        (!stopped).then_some(guard)
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.writing.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Update the display until the deadline or Ctrl-C, then stop the workers
/// and wait until none is writing (at most [`GRACE`]); workers still in a
/// case are left behind.
fn watch(shared: &Shared, display: &mut Display, start: Instant) {
    let mut stopped_at: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(mut notes) = shared.notes.lock() {
            for n in notes.drain(..) {
                display.note(&n);
            }
        }
        display.update(&snapshot(shared, start));
        if shared.running.load(Ordering::SeqCst) == 0 {
            return;
        }
        if shared.stopping() && stopped_at.is_none() {
            shared.stop.store(true, Ordering::SeqCst);
            stopped_at = Some(Instant::now());
        }
        if stopped_at.is_some() && shared.writing.load(Ordering::SeqCst) == 0 {
            return;
        }
        if stopped_at.is_some_and(|t| t.elapsed() > GRACE) {
            display.note("fuzz: a finding is still being written; leaving it");
            return;
        }
    }
}

fn snapshot(shared: &Shared, start: Instant) -> Snapshot {
    Snapshot {
        execs: shared.execs.load(Ordering::Relaxed),
        findings: shared.found.lock().map(|f| f.len()).unwrap_or(0),
        features: Features(shared.features.load(Ordering::Relaxed)),
        elapsed: start.elapsed(),
        total: shared.opts.time,
    }
}

/// Run cases until told to stop. A case that ends after the stop is
/// abandoned: the campaign's time is over and the main thread may be gone.
fn worker(shared: &Shared) {
    let targets = &shared.opts.targets;
    while !shared.stopping() {
        let k = shared.next.fetch_add(1, Ordering::Relaxed);
        let target = targets[(k % targets.len() as u64) as usize];
        let out = case::run_case(shared.opts.seed, k, target, &shared.plan);
        if shared.stopping() {
            return;
        }
        shared.features.fetch_or(out.features.0, Ordering::Relaxed);
        shared.execs.fetch_add(1, Ordering::Relaxed);
        if let Some((f, seeds)) = out.finding {
            record(shared, f, seeds);
        }
    }
}

/// Write a finding if its signature is new, then reduce it.
fn record(shared: &Shared, f: Finding, seeds: [u64; 2]) {
    let sig = f.signature();
    let found_s = shared.start.elapsed().as_secs_f64();
    let Some(writing) = Writing::enter(shared) else { return };
    let fresh = shared.seen.lock().map(|mut s| s.insert(sig.clone())).unwrap_or(false);
    if !fresh {
        return;
    }
    let opts = f.options.unwrap_or(Options { inject: shared.opts.inject, ..Options::default() });
    let dir = match shared.dir.write(&f, &options_line(&opts)) {
        Ok(d) => d,
        Err(e) => {
            note(shared, format!("fuzz: cannot write finding {sig}: {e}"));
            return;
        }
    };
    note(shared, format!("fuzz: new finding {sig}\n      -> {}", dir.display()));
    let mut entry = FoundEntry {
        signature: sig.clone(),
        kind: f.kind_name(),
        target: f.target.clone(),
        minimized_instructions: f.source.as_ref().map(|p| p.op_count()).unwrap_or(0),
        dir: dir.display().to_string(),
        found_s,
    };
    if let Ok(mut found) = shared.found.lock() {
        found.push(entry.clone());
    }
    drop(writing);
    if shared.opts.reduce && case::reproducible(&f) {
        if let Some(n) = minimize(shared, &f, &opts, &seeds, &sig, &dir) {
            entry.minimized_instructions = n;
            if let Ok(mut found) = shared.found.lock() {
                if let Some(e) = found.iter_mut().find(|e| e.signature == sig) {
                    *e = entry;
                }
            }
        }
    }
}

fn note(shared: &Shared, msg: String) {
    if let Ok(mut n) = shared.notes.lock() {
        n.push(msg);
    }
}

/// Reduce the finding's source with `schedra reduce`'s default predicate
/// ([`SameFailure`]: the same failure, proven without the fault when the
/// finding is) and test budget, under the fewest registers that keep the
/// failure ([`fewest_registers`]); then, when the finding is attributable
/// to the injected fault, go on with [`SameFailure::attributable`] (any
/// failure the fault causes). Writes `min.ir` with the failure it keeps and
/// the options that reproduce it; returns its instruction count. The
/// campaign's deadline (or Ctrl-C) ends the reduction early.
fn minimize(shared: &Shared, f: &Finding, opts: &Options, seeds: &[u64], sig: &str, dir: &std::path::Path) -> Option<usize> {
    let src = f.source.as_ref()?;
    let oracle = if f.kind == oracle::Kind::Violation { Oracle::Verify } else { Oracle::Both };
    let check = Check { options: *opts, verify: shared.plan.vopts, oracle, seeds: seeds.to_vec() };
    let same = SameFailure::of(src, &check)?;
    let (opts, same) = fewest_registers(src, &check, same);
    let ropts = ReduceOptions { time_limit: Some(Duration::from_secs(120)), ..ReduceOptions::default() };
    let mut reduced = reduce::reduce(src, &mut |p| !shared.stopping() && same.is_interesting(p), &ropts).ok()?.program;
    if let Some(any) = same.attributable() {
        if let Ok(r) = reduce::reduce(&reduced, &mut |p| !shared.stopping() && any.is_interesting(p), &ropts) {
            reduced = r.program;
        }
    }
    let check = Check { options: opts, ..check };
    let kept = failure(&reduced, &check).map(|k| format!("{}: {}", k.kind, k.message.lines().next().unwrap_or_default())).unwrap_or_default();
    let line = options_line(&opts);
    let text = format!("# {sig}\n# keeps: {kept}\n# reproduce: schedra verify min.ir {line}\n# reduce: schedra reduce case.ir {line}\n{}", schedra_ir::print::print(&reduced));
    let _writing = Writing::enter(shared)?;
    shared.dir.write_min(dir, &text).ok()?;
    Some(reduced.op_count())
}

/// The compile options to reduce under: `check`'s, or with the smallest
/// `--stress-regalloc` count of [`case::STRESS_REGS`] (below the finding's
/// own, if it has one) under which `src` still fails. Fewer registers make
/// a spill with fewer live values, so spill faults reduce to a handful of
/// instructions instead of the register file's size. When the finding is
/// attributable to the injected fault (proven without it), any failure that
/// stays attributable will do: the same fault often shows first as another
/// kind under another register count (a `clobber` at 12 is a `latency` at
/// 4). Otherwise the failure must be the same.
fn fewest_registers(src: &schedra_ir::Program, check: &Check, same: SameFailure) -> (Options, SameFailure) {
    let current = check.options.stress_regalloc.unwrap_or(u16::MAX);
    for &n in case::STRESS_REGS.iter().filter(|&&n| n < current) {
        let c = Check { options: Options { stress_regalloc: Some(n), ..check.options }, ..check.clone() };
        if let Some(s) = SameFailure::of(src, &c) {
            let keeps = if same.requires_own() { s.requires_own() } else { s.expected == same.expected };
            if keeps {
                return (c.options, s);
            }
        }
    }
    (check.options, same)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_never_overflows() {
        let start = Instant::now();
        assert_eq!(deadline(start, Duration::from_secs(30)), start + Duration::from_secs(30));
        let far = deadline(start, Duration::MAX);
        assert!(far > start + Duration::from_secs(365 * 86_400), "a huge --time runs (practically) forever");
    }
}
