//! The reduction queue: new findings wait here for the reducer thread, off
//! the exploration path, so workers go on running cases while findings are
//! classified and reduced.
//!
//! For each finding the reducer first finds its root cause
//! ([`rootcause::fix_key`]: which single change of compile options fixes
//! it), then reduces it when it is the first of its root cause (or has no
//! fix key: then its reduced program is its key). Later findings of a known
//! root cause wait in a second queue and are reduced only when the first is
//! empty. A later case of a signature already recorded is reduced again,
//! after every other job, while the signature's reproducer is longer than a
//! few instructions (at most a few such cases per signature; `retry_smaller`
//! in the campaign): reductions end in local minima, another start often
//! ends lower, and its result replaces `min.ir` only when it is smaller.
//! Each reduction has its own budget (`Deadlines::reduce`), and the
//! reducer thread runs at a lower priority than the workers (five nice
//! levels, Linux), so on a loaded machine exploration comes first.
//! `timeout` findings are reduced through a child process ([`HangTest`]),
//! each candidate given a quarter of the deadline of the stage that overran
//! ([`candidate_deadline`]); the result is confirmed with the full deadline.
//!
//! While reducing, the best program so far is written to `min.ir` at most
//! once a second, so a campaign that ends mid-reduction leaves the smallest
//! reproducer it had.
//!
//! Invariant: before checking any program the reducer publishes it in its
//! [`Watched::candidate`], so that if the check never returns the
//! supervisor can save the program it hung on; after each check it goes
//! back to [`Phase::Reduce`] (no deadline), so the time it spends between
//! checks, or waiting for a child process, never counts against a stage.

use super::rootcause::{fix_key, program_key};
use super::supervise::Watched;
use super::{case, note, options_line, Shared, Writing};
use crate::oracle::{Finding, Kind};
use crate::reduce::hang::HangTest;
use crate::reduce::interesting::{failure, Check, Oracle, SameFailure};
use crate::reduce::{self, ReduceOptions};
use crate::phase::{self, Phase};
use schedra_compiler::Options;
use schedra_ir::Program;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A finding waiting for the reducer.
#[derive(Clone, Debug)]
pub struct Job {
    /// The finding.
    pub finding: Finding,
    /// The options it failed under.
    pub options: Options,
    /// Its run seeds.
    pub seeds: [u64; 2],
    /// Its signature.
    pub signature: String,
    /// Its directory.
    pub dir: PathBuf,
    /// A later case of a signature already reduced: its reduction replaces
    /// the signature's `min.ir` only when smaller.
    pub retry: bool,
}

#[derive(Debug, Default)]
struct Lists {
    /// New findings, in the order found.
    new: VecDeque<Job>,
    /// Classified findings of a root cause already being reduced.
    later: VecDeque<Job>,
}

/// The queue.
#[derive(Debug, Default)]
pub struct Queue {
    lists: Mutex<Lists>,
    ready: Condvar,
}

impl Queue {
    /// Add a new finding.
    pub fn push(&self, job: Job) {
        if let Ok(mut l) = self.lists.lock() {
            l.new.push_back(job);
        }
        self.ready.notify_one();
    }
    fn push_later(&self, job: Job) {
        if let Ok(mut l) = self.lists.lock() {
            l.later.push_back(job);
        }
    }
    /// Offer a later case of a known signature for another reduction
    /// ([`Job::retry`]), taken only when nothing but retries waits: it
    /// replaces a waiting retry of the same signature when it is smaller
    /// (the most promising start waits, one per signature), else joins the
    /// queue. Returns whether it joined as a new retry.
    pub fn offer_retry(&self, job: Job) -> bool {
        let Ok(mut l) = self.lists.lock() else { return false };
        if !l.new.is_empty() || l.later.iter().any(|j| !j.retry) {
            return false;
        }
        let size = |j: &Job| j.finding.source.as_ref().map_or(usize::MAX, Program::op_count);
        if let Some(waiting) = l.later.iter_mut().find(|j| j.signature == job.signature) {
            if size(&job) < size(waiting) {
                *waiting = job;
            }
            return false;
        }
        l.later.push_back(job);
        drop(l);
        self.ready.notify_one();
        true
    }
    /// The next job (a new one first) and whether it was already
    /// classified; waits at most `wait`.
    fn pop(&self, wait: Duration) -> Option<(Job, bool)> {
        let mut l = self.lists.lock().ok()?;
        if l.new.is_empty() && l.later.is_empty() {
            l = self.ready.wait_timeout(l, wait).ok()?.0;
        }
        l.new.pop_front().map(|j| (j, false)).or_else(|| l.later.pop_front().map(|j| (j, true)))
    }
    /// Findings waiting.
    pub fn len(&self) -> usize {
        self.lists.lock().map(|l| l.new.len() + l.later.len()).unwrap_or(0)
    }
    /// Whether no finding waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Wake the reducer (at the stop).
    pub fn wake_all(&self) {
        self.ready.notify_all();
    }
}

