//! Verification on a bypass-network target (lima-gp): the network's rules
//! and the dataflow of both forms, with the verifier's own semantics.
//!
//! Rules, per machine instruction (from the target's [`Network`] data):
//! - every bypass read names a unit of the target (`register`), lies inside
//!   its block and inside the window of what that unit made (`latency`,
//!   "read past its maximum lifetime"), reads a unit that made something
//!   there (`dataflow`), and is not a read the operand position cannot
//!   make (`register`); a store reads a storable result of its own
//!   instruction (`register` / `latency`);
//! - the instruction obeys the target's per-instruction rules (`slot`,
//!   `Rules::placed_ok`); the program has at most `max_instructions`
//!   (`slot`);
//! - complex sequences are whole (`hazard`): a join reads the `impl` and
//!   the second part from the instruction right before it, and an op after
//!   a join (`post`) reads the join itself, no move between;
//! - a register load comes `store_load_latency` instructions after the
//!   store it needs, and no store is in flight at a block's end (`latency`).
//!
//! Dataflow: values cross blocks only in register components, so each block
//! is run symbolically on its own in both forms from the same entry symbols
//! (one per register component, except that components holding the same
//! term at the end of every edge into a block whose predecessors are all
//! checked before it share the lowest one's symbol: they hold one word on
//! every path there). Terms are hash-consed, commutative
//! operands sorted, and complex sequences folded by the model of
//! `schedra_ir::target::lima_gp::complex` in term form: a join of
//! `impl_f(x)`, `second(x)` and `x` is `f(x)`, anything else an
//! uninterpreted join. At the block's end the effects per channel, the
//! branch condition and every register component the source names must be
//! the same term. Terms that differ are evaluated on sample inputs: a
//! differing sample is a `dataflow` violation, no difference found leaves
//! the obligation unknown (never proven).

use crate::crossing::Crossing;
use crate::report::{Kind, Obligations, Violation};
use schedra_ir::target::lima_gp::complex;
use schedra_ir::target::network::{Network, UnitKind};
use schedra_ir::target::{Cx, OpDesc, OperandKind, Sem, Target};
use schedra_ir::{Block, Inst, Operand, Program, Reg, TermKind};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A term: an outside input, a register's value at block entry, a constant
/// word, or a function of terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Term {
    Input(&'static str, u32),
    Entry(Reg),
    Word(u32),
    App(Fun, Vec<u32>),
}

/// Functions of terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Fun {
    Sem(Sem),
    /// The inverse of `preexp2` (exp2's join without its `preexp2`).
    UnPre,
    /// The word a log2 join leaves for `postlog2`.
    LogRaw,
}

/// The hash-consed terms of one verification.
#[derive(Default)]
struct Terms {
    ids: HashMap<Term, u32>,
    all: Vec<Term>,
}

impl Terms {
    fn id(&mut self, t: Term) -> u32 {
        if let Some(&i) = self.ids.get(&t) {
            return i;
        }
        let i = self.all.len() as u32;
        self.all.push(t.clone());
        self.ids.insert(t, i);
        i
    }
    fn get(&self, i: u32) -> Option<&Term> {
        self.all.get(i as usize)
    }
    fn app(&mut self, f: Fun, mut args: Vec<u32>) -> u32 {
        if let Fun::Sem(s) = f {
            if s.commutative() {
                args.sort();
            }
        }
        self.id(Term::App(f, args))
    }
    fn is_app(&self, i: u32, f: Fun) -> Option<&[u32]> {
        match self.get(i) {
            Some(Term::App(g, a)) if *g == f => Some(a),
            _ => None,
        }
    }
    /// The term of `sem` applied to `args`, complex sequences folded.
    fn op(&mut self, sem: Sem, args: Vec<u32>) -> u32 {
        match (sem, args.as_slice()) {
            (Sem::Mov, [a]) => *a,
            (Sem::Complex1, [a, b, c]) => self.join(*a, *b, *c).unwrap_or_else(|| self.app(Fun::Sem(sem), args)),
            (Sem::PostLog2, [v]) => match self.is_app(*v, Fun::LogRaw).and_then(|x| x.first().copied()) {
                Some(log) => log,
                None => self.app(Fun::Sem(sem), args),
            },
            _ => self.app(Fun::Sem(sem), args),
        }
    }
    fn join(&mut self, a: u32, b: u32, c: u32) -> Option<u32> {
        let x = *self.is_app(b, Fun::Sem(Sem::Complex2))?.first()?;
        let f = Cx::ALL.into_iter().find(|f| self.is_app(a, Fun::Sem(Sem::ComplexImpl(*f))).is_some_and(|y| y == [x]))?;
        if x != c {
            return None;
        }
        Some(match f {
            Cx::Rcp => self.app(Fun::Sem(Sem::Recip), vec![x]),
            Cx::Rsqrt => self.app(Fun::Sem(Sem::Rsqrt), vec![x]),
            Cx::Exp2 => match self.is_app(x, Fun::Sem(Sem::PreExp2)).and_then(|y| y.first().copied()) {
                Some(y) => self.app(Fun::Sem(Sem::Exp2), vec![y]),
                None => {
                    let u = self.app(Fun::UnPre, vec![x]);
                    self.app(Fun::Sem(Sem::Exp2), vec![u])
                }
            },
            Cx::Log2 => {
                let l = self.app(Fun::Sem(Sem::Log2), vec![x]);
                self.app(Fun::LogRaw, vec![l])
            }
        })
    }

    /// The word of term `i` under the sample inputs of `seed`.
    fn eval(&self, i: u32, seed: u64, memo: &mut HashMap<u32, u32>) -> u32 {
        if let Some(&w) = memo.get(&i) {
            return w;
        }
        let w = match self.get(i) {
            Some(Term::Input(kind, n)) => sample(seed, kind.len() as u64 * 1000 + u64::from(kind.as_bytes().first().copied().unwrap_or(0)), u64::from(*n)),
            Some(Term::Entry(r)) => sample(seed, 7, u64::from(*r)),
            Some(Term::Word(w)) => *w,
            Some(Term::App(f, args)) => {
                let a: Vec<u32> = args.iter().map(|x| self.eval(*x, seed, memo)).collect();
                apply(*f, &a)
            }
            None => 0,
        };
        memo.insert(i, w);
        w
    }
}

fn sample(seed: u64, kind: u64, n: u64) -> u32 {
    let mut z = seed ^ kind.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ n.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    let f = ((z >> 40) as f32 / (1u64 << 24) as f32) * 8.0 - 4.0;
    f.to_bits()
}

