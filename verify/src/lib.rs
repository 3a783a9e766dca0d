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
//! Modules: `ids` (integer ids for source names), `srccode`, `machcode` (the
//! source and machine programs decoded once), `labels` (block indices by
//! label), `facts` (the dataflow
//! state), `term` (hash-consed terms), `symbolic` (both simulators),
//! `dataflow` (liveness and the fixpoint), `wto` (the fixpoint's visiting
//! order), `sample` (concrete evaluation
//! for quick refutations), `smt` (Z3 bridge), `rules`,
//! `diagnose`, `compare` (obligations per block), `report`, `ieee` (exact
//! IEEE-754 evaluation and the float-theory query that decides a
//! counterexample of the uninterpreted encoding), `witness`
//! (counterexamples as the program's input words).

#![warn(missing_docs)]

pub mod compare;
pub mod crossing;
pub mod dataflow;
pub mod diagnose;
pub mod facts;
pub mod ids;
pub mod ieee;
pub mod labels;
pub mod machcode;
pub mod network;
pub mod report;
pub mod rules;
pub mod sample;
pub mod regfile;
pub mod smt;
pub mod srccode;
pub mod symbolic;
pub mod term;
pub mod texunit;
pub mod walk;
pub mod witness;
mod worker;
pub mod wto;

pub use report::{render_human, Kind, Obligations, Report, Verdict, Violation};

use schedra_ir::Program;
use std::time::Instant;

/// Options of one verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Solver time limit in milliseconds for the whole verification (each
    /// query gets at most this, and no query starts after it has passed
    /// since the solver session began); a query that runs out or is never
    /// asked makes the verdict `unknown`, never `proven`. 0 means "give up
    /// at once" (every solver query is `unknown`), never "no limit".
    pub timeout_ms: u64,
}

impl Default for VerifyOptions {
    /// A 10 s solver time limit (Alive2's per-query default).
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
    let code = machcode::MachCode::of(machine);
    let labels = (labels::Labels::of(src), labels::Labels::of(machine));
    let structure = rules::structure_in(src, machine, &code, (&labels.0, &labels.1));
    let comparable = structure.is_empty();
    report.violations.extend(structure);
    if src.target.name == machine.target.name {
        report.violations.extend(rules::bundles_in(machine, &code));
        report.violations.extend(rules::hazards_in(machine, &code));
    }
    if let (true, Some(net)) = (comparable, machine.target.network) {
        let (violations, obligations) = network::check(src, machine, net);
        report.violations.extend(violations);
        report.obligations = obligations;
        report.cycles = machine.bundle_count() as u64;
    } else if comparable {
        let refuted = !report.violations.is_empty();
        let out = compare::check_in(src, machine, code, (&labels.0, &labels.1), opts.timeout_ms, refuted);
        report.violations.extend(out.violations);
        report.obligations = out.obligations;
        report.cycles = out.cycles;
    }
    let order = |label: &str| src.block_index(label).unwrap_or(usize::MAX);
    report.finish(&order);
    report.time_ms = start.elapsed().as_secs_f64() * 1000.0;
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    /// `n` products `((a&m)*(b&m))*(c&m)`, each written by `tlbw`, as a
    /// source and a machine program that reassociates every one: equal,
    /// but each product is a hard solver query (seconds, not ms).
    fn reassociated(n: usize) -> (Program, Program) {
        let mut src = String::from("target v3d71\nb0:\n    %m = ldconst 0xfff\n");
        let mut mach = String::from("target v3d71\nform machine\nb0:\n    { sig: ldconst 0xfff }\n    { add: mov $rf3, $rf0 }\n");
        for i in 0..n {
            let (a, b, c) = (3 * i, 3 * i + 1, 3 * i + 2);
            let _ = write!(src, "    %a{i} = ldunif {a}\n    %b{i} = ldunif {b}\n    %c{i} = ldunif {c}\n");
            let _ = write!(src, "    %a{i} = and %a{i}, %m\n    %b{i} = and %b{i}, %m\n    %c{i} = and %c{i}, %m\n");
            let _ = write!(src, "    %p{i} = umul24 %a{i}, %b{i}\n    %p{i} = umul24 %p{i}, %c{i}\n    tlbw %p{i}\n");
            let _ = write!(mach, "    {{ sig: ldunif {a} }}\n    {{ add: mov $rf4, $rf0 ; sig: ldunif {b} }}\n    {{ add: mov $rf5, $rf0 ; sig: ldunif {c} }}\n    {{ add: mov $rf6, $rf0 }}\n");
            mach.push_str("    { add: and $rf4, $rf4, $rf3 }\n    { add: and $rf5, $rf5, $rf3 }\n    { add: and $rf6, $rf6, $rf3 }\n");
            let end = if i + 1 == n { " ; sig: thrsw" } else { "" };
            let _ = write!(mach, "    {{ mul: umul24 $rf7, $rf5, $rf6 }}\n    {{ mul: umul24 $rf7, $rf4, $rf7 }}\n    {{ add: tlbw $rf7{end} }}\n");
        }
        src.push_str("    end\n");
        mach.push_str("    { }\n    { }\n    end\n");
        let parse = |t: &str| schedra_ir::parse::parse(t.as_bytes(), None).expect("the test programs parse");
        (parse(&src), parse(&mach))
    }

