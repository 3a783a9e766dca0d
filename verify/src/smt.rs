//! The bridge to Z3 for obligations that syntactic equality does not close.
//!
//! Encoding: every word is a 32-bit bit-vector. Integer operations get their
//! exact bit-vector meaning (so `add a, a` and `shl a, 1` are proven equal);
//! float operations, texture words and the other outside functions are
//! uninterpreted functions over bit-vectors (sound: equal arguments give
//! equal results, nothing else is assumed); leaves (inputs, uniforms,
//! varyings, block-entry symbols) are free constants.
//!
//! Conversion is iterative: the arena is topologically ordered (arguments
//! have smaller indices), so the terms a query needs are collected with an
//! explicit stack and converted in increasing index order, memoised across
//! queries. Chains 10k deep do not touch the call stack.
//!
//! A query asserts that the two sides differ and asks for a model: `unsat`
//! proves the obligation, `sat` gives a counterexample (concrete input words
//! and both values), anything else (timeout) is [`Answer::Unknown`] and is
//! never taken as a proof. Answers are cached per pair of terms.
//!
//! Time: `timeout_ms` bounds the whole session, not only one query. The
//! session's deadline is set when it is made; each query gets the smaller
//! of `timeout_ms` and the time left, and once the deadline has passed no
//! query reaches Z3 at all (it is [`Answer::Unknown`]), so a verification
//! with many hard obligations ends within its budget (plus one query's
//! [`grace`]) instead of `timeout_ms` per obligation. The IEEE-754 step
//! (after a model of the uninterpreted encoding fails exact evaluation)
//! gets at most [`IEEE_BUDGET_MS`] for an obligation, [`FACT_IEEE_BUDGET_MS`]
//! for a location fact, and [`IEEE_SEARCH_BUDGET_MS`] when an evaluation
//! already shows the query satisfiable (it can then only search for a
//! counterexample, never prove).

use crate::term::{fun_name, is_integer, Fun, Node, Term, Terms};
use crate::witness::InputWord;
use schedra_ir::target::Sem;
use schedra_ir::Target;
use rustc_hash::{FxHashMap, FxHashSet};
use crate::worker::run_bounded;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool, BV};
use z3::{Context, ContextHandle, FuncDecl, PrepareSynchronized, SatResult, Solver, Sort, Tactic};

/// Concrete inputs under which two terms differ: checked by exact
/// evaluation with IEEE-754 float arithmetic ([`crate::witness::confirm`]),
/// so the two values are the ones the programs compute from these words.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Counterexample {
    /// Leaf name → word, for the leaves the two terms mention (at most 16).
    pub inputs: Vec<(String, u32)>,
    /// The source side's value.
    pub source: u32,
    /// The machine side's value.
    pub machine: u32,
    /// The values were computed with float ops as arbitrary functions.
    /// Always `false` for a counterexample the verifier reports: one that
    /// holds only for arbitrary functions is decided again under IEEE-754
    /// semantics ([`crate::ieee`]) or left unknown.
    pub uninterpreted: bool,
    /// The program's input words under which the two differ
    /// ([`crate::witness`]): what `schedra verify --replay` feeds to both
    /// interpreters.
    pub words: Vec<InputWord>,
    /// Leaves that no input word fixes (values at the entry of a later
    /// block, unwritten scratch, ...), by name: the difference holds for
    /// the words given to them here, which the input words alone may not
    /// produce.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unbound: Vec<String>,
}

impl Counterexample {
    /// One line: `with unif[0]=0x1, in1=0x0: source 0x2, machine 0x3`.
    pub fn describe(&self) -> String {
        let ins: Vec<String> = self.inputs.iter().map(|(n, w)| format!("{n}={w:#x}")).collect();
        let how = if self.uninterpreted { " (float ops taken as arbitrary functions)" } else { "" };
        let at = if self.unbound.is_empty() { String::new() } else { format!(" (given {} at a block entry)", self.unbound.join(", ")) };
        format!("with {}: source {:#x}, machine {:#x}{how}{at}", ins.join(", "), self.source, self.machine)
    }
}

/// The solver's answer about one obligation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Proven equal for all inputs.
    Equal,
    /// Differ under these inputs.
    Differ(Counterexample),
    /// The solver gave up (timeout or unsupported).
    Unknown,
}