/// The verifier's own word semantics of the functions terms use.
fn apply(f: Fun, a: &[u32]) -> u32 {
    let g = |k: usize| f32::from_bits(a.get(k).copied().unwrap_or(0));
    let w = |k: usize| a.get(k).copied().unwrap_or(0);
    let bits = |x: f32| if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() };
    let flag = |b: bool| if b { 1.0f32.to_bits() } else { 0 };
    let Fun::Sem(s) = f else {
        return match f {
            Fun::UnPre => complex::unpre(w(0)),
            _ => complex::log_raw(w(0)),
        };
    };
    match s {
        Sem::FAdd => bits(g(0) + g(1)),
        Sem::FSub => bits(g(0) - g(1)),
        Sem::FMul => bits(g(0) * g(1)),
        Sem::FMin => bits(g(0).min(g(1))),
        Sem::FMax => bits(g(0).max(g(1))),
        Sem::FMad => bits(g(0) * g(1) + g(2)),
        Sem::Recip => bits(1.0 / g(0)),
        Sem::Rsqrt => bits(1.0 / g(0).sqrt()),
        Sem::Exp2 => bits(g(0).exp2()),
        Sem::Log2 => bits(g(0).log2()),
        Sem::Floor => bits(g(0).floor()),
        Sem::Sign => bits(if g(0) > 0.0 { 1.0 } else if g(0) < 0.0 { -1.0 } else { 0.0 }),
        Sem::Neg => bits(-g(0)),
        Sem::Ge => flag(g(0) >= g(1)),
        Sem::Lt => flag(g(0) < g(1)),
        Sem::Select => {
            if g(0) != 0.0 {
                w(1)
            } else {
                w(2)
            }
        }
        Sem::ComplexImpl(c) => complex::imp(c, w(0)),
        Sem::Complex2 => complex::second(w(0)),
        Sem::PreExp2 => complex::pre(w(0)),
        Sem::PostLog2 => complex::post(w(0)),
        Sem::Complex1 => complex::garbage(w(0), w(1), w(2)),
        other => {
            let h = a.iter().fold(0x811c_9dc5u32 ^ (format!("{other:?}").len() as u32), |h, x| (h ^ x).wrapping_mul(0x0100_0193));
            h
        }
    }
}

/// What one block of either form does, as terms.
#[derive(Default)]
struct BlockTerms {
    effects: BTreeMap<String, Vec<u32>>,
    cond: Option<u32>,
    regs: HashMap<Reg, u32>,
    /// The source's virtual registers at the block's end (source form only).
    vals: HashMap<String, u32>,
}

/// A violation-collecting context.
struct Ctx {
    t: &'static Target,
    net: &'static Network,
    out: Vec<Violation>,
    terms: Terms,
    obligations: Obligations,
    /// Set once a block's entry components were a guess: [`MAX_TRIES`]
    /// combinations ran out before one fitted every edge. From then on a
    /// difference of values has no witness that the machine is wrong (the
    /// guess may be), so it leaves its obligation unknown.
    guessed: bool,
    /// The block being checked: each register component that holds the
    /// same term as a lower one on every edge into it, with that lower
    /// component; both read as the lower one's entry symbol.
    same_at_entry: HashMap<Reg, Reg>,
}

/// What a unit made in one instruction.
#[derive(Clone, Copy)]
struct Made {
    unit: usize,
    op: &'static OpDesc,
    term: u32,
}

/// Verify `mach` against `src` on a target with network `net`, after the
/// generic structure and slot checks; the violations and obligations.
pub fn check(src: &Program, mach: &Program, net: &'static Network) -> (Vec<Violation>, Obligations) {
    let cross = Crossing::of(src);
    let mut banned: BTreeSet<(usize, String, Reg)> = BTreeSet::new();
    loop {
        let mut c = Ctx { t: mach.target, net, out: Vec::new(), terms: Terms::default(), obligations: Obligations::default(), guessed: false, same_at_entry: HashMap::new() };
        match c.pass(src, mach, &cross, &banned) {
            Some(retry) if banned.insert(retry.clone()) => continue,
            _ => return (c.out, c.obligations),
        }
    }
}

/// The violations of `mach`'s network rules alone, as [`check`] finds them
/// (kinds `slot`, `register`, `hazard` and `latency`, and `dataflow` for a
/// read of a unit that made nothing): every block run on its own from entry
/// symbols, with no source to compare.
pub fn rules(mach: &Program, net: &'static Network) -> Vec<Violation> {
    let mut c = Ctx { t: mach.target, net, out: Vec::new(), terms: Terms::default(), obligations: Obligations::default(), guessed: false, same_at_entry: HashMap::new() };
    c.length(mach);
    for b in &mach.blocks {
        c.machine_block(b);
    }
    c.out
}

/// For each live-in value of a block not yet visited: the components that
/// held it on every edge seen so far, each with the number of those edges
/// on which it agreed only on samples (not as the same term); and the
/// number of edges seen.
#[derive(Clone, Debug, Default)]
struct Candidates {
    regs: BTreeMap<String, BTreeMap<Reg, usize>>,
    edges: usize,
    /// Per register component: its term at the end of each edge seen.
    ends: Vec<Vec<u32>>,
}

/// Each component whose terms on every edge (`ends`, per component) are
/// those of a lower component, with the lowest such component.
fn equal_components(ends: &[Vec<u32>]) -> HashMap<Reg, Reg> {
    let mut out = HashMap::new();
    for (r, e) in ends.iter().enumerate() {
        if let Some(first) = ends.iter().position(|x| x == e).filter(|&f| f < r) {
            if let (Ok(r), Ok(first)) = (Reg::try_from(r), Reg::try_from(first)) {
                out.insert(r, first);
            }
        }
    }
    out
}

/// The input a result made of unsound reads stands for (its block is
/// unsound, so the term is never compared).
const UNSOUND: &str = "unsound result";

/// At most this many combinations of ambiguous entry components are tried
/// per block.
const MAX_TRIES: usize = 256;

impl Ctx {
    /// One verification of `mach` against `src`, with `banned` components
    /// never chosen for a block's live-in value; a choice to ban and retry
    /// when a later edge refutes a choice that had alternatives.
    fn pass(&mut self, src: &Program, mach: &Program, cross: &Crossing, banned: &BTreeSet<(usize, String, Reg)>) -> Option<(usize, String, Reg)> {
        self.length(mach);
        let named = named(src);
        let n = src.blocks.len();
        let mut cands: Vec<Candidates> = vec![Candidates::default(); n];
        let mut picked: Vec<Option<BTreeMap<String, (Reg, bool)>>> = vec![None; n];
        let inputs: BTreeMap<String, Reg> = src.inputs.iter().filter_map(|i| i.vreg.as_ref().map(|v| (v.name.to_string(), i.reg.base))).collect();
        let mut retry = None;
        let mut tagged: Vec<(usize, Violation)> = Vec::new();
        let mut done = vec![false; mach.blocks.len()];
        let mut preds = vec![0usize; n];
        for succ in cross.order.iter().filter_map(|&b| cross.succs.get(b)).flatten() {
            if let Some(p) = preds.get_mut(*succ) {
                *p += 1;
            }
        }
        for &sbi in &cross.order {
            let Some(sb) = src.blocks.get(sbi) else { continue };
            let Some(mbi) = mach.blocks.iter().position(|x| x.label == sb.label) else { continue };
            let (Some(b), Some(d)) = (mach.blocks.get(mbi), done.get_mut(mbi)) else { continue };
            *d = true;
            let mark = self.out.len();
            self.same_at_entry = match cands.get(sbi) {
                Some(c) if sbi > 0 && preds.get(sbi) == Some(&c.edges) => equal_components(&c.ends),
                _ => HashMap::new(),
            };
            let machine = self.machine_block(b);
            let entry = match sbi {
                0 => inputs.iter().map(|(v, r)| (v.clone(), (*r, false))).collect(),
                _ => self.pick(src, b, sb, machine.as_ref(), cross, sbi, &cands, &picked, banned),
            };
            let mut terms: BTreeMap<String, u32> = entry.iter().map(|(v, (r, _))| (v.clone(), self.entry(*r))).collect();
            // A live-in value no component holds (reported by `pick`) is an
            // unknown input of its own.
            for (k, v) in cross.live_in.get(sbi).into_iter().flatten().enumerate().filter(|(_, v)| sbi > 0 && !entry.contains_key(*v)) {
                terms.insert(v.clone(), self.terms.id(Term::Input("lost value", k as u32)));
            }
            if let Some(p) = picked.get_mut(sbi) {
                *p = Some(entry);
            }
            let source = self.source_block(src, sb, &terms);
            if let (Some(s), Some(m)) = (source, machine) {
                self.compare(b, &s, &m, &named);
                for &succ in cross.succs.get(sbi).into_iter().flatten() {
                    let label = src.blocks.get(succ).map_or("", |x| x.label.as_str());
                    let live = cross.live_in.get(succ).cloned().unwrap_or_default();
                    match picked.get(succ).cloned().flatten() {
                        Some(known) => {
                            for v in &live {
                                let Some(&(r, others)) = known.get(v) else { continue };
                                if self.edge_refutes(b, &s, &m, v, label, r) && others {
                                    retry = retry.or(Some((succ, v.clone(), r)));
                                }
                            }
                        }
                        None => {
                            let seen = self.holders(&s, &m, &live);
                            let ends: Vec<u32> = (0..self.t.regs.count).map(|r| self.at_end(&m, r)).collect();
                            if let Some(c) = cands.get_mut(succ) {
                                narrow(c, seen, ends);
                            }
                        }
                    }
                }
            }
            tagged.extend(self.out.drain(mark..).map(|v| (mbi, v)));
        }
        for (mbi, b) in mach.blocks.iter().enumerate() {
            if done.get(mbi) == Some(&false) {
                let mark = self.out.len();
                self.machine_block(b);
                tagged.extend(self.out.drain(mark..).map(|v| (mbi, v)));
            }
        }
        tagged.sort_by_key(|(k, _)| *k);
        self.out.extend(tagged.into_iter().map(|(_, v)| v));
        retry
    }

