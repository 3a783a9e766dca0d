//! The default interestingness: "still fails the same way".
//!
//! A program's [`Failure`] is what goes wrong when it is compiled (with the
//! given options and injected fault), verified and/or run, as the oracles
//! of [`crate::oracle`] see it: a panic (its location and normalised
//! message), a compile error, the verifier's primary violation, a solver
//! timeout, or a behaviour difference between source and output on seeds.
//! Two failures are the same when their `kind` and `rule` are equal:
//!
//! - violations: the violation kind (`latency`, `clobber`, …) and the first
//!   [`RULE_WORDS`] plain words of the normalised message, which name the
//!   rule ("reads at cycle expecting", "overwrites at cycle destroying") but
//!   none of its registers, cycles, opcodes or terms — those change while
//!   the program shrinks;
//! - compile errors: the same words of the normalised error;
//! - everything else: the oracle's own normalised rule.
//!
//! With an injected fault, [`SameFailure`] also keeps the failure
//! *attributable* to the fault: when the input is proven without the fault
//! (same other options), every accepted candidate must be too. Otherwise a
//! reduction may drift to a program that fails the same way for another
//! reason, e.g. a gen8 program that lost its `send.eot` is rejected by the
//! verifier whatever the compiler does, and its fault violation then no
//! longer tells the fault's story. This is right for every fault: a fault
//! is the only bug it adds, so a program showing it compiles correctly
//! without it. Inputs that fail without the fault too (a real compiler bug
//! beside the fault) are reduced without the requirement.
//!
//! Likewise, when the input runs to its end on the check's seeds (every
//! generated program does), candidates must too, with at most four times
//! the input's longest run as fuel: a reduction may otherwise cut a
//! terminator into a jump to its own block, and a program that never ends
//! escapes every end-of-program rule (gen8's `send.eot`) without showing
//! anything about the fault.
//!
//! Invariant: [`failure`] never panics (every component runs under the
//! oracles' `catch_unwind` guard) and depends only on the program and the
//! [`Check`], so `same_failure` is a deterministic predicate.

use crate::oracle::{self, Finding, Kind};
use schedra_compiler::Options;
use schedra_ir::Program;
use schedra_verify::VerifyOptions;

/// How many plain words of a message make up a rule.
pub const RULE_WORDS: usize = 4;

/// Which oracle decides whether a program fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Oracle {
    /// Compile, then verify (the verifier's primary violation).
    #[default]
    Verify,
    /// Compile, then run source and output on the seeds (no verifier).
    Run,
    /// Compile, verify and run: also catches verifier unsoundness.
    Both,
}

/// Everything that decides how a program fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// Compiler options, the injected fault included.
    pub options: Options,
    /// Verifier options (solver timeout).
    pub verify: VerifyOptions,
    /// Which oracle to ask.
    pub oracle: Oracle,
    /// Seeds for the run oracle.
    pub seeds: Vec<u64>,
}

impl Default for Check {
    fn default() -> Check {
        Check { options: Options::default(), verify: VerifyOptions { timeout_ms: 2_000 }, oracle: Oracle::Verify, seeds: vec![0, 1, 2, 3] }
    }
}

/// How a program fails: compared by `kind` and `rule` only.
#[derive(Clone, Debug)]
pub struct Failure {
    /// `panic`, `compile-error`, a violation kind, `unknown`, …
    pub kind: String,
    /// The rule (see the module docs).
    pub rule: String,
    /// The full message of this occurrence (not compared).
    pub message: String,
}

impl PartialEq for Failure {
    fn eq(&self, o: &Failure) -> bool {
        self.kind == o.kind && self.rule == o.rule
    }
}
impl Eq for Failure {}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.kind, self.rule, self.message)
    }
}

/// The first `n` plain words (two or more ASCII letters, nothing else) of
/// `text`: the part of a normalised message that names its rule.
pub fn rule_words(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().filter(|w| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_alphabetic())).take(n).collect();
    words.join(" ")
}

/// The [`Failure`] an oracle finding stands for.
pub fn from_finding(f: &Finding, target: &schedra_ir::Target) -> Failure {
    let message = f.message.clone();
    match (&f.kind, f.report.as_ref().and_then(|r| r.violations.first())) {
        (Kind::Violation, Some(v)) => {
            let rule = rule_words(&oracle::normalize(&v.message, Some(target)), RULE_WORDS);
            Failure { kind: v.kind.as_str().to_string(), rule, message }
        }
        (Kind::CompileError, _) => Failure { kind: f.kind.as_str().to_string(), rule: rule_words(&f.rule, RULE_WORDS), message },
        _ => Failure { kind: f.kind.as_str().to_string(), rule: f.rule.clone(), message },
    }
}

/// How `p` fails under `check`, or `None` if every promise holds.
pub fn failure(p: &Program, check: &Check) -> Option<Failure> {
    finding(p, check).map(|f| from_finding(&f, p.target))
}

/// Ask the oracles `check` selects; the first broken promise.
fn finding(p: &Program, check: &Check) -> Option<Finding> {
    if check.oracle == Oracle::Both {
        return oracle::check_case(p, &check.options, &check.verify, &check.seeds).err();
    }
    let compiled = match oracle::compile_ok(p, &check.options) {
        Ok(c) => c,
        Err(f) => return Some(f),
    };
    match check.oracle {
        Oracle::Verify => oracle::verify_proves(p, &compiled.program, &check.verify).err(),
        Oracle::Run | Oracle::Both => oracle::runs_agree(p, &compiled.program, &check.seeds).err(),
    }
}

