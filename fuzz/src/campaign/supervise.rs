//! The supervisor: the campaign's threads (workers and the reducer), each
//! with a stage clock ([`crate::phase::Clock`]), checked by the main thread
//! every tick against the stage deadlines.
//!
//! A compiler that loops forever cannot be interrupted inside a thread. So
//! a thread whose stage overran its deadline is *abandoned*: its clock is
//! marked (whatever it computes if it ever returns is thrown away), its
//! scheduling priority is lowered to the least (nice 19, Linux) so that a
//! spinning thread takes a core only when nothing else wants it, the case
//! it was on becomes a `timeout` finding (regenerated from the seed and the
//! case index for a worker; the candidate it was checking for the reducer),
//! and a fresh thread of the same role takes its place. At most
//! [`MAX_ABANDONED`] threads are abandoned per campaign; after that a stuck
//! worker is not replaced and the campaign ends when no worker is left.
//!
//! Invariant: every worker is counted in `running` exactly while it
//! explores: the first of its own exit and its abandonment uncounts it
//! ([`Watched::retire`]).

use super::{case, note, record, worker, CampaignError, Shared};
use crate::oracle::{Finding, Kind};
use crate::phase::{self, Clock, Phase};
use schedra_compiler::Options;
use schedra_ir::Program;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most threads a campaign abandons.
pub const MAX_ABANDONED: usize = 64;

/// The least scheduling priority (Linux nice value).
const NICE_ABANDONED: i32 = 19;

/// What a thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Runs cases.
    Worker,
    /// Classifies and reduces findings.
    Reducer,
}

/// A watched thread.
#[derive(Debug)]
pub struct Watched {
    /// Its role.
    pub role: Role,
    /// Its number (in its role, in order of starting).
    pub number: usize,
    /// Its stage clock.
    pub clock: Arc<Clock>,
    /// The program the reducer is checking now, with its options and run
    /// seeds (always `None` for a worker, whose case can be regenerated).
    pub candidate: Mutex<Option<(Program, Options, [u64; 2])>>,
    retired: AtomicBool,
}

impl Watched {
    /// Whether this call is the first to retire the thread (its exit or its
    /// abandonment, whichever comes first).
    pub fn retire(&self) -> bool {
        !self.retired.swap(true, Ordering::SeqCst)
    }
}

/// The campaign's threads.
#[derive(Debug, Default)]
pub struct Threads {
    all: Mutex<Vec<Arc<Watched>>>,
    abandoned: AtomicUsize,
    started: AtomicUsize,
}

impl Threads {
    /// Threads abandoned so far.
    pub fn abandoned(&self) -> usize {
        self.abandoned.load(Ordering::Relaxed)
    }
    /// The live thread whose current stage has run longest, when that is
    /// over a second: `(role, number, stage, time)`.
    pub fn slowest(&self) -> Option<(Role, usize, Phase, Duration)> {
        let all = self.all.lock().ok()?;
        all.iter()
            .filter(|w| !w.clock.is_abandoned())
            .map(|w| {
                let (s, age) = w.clock.read();
                (w.role, w.number, s, age)
            })
            .filter(|(_, _, s, age)| *s != Phase::Idle && *s != Phase::Reduce && *age > Duration::from_secs(1))
            .max_by_key(|x| x.3)
    }
    fn add(&self, role: Role, shared: &Shared) -> Arc<Watched> {
        let number = self.started.fetch_add(1, Ordering::Relaxed);
        let w = Arc::new(Watched { role, number, clock: Arc::new(Clock::new(shared.start)), candidate: Mutex::new(None), retired: AtomicBool::new(false) });
        if let Ok(mut all) = self.all.lock() {
            all.push(Arc::clone(&w));
        }
        w
    }
    fn live(&self) -> Vec<Arc<Watched>> {
        self.all.lock().map(|a| a.iter().filter(|w| !w.clock.is_abandoned()).cloned().collect()).unwrap_or_default()
    }
}

/// Start one worker; the system's error if it refuses the thread.
fn spawn_worker(shared: &Arc<Shared>) -> std::io::Result<()> {
    let w = shared.threads.add(Role::Worker, shared);
    shared.running.fetch_add(1, Ordering::SeqCst);
    let s = Arc::clone(shared);
    let me = Arc::clone(&w);
    let spawned = std::thread::Builder::new().name(format!("fuzz-{}", w.number)).spawn(move || {
        phase::watch(Arc::clone(&me.clock));
        worker(&s, &me.clock);
        if me.retire() {
            s.running.fetch_sub(1, Ordering::SeqCst);
        }
    });
    if let Err(e) = spawned {
        w.clock.abandoned.store(true, Ordering::SeqCst);
        if w.retire() {
            shared.running.fetch_sub(1, Ordering::SeqCst);
        }
        return Err(e);
    }
    Ok(())
}