    /// Kind `slot`: the program's length.
    fn length(&mut self, mach: &Program) {
        let total: usize = mach.bundle_count();
        if total > self.net.max_instructions {
            let (label, line) = mach.blocks.last().map_or(("", 0), |b| (b.label.as_str(), b.span.line));
            self.out.push(Violation::new(Kind::Slot, label, 0, line, format!("{total} instructions: the target runs at most {}", self.net.max_instructions)));
        }
    }

    /// The symbol of component `r` at the entry of the block being checked:
    /// the lowest component holding the same term on every edge into it.
    fn entry(&mut self, r: Reg) -> u32 {
        let r = self.same_at_entry.get(&r).copied().unwrap_or(r);
        self.terms.id(Term::Entry(r))
    }

    /// The term of component `r` at the end of machine block outcome `m`.
    fn at_end(&mut self, m: &BlockTerms, r: Reg) -> u32 {
        m.regs.get(&r).copied().unwrap_or_else(|| self.entry(r))
    }

    /// Whether terms `x` and `y` agree on every sample.
    fn agree(&self, x: u32, y: u32) -> bool {
        (0..16u64).all(|seed| self.terms.eval(x, seed, &mut HashMap::new()) == self.terms.eval(y, seed, &mut HashMap::new()))
    }

    /// For each value of `live`: the components holding its source term
    /// `s` at the end of machine outcome `m`, with whether only on samples.
    fn holders(&mut self, s: &BlockTerms, m: &BlockTerms, live: &BTreeSet<String>) -> BTreeMap<String, BTreeMap<Reg, bool>> {
        let ends: Vec<(Reg, u32)> = (0..self.t.regs.count).map(|r| (r, self.at_end(m, r))).collect();
        let mut out = BTreeMap::new();
        for v in live {
            let Some(&x) = s.vals.get(v) else {
                out.insert(v.clone(), BTreeMap::new());
                continue;
            };
            let same: BTreeMap<Reg, bool> = ends.iter().filter(|(_, t)| *t == x).map(|(r, _)| (*r, false)).collect();
            let found = if same.is_empty() { ends.iter().filter(|(_, t)| self.agree(*t, x)).map(|(r, _)| (*r, true)).collect() } else { same };
            out.insert(v.clone(), found);
        }
        out
    }

    /// Check that component `r` holds `%v` on the edge from `b` to `succ`
    /// (an obligation); whether the samples refute it.
    fn edge_refutes(&mut self, b: &Block, s: &BlockTerms, m: &BlockTerms, v: &str, succ: &str, r: Reg) -> bool {
        let Some(&x) = s.vals.get(v) else {
            let msg = format!("%{v} is live on entry to block {succ} but block {} leaves it unwritten on this edge", b.label);
            self.value_violation(Kind::Structure, b, b.bundles().len(), b.term.span.line, msg);
            return false;
        };
        let y = self.at_end(m, r);
        let refuted = x != y && !self.agree(x, y);
        let what = format!("%{v} in ${} on the edge from {} to {succ}", self.t.regs.name(r), b.label);
        self.obligation(b, x, y, &what);
        refuted
    }

    /// The entry components of block `sbi` (not the first): among its
    /// candidates, the first combination (values in name order, components
    /// in order, at most [`MAX_TRIES`]) under which every edge out of the
    /// block finds its successor's live-in values and the block's own
    /// comparison agrees, each with whether it had alternatives; the
    /// forward edges' obligations are counted here.
    #[allow(clippy::too_many_arguments)]
    fn pick(&mut self, src: &Program, b: &Block, sb: &Block, m: Option<&BlockTerms>, cross: &Crossing, sbi: usize, cands: &[Candidates], picked: &[Option<BTreeMap<String, (Reg, bool)>>], banned: &BTreeSet<(usize, String, Reg)>) -> BTreeMap<String, (Reg, bool)> {
        let c = cands.get(sbi).cloned().unwrap_or_default();
        let mut lists: Vec<(String, Vec<(Reg, usize)>)> = Vec::new();
        for v in cross.live_in.get(sbi).into_iter().flatten() {
            let l: Vec<(Reg, usize)> = c.regs.get(v).into_iter().flatten().filter(|(r, _)| !banned.contains(&(sbi, v.clone(), **r))).map(|(r, k)| (*r, *k)).collect();
            if l.is_empty() {
                let msg = format!("%{v} is live on entry to block {}, but no register component holds it on every edge into it", sb.label);
                self.value_violation(Kind::Dataflow, b, 0, b.span.line, msg);
                continue;
            }
            lists.push((v.clone(), l));
        }
        let combo = |idx: &[usize]| -> BTreeMap<String, Reg> { lists.iter().zip(idx).filter_map(|((v, l), k)| l.get(*k).map(|(r, _)| (v.clone(), *r))).collect() };
        let mut idx = vec![0usize; lists.len()];
        let mut chosen = combo(&idx);
        if let Some(m) = m {
            for tries in 1..=MAX_TRIES {
                let regs = combo(&idx);
                if self.edges_found(src, sb, m, cross, sbi, &regs, picked) && self.block_agrees(src, b, sb, m, &regs) {
                    chosen = regs;
                    break;
                }
                // The next combination, odometer order (last value fastest).
                let Some(k) = (0..idx.len()).rev().find(|&k| idx.get(k).zip(lists.get(k)).is_some_and(|(i, (_, l))| i + 1 < l.len())) else { break };
                // Combinations are left untried: the first one stands, a
                // guess.
                if tries == MAX_TRIES {
                    self.guessed = true;
                    break;
                }
                if let Some(i) = idx.get_mut(k) {
                    *i += 1;
                }
                for i in idx.iter_mut().skip(k + 1) {
                    *i = 0;
                }
            }
        }
        let mut out = BTreeMap::new();
        for (v, l) in &lists {
            let Some(&r) = chosen.get(v) else { continue };
            let sampled = l.iter().find(|(x, _)| *x == r).map_or(0, |(_, k)| *k);
            self.obligations.total += c.edges;
            self.obligations.syntactic += c.edges.saturating_sub(sampled);
            self.obligations.unknown += sampled;
            out.insert(v.clone(), (r, l.len() > 1));
        }
        out
    }