/// Most milliseconds one float-theory query ([`Smt`]'s IEEE step) may
/// take: bit-blasted float products are slow, and the step only decides
/// between a violation and `unknown` after a counterexample failed.
pub const IEEE_BUDGET_MS: u64 = 2_000;

/// Most milliseconds the IEEE step may take when it can only search for a
/// counterexample: when [`crate::ieee::differs_somewhere`] shows the
/// float-theory query satisfiable, the solver cannot prove the two sides
/// equal, and its model (a word for each uninterpreted function's use)
/// is a violation only if exact evaluation confirms it. Models the solver
/// finds at all it finds fast; the rest of [`IEEE_BUDGET_MS`] would be
/// spent only to answer `unknown`.
pub const IEEE_SEARCH_BUDGET_MS: u64 = 100;

/// Most milliseconds the IEEE step may take for a location fact
/// ([`Smt::proven_equal`]): a fact the step cannot prove in time is only
/// not kept (a later obligation that needs it is then refuted, and
/// reported only once a walk confirms it, or left unknown), while one
/// query that spends [`IEEE_BUDGET_MS`] can use up a whole verification's
/// budget. An obligation on the same pair asks again with the full budget
/// (an unknown answer is not cached).
pub const FACT_IEEE_BUDGET_MS: u64 = 500;

/// The IEEE step's budget for a query allowed `most_ms`: at most
/// [`IEEE_SEARCH_BUDGET_MS`] when an evaluation shows it `satisfiable`
/// ([`crate::ieee::differs_somewhere`]), so that it can only find a
/// counterexample.
fn ieee_cap(satisfiable: bool, most_ms: u64) -> u64 {
    if satisfiable { most_ms.min(IEEE_SEARCH_BUDGET_MS) } else { most_ms }
}

/// The effective per-query budget in ms for a requested `ms`: 0 becomes
/// 1 ms (give up at once, `unknown`) rather than "no limit", as Z3's own
/// `timeout` parameter would read it; budgets past `u32::MAX` saturate.
pub fn z3_timeout(ms: u64) -> u32 {
    u32::try_from(ms).unwrap_or(u32::MAX).max(1)
}

/// A solver session: memoised conversions and cached answers. Lives on one
/// thread (z3's context is thread-local).
pub struct Smt {
    target: &'static Target,
    timeout_ms: u64,
    memo: FxHashMap<Term, BV>,
    funs: FxHashMap<String, FuncDecl>,
    leaves: FxHashMap<Term, String>,
    cache: FxHashMap<(Term, Term, bool), Answer>,
    /// Questions the IEEE step left unknown in a way asking again would
    /// repeat: its query gave a model that exact evaluation does not
    /// confirm (the same query gives the same model), or it searched for a
    /// counterexample with its whole [`IEEE_SEARCH_BUDGET_MS`] and found
    /// none.
    searched: FxHashSet<(Term, Term, bool)>,
    samples: crate::sample::Values,
    deadline: Option<Instant>,
    /// Whether the first block is entered only at program start (its junk
    /// registers are then the program's garbage words).
    first_is_entry: bool,
    /// Number of queries sent to the solver.
    pub queries: usize,
}

impl Smt {
    /// A session for programs of `target` whose queries all end within
    /// `timeout_ms` from now (see the module docs): after that every
    /// solver question is answered [`Answer::Unknown`].
    pub fn new(target: &'static Target, timeout_ms: u64) -> Smt {
        let deadline = Instant::now().checked_add(Duration::from_millis(timeout_ms));
        Smt { target, timeout_ms, memo: FxHashMap::default(), funs: FxHashMap::default(), leaves: FxHashMap::default(), cache: FxHashMap::default(), searched: FxHashSet::default(), samples: Default::default(), deadline, first_is_entry: true, queries: 0 }
    }

    /// Say whether the first block is entered only at program start (the
    /// default): then a junk register there is an input word of a
    /// counterexample.
    pub fn set_first_is_entry(&mut self, yes: bool) {
        self.first_is_entry = yes;
    }

    /// The budget in ms the next query may use: `timeout_ms`, cut to the
    /// time left before the deadline; `None` once the deadline has passed.
    fn budget_ms(&self) -> Option<u64> {
        let Some(deadline) = self.deadline else { return Some(self.timeout_ms) };
        let left = deadline.checked_duration_since(Instant::now())?;
        let ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
        (ms > 0).then_some(ms.min(self.timeout_ms))
    }