/// Start `opts.jobs` workers (at least one). When the system refuses a
/// thread, the campaign runs with the workers it got; it fails only when it
/// got none.
pub(crate) fn spawn_workers(shared: &Arc<Shared>) -> Result<(), CampaignError> {
    for started in 0..shared.opts.jobs.max(1) {
        if let Err(source) = spawn_worker(shared) {
            if started == 0 {
                return Err(CampaignError::Thread { source });
            }
            break;
        }
    }
    Ok(())
}

/// Start the reduction queue's thread (classification, and reduction when
/// the campaign reduces); a refused thread leaves findings unclassified.
pub(crate) fn spawn_reducer(shared: &Arc<Shared>) {
    let w = shared.threads.add(Role::Reducer, shared);
    let s = Arc::clone(shared);
    let me = Arc::clone(&w);
    let spawned = std::thread::Builder::new().name("fuzz-reduce".into()).spawn(move || {
        phase::watch(Arc::clone(&me.clock));
        super::queue::reducer(&s, &me);
    });
    if spawned.is_err() {
        w.clock.abandoned.store(true, Ordering::SeqCst);
        note(shared, "fuzz: cannot start the reduction thread; findings are saved unreduced".into());
    }
}

/// One tick: abandon every live thread whose stage overran its deadline.
pub(crate) fn supervise(shared: &Arc<Shared>) {
    for w in shared.threads.live() {
        let (stage, age) = w.clock.read();
        let Some(limit) = shared.opts.deadlines.of(stage) else { continue };
        if age > limit {
            abandon(shared, &w, stage, age, limit);
        }
    }
}

/// Give `w` up (see the module docs), record what it was stuck on, and
/// start a replacement if the campaign may still abandon threads.
fn abandon(shared: &Arc<Shared>, w: &Watched, stage: Phase, age: Duration, limit: Duration) {
    w.clock.abandoned.store(true, Ordering::SeqCst);
    if w.role == Role::Worker && w.retire() {
        shared.running.fetch_sub(1, Ordering::SeqCst);
    }
    phase::lower_priority(w.clock.tid.load(Ordering::Acquire), NICE_ABANDONED);
    let n = shared.threads.abandoned.fetch_add(1, Ordering::SeqCst) + 1;
    let what = match w.role {
        Role::Worker => format!("worker {} stalled in {} of case {}", w.number, stage.as_str(), w.clock.case()),
        Role::Reducer => format!("the reducer stalled in {} of a candidate", stage.as_str()),
    };
    note(shared, format!("fuzz: {what}: {:.1}s, over its {:.1}s deadline; recorded as a timeout, thread abandoned ({n} so far)", age.as_secs_f64(), limit.as_secs_f64()));
    if let Some((f, seeds)) = timeout_finding(shared, w, stage, age, limit) {
        record(shared, f, seeds);
    }
    if n > MAX_ABANDONED {
        note(shared, format!("fuzz: {MAX_ABANDONED} threads abandoned; not replacing this one"));
        return;
    }
    match w.role {
        Role::Worker => {
            if spawn_worker(shared).is_err() {
                note(shared, "fuzz: cannot start a replacement worker".into());
            }
        }
        Role::Reducer => spawn_reducer(shared),
    }
}

/// The `timeout` finding for what `w` is stuck on: its case, regenerated
/// (a worker), or its candidate (the reducer). A worker stuck generating
/// has no program (the generator is not run again here): its finding names
/// the seed and case index instead. `None` when the program is gone.
fn timeout_finding(shared: &Shared, w: &Watched, stage: Phase, age: Duration, limit: Duration) -> Option<(Finding, [u64; 2])> {
    let (program, options, seeds, whence) = match w.role {
        Role::Worker if stage == Phase::Generate => {
            let k = w.clock.case();
            let target = shared.opts.targets[(k % shared.opts.targets.len() as u64) as usize];
            let message = format!("the generate stage ran {:.1}s on case {k} of seed {} ({}), over its {:.1}s deadline", age.as_secs_f64(), shared.opts.seed, target.name, limit.as_secs_f64());
            return Some((Finding::new(Kind::Timeout, target.name, stage.as_str().to_string(), message), [0, 0]));
        }
        Role::Worker => {
            let k = w.clock.case();
            let targets = &shared.opts.targets;
            let target = targets[(k % targets.len() as u64) as usize];
            let (p, o, s) = case::regenerate(shared.opts.seed, k, target, &shared.plan)?;
            (p, o, s, format!("case {k} of seed {}", shared.opts.seed))
        }
        Role::Reducer => {
            let (p, o, s) = w.candidate.lock().ok()?.clone()?;
            (p, o, s, "a reduction candidate".to_string())
        }
    };
    let message = format!("the {} stage ran {:.1}s on {whence}, over its {:.1}s deadline", stage.as_str(), age.as_secs_f64(), limit.as_secs_f64());
    let mut f = Finding::new(Kind::Timeout, program.target.name, stage.as_str().to_string(), message).with_programs(&program, None);
    f.options = Some(options);
    Some((f, seeds))
}
