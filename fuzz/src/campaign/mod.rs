//! The `schedra fuzz` engine: worker threads run cases (see [`case`]) until
//! the time is spent or Ctrl-C, deduplicate findings by signature, write
//! each new one once to the work directory ([`workdir`]), hand it to the
//! reduction queue ([`queue`]: grouped by root cause ([`rootcause`]) and
//! reduced on a thread of its own), show progress ([`progress`]) and end
//! with a [`Summary`]. [`merge`] folds several work directories into one.
//!
//! Algorithm: a shared atomic counter hands out case indices; case `k` runs
//! on target `targets[k % n]` with bytes derived from (seed, k), so the
//! sequence of cases is fixed by the seed (and the seed programs, when
//! given: then every other case starts from one of them, [`seeded`]). A worker that finds a failure
//! claims its signature in the shared set; only the claimant writes it and
//! queues it for reduction, so exploration goes on at once. The main thread
//! updates the display and supervises ([`supervise`]): a worker or the
//! reducer whose stage has run past its deadline ([`crate::phase`]) is
//! abandoned — a looping compiler cannot be interrupted inside a thread —
//! its case is recorded as a `timeout` finding, and a fresh thread takes
//! its place. At the deadline or on Ctrl-C it raises the stop flag and
//! returns as soon as no thread is writing a finding: a case still running
//! then (a large program can take seconds to verify) is abandoned, neither
//! counted nor recorded, so the campaign ends within about a tick (100 ms)
//! of `--time`.
//!
//! Invariant: each signature is written at most once per work directory
//! (signatures already there are loaded at start), and everything written
//! stays written when the campaign is interrupted: writes happen only
//! inside a [`Writing`] guard taken before the stop (see its doc), and the
//! main thread waits for every guard to be released. An abandoned thread
//! writes nothing and counts nothing, whenever it comes back.

pub mod case;
pub mod merge;
pub mod progress;
pub mod queue;
pub mod rootcause;
pub mod seeded;
pub mod supervise;
pub mod workdir;

use crate::gen::Features;
use crate::oracle::{self, Finding};
use crate::phase::Deadlines;
use progress::{Display, Snapshot, Timeline};
use rootcause::{Group, RootCauses};
use schedra_compiler::{Fault, Options, Ra, Sched};
use schedra_ir::Target;
use schedra_verify::VerifyOptions;
use std::collections::{HashMap, HashSet};
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
    /// How long each stage of a case may run before it is a `timeout`.
    pub deadlines: Deadlines,
    /// The `schedra` binary, for reducing `timeout` findings in child
    /// processes (`None`: timeouts are saved but not reduced).
    pub exe: Option<PathBuf>,
    /// Seed programs (`--seeds`): every other case on a target with seeds
    /// starts from one of them, mutated ([`seeded`]).
    pub seeds: Vec<schedra_ir::Program>,
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
    /// Its root cause ([`rootcause`]), once the reduction queue has
    /// classified it.
    pub root_cause: Option<String>,
}

/// Executions around the first finding: the 30 s before it (or from the
/// start, when it came sooner) and the 30 s after it (or to the end).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct FirstFindingWindow {
    /// Cases run in the window before.
    pub execs_before: u64,
    /// Its length in seconds.
    pub before_s: f64,
    /// Cases run in the window after.
    pub execs_after: u64,
    /// Its length in seconds.
    pub after_s: f64,
    /// Cases per second after over cases per second before (`null` when
    /// either window is empty).
    pub rate_ratio: Option<f64>,
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
    /// The findings new in this run (one per distinct signature).
    pub findings: Vec<FoundEntry>,
    /// Distinct signatures among them (`findings.len()`).
    pub distinct_signatures: usize,
    /// Distinct root causes among them (`root_causes.len()`).
    pub distinct_root_causes: usize,
    /// The new findings grouped by root cause, each with its count.
    pub root_causes: Vec<Group>,
    /// Findings the reduction queue had not classified when the run ended
    /// (each counted as its own root cause).
    pub unclassified: usize,
    /// Generator features exercised.
    pub features: Vec<&'static str>,
    /// Findings already in the work directory when the run started.
    pub resumed: usize,
    /// Whether Ctrl-C ended the run.
    pub interrupted: bool,
    /// Seconds from the start to the first new finding (`null` when none).
    pub first_finding_s: Option<f64>,
    /// Executions before and after the first new finding (`null` when
    /// none).
    pub first_finding_window: Option<FirstFindingWindow>,
    /// Threads abandoned because a stage overran its deadline.
    pub stalled: usize,
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