    /// Whether the session's time is up (no further query reaches Z3).
    pub fn expired(&self) -> bool {
        self.budget_ms().is_none()
    }

    /// Whether `a` and `b` are the same word for all inputs, answered from
    /// the cache and the samples only: [`Answer::Unknown`] where only the
    /// solver could tell. For obligations whose answer cannot change the
    /// verdict any more (one is already refuted).
    pub fn equal_quick(&mut self, terms: &Terms, a: Term, b: Term, truth: bool) -> Answer {
        if a == b {
            return Answer::Equal;
        }
        if let Some(ans) = self.cache.get(&(a, b, truth)) {
            return ans.clone();
        }
        self.answer_from_samples(terms, a, b, truth).unwrap_or(Answer::Unknown)
    }

    /// A confirmed counterexample from the samples under which `a` and `b`
    /// differ: `None` when no sample tells them apart, `Some(Unknown)` when
    /// some do but none of them is a difference under exact evaluation.
    fn answer_from_samples(&mut self, terms: &Terms, a: Term, b: Term, truth: bool) -> Option<Answer> {
        let ks = self.samples.differing(terms, a, b, truth);
        if ks.is_empty() {
            return None;
        }
        for k in ks {
            let leaves = self.samples.assignment(terms, &[a, b], k);
            if let Some(cex) = crate::witness::confirm(terms, self.target, a, b, truth, &leaves, self.first_is_entry) {
                return Some(Answer::Differ(cex));
            }
        }
        Some(Answer::Unknown)
    }

    /// Whether `a` and `b` are the same word for all inputs.
    pub fn equal(&mut self, terms: &Terms, a: Term, b: Term) -> Answer {
        self.ask(terms, a, b, false)
    }

    /// Whether `a` and `b` are proven the same word for all inputs: `true`
    /// when [`Smt::equal`] would answer [`Answer::Equal`] (in the time
    /// left), `false` otherwise, for
    /// callers to whom a counterexample and unknown mean the same (the
    /// dataflow's "does this location hold that value"). Where the float
    /// theory would be asked, a concrete IEEE-754 evaluation that tells
    /// the two apart ([`crate::ieee::differs_somewhere`]) answers `false`
    /// first: the float theory could then not prove them equal. That
    /// answer is not cached: a later [`Smt::equal`] of the same pair asks
    /// the solver, so every answer it gives is the one it gave without
    /// this shortcut.
    pub fn proven_equal(&mut self, terms: &Terms, a: Term, b: Term) -> bool {
        self.ask_as(terms, a, b, false, true) == Answer::Equal
    }

    /// Whether `a != 0` and `b != 0` agree for all inputs (branch conditions).
    pub fn same_truth(&mut self, terms: &Terms, a: Term, b: Term) -> Answer {
        self.ask(terms, a, b, true)
    }

    /// Whether sample evaluation shows that `a` and `b` differ (cheap; no
    /// solver). `false` proves nothing.
    pub fn quick_differ(&mut self, terms: &Terms, a: Term, b: Term) -> bool {
        a != b && self.samples.differ(terms, a, b)
    }

    fn ask(&mut self, terms: &Terms, a: Term, b: Term, truth: bool) -> Answer {
        self.ask_as(terms, a, b, truth, false)
    }

    /// [`Smt::ask`]; `equality_only`: the caller needs only whether the
    /// answer is [`Answer::Equal`] (see [`Smt::proven_equal`]).
    fn ask_as(&mut self, terms: &Terms, a: Term, b: Term, truth: bool, equality_only: bool) -> Answer {
        if a == b {
            return Answer::Equal;
        }
        let key = (a, b, truth);
        if let Some(ans) = self.cache.get(&key) {
            return ans.clone();
        }
        let ans = match self.answer_from_samples(terms, a, b, truth) {
            Some(Answer::Unknown) => {
                let satisfiable = crate::ieee::differs_somewhere(terms, a, b, truth);
                if equality_only && satisfiable {
                    return Answer::Unknown;
                }
                self.decide_ieee(terms, a, b, truth, ieee_cap(satisfiable, IEEE_BUDGET_MS))
            }
            Some(ans) => ans,
            None => self.solve(terms, a, b, truth, if equality_only { FACT_IEEE_BUDGET_MS } else { IEEE_BUDGET_MS }),
        };
        if ans != Answer::Unknown {
            self.cache.insert(key, ans.clone());
        }
        ans
    }

