//! The reduction loop: rounds of passes, each searched with ddmin, every
//! candidate validated and tested at most once.
//!
//! When a round changes nothing and the program is small
//! ([`SECOND_ORDER_LIMIT`]), a second-order search looks one step further
//! before giving up, for failures that need a balance (a fault that shows
//! only at a certain register or unit pressure: removing any one
//! instruction relieves it): first every pair of non-adjacent instructions
//! removed together (ddmin's chunks are runs of neighbours), then every
//! read replaced by any earlier value of its size that keeps the program
//! interesting, two neighbouring independent instructions swapped, or an
//! op given another opcode of the same operand kinds, each followed by
//! one instruction removal. The first such candidate found is taken and
//! the rounds go on. When none is found, the first interesting edit is
//! taken alone (a step sideways, at most [`SIDEWAYS`] per reduction), and
//! the rounds look again from there.
//!
//! Invariant: `best` is always valid and interesting; it only changes to a
//! candidate that is valid, interesting, new (its printed text was never
//! tested before) and has no more instructions than `best`. Since accepted
//! programs never repeat and every limit is checked before each test, the
//! loop ends.

use super::ddmin::{ddmin, Verdict};
use super::passes::{apply, Pass};
use super::{canon, insts, operands, Progress, ReduceError, ReduceOptions, Reduced};
use schedra_ir::{print::print, validate::validate, Program};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::Instant;

/// Programs of at most this many instructions get the second-order search
/// when a round changes nothing: about `n² / 2` pair removals and, per
/// operand and earlier value, one test plus `n` removals.
const SECOND_ORDER_LIMIT: usize = 40;

/// Most steps sideways (an interesting edit that removes nothing) one
/// reduction takes.
const SIDEWAYS: usize = 4;

/// One reduction in progress.
struct Session<'a> {
    best: Program,
    best_text: String,
    pred: &'a mut dyn FnMut(&Program) -> bool,
    progress: &'a mut dyn FnMut(&Progress),
    opts: &'a ReduceOptions,
    seen: HashSet<u64>,
    tests: usize,
    invalid: usize,
    stopped: bool,
    start: Instant,
    original: usize,
    pass: &'static str,
    round: usize,
    sideways: usize,
}