/// State shared by the workers, the reducer and the main thread.
pub(crate) struct Shared {
    opts: CampaignOptions,
    plan: case::Plan,
    dir: WorkDir,
    next: AtomicU64,
    execs: AtomicU64,
    features: AtomicU32,
    stop: AtomicBool,
    /// Workers still exploring (abandoned ones are not counted).
    running: AtomicUsize,
    /// Workers inside a [`Writing`] guard.
    writing: AtomicUsize,
    seen: Mutex<HashSet<String>>,
    /// Per signature, how many later cases of it were queued for another
    /// reduction ([`retry_smaller`]).
    retries: Mutex<HashMap<String, usize>>,
    found: Mutex<Vec<FoundEntry>>,
    notes: Mutex<Vec<String>>,
    causes: Mutex<RootCauses>,
    queue: queue::Queue,
    threads: supervise::Threads,
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

/// The options [`options_line`] printed, read back; `Err` names the word
/// it does not understand.
pub fn parse_options_line(line: &str) -> Result<Options, String> {
    let mut o = Options::default();
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let value = words.get(i + 1).copied().ok_or_else(|| format!("{} has no value", words[i]))?;
        match (words[i], value) {
            ("--sched", "topdown") => o.sched = Sched::TopDown,
            ("--sched", "bottomup") => o.sched = Sched::BottomUp,
            ("--ra", "split") => o.ra = Ra::Split,
            ("--ra", "graph") => o.ra = Ra::Graph,
            ("--inject", f) => o.inject = Some(Fault::from_name(f).ok_or_else(|| format!("unknown fault {f}"))?),
            ("--stress-regalloc", n) => o.stress_regalloc = Some(n.parse().map_err(|_| format!("bad --stress-regalloc {n}"))?),
            ("--post", "list") => o.post = schedra_compiler::Post::List,
            ("--post", "peephole") => o.post = schedra_compiler::Post::Peephole,
            (flag, v) => return Err(format!("unknown option {flag} {v}")),
        }
        i += 2;
    }
    Ok(o)
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
        running: AtomicUsize::new(0),
        writing: AtomicUsize::new(0),
        seen: Mutex::new(seen),
        retries: Mutex::new(HashMap::new()),
        found: Mutex::new(Vec::new()),
        notes: Mutex::new(Vec::new()),
        causes: Mutex::new(RootCauses::default()),
        queue: queue::Queue::default(),
        threads: supervise::Threads::default(),
        opts,
    });
    supervise::spawn_workers(&shared)?;
    supervise::spawn_reducer(&shared);
    let mut display = Display::new(shared.opts.time, shared.opts.terminal, !shared.opts.progress);
    let timeline = watch(&shared, &mut display, start);
    display.finish();
    Ok(summarize(&shared, &timeline, resumed))
}

/// The summary of the campaign `shared` ran, `timeline` its executions.
fn summarize(shared: &Shared, timeline: &Timeline, resumed: usize) -> Summary {
    let elapsed = shared.start.elapsed().as_secs_f64();
    let execs = shared.execs.load(Ordering::SeqCst);
    let mut findings = shared.found.lock().map(|f| f.clone()).unwrap_or_default();
    let mut causes = shared.causes.lock().map(|c| c.clone()).unwrap_or_default();
    for f in &mut findings {
        f.root_cause = causes.cause_of(&f.signature).map(str::to_string);
    }
    let unclassified = findings.iter().filter(|f| f.root_cause.is_none()).count();
    for f in findings.iter().filter(|f| f.root_cause.is_none()) {
        causes.join(&format!("signature {}", f.signature), &f.signature, &f.dir);
    }
    let first_finding_s = findings.iter().map(|f| f.found_s).min_by(f64::total_cmp);
    Summary {
        execs,
        execs_per_sec: if elapsed > 0.0 { execs as f64 / elapsed } else { 0.0 },
        time_s: elapsed,
        distinct_signatures: findings.len(),
        distinct_root_causes: causes.groups.len(),
        root_causes: causes.groups,
        unclassified,
        findings,
        features: Features(shared.features.load(Ordering::SeqCst)).names(),
        resumed,
        interrupted: INTERRUPTED.load(Ordering::SeqCst),
        first_finding_window: first_finding_s.map(|t| timeline.window(t, 30.0, elapsed, execs)),
        first_finding_s,
        stalled: shared.threads.abandoned(),
    }
}