    /// The uninterpreted query; a model that exact evaluation does not
    /// confirm goes to the IEEE step with at most `ieee_ms`.
    fn solve(&mut self, terms: &Terms, a: Term, b: Term, truth: bool, ieee_ms: u64) -> Answer {
        let Some(budget_ms) = self.budget_ms() else { return Answer::Unknown };
        self.queries += 1;
        let (Some(za), Some(zb)) = (self.convert(terms, a), self.convert(terms, b)) else { return Answer::Unknown };
        // The model's words of every leaf and texture result: what a
        // counterexample is evaluated exactly from.
        let mut asked = Vec::new();
        let mut sides = vec![za, zb];
        for t in self.free_of(terms, &[a, b]) {
            if let Some(z) = self.memo.get(&t) {
                asked.push(t);
                sides.push(z.clone());
            }
        }
        match check_bounded(&sides, truth, budget_ms) {
            Verdict::Unsat => Answer::Equal,
            Verdict::Sat(vals) => {
                let leaves: FxHashMap<Term, u32> = asked.into_iter().zip(vals.into_iter().skip(2)).collect();
                match crate::witness::confirm(terms, self.target, a, b, truth, &leaves, self.first_is_entry) {
                    Some(cex) => Answer::Differ(cex),
                    None => self.decide_ieee(terms, a, b, truth, ieee_cap(crate::ieee::differs_somewhere(terms, a, b, truth), ieee_ms)),
                }
            }
            Verdict::Unknown => Answer::Unknown,
        }
    }

    /// Decide `a` against `b` with float ops as IEEE-754 arithmetic
    /// ([`crate::ieee::fp_query`]), after a counterexample of the
    /// uninterpreted encoding turned out not to be one: `unsat` proves the
    /// obligation, a model is a counterexample only when exact evaluation
    /// confirms it, anything else is unknown. Two sides whose words no
    /// input can change and that agree
    /// ([`crate::ieee::equal_by_fixed_words`]) are equal without a query.
    /// The step's query takes at most `most_ms` ([`ieee_cap`]).
    fn decide_ieee(&mut self, terms: &Terms, a: Term, b: Term, truth: bool, most_ms: u64) -> Answer {
        let Some(budget_ms) = self.budget_ms() else { return Answer::Unknown };
        if crate::ieee::equal_by_fixed_words(terms, a, b, truth) {
            return Answer::Equal;
        }
        let key = (a, b, truth);
        let search = most_ms <= IEEE_SEARCH_BUDGET_MS;
        if self.searched.contains(&key) {
            return Answer::Unknown;
        }
        if let Some(cex) = crate::witness::search(terms, self.target, a, b, truth, self.first_is_entry) {
            return Answer::Differ(cex);
        }
        let whole = budget_ms >= most_ms;
        let budget_ms = budget_ms.min(most_ms);
        self.queries += 1;
        let (text, free) = crate::ieee::fp_query(terms, a, b, truth);
        let names: Vec<String> = free.iter().map(|t| format!("t{}", t.0)).collect();
        let budget = Duration::from_millis(u64::from(z3_timeout(budget_ms)));
        let wait = budget.saturating_add(grace(budget_ms));
        let (ans, again_the_same) = match run_bounded(wait, move || check_text(&text, &names, budget)).unwrap_or(Verdict::Unknown) {
            Verdict::Unsat => (Answer::Equal, false),
            Verdict::Sat(vals) => {
                let leaves: FxHashMap<Term, u32> = free.into_iter().zip(vals).collect();
                match crate::witness::confirm(terms, self.target, a, b, truth, &leaves, self.first_is_entry) {
                    Some(cex) => (Answer::Differ(cex), false),
                    None => (Answer::Unknown, true),
                }
            }
            Verdict::Unknown => (Answer::Unknown, search && whole),
        };
        if again_the_same {
            self.searched.insert(key);
        }
        ans
    }

    /// The leaves and texture results of the terms (what a model must
    /// give words to), in index order.
    fn free_of(&self, terms: &Terms, roots: &[Term]) -> Vec<Term> {
        let mut out: Vec<Term> = reachable(terms, roots).into_iter().filter(|t| self.leaves.contains_key(t) || matches!(terms.node(*t), Node::App(Fun::Tex(_), _))).collect();
        out.sort();
        out
    }