    /// `fmul`'s square written by `tlbw` `gap` bundles later, as a source
    /// and a machine program for `target` (a variant of v3d71).
    fn square_after(target: &'static schedra_ir::Target, gap: usize) -> (Program, Program) {
        let src = "target v3d71\ninput %a = $rf1\nb0:\n    %b = fmul %a, %a\n    tlbw %b\n    end\n";
        let wait = "    { }\n".repeat(gap - 1);
        let mach = format!("target v3d71\nform machine\ninput $rf1\nb0:\n    {{ mul: fmul $rf4, $rf1, $rf1 }}\n{wait}    {{ add: tlbw $rf4 ; sig: thrsw }}\n    {{ }}\n    {{ }}\n    end\n");
        let parse = |t: &str| {
            let mut p = schedra_ir::parse::parse(t.as_bytes(), None).expect("the test programs parse");
            p.target = target;
            p
        };
        (parse(src), parse(&mach))
    }

    #[test]
    fn a_read_past_the_read_window_is_a_latency_violation() {
        use schedra_ir::target::{testing::with_lifetime, v3d71::V3D71};
        let opts = VerifyOptions::default();
        let expiring = with_lifetime(&V3D71, "v3d71-expiring", "fmul", 1);
        let (src, late) = square_after(&V3D71, 2);
        assert_eq!(verify(&src, &late, &opts).verdict, Verdict::Proven, "without a lifetime a late read is fine");
        let (src, late) = square_after(expiring, 2);
        let r = verify(&src, &late, &opts);
        assert_eq!(r.verdict, Verdict::Violation);
        let v = r.violations.iter().find(|v| v.kind == report::Kind::Latency).expect("a latency violation");
        assert!(v.message.contains("past the maximum lifetime of the result of `fmul`"), "{}", v.message);
        let (src, near) = square_after(expiring, 1);
        assert_eq!(verify(&src, &near, &opts).verdict, Verdict::Proven, "{:?}", verify(&src, &near, &opts).violations);
    }

    #[test]
    fn a_result_expired_at_a_block_end_is_not_live_into_the_next_block() {
        use schedra_ir::target::{testing::with_lifetime, v3d71::V3D71};
        let src = "target v3d71\ninput %a = $rf1\nb0:\n    %b = fmul %a, %a\n    jmp b1\nb1:\n    tlbw %b\n    end\n";
        let mach = "target v3d71\nform machine\ninput $rf1\nb0:\n    { mul: fmul $rf4, $rf1, $rf1 }\n    jmp b1\nb1:\n    { add: tlbw $rf4 ; sig: thrsw }\n    { }\n    { }\n    end\n";
        let parse = |t: &str, target| {
            let mut p = schedra_ir::parse::parse(t.as_bytes(), None).expect("the test programs parse");
            p.target = target;
            p
        };
        let opts = VerifyOptions::default();
        assert_eq!(verify(&parse(src, &V3D71), &parse(mach, &V3D71), &opts).verdict, Verdict::Proven);
        let expiring = with_lifetime(&V3D71, "v3d71-expiring", "fmul", 1);
        let r = verify(&parse(src, expiring), &parse(mach, expiring), &opts);
        assert_eq!(r.verdict, Verdict::Violation, "{:?}", r.violations);
    }

    #[test]
    fn the_timeout_bounds_the_whole_verification() {
        let (src, mach) = reassociated(20);
        // Per query, 20 hard obligations at 300 ms would take >= 6 s.
        let start = Instant::now();
        let report = verify(&src, &mach, &VerifyOptions { timeout_ms: 300 });
        let took = start.elapsed();
        assert_eq!(report.verdict, Verdict::Unknown, "{:?}", report.violations);
        assert_eq!(report.obligations.unknown, 20);
        assert!(took < std::time::Duration::from_millis(2500), "took {took:?}");
        // A tiny deadline gives up at once.
        let start = Instant::now();
        let report = verify(&src, &mach, &VerifyOptions { timeout_ms: 1 });
        assert_eq!(report.verdict, Verdict::Unknown);
        assert!(start.elapsed() < std::time::Duration::from_millis(1000), "took {:?}", start.elapsed());
    }

    #[test]
    fn a_broken_rule_settles_every_obligation_without_the_solver() {
        let (src, mach) = reassociated(20);
        // The same program with one op moved to a slot that cannot run it.
        let text = schedra_ir::print::print(&mach).replacen("{ add: and $rf4", "{ mul: and $rf4", 1);
        let broken = schedra_ir::parse::parse(text.as_bytes(), None).expect("the broken program parses");
        let start = Instant::now();
        let report = verify(&src, &broken, &VerifyOptions { timeout_ms: 10_000 });
        let took = start.elapsed();
        assert_eq!(report.verdict, Verdict::Violation);
        assert!(report.violations.iter().any(|v| v.kind == report::Kind::Slot), "{:?}", report.violations);
        // 20 hard obligations would each wait for the solver (seconds).
        assert_eq!(report.obligations.unknown, 20, "{:?}", report.obligations);
        assert!(took < std::time::Duration::from_millis(1000), "took {took:?}");
    }
}