/// The campaign's end: `time` after `start`, or a century after it when
/// `time` reaches past what an `Instant` can hold (never a panic).
fn deadline(start: Instant, time: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
    // The last fallback (`start`) cannot happen on a 64-bit clock.
    start.checked_add(time).or_else(|| start.checked_add(CENTURY)).unwrap_or(start)
}

/// The most the main thread waits after the stop for workers that are
/// writing a finding (a write takes milliseconds; this bounds a stuck disk).
const GRACE: Duration = Duration::from_secs(10);

/// A thread's permission to write to the work directory. Taken only before
/// the stop: the count is raised first and the stop flag read after it
/// (both sequentially consistent), so either the main thread sees the count
/// and waits, or the thread sees the stop and writes nothing.
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

/// Update the display and supervise the threads until the deadline or
/// Ctrl-C, then stop them and wait until none is writing (at most
/// [`GRACE`]); threads still in a case are left behind. Returns the
/// executions over time.
fn watch(shared: &Arc<Shared>, display: &mut Display, start: Instant) -> Timeline {
    let mut stopped_at: Option<Instant> = None;
    let mut timeline = Timeline::default();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if stopped_at.is_none() {
            supervise::supervise(shared);
        }
        if let Ok(mut notes) = shared.notes.lock() {
            for n in notes.drain(..) {
                display.note(&n);
            }
        }
        let snap = snapshot(shared, start);
        timeline.record(snap.elapsed.as_secs_f64(), snap.execs);
        display.update(&snap);
        if shared.running.load(Ordering::SeqCst) == 0 {
            shared.stop.store(true, Ordering::SeqCst);
            if shared.writing.load(Ordering::SeqCst) == 0 {
                return timeline;
            }
        }
        if shared.stopping() && stopped_at.is_none() {
            shared.stop.store(true, Ordering::SeqCst);
            stopped_at = Some(Instant::now());
            shared.queue.wake_all();
        }
        if stopped_at.is_some() && shared.writing.load(Ordering::SeqCst) == 0 {
            return timeline;
        }
        if stopped_at.is_some_and(|t| t.elapsed() > GRACE) {
            display.note("fuzz: a finding is still being written; leaving it");
            return timeline;
        }
    }
}

fn snapshot(shared: &Shared, start: Instant) -> Snapshot {
    Snapshot {
        execs: shared.execs.load(Ordering::Relaxed),
        findings: shared.found.lock().map(|f| f.len()).unwrap_or(0),
        root_causes: shared.causes.lock().map(|c| c.groups.len()).unwrap_or(0),
        features: Features(shared.features.load(Ordering::Relaxed)),
        elapsed: start.elapsed(),
        total: shared.opts.time,
        stalled: shared.threads.abandoned(),
        slowest: shared.threads.slowest(),
        queued: shared.queue.len(),
    }
}

/// Run cases until told to stop or abandoned. A case that ends after the
/// stop, or after the supervisor gave this worker up, is thrown away.
fn worker(shared: &Shared, clock: &crate::phase::Clock) {
    let targets = &shared.opts.targets;
    while !shared.stopping() && !clock.is_abandoned() {
        let k = shared.next.fetch_add(1, Ordering::Relaxed);
        let target = targets[(k % targets.len() as u64) as usize];
        clock.begin_case(k);
        let out = case::run_case_from(shared.opts.seed, k, target, &shared.plan, &shared.opts.seeds, &mut oracle::StageTimes::default());
        clock.enter(crate::phase::Phase::Idle);
        if shared.stopping() || clock.is_abandoned() {
            return;
        }
        shared.features.fetch_or(out.features.0, Ordering::Relaxed);
        shared.execs.fetch_add(1, Ordering::Relaxed);
        if let Some((f, seeds)) = out.finding {
            record(shared, f, seeds);
        }
    }
}