    /// Convert a term (and everything below it) to a bit-vector.
    pub fn convert(&mut self, terms: &Terms, root: Term) -> Option<BV> {
        if let Some(z) = self.memo.get(&root) {
            return Some(z.clone());
        }
        let mut todo: Vec<Term> = reachable(terms, &[root]).into_iter().filter(|t| !self.memo.contains_key(t)).collect();
        todo.sort();
        for t in todo {
            let z = self.convert_node(terms, t)?;
            self.memo.insert(t, z);
        }
        self.memo.get(&root).cloned()
    }

    fn leaf(&mut self, t: Term, name: String) -> BV {
        self.leaves.insert(t, name.clone());
        BV::new_const(name, 32)
    }

    fn convert_node(&mut self, terms: &Terms, t: Term) -> Option<BV> {
        Some(match terms.node(t) {
            Node::Lit(w) => BV::from_u64(u64::from(*w), 32),
            Node::Reg(r) => self.leaf(t, format!("${}", self.target.regs.name(*r))),
            Node::Uniform(..) | Node::Varying(..) => self.leaf(t, terms.show(t, 20)),
            Node::Sym { id, .. } => self.leaf(t, terms.symbol_name(*id).into_owned()),
            Node::App(fun, args) => {
                let zs: Vec<BV> = terms.args(*args).iter().map(|a| self.memo.get(a).cloned()).collect::<Option<_>>()?;
                match fun {
                    Fun::Alu(sem) if is_integer(*sem) => integer(*sem, &zs)?,
                    _ => self.uninterpreted(*fun, &zs),
                }
            }
        })
    }

    fn uninterpreted(&mut self, fun: Fun, args: &[BV]) -> BV {
        let name = format!("{}_{}", fun_name(fun), args.len());
        let decl = self.funs.entry(name.clone()).or_insert_with(|| {
            let bv = Sort::bitvector(32);
            let dom: Vec<&Sort> = (0..args.len()).map(|_| &bv).collect();
            FuncDecl::new(name, &dom, &bv)
        });
        let refs: Vec<&dyn Ast> = args.iter().map(|a| a as &dyn Ast).collect();
        decl.apply(&refs).as_bv().unwrap_or_else(|| BV::from_u64(0, 32))
    }
}

/// What a bounded check found. `Sat` holds the model's values of the
/// words it was given, in order (source side, machine side, leaves...).
#[derive(Debug)]
enum Verdict {
    Unsat,
    Sat(Vec<u32>),
    Unknown,
}

/// Extra wall-clock time past the solver budget before the caller stops
/// waiting for a worker that did not stop when interrupted.
fn grace(budget_ms: u64) -> Duration {
    Duration::from_millis(250 + budget_ms / 8)
}

/// Ask whether `sides[0]` and `sides[1]` can differ (as words, or in truth
/// when `truth`), on a worker thread, waiting at most the budget plus
/// [`grace`].
///
/// Why not Z3's own `timeout` parameter: the system libz3 (4.8.12) arms it
/// through a pooled timer thread that can miss its wake-up (seen under
/// load: the timer thread parked on its condition variable while
/// `Z3_solver_check` bit-blasts a 24-bit product for minutes, and a
/// trivial query spinning in the timer's teardown). So the budget is
/// enforced from outside, twice: the worker interrupts its own context
/// after the budget ([`check_here`]), and the caller stops waiting after
/// the budget plus [`grace`] in case even that is ignored. The words are
/// translated into the worker's context (`synchronized`) because z3's
/// context is thread-local. A worker that never returns is abandoned
/// ([`crate::worker`]): it owns its context, touches nothing of ours, and
/// dies with the process.
fn check_bounded(sides: &[BV], truth: bool, budget_ms: u64) -> Verdict {
    let job = sides.synchronized();
    let budget = Duration::from_millis(u64::from(z3_timeout(budget_ms)));
    let wait = budget.saturating_add(grace(budget_ms));
    run_bounded(wait, move || check_here(&job.recover(), truth, budget)).unwrap_or(Verdict::Unknown)
}

