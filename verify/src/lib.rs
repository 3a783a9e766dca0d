//! schedra-verify: translation validation of a machine program against its
//! source program (see `shared/spec/semantics.md`, "What verify proves").
//!
//! It trusts nothing the compiler says: it reuses only `schedra-ir` (types,
//! parser, target descriptions) and has its own semantics of both forms.
//!
//! Pipeline of [`verify`]:
//! 1. [`rules::structure`] — the programs are comparable (same target,
//!    inputs, blocks, edges; known opcodes; operand shapes and sizes).
//! 2. [`rules::bundles`], [`rules::hazards`] — slot, register and target
//!    sequence rules, read from the target description.
//! 3. [`compare::check`] — symbolic execution of both forms
//!    ([`symbolic`], hash-consed [`term`]s; the machine form cycle-accurate),
//!    a [`dataflow`] fixpoint for which location holds which source value at
//!    each block entry, obligations closed by syntax or by Z3 ([`smt`]), and
//!    every refuted obligation classified by [`diagnose`].
//! 4. [`report`] — the JSON object of `cli.md` and a human rendering.
//!
//! Modules: `ids` (integer ids for source names), `facts` (the dataflow
//! state), `term` (hash-consed terms), `symbolic` (both simulators),
//! `dataflow` (liveness and the fixpoint), `sample` (concrete evaluation
//! for quick refutations), `smt` (Z3 bridge), `rules`,
//! `diagnose`, `compare` (obligations per block), `report`.

#![warn(missing_docs)]

pub mod compare;
pub mod dataflow;
pub mod diagnose;
pub mod facts;
pub mod ids;
pub mod report;
pub mod rules;
pub mod sample;
pub mod smt;
pub mod symbolic;
pub mod term;

pub use report::{render_human, Kind, Obligations, Report, Verdict, Violation};

use schedra_ir::Program;
use std::time::Instant;

/// Options of one verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Per-query solver timeout in milliseconds; a query that runs out makes
    /// the verdict `unknown`, never `proven`. 0 means "give up at once"
    /// (every solver query is `unknown`), never "no limit".
    pub timeout_ms: u64,
}

impl Default for VerifyOptions {
    /// A 10 s per-query timeout (Alive2's default).
    fn default() -> VerifyOptions {
        VerifyOptions { timeout_ms: 10_000 }
    }
}

/// Prove that `machine` implements `src` for all input words, or report
/// every violation found, most fundamental first. Never panics; the
/// verdict is `proven` only when every rule holds and every obligation is
/// closed by syntax or proven by the solver.
pub fn verify(src: &Program, machine: &Program, opts: &VerifyOptions) -> Report {
    let start = Instant::now();
    let mut report = Report {
        verdict: Verdict::Proven,
        target: machine.target.name.to_string(),
        violations: Vec::new(),
        obligations: Obligations::default(),
        cycles: 0,
        time_ms: 0.0,
    };
    let structure = rules::structure(src, machine);
    let comparable = structure.is_empty();
    report.violations.extend(structure);
    if src.target.name == machine.target.name {
        report.violations.extend(rules::bundles(machine));
        report.violations.extend(rules::hazards(machine));
    }
    if comparable {
        let out = compare::check(src, machine, opts.timeout_ms);
        report.violations.extend(out.violations);
        report.obligations = out.obligations;
        report.cycles = out.cycles;
    }
    let order = |label: &str| src.block_index(label).unwrap_or(usize::MAX);
    report.finish(&order);
    report.time_ms = start.elapsed().as_secs_f64() * 1000.0;
    report
}