    /// Whether, with `regs` as the entry components of source block `sb`,
    /// the block's own effects, branch condition and named components agree
    /// with machine block `b`'s (outcome `m`) on every sample: a trial
    /// comparison that leaves no violation and no obligation behind. Two
    /// components may hold a value's term on every edge into the block; the
    /// block itself then tells which one it reads.
    fn block_agrees(&mut self, src: &Program, b: &Block, sb: &Block, m: &BlockTerms, regs: &BTreeMap<String, Reg>) -> bool {
        let (mark, obligations, guessed) = (self.out.len(), self.obligations, self.guessed);
        let terms: BTreeMap<String, u32> = regs.iter().map(|(v, r)| (v.clone(), self.entry(*r))).collect();
        let agrees = match self.source_block(src, sb, &terms) {
            Some(s) => {
                self.guessed = false;
                self.compare(b, &s, m, &named(src));
                self.out.len() == mark
            }
            None => false,
        };
        self.out.truncate(mark);
        self.obligations = obligations;
        self.guessed = guessed;
        agrees
    }

    /// Whether, with `regs` as the entry components of source block `sb`,
    /// every edge out of it finds each live-in value of its successor in a
    /// component (the one already picked, for a visited successor); a trial
    /// run that leaves no violation behind.
    #[allow(clippy::too_many_arguments)]
    fn edges_found(&mut self, src: &Program, sb: &Block, m: &BlockTerms, cross: &Crossing, sbi: usize, regs: &BTreeMap<String, Reg>, picked: &[Option<BTreeMap<String, (Reg, bool)>>]) -> bool {
        let mark = self.out.len();
        let terms: BTreeMap<String, u32> = regs.iter().map(|(v, r)| (v.clone(), self.entry(*r))).collect();
        let s = self.source_block(src, sb, &terms);
        self.out.truncate(mark);
        let Some(s) = s else { return false };
        for &succ in cross.succs.get(sbi).into_iter().flatten() {
            let live = cross.live_in.get(succ).cloned().unwrap_or_default();
            let known = picked.get(succ).cloned().flatten();
            for v in &live {
                let Some(&x) = s.vals.get(v) else { return false };
                let ok = match known.as_ref().and_then(|k| k.get(v)) {
                    Some(&(r, _)) => {
                        let y = self.at_end(m, r);
                        x == y || self.agree(x, y)
                    }
                    None => (0..self.t.regs.count).any(|r| {
                        let y = self.at_end(m, r);
                        x == y || self.agree(x, y)
                    }),
                };
                if !ok {
                    return false;
                }
            }
        }
        true
    }
}

/// Narrow a block's candidates by the holders found on one more edge.
fn narrow(c: &mut Candidates, seen: BTreeMap<String, BTreeMap<Reg, bool>>, ends: Vec<u32>) {
    c.ends.resize(ends.len().max(c.ends.len()), Vec::new());
    for (e, t) in c.ends.iter_mut().zip(ends) {
        e.push(t);
    }
    for (v, found) in seen {
        let entry: BTreeMap<Reg, usize> = found.iter().map(|(r, sampled)| (*r, usize::from(*sampled))).collect();
        let merged = match c.regs.get(&v) {
            None if c.edges == 0 => entry,
            None => BTreeMap::new(),
            Some(old) => old.iter().filter_map(|(r, k)| found.get(r).map(|s| (*r, k + usize::from(*s)))).collect(),
        };
        c.regs.insert(v, merged);
    }
    c.edges += 1;
}