/// The check itself, in this thread's context, interrupted by a watchdog
/// once `budget` has passed. A `sat` that races with the interrupt is
/// `Unknown` (a cancelled context may not evaluate the model); `unsat` is a
/// proof whenever it comes.
fn check_here(sides: &[BV], truth: bool, budget: Duration) -> Verdict {
    let [za, zb, ..] = sides else { return Verdict::Unknown };
    let differ: Bool = if truth {
        let zero = BV::from_u64(0, 32);
        za.eq(&zero).eq(zb.eq(&zero)).not()
    } else {
        za.eq(zb).not()
    };
    let solver = eager_solver();
    solver.assert(&differ);
    match check_within(&solver, budget) {
        SatResult::Unsat => Verdict::Unsat,
        SatResult::Sat => match solver.get_model() {
            Some(model) => Verdict::Sat(sides.iter().map(|x| model.eval(x, true).and_then(|v| v.as_u64()).unwrap_or(0) as u32).collect()),
            None => Verdict::Unknown,
        },
        _ => Verdict::Unknown,
    }
}

/// `solver.check()` under a watchdog that interrupts it after `budget`.
/// `unsat` stands whenever it comes; `sat` from an interrupted check is
/// `Unknown` (a cancelled context may not evaluate the model).
fn check_within(solver: &Solver, budget: Duration) -> SatResult {
    let ctx = Context::thread_local();
    let handle = ctx.handle();
    let (result, interrupted) = std::thread::scope(|s| {
        let (done, finished) = mpsc::channel::<()>();
        let dog = s.spawn(move || interrupt_after(&handle, budget, &finished));
        let result = solver.check();
        drop(done);
        (result, dog.join().unwrap_or(true))
    });
    if interrupted {
        // An interrupted context stays cancelled: its worker takes no
        // further query.
        crate::worker::retire();
    }
    if interrupted && matches!(result, SatResult::Sat) { SatResult::Unknown } else { result }
}

/// [`check_here`] for a query given as SMT-LIB text: the model's words of
/// the constants `names` on `sat`.
fn check_text(text: &str, names: &[String], budget: Duration) -> Verdict {
    let solver = eager_solver();
    solver.from_string(text);
    match check_within(&solver, budget) {
        SatResult::Unsat => Verdict::Unsat,
        SatResult::Sat => match solver.get_model() {
            Some(model) => Verdict::Sat(names.iter().map(|n| model.eval(&BV::new_const(n.as_str(), 32), true).and_then(|v| v.as_u64()).unwrap_or(0) as u32).collect()),
            None => Verdict::Unknown,
        },
        _ => Verdict::Unknown,
    }
}

/// The solver for every query: the goal is eliminated to bits first
/// (equations solved, floats to bit-vectors, functions Ackermannized, then
/// bit-blasted) and handed to the SAT solver; a goal that pipeline cannot
/// finish goes to Z3's general `smt` tactic. Both are complete decision
/// procedures for what they accept: `unsat` is a proof either way, and a
/// model is taken only after exact evaluation confirms it
/// ([`crate::witness::confirm`]).
///
/// Why not the default solver: on float-theory queries (a few nested
/// float divisions and products beside uninterpreted functions) it spends
/// seconds in its incremental core, where the eager pipeline answers in
/// a tenth of the time, and its interrupts take effect late; and making
/// one costs 10-15 ms of setup, more than most bit-vector queries take
/// (the pipeline's costs about 2 ms; on a hard product of three masked
/// words both take the same 0.4 s).
fn eager_solver() -> Solver {
    let eager = ["simplify", "solve-eqs", "fpa2bv", "simplify", "ackermannize_bv", "simplify", "bit-blast", "sat"]
        .into_iter()
        .map(Tactic::new)
        .reduce(|t, next| t.and_then(&next));
    match eager {
        Some(t) => t.or_else(&Tactic::new("smt")).solver(),
        None => Solver::new(),
    }
}

/// Interrupt the context behind `handle` once `budget` passes without a
/// word on `finished` (the sender is dropped when the check returns), and
/// again every 10 ms until it does. Returns whether it interrupted.
fn interrupt_after(handle: &ContextHandle<'_>, budget: Duration, finished: &mpsc::Receiver<()>) -> bool {
    let mut wait = budget;
    let mut interrupted = false;
    while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(wait) {
        handle.interrupt();
        interrupted = true;
        wait = Duration::from_millis(10);
    }
    interrupted
}

fn integer(sem: Sem, zs: &[BV]) -> Option<BV> {
    let [a, b] = zs else { return None };
    let mask24 = BV::from_u64(0xff_ffff, 32);
    let mask5 = BV::from_u64(31, 32);
    Some(match sem {
        Sem::Add => a.bvadd(b),
        Sem::Sub => a.bvsub(b),
        Sem::UMul24 => a.bvand(&mask24).bvmul(b.bvand(&mask24)),
        Sem::Mul => a.bvmul(b),
        Sem::And => a.bvand(b),
        Sem::Or => a.bvor(b),
        Sem::Xor => a.bvxor(b),
        Sem::Shl => a.bvshl(b.bvand(&mask5)),
        Sem::Shr => a.bvlshr(b.bvand(&mask5)),
        _ => return None,
    })
}