/// Nice levels the reducer runs below the workers.
const REDUCER_NICE: i32 = 5;

/// The reducer thread: take jobs until the campaign stops or abandons it.
pub(crate) fn reducer(shared: &Shared, me: &Watched) {
    let tid = me.clock.tid.load(Ordering::Acquire);
    phase::lower_priority(tid, phase::priority(tid).saturating_add(REDUCER_NICE).min(19));
    while !shared.stopping() && !me.clock.is_abandoned() {
        let Some((job, classified)) = shared.queue.pop(Duration::from_millis(100)) else { continue };
        if classified {
            reduce_job(shared, me, &job, None);
        } else {
            classify(shared, me, job);
        }
        me.clock.enter(Phase::Idle);
    }
}

/// The check a finding is reduced under: the verifier for violations,
/// every oracle otherwise.
fn check_of(shared: &Shared, job: &Job) -> Check {
    let oracle = if job.finding.kind == Kind::Violation { Oracle::Verify } else { Oracle::Both };
    Check { options: job.options, verify: shared.plan.vopts, oracle, seeds: job.seeds.to_vec() }
}

/// File the job under its root cause; reduce it now if it is the first of
/// that cause (or has no fix key), later otherwise.
fn classify(shared: &Shared, me: &Watched, job: Job) {
    me.clock.enter(Phase::Reduce);
    let check = check_of(shared, &job);
    let key = match &job.finding.source {
        Some(src) if job.finding.kind != Kind::Unknown => {
            publish(me, src, &job);
            let key = fix_key(src, &check, job.finding.kind);
            me.clock.enter(Phase::Reduce);
            key
        }
        _ => None,
    };
    if me.clock.is_abandoned() {
        return;
    }
    let cause = key.clone().unwrap_or_else(|| format!("signature {}", job.signature));
    let first = shared.causes.lock().map(|mut c| c.join(&cause, &job.signature, &job.dir.display().to_string())).unwrap_or(true);
    if let Some(_w) = Writing::enter(shared) {
        let _ = shared.dir.write_note(&job.dir, "root-cause.txt", &format!("{cause}\n"));
    }
    if !shared.opts.reduce {
        return;
    }
    if first || key.is_none() {
        reduce_job(shared, me, &job, Some(key.is_none()));
    } else {
        shared.queue.push_later(job);
    }
}

/// Reduce the job's finding and record the result; `rekey` (when `Some(true)`)
/// files it under its reduced program's key afterwards.
fn reduce_job(shared: &Shared, me: &Watched, job: &Job, rekey: Option<bool>) {
    me.clock.enter(Phase::Reduce);
    let Some(reduced) = minimize(shared, me, job) else { return };
    let n = reduced.op_count();
    if let Ok(mut c) = shared.causes.lock() {
        c.reduced(&job.signature, n);
        if rekey == Some(true) && job.finding.kind != Kind::Timeout {
            c.rekey(&job.signature, &program_key(&reduced));
        }
    }
    if let Ok(mut found) = shared.found.lock() {
        if let Some(e) = found.iter_mut().find(|e| e.signature == job.signature) {
            e.minimized_instructions = n;
        }
    }
}

/// Make `p` the reducer's published candidate.
fn publish(me: &Watched, p: &Program, job: &Job) {
    publish_with(me, p, job.options, job.seeds);
}

fn publish_with(me: &Watched, p: &Program, options: Options, seeds: [u64; 2]) {
    if let Ok(mut c) = me.candidate.lock() {
        *c = Some((p.clone(), options, seeds));
    }
}

/// The smallest program accepted so far, written to `min.ir` at most once
/// a second while the reduction runs.
struct Best<'a> {
    shared: &'a Shared,
    dir: &'a Path,
    header: String,
    last: Option<Program>,
    written: Instant,
    /// For a retry, the signature whose recorded size a program must beat
    /// to be written.
    beat: Option<&'a str>,
}

