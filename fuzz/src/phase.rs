//! Phase clocks: which stage of a case (generate, compile, verify, run,
//! parse) each campaign thread is in and since when, so that a supervisor
//! on another thread can tell a thread that overran its stage's deadline.
//!
//! A thread that wants to be watched installs a [`Clock`] ([`watch`]); the
//! oracles then call [`enter`] at every stage boundary. On a thread without
//! a clock, [`enter`] does nothing (one thread-local read), so the oracles
//! cost the same outside a campaign.
//!
//! Invariant: a clock's stage and start time are written only by its own
//! thread and read by anyone; both are atomics, so a reader sees a stage
//! and a start that were true at some moment (the start is written before
//! the stage, so a reader never pairs a new stage with an older start by
//! more than one store).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A stage of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Phase {
    /// Between cases (no deadline).
    Idle = 0,
    /// Generating the program.
    Generate = 1,
    /// Compiling it.
    Compile = 2,
    /// Verifying the output (or a mutant).
    Verify = 3,
    /// Running source, output or mutant in the interpreters.
    Run = 4,
    /// Parsing and printing (the round-trip oracle).
    Parse = 5,
    /// Reducing a finding (the candidates' own stages are tracked while
    /// they are checked; this is the time between them).
    Reduce = 6,
}

impl Phase {
    /// Its name in signatures and progress lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Generate => "generate",
            Phase::Compile => "compile",
            Phase::Verify => "verify",
            Phase::Run => "run",
            Phase::Parse => "parse",
            Phase::Reduce => "reduce",
        }
    }
    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::Generate,
            2 => Phase::Compile,
            3 => Phase::Verify,
            4 => Phase::Run,
            5 => Phase::Parse,
            6 => Phase::Reduce,
            _ => Phase::Idle,
        }
    }
}

/// One watched thread's stage, the time it began, and the case it is on.
#[derive(Debug)]
pub struct Clock {
    origin: Instant,
    stage: AtomicU8,
    since_us: AtomicU64,
    case: AtomicU64,
    /// Set by the supervisor when it gives the thread up: whatever the
    /// thread computes afterwards must be thrown away.
    pub abandoned: AtomicBool,
    /// The thread's kernel id (Linux), for lowering its priority once it is
    /// abandoned; 0 when unknown.
    pub tid: AtomicU64,
}

impl Clock {
    /// A clock whose times count from `origin`.
    pub fn new(origin: Instant) -> Clock {
        Clock { origin, stage: AtomicU8::new(0), since_us: AtomicU64::new(0), case: AtomicU64::new(0), abandoned: AtomicBool::new(false), tid: AtomicU64::new(0) }
    }
    /// Enter `stage` now.
    pub fn enter(&self, stage: Phase) {
        let us = self.origin.elapsed().as_micros().min(u64::MAX as u128) as u64;
        self.since_us.store(us, Ordering::Release);
        self.stage.store(stage as u8, Ordering::Release);
    }
    /// Start case `k` (in [`Phase::Generate`]).
    pub fn begin_case(&self, k: u64) {
        self.case.store(k, Ordering::Release);
        self.enter(Phase::Generate);
    }
    /// The stage now and how long it has run.
    pub fn read(&self) -> (Phase, Duration) {
        let stage = Phase::from_u8(self.stage.load(Ordering::Acquire));
        let since = Duration::from_micros(self.since_us.load(Ordering::Acquire));
        (stage, self.origin.elapsed().saturating_sub(since))
    }
    /// The case index last begun.
    pub fn case(&self) -> u64 {
        self.case.load(Ordering::Acquire)
    }
    /// Whether the supervisor gave this thread up.
    pub fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
    }
}

thread_local! {
    static CLOCK: RefCell<Option<Arc<Clock>>> = const { RefCell::new(None) };
}

/// Make `clock` this thread's clock (records the thread's id in it).
pub fn watch(clock: Arc<Clock>) {
    clock.tid.store(thread_id(), Ordering::Release);
    CLOCK.with(|c| *c.borrow_mut() = Some(clock));
}