/// Every register component the source names.
fn named(p: &Program) -> Vec<Reg> {
    let mut v: Vec<Reg> = p.inputs.iter().flat_map(|i| i.reg.regs()).collect();
    for b in &p.blocks {
        for o in b.insts().iter().flat_map(|i| i.dest.iter().chain(i.srcs.iter())) {
            if let Operand::Phys(r) = o {
                v.extend(r.regs());
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

fn index(inst: &Inst, d: &OpDesc) -> u32 {
    d.operands.iter().zip(&inst.srcs).find(|(k, _)| **k == OperandKind::Index).and_then(|(_, o)| o.imm()).map_or(0, |i| i.bits)
}

impl Ctx {
    fn violation(&mut self, kind: Kind, b: &Block, bi: usize, line: u32, msg: String) {
        self.out.push(Violation::new(kind, &b.label, bi, line, msg));
    }

    /// A difference between the source's and the machine's values: a
    /// violation, or an unknown obligation once entry components were
    /// guessed (`guessed`).
    fn value_violation(&mut self, kind: Kind, b: &Block, bi: usize, line: u32, msg: String) {
        if self.guessed {
            self.obligations.unknown += 1;
        } else {
            self.violation(kind, b, bi, line, msg);
        }
    }

    fn input_term(&mut self, d: &OpDesc, inst: &Inst) -> Option<u32> {
        let n = index(inst, d);
        Some(match d.sem {
            Sem::Varying => self.terms.id(Term::Input("attribute", n)),
            Sem::Uniform => self.terms.id(Term::Input("uniform", n)),
            Sem::Const => self.terms.id(Term::Word(n)),
            _ => return None,
        })
    }

    /// The source block as terms, its live-in values read from the
    /// components `entry` names; `None` when it cannot be read (a value
    /// read before any write, an unknown op), reported as `structure`.
    fn source_block<'p>(&mut self, src: &'p Program, b: &'p Block, entry: &BTreeMap<String, u32>) -> Option<BlockTerms> {
        let mut o = BlockTerms::default();
        let mut vals: HashMap<&str, u32> = HashMap::new();
        for (v, t) in entry {
            o.vals.insert(v.clone(), *t);
        }
        for inst in b.insts() {
            let d = src.target.op(&inst.opcode)?;
            let mut args = Vec::new();
            for (k, s) in d.operands.iter().zip(&inst.srcs) {
                if *k == OperandKind::Index {
                    continue;
                }
                let t = match s {
                    Operand::Virt(v) => match vals.get(v.name.as_str()).or_else(|| o.vals.get(v.name.as_str())) {
                        Some(t) => *t,
                        None => {
                            let msg = format!("%{} is read in block {} but no write of it reaches there on some path", v.name, b.label);
                            self.out.push(Violation::new(Kind::Structure, &b.label, 0, inst.span.line, msg));
                            return None;
                        }
                    },
                    Operand::Phys(r) => *o.regs.entry(r.base).or_insert_with(|| self.entry(r.base)),
                    _ => return None,
                };
                args.push(t);
            }
            let value = match d.sem {
                Sem::Output(name, true) => {
                    let ch = format!("{name} {}", index(inst, d));
                    o.effects.entry(ch).or_default().extend(args.last().copied());
                    continue;
                }
                s if s.is_outside_input() => self.input_term(d, inst)?,
                s => self.terms.op(s, args),
            };
            match &inst.dest {
                Some(Operand::Virt(v)) => {
                    vals.insert(v.name.as_str(), value);
                }
                Some(Operand::Phys(r)) => {
                    o.regs.insert(r.base, value);
                }
                _ => {}
            }
        }
        for (v, t) in &vals {
            o.vals.insert((*v).to_string(), *t);
        }
        if let TermKind::Brnz { cond, .. } = &b.term.kind {
            o.cond = match cond {
                Operand::Virt(v) => o.vals.get(v.name.as_str()).copied(),
                Operand::Phys(r) => Some(*o.regs.entry(r.base).or_insert_with(|| self.entry(r.base))),
                Operand::Imm(i) => Some(self.terms.id(Term::Word(i.bits))),
                _ => None,
            };
        }
        Some(o)
    }

    /// Check one bypass read at instruction `i` of `b` by operand `k` of
    /// `op` in unit `in_unit`; its term when it is sound.
    fn read(&mut self, b: &Block, made: &[Vec<Made>], i: usize, line: u32, r: &schedra_ir::BypassRead, reader: Option<(&OpDesc, &str, usize)>) -> Option<u32> {
        let name = format!("^{}.{}", r.unit, r.dist);
        let Some(unit) = self.net.units.iter().position(|u| u.name == r.unit) else {
            self.violation(Kind::Register, b, i, line, format!("{name}: {} has no unit `{}`", self.t.name, r.unit));
            return None;
        };
        let d = usize::from(r.dist);
        let Some(p) = i.checked_sub(d) else {
            self.violation(Kind::Latency, b, i, line, format!("{name} reads {d} instruction(s) back, before block {} starts: results do not cross blocks", b.label));
            return None;
        };
        let longest = self.net.units.get(unit).map_or(0, |u| self.net.op_windows.iter().map(|(_, w)| w.max).fold(u.window.max, u32::max));
        if reader.is_some() && d as u32 > longest {
            self.violation(Kind::Latency, b, i, line, format!("{name} reads past the maximum lifetime of any result of unit {} (at most {longest} instruction(s) back)", r.unit));
            return None;
        }
        let Some(m) = made.get(p).and_then(|x| x.iter().find(|m| m.unit == unit)).copied() else {
            // A unit of this very instruction makes its result after the
            // instruction's ALU reads: read too soon, not a read of nothing
            // (a store reads its own instruction's results).
            let own = reader.is_some() && d == 0 && b.bundles().get(i).is_some_and(|x| x.ops.iter().any(|op| op.slot == r.unit));
            if own {
                self.violation(Kind::Latency, b, i, line, format!("{name} reads the result of unit {} in its own instruction, before it is made", r.unit));
            } else {
                self.violation(Kind::Dataflow, b, i, line, format!("{name}: unit {} made nothing at bundle {p}", r.unit));
            }
            return None;
        };
        let u = self.net.units.get(unit)?;
        let w = self.net.window(u, m.op.name);
        let store = reader.is_none_or(|(op, _, _)| op.slots.iter().any(|s| self.net.unit(s).is_some_and(|x| x.kind == UnitKind::Store)));
        if store {
            if d != 0 {
                self.violation(Kind::Latency, b, i, line, format!("{name}: a store reads a result of its own instruction (distance 0)"));
                return None;
            }
            if !self.net.storable(u, m.op.name) {
                self.violation(Kind::Register, b, i, line, format!("{name}: the result of `{}` in {} cannot be stored directly; a move must come between", m.op.name, r.unit));
                return None;
            }
            return Some(m.term);
        }
        if !w.contains(d as u32) {
            let msg = if (d as u32) > w.max {
                format!("{name} reads `{}` of unit {} past its maximum lifetime (readable at distance {}..={})", m.op.name, r.unit, w.min, w.max)
            } else {
                format!("{name} reads `{}` of unit {} before it is made (readable at distance {}..={})", m.op.name, r.unit, w.min, w.max)
            };
            self.violation(Kind::Latency, b, i, line, msg);
            return None;
        }
        if let Some((op, in_unit, k)) = reader {
            if let Some(f) = self.net.forbidden(op.name, in_unit, k, &r.unit) {
                self.violation(Kind::Register, b, i, line, format!("{name}: operand {} of `{}` in {in_unit} cannot read the {} unit ({})", k + 1, op.name, r.unit, f.why));
                return None;
            }
        }
        Some(m.term)
    }

    /// Run and check the machine block; `None` when a read is unsound.
    fn machine_block(&mut self, b: &Block) -> Option<BlockTerms> {
        let mut o = BlockTerms::default();
        let mut made: Vec<Vec<Made>> = Vec::with_capacity(b.bundles().len());
        let mut stores: Vec<(usize, Reg, u32)> = Vec::new();
        let mut sound = true;
        let lat = self.net.store_load_latency as usize;
        for (i, x) in b.bundles().iter().enumerate() {
            let mut here: Vec<Made> = Vec::new();
            let mut ops: Vec<(usize, &'static OpDesc, &Inst, u32)> = Vec::new();
            for op in &x.ops {
                let line = if op.inst.span.line != 0 { op.inst.span.line } else { x.span.line };
                let (Some(d), Some(u)) = (self.t.op(&op.inst.opcode), self.net.units.iter().position(|u| u.name == op.slot)) else {
                    sound = false; // reported by the generic slot and structure checks
                    continue;
                };
                ops.push((u, d, &op.inst, line));
            }
            let with: Vec<(&OpDesc, &Inst, &str)> = ops.iter().map(|(u, d, inst, _)| (*d, *inst, self.net.units.get(*u).map_or("", |x| x.name))).collect();
            if let Err(m) = self.t.rules.placed_ok(&with) {
                self.violation(Kind::Slot, b, i, x.span.line, m);
            }
            for phase in [UnitKind::Load, UnitKind::Alu, UnitKind::Store] {
                let mut out = Vec::new();
                for (u, d, inst, line) in ops.iter().filter(|(u, ..)| self.net.units.get(*u).is_some_and(|x| x.kind == phase)) {
                    let (u, d, inst, line) = (*u, *d, *inst, *line);
                    match phase {
                        UnitKind::Load => {
                            let t = match inst.srcs.first() {
                                Some(Operand::Phys(r)) if d.operands == [OperandKind::Reg] => {
                                    let last = stores.iter().rev().find(|(_, q, _)| *q == r.base);
                                    match last {
                                        Some((s, _, _)) if i < s + lat => {
                                            self.violation(Kind::Latency, b, i, line, format!("`{}` of ${} at bundle {i} reads before the store at bundle {s} lands ({lat} instructions)", d.name, self.t.regs.name(r.base)));
                                            sound = false;
                                            self.terms.id(Term::Input(UNSOUND, (i * 64 + u) as u32))
                                        }
                                        Some((_, _, t)) => *t,
                                        None => *o.regs.entry(r.base).or_insert_with(|| self.entry(r.base)),
                                    }
                                }
                                _ => match self.input_term(d, inst) {
                                    Some(t) => t,
                                    None => {
                                        sound = false;
                                        self.terms.id(Term::Input(UNSOUND, (i * 64 + u) as u32))
                                    }
                                },
                            };
                            out.push(Made { unit: u, op: d, term: t });
                        }
                        UnitKind::Alu => {
                            let in_unit = self.net.units.get(u).map_or("", |x| x.name);
                            let mut args = Vec::new();
                            for (k, s) in inst.srcs.iter().enumerate() {
                                match s {
                                    Operand::Bypass(r) => match self.read(b, &made_with(&made, &here), i, line, r, Some((d, in_unit, k))) {
                                        Some(t) => args.push(t),
                                        None => sound = false,
                                    },
                                    _ => sound = false,
                                }
                            }
                            // A result made of unsound reads is still made:
                            // what reads it is judged by the rules of its unit.
                            let t = if args.len() == inst.srcs.len() { self.terms.op(d.sem, args) } else { self.terms.id(Term::Input(UNSOUND, (i * 64 + u) as u32)) };
                            out.push(Made { unit: u, op: d, term: t });
                        }
                        UnitKind::Store => {
                            let Some(Operand::Bypass(r)) = inst.srcs.last() else {
                                sound = false;
                                continue;
                            };
                            let mut all = made_with(&made, &here);
                            if let Some(last) = all.last_mut() {
                                last.extend(out.iter().copied());
                            }
                            let Some(t) = self.read(b, &all, i, line, r, None) else {
                                sound = false;
                                continue;
                            };
                            match (d.sem, &inst.dest) {
                                (Sem::Output(name, true), _) => o.effects.entry(format!("{name} {}", index(inst, d))).or_default().push(t),
                                (Sem::Mov, Some(Operand::Phys(reg))) => {
                                    if stores.iter().any(|(s, q, _)| *s == i && *q == reg.base) {
                                        self.violation(Kind::Hazard, b, i, line, format!("two stores to ${} in one instruction", self.t.regs.name(reg.base)));
                                    }
                                    stores.push((i, reg.base, t));
                                }
                                _ => sound = false,
                            }
                        }
                    }
                }
                here.extend(out);
            }
            self.sequence_rules(b, i, &ops);
            made.push(here);
        }
        let n = b.bundles().len();
        for (s, r, t) in &stores {
            if s + lat > n {
                self.violation(Kind::Latency, b, n, b.term.span.line, format!("the store to ${} at bundle {s} is still in flight at the end of block {}", self.t.regs.name(*r), b.label));
            }
            o.regs.insert(*r, *t);
        }
        if let TermKind::Brnz { cond, .. } = &b.term.kind {
            o.cond = match cond {
                Operand::Bypass(r) => {
                    let t = self.read(b, &made, n, b.term.span.line, r, Some((self.t.op(self.net.mov)?, "", 0)));
                    if t.is_none() {
                        sound = false;
                    }
                    t
                }
                Operand::Imm(i) => Some(self.terms.id(Term::Word(i.bits))),
                _ => {
                    self.violation(Kind::Structure, b, n, b.term.span.line, "the condition of `brnz` must be a bypass read".to_string());
                    None
                }
            };
        }
        sound.then_some(o)
    }

    /// Kind `hazard`: complex sequences whole in instruction `i`.
    fn sequence_rules(&mut self, b: &Block, i: usize, ops: &[(usize, &'static OpDesc, &Inst, u32)]) {
        let made_there = |unit: &str, d: usize| -> Option<&str> {
            let k = i.checked_sub(d)?;
            let bundle = b.bundles().get(k)?;
            bundle.ops.iter().find(|o| o.slot == unit).map(|o| o.inst.opcode.as_str())
        };
        for (_, d, inst, line) in ops {
            let in_sequence = self.net.sequences.iter().any(|s| d.name == s.imp || d.name == s.second || d.name == s.join);
            for o in &inst.srcs {
                let Operand::Bypass(r) = o else { continue };
                let from = made_there(&r.unit, usize::from(r.dist));
                if let Some(f) = from.filter(|f| !in_sequence && self.net.schedule_first.contains(f)) {
                    self.violation(Kind::Hazard, b, i, *line, format!("`{}` reads the result of `{f}`: a schedule_first result is read only by its complex sequence, never moved", d.name));
                }
            }
            for seq in self.net.sequences {
                if d.name == seq.join {
                    let ok0 = matches!(inst.srcs.first(), Some(Operand::Bypass(r)) if r.dist == 1 && made_there(&r.unit, 1).is_some_and(|op| self.net.sequences.iter().any(|s| s.imp == op)));
                    let ok1 = matches!(inst.srcs.get(1), Some(Operand::Bypass(r)) if r.dist == 1 && made_there(&r.unit, 1) == Some(seq.second));
                    if !(ok0 && ok1) {
                        self.violation(Kind::Hazard, b, i, *line, format!("`{}` must read its `impl` and `{}` from the instruction right before it", seq.join, seq.second));
                    }
                    break;
                }
                if Some(d.name) == seq.post {
                    let ok = matches!(inst.srcs.first(), Some(Operand::Bypass(r)) if made_there(&r.unit, usize::from(r.dist)) == Some(seq.join));
                    if !ok {
                        self.violation(Kind::Hazard, b, i, *line, format!("`{}` must read `{}` directly: no move may stand between them", d.name, seq.join));
                    }
                    break;
                }
            }
        }
    }

    fn compare(&mut self, b: &Block, s: &BlockTerms, m: &BlockTerms, named: &[Reg]) {
        let line = b.term.span.line;
        let n = b.bundles().len();
        let channels: Vec<&String> = s.effects.keys().chain(m.effects.keys()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        for ch in channels {
            let (a, z) = (s.effects.get(ch).cloned().unwrap_or_default(), m.effects.get(ch).cloned().unwrap_or_default());
            if a.len() != z.len() {
                self.value_violation(Kind::Dataflow, b, n, line, format!("channel `{ch}`: the source makes {} effect(s) in block {}, the machine {}", a.len(), b.label, z.len()));
                continue;
            }
            for (k, (x, y)) in a.iter().zip(&z).enumerate() {
                self.obligation(b, *x, *y, &format!("effect {k} on channel `{ch}`"));
            }
        }
        match (s.cond, m.cond) {
            (Some(x), Some(y)) => self.obligation(b, x, y, "the branch condition"),
            (None, None) => {}
            _ => self.violation(Kind::Structure, b, n, line, "only one program branches here".to_string()),
        }
        for r in named {
            let entry = self.entry(*r);
            let (x, y) = (s.regs.get(r).copied().unwrap_or(entry), m.regs.get(r).copied().unwrap_or(entry));
            let what = format!("${} at the end of block {}", self.t.regs.name(*r), b.label);
            self.obligation(b, x, y, &what);
        }
    }

    fn obligation(&mut self, b: &Block, x: u32, y: u32, what: &str) {
        self.obligations.total += 1;
        if x == y {
            self.obligations.syntactic += 1;
            return;
        }
        let differs = (0..16u64).find(|seed| self.terms.eval(x, *seed, &mut HashMap::new()) != self.terms.eval(y, *seed, &mut HashMap::new()));
        match differs {
            Some(seed) => {
                let (wx, wy) = (self.terms.eval(x, seed, &mut HashMap::new()), self.terms.eval(y, seed, &mut HashMap::new()));
                let msg = format!("{what} differs: the source gives {wx:#010x}, the machine {wy:#010x} on sample inputs {seed}");
                self.value_violation(Kind::Dataflow, b, b.bundles().len(), b.term.span.line, msg);
            }
            None => self.obligations.unknown += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{verify, Kind, Verdict, VerifyOptions};
    use schedra_ir::parse::parse;

    const SRC: &str = "target lima-gp\nb0:\n %a = ld_att 0\n %b = ld_uni 1\n %c = add %a, %b\n %r = rcp %c\n st_var 0, %r\n $r1.y = mov %c\n jmp b1\nb1:\n %d = mov $r1.y\n %e = mul %d, %d\n st_var 1, %e\n end\n";
    const MACH: &str = "target lima-gp\nform machine\nb0:\n { reg0.x: ld_att 0 ; uni.y: ld_uni 1 }\n { add0: add ^reg0.x.1, ^uni.y.0 ; uni.y: ld_uni 1 }\n { complex: rcp_impl ^add0.1 ; mul0: complex2 ^add0.1 ; pass: mov ^add0.1 ; st.y: st_reg $r1.y, ^pass.0 }\n { mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }\n { pass: mov ^mul0.2 ; st.x: st_var 0, ^pass.0 }\n jmp b1\nb1:\n { reg1.y: ld_reg $r1.y ; mul1: mul ^reg1.y.0, ^reg1.y.0 }\n { add0: mov ^mul1.1 ; st.y: st_var 1, ^add0.0 }\n end\n";

    fn kinds(mach: &str) -> Vec<(Kind, String)> {
        let (s, m) = (parse(SRC.as_bytes(), None).unwrap(), parse(mach.as_bytes(), None).unwrap());
        let r = verify(&s, &m, &VerifyOptions::default());
        if r.violations.is_empty() {
            assert_eq!(r.verdict, Verdict::Proven);
        }
        r.violations.into_iter().map(|v| (v.kind, v.message)).collect()
    }
    fn first(mach: &str) -> (Kind, String) {
        kinds(mach).into_iter().next().expect("a violation")
    }

    #[test]
    fn a_correct_schedule_is_proven() {
        assert_eq!(kinds(MACH), vec![]);
    }

    #[test]
    fn reads_outside_windows_and_units() {
        let d3 = MACH.replace("{ pass: mov ^mul0.2 ;", "{ pass: mov ^add0.3 ;");
        let (k, m) = first(&d3);
        assert_eq!(k, Kind::Latency);
        assert!(m.contains("maximum lifetime"), "{m}");
        let late = MACH.replace("{ }\n { pass: mov ^mul0.2", "{ }\n { }\n { pass: mov ^mul0.3");
        assert!(kinds(&late).iter().any(|(k, m)| *k == Kind::Latency && m.contains("maximum lifetime")));
        let unknown = MACH.replace("mul ^reg1.y.0, ^reg1.y.0", "mul ^reg9.y.0, ^reg1.y.0");
        assert_eq!(first(&unknown).0, Kind::Register);
        let wrong = MACH.replace("mul1: mul ^reg1.y.0, ^reg1.y.0", "mul1: mul ^reg1.y.0, ^reg1.x.0");
        assert_eq!(first(&wrong).0, Kind::Dataflow, "{:?}", kinds(&wrong));
    }

    #[test]
    fn stores_read_storable_results_of_their_instruction() {
        let load = MACH.replace("{ add0: mov ^mul1.1 ; st.y: st_var 1, ^add0.0 }", "{ add0: mov ^mul1.1 ; reg0.y: ld_att 1 ; st.y: st_var 1, ^reg0.y.0 }");
        let (k, m) = first(&load);
        assert_eq!(k, Kind::Register);
        assert!(m.contains("cannot be stored directly"), "{m}");
        let old = MACH.replace("st.y: st_var 1, ^add0.0", "st.y: st_var 1, ^mul1.1");
        assert_eq!(first(&old).0, Kind::Latency);
    }

    #[test]
    fn complex_sequences_and_register_latency() {
        let split = MACH.replace("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }", "{ }\n { mul0: complex1 ^complex.2, ^mul0.2, ^pass.2 }");
        assert!(kinds(&split).iter().any(|(k, _)| *k == Kind::Hazard || *k == Kind::Latency));
        let second = MACH.replace("complex1 ^complex.1, ^mul0.1, ^pass.1", "complex1 ^complex.1, ^complex.1, ^pass.1");
        assert_eq!(first(&second).0, Kind::Register, "the complex unit cannot be complex1's second source");
        let early = MACH.replace(" { }\n { pass: mov ^mul0.2 ; st.x: st_var 0, ^pass.0 }\n jmp b1", " jmp b1").replace("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n", "");
        assert!(kinds(&early).iter().any(|(k, m)| *k == Kind::Latency && m.contains("in flight")));
        let shared = MACH.replace("{ add0: mov ^mul1.1 ;", "{ add0: mov ^mul1.1 ; add1: min ^mul1.1, ^mul1.1 ;");
        assert_eq!(first(&shared).0, Kind::Slot);
    }

    /// Values crossing blocks as virtual registers: the verifier finds the
    /// component holding each on the edge, and checks it on every edge.
    const CROSS_SRC: &str = "target lima-gp\nb0:\n %a = ld_att 0\n %b = ld_uni 1\n %z = ld_const 0\n %i = mov %z\n %s = mov %z\n jmp h\nh:\n %s = add %s, %a\n %i = add %i, %b\n %m = lt %i, %a\n brnz %m, h, x\nx:\n st_var 0, %s\n end\n";
    const CROSS_MACH: &str = "target lima-gp\nform machine\nb0:\n { reg0.x: ld_att 0 ; uni.y: ld_uni 1 ; add0: mov ^reg0.x.0 ; mul1: mov ^uni.y.0 ; st.x: st_reg $r0.x, ^add0.0 ; st.y: st_reg $r0.y, ^mul1.0 }\n { uni.x: ld_const 0 ; add0: mov ^uni.x.0 ; mul1: mov ^uni.x.0 ; st.z: st_reg $r0.z, ^add0.0 ; st.w: st_reg $r0.w, ^mul1.0 }\n { }\n { }\n jmp h\nh:\n { reg1.x: ld_reg $r0.x ; reg1.y: ld_reg $r0.y ; reg1.z: ld_reg $r0.z ; reg1.w: ld_reg $r0.w ; add0: add ^reg1.w.0, ^reg1.x.0 ; add1: add ^reg1.z.0, ^reg1.y.0 ; st.z: st_reg $r0.z, ^add1.0 ; st.w: st_reg $r0.w, ^add0.0 }\n { reg0.x: ld_reg $r0.x ; add0: lt ^add1.1, ^reg0.x.0 }\n { }\n { add0: mov ^add0.2 }\n brnz ^add0.1, h, x\nx:\n { reg1.w: ld_reg $r0.w ; add0: mov ^reg1.w.0 ; st.x: st_var 0, ^add0.0 }\n end\n";

    fn cross_kinds(mach: &str) -> Vec<(Kind, String)> {
        let (s, m) = (parse(CROSS_SRC.as_bytes(), None).unwrap(), parse(mach.as_bytes(), None).unwrap());
        let r = verify(&s, &m, &VerifyOptions::default());
        if r.violations.is_empty() {
            assert_eq!(r.verdict, Verdict::Proven);
        }
        r.violations.into_iter().map(|v| (v.kind, v.message)).collect()
    }

    #[test]
    fn values_crossing_blocks_in_components_are_proven() {
        // %i and %s both start as 0.0 in $r0.z and $r0.w: only the back
        // edge tells which is which.
        assert_eq!(cross_kinds(CROSS_MACH), vec![]);
    }

    #[test]
    fn values_crossing_blocks_in_the_wrong_component_are_refuted() {
        let lost = CROSS_MACH.replace("st.x: st_reg $r0.x, ^add0.0", "st.x: st_reg $r0.x, ^mul1.0");
        let v = cross_kinds(&lost);
        assert!(v.iter().any(|(k, m)| *k == Kind::Dataflow && m.contains("%a is live on entry to block h") && m.contains("no register component")), "{v:?}");
        let swapped = CROSS_MACH.replace("st.z: st_reg $r0.z, ^add1.0 ; st.w: st_reg $r0.w, ^add0.0", "st.z: st_reg $r0.z, ^add0.0 ; st.w: st_reg $r0.w, ^add1.0");
        let v = cross_kinds(&swapped);
        assert!(v.iter().any(|(k, _)| *k == Kind::Dataflow), "{v:?}");
        let exit = CROSS_MACH.replace("reg1.w: ld_reg $r0.w ; add0: mov ^reg1.w.0 ; st.x", "reg1.z: ld_reg $r0.z ; add0: mov ^reg1.z.0 ; st.x");
        let v = cross_kinds(&exit);
        assert!(v.iter().any(|(k, m)| *k == Kind::Dataflow && m.contains("var 0")), "{v:?}");
    }

    /// One value in two components (`$r0.x`, `$r0.y`) crossing a block that
    /// passes both on: the successor may read either.
    const SHARED_SRC: &str = "target lima-gp\nb0:\n %0 = ld_const 0\n %1 = mul %0, %0\n %2 = mul %0, %0\n jmp b1\nb1:\n brnz %2, b2, b3\nb2:\n end\nb3:\n st_var 0, %1\n end\n";
    const SHARED_MACH: &str = "target lima-gp\nform machine\nb0:\n { mul1: mul ^uni.x.0, ^uni.x.0 ; uni.x: ld_const 0 ; st.x: st_reg $r0.x, ^mul1.0 ; st.y: st_reg $r0.y, ^mul1.0 }\n { }\n { }\n jmp b1\nb1:\n { add0: mov ^reg1.x.0 ; reg1.x: ld_reg $r0.x }\n brnz ^add0.1, b2, b3\nb2:\n end\nb3:\n { add0: mov ^reg1.y.0 ; reg1.y: ld_reg $r0.y ; st.x: st_var 0, ^add0.0 }\n end\n";

    fn shared_kinds(mach: &str) -> Vec<(Kind, String)> {
        let (s, m) = (parse(SHARED_SRC.as_bytes(), None).unwrap(), parse(mach.as_bytes(), None).unwrap());
        let r = verify(&s, &m, &VerifyOptions::default());
        if r.violations.is_empty() {
            assert_eq!(r.verdict, Verdict::Proven);
        }
        r.violations.into_iter().map(|v| (v.kind, v.message)).collect()
    }

    #[test]
    fn components_equal_on_every_edge_in_are_one_value() {
        assert_eq!(shared_kinds(SHARED_MACH), vec![]);
        // $r0.z holds no stored value: reading %1 from it is wrong.
        let other = SHARED_MACH.replace("reg1.y: ld_reg $r0.y", "reg1.y: ld_reg $r0.z");
        let v = shared_kinds(&other);
        assert!(v.iter().any(|(k, _)| *k == Kind::Dataflow), "{v:?}");
        // $r0.y holds a different value: the equality is per edge, not per name.
        let differ = SHARED_MACH.replace("st.y: st_reg $r0.y, ^mul1.0 }\n { }", "st.y: st_reg $r0.y, ^mul1.0 }\n { reg0.x: ld_att 0 ; add0: mov ^reg0.x.0 ; st.y: st_reg $r0.y, ^add0.0 }");
        let v = shared_kinds(&differ);
        assert!(v.iter().any(|(k, _)| *k == Kind::Dataflow), "{v:?}");
    }

    /// A correct program whose entry components are found only after more
    /// than `MAX_TRIES` combinations: `%a` is in `$r0.x` and `$r0.y` (b1
    /// reads `$r0.y`, the second), `%b` and `%c` in sixteen components
    /// each, any of which fits. b1 is a loop header, so components equal on
    /// the edge from b0 are not known equal on its back edge. With `a_twice`
    /// false `%a` is in `$r0.y` alone.
    fn many_candidates(a_twice: bool) -> (String, String) {
        let src = "target lima-gp\nb0:\n %a = ld_att 0\n %b = ld_att 1\n %c = ld_att 2\n jmp b1\nb1:\n %x = add %a, %a\n jmp b2\nb2:\n st_var 0, %x\n st_var 1, %b\n st_var 2, %c\n brnz %x, b1, b3\nb3:\n end\n".to_string();
        let mut m = String::from("target lima-gp\nform machine\nb0:\n");
        let a_x = if a_twice { " ; st.x: st_reg $r0.x, ^add0.0" } else { "" };
        m += &format!(" {{ reg0.x: ld_att 0 ; add0: mov ^reg0.x.0{a_x} ; st.y: st_reg $r0.y, ^add0.0 }}\n");
        for (unit, att, vectors) in [("reg0.y", 1, 1..=4), ("reg0.z", 2, 5..=8)] {
            for k in vectors {
                m += &format!(" {{ {unit}: ld_att {att} ; add0: mov ^{unit}.0 ; st.x: st_reg $r{k}.x, ^add0.0 ; st.y: st_reg $r{k}.y, ^add0.0 ; st.z: st_reg $r{k}.z, ^add0.0 ; st.w: st_reg $r{k}.w, ^add0.0 }}\n");
            }
        }
        m += " { }\n { }\n { }\n jmp b1\nb1:\n { reg1.y: ld_reg $r0.y ; add0: add ^reg1.y.0, ^reg1.y.0 ; st.x: st_reg $r9.x, ^add0.0 }\n { }\n { }\n { }\n jmp b2\nb2:\n";
        for (k, (r, st)) in [("$r9.x", "st.x"), ("$r1.x", "st.y"), ("$r5.x", "st.z")].iter().enumerate() {
            m += &format!(" {{ reg0.x: ld_reg {r} ; add0: mov ^reg0.x.0 ; {st}: st_var {k}, ^add0.0 }}\n");
        }
        m += " { reg0.x: ld_reg $r9.x ; add0: mov ^reg0.x.0 }\n brnz ^add0.1, b1, b3\nb3:\n end\n";
        (src, m)
    }

    #[test]
    fn entry_components_past_the_bound_are_unknown_not_violations() {
        let run = |a_twice: bool| {
            let (src, mach) = many_candidates(a_twice);
            let (s, m) = (parse(src.as_bytes(), None).unwrap(), parse(mach.as_bytes(), None).unwrap());
            verify(&s, &m, &VerifyOptions::default())
        };
        let single = run(false);
        assert_eq!(single.verdict, Verdict::Proven, "{:?}", single.violations);
        // The first 256 combinations all take `$r0.x` for `%a`: the search
        // gives up on a guess, and what the guess gets wrong has no witness.
        let twice = run(true);
        assert_eq!(twice.verdict, Verdict::Unknown, "{:?}", twice.violations);
        assert!(twice.violations.is_empty(), "{:?}", twice.violations);
    }

}

/// The results made so far: earlier instructions, then this one's.
fn made_with(made: &[Vec<Made>], here: &[Made]) -> Vec<Vec<Made>> {
    let mut v = made.to_vec();
    v.push(here.to_vec());
    v
}