impl Best<'_> {
    fn accept(&mut self, p: &Program) {
        self.last = Some(p.clone());
        if self.beat.is_some_and(|sig| !smaller_than_recorded(self.shared, sig, p)) {
            return;
        }
        if self.written.elapsed() >= Duration::from_secs(1) {
            self.written = Instant::now();
            let text = format!("{}# partial: the reduction was still running\n{}", self.header, schedra_ir::print::print(p));
            write_min(self.shared, self.dir, &text);
        }
    }
}

/// Whether `p` is shorter than the reproducer recorded for `sig`.
fn smaller_than_recorded(shared: &Shared, sig: &str, p: &Program) -> bool {
    super::recorded(shared, sig).is_none_or(|(_, n)| p.op_count() < n)
}

fn write_min(shared: &Shared, dir: &Path, text: &str) -> bool {
    let Some(_w) = Writing::enter(shared) else { return false };
    shared.dir.write_min(dir, text).is_ok()
}

/// Reduce the job's finding; `min.ir` holds the result (and, while it
/// runs, the best so far). Returns the reduced program.
fn minimize(shared: &Shared, me: &Watched, job: &Job) -> Option<Program> {
    let f = &job.finding;
    if f.kind == Kind::Timeout {
        return minimize_hang(shared, me, job);
    }
    if !case::reproducible(f) {
        return None;
    }
    let src = f.source.as_ref()?;
    let check = check_of(shared, job);
    publish(me, src, job);
    let same = SameFailure::of(src, &check)?;
    let (opts, same) = fewest_registers(me, job, src, &check, same);
    let line = options_line(&opts);
    let header = format!("# {}\n# reproduce: schedra verify min.ir {line}\n", job.signature);
    let beat = job.retry.then_some(job.signature.as_str());
    let mut best = Best { shared, dir: &job.dir, header, last: None, written: Instant::now(), beat };
    let ropts = ReduceOptions { time_limit: Some(shared.opts.deadlines.reduce), ..ReduceOptions::default() };
    let pred = |p: &Program, any: &SameFailure, best: &mut Best| {
        if shared.stopping() || me.clock.is_abandoned() {
            return false;
        }
        publish_with(me, p, opts, job.seeds);
        let yes = any.is_interesting(p);
        me.clock.enter(Phase::Reduce);
        if yes {
            best.accept(p);
        }
        yes
    };
    let mut reduced = reduce::reduce(src, &mut |p| pred(p, &same, &mut best), &ropts).ok()?.program;
    if let Some(any) = same.attributable() {
        if let Ok(r) = reduce::reduce(&reduced, &mut |p| pred(p, &any, &mut best), &ropts) {
            reduced = r.program;
        }
    }
    if me.clock.is_abandoned() {
        return None;
    }
    let check = Check { options: opts, ..check };
    publish_with(me, &reduced, opts, job.seeds);
    let kept = failure(&reduced, &check).map(|k| format!("{}: {}", k.kind, k.message.lines().next().unwrap_or_default())).unwrap_or_default();
    if beat.is_some_and(|sig| !smaller_than_recorded(shared, sig, &reduced)) {
        return None;
    }
    let from = if job.retry { "# from: a later case of this signature (case.ir is the first)\n".to_string() } else { format!("# reduce: schedra reduce case.ir {line}\n") };
    let text = format!("# {}\n# keeps: {kept}\n# reproduce: schedra verify min.ir {line}\n{from}{}", job.signature, schedra_ir::print::print(&reduced));
    write_min(shared, &job.dir, &text).then_some(reduced)
}