fn digest(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Run a whole reduction (see the module docs of [`super`]).
pub(super) fn run(
    prog: &Program,
    pred: &mut dyn FnMut(&Program) -> bool,
    opts: &ReduceOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Reduced, ReduceError> {
    validate(prog).map_err(|e| ReduceError::Invalid(e.to_string()))?;
    let text = print(prog);
    let mut s = Session {
        best: prog.clone(),
        best_text: text.clone(),
        pred,
        progress,
        opts,
        seen: HashSet::from([digest(&text)]),
        tests: 0,
        invalid: 0,
        stopped: false,
        start: Instant::now(),
        original: prog.op_count(),
        pass: "check",
        round: 0,
        sideways: 0,
    };
    if !s.call(prog) {
        return Err(ReduceError::NotInteresting);
    }
    s.rounds();
    if opts.canonicalize {
        s.pass = "canonical-names";
        let c = canon::canonical(&s.best);
        s.offer(c);
    }
    let final_instructions = s.best.op_count();
    Ok(Reduced { program: s.best, tests_run: s.tests, invalid: s.invalid, original_instructions: s.original, final_instructions, truncated: s.stopped })
}

impl Session<'_> {
    /// Rounds of all passes until one changes nothing or a limit is hit.
    fn rounds(&mut self) {
        for round in 1..=self.opts.max_rounds {
            self.round = round;
            let before = self.best_text.clone();
            for pass in Pass::ALL {
                self.run_pass(pass);
                if self.stopped {
                    return;
                }
            }
            if self.best_text == before && !self.second_order() {
                return;
            }
            if self.stopped {
                return;
            }
        }
        self.stopped = true;
    }

    /// One pass: its opportunities on the current best, searched by ddmin.
    fn run_pass(&mut self, pass: Pass) {
        self.pass = pass.name();
        let base = self.best.clone();
        let opps = pass.opportunities(&base);
        let (_, stopped) = ddmin(opps.len(), &mut |set| {
            let chosen: Vec<_> = set.iter().filter_map(|&i| opps.get(i)).collect();
            match apply(&base, &chosen) {
                None => {
                    self.invalid += 1;
                    Verdict::Reject
                }
                Some(cand) => self.offer(cand),
            }
        });
        self.stopped |= stopped;
    }

    /// The second-order search, for a small program that no pass shrinks
    /// (see the module docs): the first of these that is interesting is
    /// taken, and whether one was.
    fn second_order(&mut self) -> bool {
        let base = self.best.clone();
        if base.op_count() > SECOND_ORDER_LIMIT {
            return false;
        }
        let removals = insts::opportunities(&base);
        self.pass = "instruction-pairs";
        for x in 0..removals.len() {
            for y in x + 2..removals.len() {
                let Some(cand) = apply(&base, &[&removals[x], &removals[y]]) else { continue };
                match self.offer(cand) {
                    Verdict::Accept => return true,
                    Verdict::Stop => return false,
                    Verdict::Reject => {}
                }
            }
        }
        self.pass = "edit-then-remove";
        let replacements = operands::to_any_earlier(&base);
        let steps = replacements.iter().filter_map(|e| apply(&base, &[e])).chain(operands::reorders(&base)).chain(operands::other_opcodes(&base));
        let mut sideways = None;
        for step in steps {
            if !self.probe(&step) {
                continue;
            }
            if sideways.is_none() {
                sideways = Some(step.clone());
            }
            for r in insts::opportunities(&step) {
                let Some(cand) = apply(&step, &[&r]) else { continue };
                match self.offer(cand) {
                    Verdict::Accept => return true,
                    Verdict::Stop => return false,
                    Verdict::Reject => {}
                }
            }
        }
        // No edit is followed by a removal: take the first interesting edit
        // as it is (a step sideways, at most `SIDEWAYS` per reduction), and
        // let the rounds look again from there.
        match sideways {
            Some(step) if self.sideways < SIDEWAYS && !self.stopped => {
                self.sideways += 1;
                self.best_text = print(&step);
                self.best = step;
                true
            }
            _ => false,
        }
    }

    /// Test an intermediate candidate without accepting it: valid, new and
    /// interesting.
    fn probe(&mut self, cand: &Program) -> bool {
        let text = print(cand);
        if !self.seen.insert(digest(&text)) || validate(cand).is_err() {
            return false;
        }
        if self.out_of_budget() {
            self.stopped = true;
            return false;
        }
        self.call(cand)
    }

    /// Validate, deduplicate and test a candidate; accept it if interesting.
    fn offer(&mut self, cand: Program) -> Verdict {
        if cand.op_count() > self.best.op_count() {
            return Verdict::Reject;
        }
        let text = print(&cand);
        if !self.seen.insert(digest(&text)) {
            return Verdict::Reject;
        }
        if validate(&cand).is_err() {
            self.invalid += 1;
            return Verdict::Reject;
        }
        if self.out_of_budget() {
            self.stopped = true;
            return Verdict::Stop;
        }
        if self.call(&cand) {
            self.best = cand;
            self.best_text = text;
            Verdict::Accept
        } else {
            Verdict::Reject
        }
    }

    fn out_of_budget(&self) -> bool {
        self.tests >= self.opts.max_tests || self.opts.time_limit.is_some_and(|t| self.start.elapsed() >= t)
    }

    /// Ask the predicate and report progress.
    fn call(&mut self, cand: &Program) -> bool {
        self.tests += 1;
        let yes = (self.pred)(cand);
        let instructions = if yes { cand.op_count() } else { self.best.op_count() };
        (self.progress)(&Progress {
            pass: self.pass,
            round: self.round,
            tests_run: self.tests,
            max_tests: self.opts.max_tests,
            instructions,
            original_instructions: self.original,
        });
        yes
    }
}