/// Write a finding if its signature is new and queue it for
/// classification and reduction; count it against its root cause if not.
fn record(shared: &Shared, f: Finding, seeds: [u64; 2]) {
    let sig = f.signature();
    let found_s = shared.start.elapsed().as_secs_f64();
    let Some(writing) = Writing::enter(shared) else { return };
    let fresh = shared.seen.lock().map(|mut s| s.insert(sig.clone())).unwrap_or(false);
    if !fresh {
        if let Ok(mut c) = shared.causes.lock() {
            c.hit(&sig);
        }
        drop(writing);
        retry_smaller(shared, f, seeds, &sig);
        return;
    }
    let opts = options_of(shared, &f);
    let dir = match shared.dir.write(&f, &options_line(&opts)) {
        Ok(d) => d,
        Err(e) => {
            note(shared, format!("fuzz: cannot write finding {sig}: {e}"));
            return;
        }
    };
    note(shared, format!("fuzz: new finding {sig}\n      -> {}", dir.display()));
    let entry = FoundEntry {
        signature: sig.clone(),
        kind: f.kind_name(),
        target: f.target.clone(),
        minimized_instructions: f.source.as_ref().map(|p| p.op_count()).unwrap_or(0),
        dir: dir.display().to_string(),
        found_s,
        root_cause: None,
    };
    if let Ok(mut found) = shared.found.lock() {
        found.push(entry);
    }
    drop(writing);
    shared.queue.push(queue::Job { finding: f, options: opts, seeds, signature: sig, dir, retry: false });
}

/// A reproducer at most this long is not reduced again from other cases.
const SMALL_ENOUGH: usize = 8;

/// The most later cases of one signature reduced again.
const MAX_RETRIES: usize = 8;

/// Offer a later case of a known signature for another reduction while
/// the signature's reproducer is still longer than [`SMALL_ENOUGH`] and
/// fewer than [`MAX_RETRIES`] of its cases were queued so
/// ([`queue::Queue::offer_retry`]: only when nothing else waits, the
/// smallest such case waiting): a reduction ends in a local minimum, and
/// another start often ends lower. The result replaces `min.ir` only when
/// it is smaller ([`queue`]).
fn retry_smaller(shared: &Shared, f: Finding, seeds: [u64; 2], sig: &str) {
    if !shared.opts.reduce || f.kind == crate::oracle::Kind::Timeout {
        return;
    }
    let Some((dir, size)) = recorded(shared, sig) else { return };
    if size <= SMALL_ENOUGH {
        return;
    }
    let Ok(mut retries) = shared.retries.lock() else { return };
    let tries = retries.entry(sig.to_string()).or_insert(0);
    if *tries >= MAX_RETRIES {
        return;
    }
    let options = options_of(shared, &f);
    if shared.queue.offer_retry(queue::Job { finding: f, options, seeds, signature: sig.to_string(), dir: dir.into(), retry: true }) {
        *tries += 1;
    }
}

/// The options a finding failed under (the campaign's fault on defaults
/// when it names none).
fn options_of(shared: &Shared, f: &Finding) -> Options {
    f.options.unwrap_or(Options { inject: shared.opts.inject, ..Options::default() })
}

/// The directory and the reproducer's size recorded for signature `sig`.
fn recorded(shared: &Shared, sig: &str) -> Option<(String, usize)> {
    let found = shared.found.lock().ok()?;
    found.iter().find(|e| e.signature == sig).map(|e| (e.dir.clone(), e.minimized_instructions))
}

fn note(shared: &Shared, msg: String) {
    if let Ok(mut n) = shared.notes.lock() {
        n.push(msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_lines_read_back() {
        let o = Options { sched: Sched::BottomUp, ra: Ra::Graph, inject: Some(Fault::SchedStuckReady), stress_regalloc: Some(4), post: schedra_compiler::Post::List };
        assert_eq!(parse_options_line(&options_line(&o)), Ok(o));
        let peephole = Options { post: schedra_compiler::Post::Peephole, ..o };
        assert_eq!(parse_options_line(&options_line(&peephole)), Ok(peephole));
        assert_eq!(parse_options_line(""), Ok(Options::default()));
        assert!(parse_options_line("--ra wild").is_err());
        assert!(parse_options_line("--inject").is_err());
    }

    #[test]
    fn deadline_never_overflows() {
        let start = Instant::now();
        assert_eq!(deadline(start, Duration::from_secs(30)), start + Duration::from_secs(30));
        let far = deadline(start, Duration::MAX);
        assert!(far > start + Duration::from_secs(365 * 86_400), "a huge --time runs (practically) forever");
    }
}
