//! The test-case reducer: shrink a source program while a predicate says it
//! is still interesting (wasm-shrink's interface, llvm-reduce's and
//! C-Reduce's method).
//!
//! Algorithm: [`reduce`] first checks that the input is interesting. Then it
//! runs rounds of IR-aware passes ([`passes::Pass::ALL`]: remove
//! instructions, remove instructions forwarding a source to their readers
//! ([`forward`]), cut terminators to `end` or `jmp`, merge and bypass
//! blocks, replace register reads by 0 or by earlier values, turn
//! preallocated registers virtual, drop inputs, halve multi-register
//! values). Each pass lists its opportunities and searches them with
//! chunked delta debugging ([`ddmin`]), biggest chunks first. Rounds repeat
//! until one makes no progress; then, for a small program, a second-order
//! search (pairs of removals, an edit followed by a removal, a few steps
//! sideways; see the driver) may find one more step, and the rounds go on
//! from it. Finally names are made canonical ([`canon`]: `%0`, `%1`, …,
//! `b0`, `b1`, …).
//!
//! Invariants:
//! - every candidate passes [`schedra_ir::validate::validate`] before the
//!   predicate sees it; invalid candidates cost no test;
//! - a candidate already tested (same printed text) is never tested again;
//! - the result is always interesting (it is the input, or a candidate the
//!   predicate accepted) and valid;
//! - the number of predicate calls is at most `max_tests` and the number of
//!   rounds at most `max_rounds`, so the reduction always ends; given the
//!   same input and a deterministic predicate, it returns the same output.
//!
//! The default predicate, "fails the same way" (and, with an injected fault,
//! stays attributable to it), is in [`interesting`]; the
//! outside-command predicate (`--test 'CMD {}'`) in [`command`]; the
//! predicate of a `timeout` finding ("a child process still runs it at the
//! deadline") in [`hang`]; the
//! terminal progress bar and the diff in [`report`].

pub mod canon;
pub mod cfg;
pub mod command;
pub mod ddmin;
mod driver;
pub mod forward;
pub mod hang;
pub mod insts;
pub mod interesting;
pub mod operands;
pub mod passes;
pub mod regs;
pub mod repair;
pub mod report;
pub mod scope;

use schedra_ir::Program;
use std::time::Duration;

/// Limits of one reduction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceOptions {
    /// Most predicate calls (the initial check included); the reduction
    /// stops with the best program so far when they are spent.
    pub max_tests: usize,
    /// Most rounds of all passes.
    pub max_rounds: usize,
    /// Wall-clock limit; `None` = no limit. Stopping on time makes the
    /// result depend on the machine's speed.
    pub time_limit: Option<Duration>,
    /// Rename to canonical names at the end (kept only if still
    /// interesting).
    pub canonicalize: bool,
}

impl Default for ReduceOptions {
    fn default() -> ReduceOptions {
        ReduceOptions { max_tests: 20_000, max_rounds: 64, time_limit: None, canonicalize: true }
    }
}

/// The result of a reduction.
#[derive(Clone, Debug)]
pub struct Reduced {
    /// The smallest interesting program found (valid, interesting).
    pub program: Program,
    /// Predicate calls made, the initial check included.
    pub tests_run: usize,
    /// Candidates dropped by the validator or by a failed repair, untested.
    pub invalid: usize,
    /// Instructions of the input.
    pub original_instructions: usize,
    /// Instructions of the result.
    pub final_instructions: usize,
    /// Whether a limit (tests, rounds, time) ended the search early.
    pub truncated: bool,
}

/// Why a reduction could not start.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ReduceError {
    /// The input is not a valid source-form program.
    #[error("the input is not a valid source program: {0}")]
    Invalid(String),
    /// The predicate rejects the input itself.
    #[error("the input is not interesting (it does not fail the way the test requires)")]
    NotInteresting,
}

/// A snapshot for progress displays, sent after every predicate call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The pass running.
    pub pass: &'static str,
    /// The round (1-based).
    pub round: usize,
    /// Predicate calls so far.
    pub tests_run: usize,
    /// The test budget.
    pub max_tests: usize,
    /// Instructions of the best program so far.
    pub instructions: usize,
    /// Instructions of the input.
    pub original_instructions: usize,
}

/// Reduce `prog` while `is_interesting` holds. Fails when `prog` is not a
/// valid source program or not interesting; otherwise returns a valid,
/// interesting program no larger than `prog`.
pub fn reduce(prog: &Program, is_interesting: &mut dyn FnMut(&Program) -> bool, opts: &ReduceOptions) -> Result<Reduced, ReduceError> {
    reduce_with_progress(prog, is_interesting, opts, &mut |_| {})
}

/// [`reduce`], calling `progress` after every predicate call.
pub fn reduce_with_progress(
    prog: &Program,
    is_interesting: &mut dyn FnMut(&Program) -> bool,
    opts: &ReduceOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Reduced, ReduceError> {
    driver::run(prog, is_interesting, opts, progress)
}

#[cfg(test)]
mod tests;