/// Every term reachable from `roots` (iterative walk).
pub fn reachable(terms: &Terms, roots: &[Term]) -> Vec<Term> {
    let mut seen = FxHashSet::default();
    let mut stack: Vec<Term> = roots.to_vec();
    let mut out = Vec::new();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        out.push(t);
        if let Node::App(_, args) = terms.node(t) {
            stack.extend(terms.args(*args).iter().copied());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::target::by_name;

    fn v3d() -> &'static Target {
        by_name("v3d71").expect("v3d71 exists")
    }

    #[test]
    fn zero_budget_is_not_unlimited() {
        assert_eq!(z3_timeout(0), 1);
        assert_eq!(z3_timeout(250), 250);
        assert_eq!(z3_timeout(u64::MAX), u32::MAX);
    }

    #[test]
    fn add_self_equals_shift_left_by_one() {
        let mut t = Terms::new();
        let a = t.intern(Node::Uniform(0, 0));
        let one = t.lit(1);
        let add = t.app(Fun::Alu(Sem::Add), vec![a, a]);
        let shl = t.app(Fun::Alu(Sem::Shl), vec![a, one]);
        assert_ne!(add, shl);
        let mut smt = Smt::new(v3d(), 10_000);
        assert_eq!(smt.equal(&t, add, shl), Answer::Equal);
    }

    #[test]
    fn different_values_give_a_counterexample() {
        let mut t = Terms::new();
        let a = t.intern(Node::Uniform(0, 0));
        let two = t.lit(2);
        let add = t.app(Fun::Alu(Sem::Add), vec![a, a]);
        let shl = t.app(Fun::Alu(Sem::Shl), vec![a, two]);
        let mut smt = Smt::new(v3d(), 10_000);
        match smt.equal(&t, add, shl) {
            Answer::Differ(cex) => {
                assert_ne!(cex.source, cex.machine);
                let x = cex.inputs.first().map(|p| p.1).unwrap_or(0);
                assert_eq!(cex.source, x.wrapping_add(x));
                assert_eq!(cex.machine, x << 2);
            }
            other => panic!("expected a counterexample, got {other:?}"),
        }
    }

    #[test]
    fn float_ops_are_uninterpreted_but_congruent() {
        let mut t = Terms::new();
        let a = t.intern(Node::Uniform(0, 0));
        let b = t.intern(Node::Varying(0, 0));
        let x = t.app(Fun::Alu(Sem::FAdd), vec![a, b]);
        let y = t.app(Fun::Alu(Sem::FSub), vec![a, b]);
        let mut smt = Smt::new(v3d(), 10_000);
        assert!(matches!(smt.equal(&t, x, y), Answer::Differ(_)));
        let zero = t.lit(0);
        let c1 = t.app(Fun::Alu(Sem::Or), vec![x, zero]);
        assert_eq!(smt.equal(&t, c1, x), Answer::Equal);
    }

    #[test]
    fn float_identities_are_decided_under_ieee_semantics() {
        // x * 2.0 and x + x are the same word for every x in IEEE-754
        // arithmetic; as uninterpreted functions they are not.
        let mut t = Terms::new();
        let x = t.intern(Node::Uniform(0, 0));
        let two = t.lit(2.0f32.to_bits());
        let twice = t.app(Fun::Alu(Sem::FMul), vec![x, two]);
        let sum = t.app(Fun::Alu(Sem::FAdd), vec![x, x]);
        let mut smt = Smt::new(v3d(), 10_000);
        assert_eq!(smt.equal(&t, twice, sum), Answer::Equal);
        // x * 1.0 is not x: a NaN input comes out canonical.
        let one = t.lit(1.0f32.to_bits());
        let times_one = t.app(Fun::Alu(Sem::FMul), vec![x, one]);
        match smt.equal(&t, times_one, x) {
            Answer::Differ(cex) => {
                assert!(!cex.uninterpreted);
                assert_eq!(cex.source, crate::ieee::CANONICAL_NAN);
                let w = cex.words.first().map(|w| w.word).unwrap_or(0);
                assert!(f32::from_bits(w).is_nan() && w != crate::ieee::CANONICAL_NAN, "{cex:?}");
            }
            other => panic!("expected a counterexample, got {other:?}"),
        }
        // fmin(x, 0) and fmax(x, 0) differ for x = 1, and the report says
        // so with the exact words.
        let zero = t.lit(0);
        let (lo, hi) = (t.app(Fun::Alu(Sem::FMin), vec![x, zero]), t.app(Fun::Alu(Sem::FMax), vec![x, zero]));
        assert!(matches!(smt.equal(&t, lo, hi), Answer::Differ(c) if c.source != c.machine && !c.uninterpreted));
    }

    #[test]
    fn proven_equal_settles_float_questions_without_the_solver_where_it_can() {
        let mut t = Terms::new();
        let (x, y) = (t.intern(Node::Uniform(0, 0)), t.intern(Node::Uniform(1, 0)));
        let nan = t.lit(0xffff_ffff);
        let (xn, ny) = (t.app(Fun::Alu(Sem::FMul), vec![x, nan]), t.app(Fun::Alu(Sem::FMul), vec![nan, y]));
        let mut smt = Smt::new(v3d(), 10_000);
        assert!(smt.proven_equal(&t, xn, ny), "both are NaN for every input");
        assert_eq!(smt.equal(&t, xn, ny), Answer::Equal);
        let (xy, yx) = (t.app(Fun::Alu(Sem::FSub), vec![x, y]), t.app(Fun::Alu(Sem::FSub), vec![y, x]));
        let lg = t.app(Fun::Alu(Sem::Log2), vec![xy]);
        let lg2 = t.app(Fun::Alu(Sem::Log2), vec![yx]);
        assert!(!smt.proven_equal(&t, lg, lg2));
        assert_eq!(smt.queries, 0, "decided by evaluation alone");
        let (s, r) = (t.app(Fun::Alu(Sem::FAdd), vec![x, y]), t.app(Fun::Alu(Sem::FAdd), vec![y, x]));
        assert!(smt.proven_equal(&t, s, r), "IEEE addition commutes: the float theory proves it");
    }

    #[test]
    fn deep_chains_convert_without_recursion() {
        let mut t = Terms::new();
        let mut x = t.intern(Node::Reg(1));
        let mut y = x;
        let one = t.lit(1);
        for _ in 0..20_000 {
            x = t.app(Fun::Alu(Sem::Xor), vec![x, one]);
            y = t.app(Fun::Alu(Sem::Xor), vec![y, one]);
        }
        let z = t.app(Fun::Alu(Sem::Xor), vec![x, one]);
        let mut smt = Smt::new(v3d(), 10_000);
        assert!(smt.convert(&t, z).is_some());
        assert_eq!(smt.same_truth(&t, x, y), Answer::Equal);
    }

    #[test]
    fn a_hard_query_on_a_tiny_budget_is_unknown_and_prompt() {
        // ((a&m)*(b&m))*(c&m) against (a&m)*((b&m)*(c&m)) with 24-bit
        // products: equal, but not within 1 ms.
        let mut t = Terms::new();
        let m = t.lit(0xfff);
        let [a, b, c] = [0, 1, 2].map(|i| {
            let u = t.intern(Node::Uniform(i, 0));
            t.app(Fun::Alu(Sem::And), vec![u, m])
        });
        let ab = t.app(Fun::Alu(Sem::UMul24), vec![a, b]);
        let l = t.app(Fun::Alu(Sem::UMul24), vec![ab, c]);
        let bc = t.app(Fun::Alu(Sem::UMul24), vec![b, c]);
        let r = t.app(Fun::Alu(Sem::UMul24), vec![a, bc]);
        let start = std::time::Instant::now();
        let mut smt = Smt::new(v3d(), 1);
        assert_eq!(smt.equal(&t, l, r), Answer::Unknown);
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        // The worker itself stops when interrupted (not only abandoned).
        let sides: Vec<BV> = [l, r].iter().filter_map(|&x| smt.convert(&t, x)).collect();
        let job = sides.synchronized();
        let start = std::time::Instant::now();
        let got = run_bounded(Duration::from_secs(60), move || check_here(&job.recover(), false, Duration::from_millis(20)));
        assert!(matches!(got, Some(Verdict::Unknown)), "{got:?}");
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    }
}
