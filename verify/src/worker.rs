//! The solver thread: where Z3 queries run, under a wall-clock bound.
//!
//! Each calling thread keeps one worker thread, with its own Z3 context,
//! for as long as the worker answers in time; queries are sent to it one
//! at a time and the caller waits at most a given time for each answer.
//! A worker that is late (a query Z3 does not give up on, see
//! [`crate::smt`]'s notes on interrupts) is abandoned: the caller drops its
//! end of the job queue and starts a fresh worker for the next query, and
//! the late one exits once its query returns, or dies with the process.
//! A job that panics answers `None`, and its worker retires (the context
//! may be left mid-query).
//!
//! Invariant: a job's answer reaches only the call that sent it (each job
//! carries its own reply channel), so an abandoned worker's late answer is
//! dropped, never taken for a later query's.
//!
//! Why a kept thread: Z3 contexts are thread-local, and making one (with
//! its tables and the thread's large stack) costs far more than most of
//! the verifier's queries.

use std::cell::RefCell;
use std::sync::mpsc;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

/// Stack for the worker: Z3's simplifier recurses over deep terms.
const STACK: usize = 256 << 20;

/// Jobs after which a worker retires anyway, so that whatever a context
/// keeps between queries stays bounded over an overnight campaign.
const JOBS_PER_WORKER: u32 = 1000;

thread_local! {
    static WORKER: RefCell<Option<mpsc::Sender<Job>>> = const { RefCell::new(None) };
    /// In a worker: set by a job after which its context must not be used
    /// again ([`retire`]), or when it has run [`JOBS_PER_WORKER`] jobs.
    static RETIRING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Called from a job: the worker running it takes no further job (its
/// context is left in a state the next query must not see, e.g.
/// interrupted). The caller of this job starts a fresh worker next time.
pub fn retire() {
    RETIRING.with(|r| r.set(true));
}

fn spawn() -> Option<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("schedra-z3".into())
        .stack_size(STACK)
        .spawn(move || {
            for n in 1.. {
                let Ok(job) = rx.recv() else { break };
                if n >= JOBS_PER_WORKER {
                    retire();
                }
                // A panicking job drops its reply channel (its caller gets
                // `None` and forgets this worker); its context may be left
                // mid-query, so the worker retires with it.
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
                    retire();
                }
                if RETIRING.with(|r| r.get()) {
                    break;
                }
            }
        })
        .ok()?;
    Some(tx)
}

/// Send `job` to this thread's worker, starting one if there is none or
/// the last one has exited. Returns whether a worker took it.
fn submit(job: Job) -> bool {
    WORKER.with(|w| {
        let mut w = w.borrow_mut();
        let job = match w.as_ref() {
            Some(tx) => match tx.send(job) {
                Ok(()) => return true,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        *w = spawn();
        w.as_ref().is_some_and(|tx| tx.send(job).is_ok())
    })
}

/// Forget this thread's worker: the next query starts a fresh one.
fn abandon() {
    WORKER.with(|w| *w.borrow_mut() = None);
}

/// Run `work` on this thread's solver worker and wait at most `wait` for
/// its result; `None` when it is late, panicked or no worker could start.
/// A late worker is abandoned (see the module docs) and its result
/// dropped when it comes.
pub fn run_bounded<T: Send + 'static>(wait: Duration, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    // The reply says whether the worker retires, so that the caller never
    // sends its next job to a worker that is about to exit.
    if !submit(Box::new(move || {
        let v = work();
        let _ = tx.send((v, RETIRING.with(|r| r.get())));
    })) {
        return None;
    }
    match rx.recv_timeout(wait) {
        Ok((v, retiring)) => {
            if retiring {
                abandon();
            }
            Some(v)
        }
        Err(_) => {
            // Late, or the job panicked (and its worker retires).
            abandon();
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_worker_is_abandoned_not_awaited() {
        let start = std::time::Instant::now();
        let got = run_bounded(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_secs(30));
            1
        });
        assert_eq!(got, None);
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(run_bounded(Duration::from_secs(30), || 7), Some(7));
    }

    #[test]
    fn the_worker_is_kept_between_queries() {
        let id = || std::thread::current().id();
        let first = run_bounded(Duration::from_secs(30), id);
        assert!(first.is_some());
        assert_eq!(run_bounded(Duration::from_secs(30), id), first);
        assert_ne!(first, Some(std::thread::current().id()));
    }

    #[test]
    fn a_retired_worker_is_replaced() {
        let id = || std::thread::current().id();
        let first = run_bounded(Duration::from_secs(30), move || {
            retire();
            id()
        });
        let next = run_bounded(Duration::from_secs(30), id);
        assert!(first.is_some() && next.is_some());
        assert_ne!(first, next);
    }

    #[test]
    fn a_panicking_job_costs_one_answer_not_the_next() {
        let id = || std::thread::current().id();
        let before = run_bounded(Duration::from_secs(30), id);
        let got: Option<u32> = run_bounded(Duration::from_secs(30), || panic!("in the job"));
        assert_eq!(got, None);
        assert_eq!(run_bounded(Duration::from_secs(30), || 9), Some(9));
        let after = run_bounded(Duration::from_secs(30), id);
        assert!(before.is_some() && after.is_some());
        assert_ne!(before, after, "the panicked job's worker is not reused");
    }
}