/// Whether `cand` fails exactly as `expected` (same kind and rule).
pub fn same_failure(expected: &Failure, cand: &Program, check: &Check) -> bool {
    failure(cand, check).as_ref() == Some(expected)
}

/// The default predicate of `schedra reduce` and of the fuzz campaign's
/// minimization: "fails the same way, and (when the input is) is proven
/// without the injected fault" (see the module docs).
#[derive(Clone, Debug)]
pub struct SameFailure {
    /// The failure every candidate must show.
    pub expected: Failure,
    check: Check,
    /// `check` without its fault, when candidates must be proven under it.
    own: Option<Check>,
    /// Fuel within which candidates must run to their end on `check.seeds`,
    /// when the input does.
    fuel: Option<u64>,
    /// Whether any failure will do (see [`SameFailure::attributable`]).
    any: bool,
}

impl SameFailure {
    /// The predicate for `input`, or `None` when `input` does not fail
    /// under `check`.
    pub fn of(input: &Program, check: &Check) -> Option<SameFailure> {
        let expected = failure(input, check)?;
        let without = Check { options: schedra_compiler::Options { inject: None, ..check.options }, ..check.clone() };
        let own = (check.options.inject.is_some() && failure(input, &without).is_none()).then_some(without);
        let fuel = oracle::source_outcomes(input, &check.seeds).ok().map(|o| o.iter().map(|r| r.executed).max().unwrap_or(0).saturating_mul(4).saturating_add(1_000));
        Some(SameFailure { expected, check: check.clone(), own, fuel, any: false })
    }

    /// The relaxed predicate "fails in any way with the fault, is proven
    /// without it (and runs to its end)", or `None` when the input is not
    /// attributable to an injected fault. For fault-injection minimization:
    /// what matters is that the fault miscompiles the program, and the
    /// verifier may name one bug differently as the program shrinks (a
    /// pinned register's missing anti-dependency is first a value missing
    /// at a block boundary, then a plain clobber).
    pub fn attributable(&self) -> Option<SameFailure> {
        self.own.as_ref()?;
        Some(SameFailure { any: true, ..self.clone() })
    }

    /// Whether `cand` runs to its end on every seed within the fuel (always
    /// true when the input itself does not).
    fn terminates(&self, cand: &Program) -> bool {
        self.fuel.is_none_or(|fuel| self.check.seeds.iter().all(|&s| matches!(oracle::run_guarded(cand, s, fuel), Ok(Ok(_)))))
    }

    /// Whether candidates must also be proven without the fault.
    pub fn requires_own(&self) -> bool {
        self.own.is_some()
    }

    /// Whether `cand` is interesting: runs to its end (if the input does),
    /// fails as expected and, if required, is proven without the fault.
    pub fn is_interesting(&self, cand: &Program) -> bool {
        let fails = if self.any { failure(cand, &self.check).is_some() } else { same_failure(&self.expected, cand, &self.check) };
        self.terminates(cand)
            && fails && self.own.as_ref().is_none_or(|c| failure(cand, c).is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_words_skip_numbers_registers_and_opcodes() {
        let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let a = rule_words(&oracle::normalize("`fmul` reads $rf5 at cycle 3 expecting %p; `recip` issued at cycle 2", Some(t)), RULE_WORDS);
        let b = rule_words(&oracle::normalize("`fadd` reads $rf9 at cycle 12 expecting fmul(u0, w); `rsqrt` issued at cycle 11", Some(t)), RULE_WORDS);
        assert_eq!(a, "reads at cycle expecting");
        assert_eq!(a, b);
        let c = rule_words(&oracle::normalize("`add` (bundle 2) overwrites $rf4 at cycle 3, destroying %a", Some(t)), RULE_WORDS);
        assert_ne!(a, c);
    }

    #[test]
    fn a_candidate_that_fails_without_the_fault_is_not_the_faults() {
        let fault = schedra_compiler::Fault::SchedIgnoreWar;
        let src = "target gen8\ninput %0 = $g0\nb0:\n $g20 = add %0, 0\n %1 = mov $g20\n $g20 = mov 0\n send.eot %1\n end\n";
        let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parses");
        let check = Check { options: Options { inject: Some(fault), ..Options::default() }, ..Check::default() };
        let pred = SameFailure::of(&p, &check).expect("the zoo case fails with its fault");
        assert!(pred.requires_own() && pred.is_interesting(&p));
        let no_end = schedra_ir::parse::parse(src.replace(" send.eot %1\n", "").as_bytes(), None).expect("parses");
        assert!(!pred.is_interesting(&no_end), "without send.eot it fails without the fault too");
        let endless = schedra_ir::parse::parse(src.replace(" send.eot %1\n end\n", " jmp b1\nb1:\n jmp b1\n").as_bytes(), None).expect("parses");
        assert!(!pred.is_interesting(&endless), "a program that never ends shows nothing about the fault");
        let any = pred.attributable().expect("attributable");
        assert!(any.is_interesting(&p) && !any.is_interesting(&no_end) && !any.is_interesting(&endless));
        let proven = schedra_ir::parse::parse(b"target gen8\ninput %0 = $g0\nb0:\n %1 = mov %0\n send.eot %1\n end\n", None).expect("parses");
        assert!(!any.is_interesting(&proven), "a program the fault does not break is not interesting");
    }

    #[test]
    fn a_correct_program_does_not_fail() {
        let p = schedra_ir::parse::parse(b"target v3d71\nb0:\n %a = ldunif 0\n %r = recip %a\n tlbw %r\n end\n", None).expect("parses");
        assert_eq!(failure(&p, &Check::default()), None);
    }
}
