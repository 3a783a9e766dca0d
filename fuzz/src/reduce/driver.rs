//! The reduction loop: rounds of passes, each searched with ddmin, every
//! candidate validated and tested at most once.
//!
//! Invariant: `best` is always valid and interesting; it only changes to a
//! candidate that is valid, interesting, new (its printed text was never
//! tested before) and has no more instructions than `best`. Since accepted
//! programs never repeat and every limit is checked before each test, the
//! loop ends.

use super::ddmin::{ddmin, Verdict};
use super::passes::{apply, Pass};
use super::{canon, Progress, ReduceError, ReduceOptions, Reduced};
use schedra_ir::{print::print, validate::validate, Program};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::Instant;

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
            if self.best_text == before {
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