/// Reduce a `timeout` finding with [`HangTest`] (a child process per
/// candidate, killed at the stage's deadline). Needs the `schedra` binary
/// and a stage a child can run (compile, verify).
fn minimize_hang(shared: &Shared, me: &Watched, job: &Job) -> Option<Program> {
    let f = &job.finding;
    let src = f.source.as_ref()?;
    let stage = [Phase::Compile, Phase::Verify].into_iter().find(|s| s.as_str() == f.rule)?;
    let Some(exe) = shared.opts.exe.as_ref() else {
        note(shared, format!("fuzz: {}: not reduced (no schedra binary to run candidates in)", job.signature));
        return None;
    };
    let full = shared.opts.deadlines.of(stage)?;
    let deadline = candidate_deadline(full);
    let check = check_of(shared, job);
    publish(me, src, job);
    let (mut test, options) = fewest_registers_hanging(exe, stage, &check, deadline, src)?;
    me.clock.enter(Phase::Reduce);
    let line = options_line(&options);
    let sub = stage.as_str();
    let header = format!("# {}\n# keeps: timeout: `schedra {sub}` does not finish\n# reproduce: schedra {sub} min.ir {line}\n", job.signature);
    let mut best = Best { shared, dir: &job.dir, header: header.clone(), last: None, written: Instant::now(), beat: None };
    let ropts = ReduceOptions { time_limit: Some(shared.opts.deadlines.reduce), ..ReduceOptions::default() };
    let mut pred = |p: &Program| {
        if shared.stopping() || me.clock.is_abandoned() {
            return false;
        }
        publish(me, p, job);
        // The child runs under its own deadline: only the in-process
        // checks of the candidate are on this thread's stage clock.
        me.clock.enter(Phase::Reduce);
        let yes = test.is_interesting(p);
        me.clock.enter(Phase::Reduce);
        if yes {
            best.accept(p);
        }
        yes
    };
    let reduced = reduce::reduce(src, &mut pred, &ropts).ok()?.program;
    if shared.stopping() || me.clock.is_abandoned() {
        return None;
    }
    let confirmed = if test.confirm(&reduced, full) { "still runs" } else { "NOT confirmed: finishes" };
    let text = format!("{header}# confirmed: {confirmed} after {:.1}s\n{}", full.as_secs_f64(), schedra_ir::print::print(&reduced));
    write_min(shared, &job.dir, &text).then_some(reduced)
}

/// The hang test to reduce under, and its options: with the smallest
/// `--stress-regalloc` count of [`case::STRESS_REGS`] (below the case's
/// own) under which `src` still hangs after the uncalibrated `deadline`
/// (a mistaken choice would end the reduction at its first check), else
/// the case's own options (see [`fewest_registers`]: spill code with fewer
/// live values makes smaller programs). `None` when no test can be made.
fn fewest_registers_hanging(exe: &Path, stage: Phase, check: &Check, deadline: Duration, src: &Program) -> Option<(HangTest, Options)> {
    let current = check.options.stress_regalloc.unwrap_or(u16::MAX);
    for &n in case::STRESS_REGS.iter().filter(|&&n| n < current) {
        let c = Check { options: Options { stress_regalloc: Some(n), ..check.options }, ..check.clone() };
        if let Some(mut t) = HangTest::new(exe, stage, &c, deadline, src) {
            if t.is_interesting_after(src, deadline) {
                return Some((t, c.options));
            }
        }
    }
    HangTest::new(exe, stage, check, deadline, src).map(|t| (t, check.options))
}

/// The time a candidate of a hang reduction may take: a quarter of the
/// stage's deadline, at least 250 ms. Programs no larger than the one that
/// hung normally take milliseconds; a candidate still running after a
/// quarter of the deadline is kept as hanging, so each kept candidate costs
/// a quarter of what the campaign waited. Where the input can be timed
/// without its injected fault, [`HangTest`] lowers it further
/// ([`crate::reduce::hang::calibrated`]).
pub fn candidate_deadline(stage: Duration) -> Duration {
    (stage / 4).max(Duration::from_millis(250))
}

/// The compile options to reduce under: the job's, or with the smallest
/// `--stress-regalloc` count of [`case::STRESS_REGS`] (below the finding's
/// own, if it has one) under which `src` still fails. Fewer registers make
/// a spill with fewer live values, so spill faults reduce to a handful of
/// instructions instead of the register file's size. When the finding is
/// attributable to the injected fault (proven without it), any failure that
/// stays attributable will do: the same fault often shows first as another
/// kind under another register count (a `clobber` at 12 is a `latency` at
/// 4). Otherwise the failure must be the same.
fn fewest_registers(me: &Watched, job: &Job, src: &Program, check: &Check, same: SameFailure) -> (Options, SameFailure) {
    let current = check.options.stress_regalloc.unwrap_or(u16::MAX);
    for &n in case::STRESS_REGS.iter().filter(|&&n| n < current) {
        let c = Check { options: Options { stress_regalloc: Some(n), ..check.options }, ..check.clone() };
        publish_with(me, src, c.options, job.seeds);
        let s = SameFailure::of(src, &c);
        me.clock.enter(Phase::Reduce);
        if let Some(s) = s {
            let keeps = if same.requires_own() { s.requires_own() } else { s.expected == same.expected };
            if keeps {
                return (c.options, s);
            }
        }
    }
    (check.options, same)
}