/// Enter `stage` on this thread's clock, if it has one.
pub fn enter(stage: Phase) {
    CLOCK.with(|c| {
        if let Some(clock) = c.borrow().as_ref() {
            clock.enter(stage);
        }
    });
}

/// The calling thread's kernel id (0 where there is none to give).
fn thread_id() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions and cannot fail.
        (unsafe { libc::gettid() }) as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Lower the scheduling priority of thread `tid` to `nice` (Linux; a
/// no-op elsewhere or when `tid` is 0). An abandoned thread that spins
/// then takes the cores only when nothing else wants them.
pub fn lower_priority(tid: u64, nice: i32) {
    #[cfg(target_os = "linux")]
    if tid != 0 {
        // SAFETY: setpriority reads only its integer arguments; on a thread
        // that has exited it fails with ESRCH, which is ignored.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (tid, nice);
}

/// The nice value of thread `tid` (0 where it cannot be read).
pub fn priority(tid: u64) -> i32 {
    #[cfg(target_os = "linux")]
    if tid != 0 {
        // SAFETY: getpriority reads only its integer arguments. It can
        // return -1 as a value or as an error; either way -1 is a nice
        // value to start from.
        return unsafe { libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t) };
    }
    let _ = tid;
    0
}

/// How long each stage may run before the case counts as hung.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadlines {
    /// Generating a program.
    pub generate: Duration,
    /// Compiling it.
    pub compile: Duration,
    /// Verifying one program (every solver query has its own timeout
    /// besides; running out of those is `unknown`, not a hang).
    pub verify: Duration,
    /// Running the programs (the interpreters have fuel besides).
    pub run: Duration,
    /// Parsing and printing.
    pub parse: Duration,
    /// Reducing one finding: the reduction stops there with the smallest
    /// program so far (it is cooperative, never a hang).
    pub reduce: Duration,
}

impl Default for Deadlines {
    fn default() -> Deadlines {
        Deadlines::with_stage(Duration::from_secs(1))
    }
}

impl Deadlines {
    /// `stage` for generating, compiling, running and parsing; verification
    /// 60 times that (at least 60 s), reduction 120 s (at least twice
    /// verification's deadline).
    pub fn with_stage(stage: Duration) -> Deadlines {
        let verify = stage.saturating_mul(60).max(Duration::from_secs(60));
        Deadlines { generate: stage, compile: stage, verify, run: stage.saturating_mul(2), parse: stage, reduce: verify.saturating_mul(2).max(Duration::from_secs(120)) }
    }
    /// The deadline of `stage` (`None`: no deadline).
    pub fn of(&self, stage: Phase) -> Option<Duration> {
        match stage {
            Phase::Idle | Phase::Reduce => None,
            Phase::Generate => Some(self.generate),
            Phase::Compile => Some(self.compile),
            Phase::Verify => Some(self.verify),
            Phase::Run => Some(self.run),
            Phase::Parse => Some(self.parse),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reports_its_stage_and_age() {
        let clock = Arc::new(Clock::new(Instant::now()));
        assert_eq!(clock.read().0, Phase::Idle);
        let c = Arc::clone(&clock);
        std::thread::spawn(move || {
            watch(c);
            enter(Phase::Compile);
        })
        .join()
        .expect("thread");
        std::thread::sleep(Duration::from_millis(20));
        let (stage, age) = clock.read();
        assert_eq!(stage, Phase::Compile);
        assert!(age >= Duration::from_millis(20), "{age:?}");
        enter(Phase::Verify);
        assert_eq!(clock.read().0, Phase::Compile, "a thread without this clock does not move it");
    }

    #[test]
    fn deadlines_scale_from_the_stage_deadline() {
        let d = Deadlines::with_stage(Duration::from_secs(2));
        assert_eq!(d.of(Phase::Compile), Some(Duration::from_secs(2)));
        assert_eq!(d.of(Phase::Run), Some(Duration::from_secs(4)));
        assert_eq!(d.of(Phase::Verify), Some(Duration::from_secs(120)));
        assert_eq!(d.of(Phase::Idle), None);
        assert!(d.reduce >= d.verify);
        let huge = Deadlines::with_stage(Duration::MAX);
        assert_eq!(huge.compile, Duration::MAX, "no overflow");
    }
}
