//! Which machine location holds which source value at each block entry.
//!
//! Algorithm: a forward fixpoint over the source CFG, in the spirit of
//! regalloc2's checker but value-sensitive through terms. The state at a
//! block entry ([`Facts`]) says, for each machine location, the set of source
//! variables it is known to hold on *every* path into the block, plus the
//! closed terms (terms without symbols, such as `unif[0]` or an input
//! register) that a location or a variable is known to equal. The meet is set
//! intersection (and equality for closed terms); the start state is the
//! `input` binding at the entry block and "unvisited" (top) elsewhere.
//!
//! Transfer: [`enter`] turns the facts into block-entry terms — variables
//! known to be equal share one symbol, locations holding them get that same
//! symbol, everything else is junk — then both blocks are run symbolically,
//! and [`exit_facts`] reads off, for each successor, which location holds
//! each variable live into it (syntactic equality of terms, or a proof by the
//! solver). Loops need no unrolling: the states only shrink until stable.
//!
//! Invariant (soundness): if the facts at every block entry hold on all
//! paths, the facts computed at every exit hold too, because equal terms
//! over the entry symbols mean equal words whatever the symbols stand for.
//! The caller re-checks that the final states are a fixpoint.

use crate::ids::Vregs;
use crate::regfile::{RegMap, SlotMap};
use crate::srccode::{input_vars, SrcCode};
use crate::symbolic::{Env, Loc, MachEntry, MachRun, Place, SrcRun, Var};
use crate::term::{Term, Terms};
use schedra_ir::Program;
use std::collections::BTreeSet;

pub use crate::facts::Facts;

/// Source liveness: the variables live into each block.
pub struct Liveness {
    /// Per source block index, the live variables as numbers of
    /// [`SrcCode::var`], ascending (so in variable order).
    pub live_in: Vec<Vec<u32>>,
}

/// Strong (faint-variable) backward liveness over the source CFG, iterated
/// to a fixpoint: a variable is live where its value can still reach an
/// effect or a branch condition. An instruction's operands are live before
/// it only if the instruction is a root (it has an effect, or defines
/// nothing the analysis can see) or one of the words it defines is live
/// after it. A value whose only uses feed dead computations is therefore
/// not live: a compiler may drop those computations (an identity move, a
/// dead copy) and keep the value in different places on different paths.
/// Sets are bit sets over the variable numbers of `code`.
/// `succs` are the source's [`successors`].
///
/// A worklist of blocks, first every block from the last to the first,
/// then the predecessors of each block whose live-in set grew (the
/// transfer is monotone and the sets start empty, so any order reaches the
/// same least fixpoint; this one needs no confirming pass over the whole
/// program).
pub fn liveness(code: &SrcCode, succs: &[Vec<usize>]) -> Liveness {
    let prog = LiveProgram::of(code);
    let words = code.universe_len().div_ceil(64);
    let n = code.blocks().len();
    let preds = schedra_ir::cfg::Predecessors::new(n, |b| succs.get(b).map_or(&[][..], Vec::as_slice));
    let mut live_in = vec![0u64; n * words];
    let mut live = vec![0u64; words];
    let mut work: std::collections::VecDeque<usize> = (0..n).rev().collect();
    let mut queued = vec![true; n];
    while let Some(b) = work.pop_front() {
        if let Some(q) = queued.get_mut(b) {
            *q = false;
        }
        let Some(block) = prog.blocks.get(b) else { continue };
        live.fill(0);
        for s in succs.get(b).into_iter().flatten() {
            if let Some(from) = live_in.get(s * words..(s + 1) * words) {
                live.iter_mut().zip(from).for_each(|(x, y)| *x |= y);
            }
        }
        prog.set(&mut live, block.cond);
        for inst in prog.insts.get(block.insts.clone()).unwrap_or(&[]).iter().rev() {
            let needed = inst.root || prog.ids(inst.defs).iter().any(|d| bit(&live, *d));
            for d in prog.ids(inst.defs) {
                if let Some(w) = live.get_mut(*d as usize / 64) {
                    *w &= !(1 << (d % 64));
                }
            }
            if needed {
                prog.set(&mut live, inst.uses);
            }
        }
        if let Some(slot) = live_in.get_mut(b * words..(b + 1) * words) {
            if *slot != *live {
                slot.copy_from_slice(&live);
                for &p in preds.of(b) {
                    if let Some(q @ false) = queued.get_mut(p) {
                        *q = true;
                        work.push_back(p);
                    }
                }
            }
        }
    }
    let set = |b: usize| -> Vec<u32> {
        let bits = live_in.get(b * words..(b + 1) * words).unwrap_or(&[]);
        let mut out = Vec::with_capacity(bits.iter().map(|w| w.count_ones() as usize).sum());
        for (k, w) in bits.iter().enumerate() {
            let mut w = *w;
            while w != 0 {
                out.push((k * 64) as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        out
    };
    Liveness { live_in: (0..n).map(set).collect() }
}

fn bit(bits: &[u64], i: u32) -> bool {
    bits.get(i as usize / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

/// One instruction's variables, for liveness (ranges of
/// [`LiveProgram::ids`]).
struct InstUses {
    uses: (u32, u32),
    defs: (u32, u32),
    /// An effect, or nothing visible defined: its operands are always live.
    root: bool,
}

/// A block's instructions (a range of [`LiveProgram::insts`]) and branch
/// condition variables.
struct BlockUses {
    insts: std::ops::Range<usize>,
    cond: (u32, u32),
}

/// The program as liveness reads it: per instruction the variable numbers
/// it uses and defines, as ranges of one list. Built once.
struct LiveProgram {
    ids: Vec<u32>,
    insts: Vec<InstUses>,
    blocks: Vec<BlockUses>,
}

impl LiveProgram {
    fn of(code: &SrcCode) -> LiveProgram {
        let n: usize = code.blocks().iter().map(|b| code.insts(b).len()).sum();
        let mut p = LiveProgram { ids: Vec::with_capacity(4 * n), insts: Vec::with_capacity(n), blocks: Vec::with_capacity(code.blocks().len()) };
        let mut defs = Vec::new();
        for block in code.blocks() {
            let first = p.insts.len();
            for inst in code.insts(block) {
                defs.clear();
                let u0 = p.ids.len() as u32;
                code.uses_defs(inst, &mut p.ids, &mut defs);
                let u1 = p.ids.len() as u32;
                p.ids.extend_from_slice(&defs);
                let root = defs.is_empty() || inst.desc.is_none_or(|d| matches!(d.sem, schedra_ir::target::Sem::Output(..)));
                p.insts.push(InstUses { uses: (u0, u1), defs: (u1, p.ids.len() as u32), root });
            }
            let c0 = p.ids.len() as u32;
            p.ids.extend_from_slice(block.cond.as_ref().map(|a| code.arg_vars(a)).unwrap_or(&[]));
            p.blocks.push(BlockUses { insts: first..p.insts.len(), cond: (c0, p.ids.len() as u32) });
        }
        p
    }

    fn ids(&self, (start, end): (u32, u32)) -> &[u32] {
        self.ids.get(start as usize..end as usize).unwrap_or(&[])
    }

    /// Add the variables of a range to a set.
    fn set(&self, bits: &mut [u64], range: (u32, u32)) {
        for i in self.ids(range) {
            if let Some(w) = bits.get_mut(*i as usize / 64) {
                *w |= 1 << (i % 64);
            }
        }
    }
}

/// Successor block indices of each source block (unknown labels skipped).
pub fn successors(p: &Program) -> Vec<Vec<usize>> {
    successors_by(p, &crate::labels::Labels::of(p))
}

/// [`successors`], with `p`'s labels given.
pub fn successors_by(p: &Program, labels: &crate::labels::Labels) -> Vec<Vec<usize>> {
    // An edge usually leads to the next block.
    p.blocks.iter().enumerate().map(|(i, b)| schedra_ir::cfg::successor_labels(&b.term).filter_map(|l| labels.index_near(l, i + 1)).collect()).collect()
}

/// The facts at the program entry: each input register holds its source
/// variable (and the source's name for the register), both equal to the
/// register's entry word.
pub fn input_facts(terms: &mut Terms, src: &Program, code: &SrcCode, vregs: &Vregs) -> Facts {
    let (mut held, mut loc_closed, mut var_closed) = (Vec::new(), Vec::new(), Vec::new());
    input_vars(src, vregs, |r, v| {
        let t = terms.intern(crate::term::Node::Reg(r));
        if matches!(v, Var::P(_)) {
            loc_closed.push((Loc::reg(r), t));
        }
        // Every input variable has a number (see `SrcCode::of`).
        if let Some(i) = code.ix(&v) {
            var_closed.push((i, t));
            held.push((Loc::reg(r), i));
        }
    });
    Facts::from_parts(held, loc_closed, var_closed)
}

/// Human name of a source variable.
pub fn describe_var(v: &Var, p: &Program, vregs: &Vregs) -> String {
    crate::symbolic::var_label(p, vregs, v)
}

/// The tables of [`enter`], kept between calls (one allocation each per
/// verification instead of per block visit).
#[derive(Default)]
pub struct EnterBuffers {
    parent: Vec<u32>,
    class_term: Vec<Option<Term>>,
}

/// The class representative of variable number `v` in a union-find forest.
fn find(parent: &[u32], v: u32) -> u32 {
    let mut cur = v;
    while let Some(&p) = parent.get(cur as usize) {
        if p == cur {
            break;
        }
        cur = p;
    }
    cur
}

/// Block-entry terms from the facts: the source's live-in variables (as
/// numbers of `code`, with their names for messages) and the machine's
/// known locations. Variables that share a location share one symbol
/// (`%a@b1`); a class with a closed term (of one of its variables, or of a
/// location holding it) uses it, and every location holding a class gets
/// the class's term, so that source and machine agree syntactically on
/// what an untouched location holds. The union-find and the class terms
/// are tables indexed by variable number. `at` is the block's id for its
/// symbols (see [`crate::symbolic::namer`]).
/// `scratch` holds the tables between calls.
#[allow(clippy::too_many_arguments)]
pub fn enter(terms: &mut Terms, code: &SrcCode, vregs: &Vregs, at: u32, facts: &Facts, live_in: &[u32], bufs: &mut EnterBuffers) -> (Env, Vec<(Var, Term)>, MachEntry) {
    let u = code.universe_len();
    let EnterBuffers { parent, class_term } = bufs;
    union_held(parent, u, facts);
    closed_classes(parent, class_term, u, facts);
    let mut class_of = |terms: &mut Terms, v: u32| -> Term {
        let r = find(parent, v);
        if let Some(t) = class_term.get(r as usize).copied().flatten() {
            return t;
        }
        let t = terms.symbol_for(code.var(r).entry_key(vregs), at, false);
        if let Some(slot) = class_term.get_mut(r as usize) {
            *slot = Some(t);
        }
        t
    };
    let mut env = Env::new(u);
    let mut names = Vec::with_capacity(live_in.len());
    for &i in live_in {
        let t = class_of(terms, i);
        env.set(i, t);
        names.push((code.var(i), t));
    }
    (env, names, entry_locs(terms, facts, &mut class_of))
}

/// The union-find forest (`parent`, over `u` variables) of the variables
/// that share a location in `facts`.
fn union_held(parent: &mut Vec<u32>, u: usize, facts: &Facts) {
    parent.clear();
    parent.extend(0..u as u32);
    for group in facts.held().chunk_by(|a, b| a.0 == b.0) {
        let mut it = group.iter().map(|(_, v)| *v);
        if let Some(first) = it.next() {
            let root = find(parent, first);
            for v in it {
                let r = find(parent, v);
                if let Some(slot) = parent.get_mut(r as usize).filter(|_| r != root) {
                    *slot = root;
                }
            }
        }
    }
}

/// The closed term of each class (by its representative in `parent`), if
/// one is known: a closed term of one of its variables, or of a location
/// that holds it on every path (a location that holds a class and equals
/// a closed term on every path makes the whole class equal to that term).
/// The first one found counts.
fn closed_classes(parent: &[u32], class_term: &mut Vec<Option<Term>>, u: usize, facts: &Facts) {
    class_term.clear();
    class_term.resize(u, None);
    let set_once = |class_term: &mut Vec<Option<Term>>, v: u32, t: Term| {
        if let Some(slot) = class_term.get_mut(v as usize) {
            slot.get_or_insert(t);
        }
    };
    for (v, t) in facts.closed_vars() {
        set_once(class_term, find(parent, *v), *t);
    }
    // Held and closed locations are both in location order: one merge.
    let mut closed = facts.closed_locs().iter().peekable();
    for group in facts.held().chunk_by(|a, b| a.0 == b.0) {
        let Some(&(loc, v)) = group.first() else { continue };
        while closed.next_if(|(cl, _)| *cl < loc).is_some() {}
        if let Some((_, t)) = closed.next_if(|(cl, _)| *cl == loc) {
            set_once(class_term, find(parent, v), *t);
        }
    }
}

/// The machine locations' block-entry terms: every held location takes
/// its class term (`class_of` a variable it holds), every other location
/// with a closed term that term: one merge of the two location-ordered
/// lists (so the registers come in order). A location holding variables
/// takes their class term even when it also has a closed term, so that an
/// unwritten location still matches its variables syntactically at the
/// block exit even when its closed term and theirs are only semantically
/// equal (`sub(u, 0)` and `u`).
fn entry_locs(terms: &mut Terms, facts: &Facts, class_of: &mut impl FnMut(&mut Terms, u32) -> Term) -> MachEntry {
    let mut regs: Vec<(schedra_ir::Reg, Term)> = Vec::with_capacity(facts.held().len() + facts.closed_locs().len());
    let mut slots = SlotMap::default();
    let mut put = |loc: Loc, t: Term| match loc.get() {
        Place::R(r) => regs.push((r, t)),
        Place::S(s) => slots.insert(s, t),
    };
    let mut closed = facts.closed_locs().iter().peekable();
    for group in facts.held().chunk_by(|a, b| a.0 == b.0) {
        let Some(&(loc, v)) = group.first() else { continue };
        let t = class_of(terms, v);
        while let Some(&(cl, ct)) = closed.next_if(|(cl, _)| *cl <= loc) {
            if cl < loc {
                put(cl, ct);
            }
        }
        put(loc, t);
    }
    for &(cl, ct) in closed {
        put(cl, ct);
    }
    // One merge of two location-ordered lists, a location put once.
    MachEntry { regs: RegMap::in_order(regs), slots }
}

/// What a machine run leaves in its locations, for [`exit_facts`]: every
/// (term, location) pair in location order, and the locations holding
/// closed terms (also in location order). Computed once per run, shared by
/// its successors; also holds [`exit_facts`]'s list of wanted variables
/// between calls.
#[derive(Default)]
pub struct ExitLocs {
    held_by: Vec<(Term, Loc)>,
    closed: Vec<(Loc, Term)>,
    /// Scratch of [`exit_facts`]: the live variables to place, their exit
    /// terms and whether a location holds them syntactically.
    want: Vec<(u32, Term, bool)>,
}

impl ExitLocs {
    /// The locations of `mach` at the end of its block.
    pub fn of(terms: &Terms, mach: &MachRun) -> ExitLocs {
        let mut l = ExitLocs::default();
        l.fill(terms, mach);
        l
    }

    /// [`ExitLocs::of`] into `self` (keeping its room).
    pub fn fill(&mut self, terms: &Terms, mach: &MachRun) {
        let ExitLocs { held_by, closed, .. } = self;
        held_by.clear();
        closed.clear();
        // Registers, then scratch slots, each in order.
        held_by.extend(mach.regs.iter().map(|(r, t)| (t, Loc::reg(r))).chain(mach.mem.iter().map(|(s, t)| (t, Loc::slot(s)))));
        closed.extend(held_by.iter().filter(|(t, _)| terms.closed(*t)).map(|(t, l)| (*l, *t)));
    }
}

/// The facts at the end of a block, for the successor whose live-in set is
/// `live` (variable numbers): which location holds each live variable, and
/// the closed terms. `locs` are [`ExitLocs::of`] the machine run.
/// `equal` decides equality of terms that differ syntactically (the
/// solver); it is asked only about variables no location holds
/// syntactically, in variable order.
///
/// The held pairs come out sorted: one walk over the locations in order,
/// each matched against the live variables in order (a block ends with a
/// dozen locations and a handful of live variables).
pub fn exit_facts(
    terms: &mut Terms,
    src_run: &SrcRun,
    mach: &MachRun,
    locs: &mut ExitLocs,
    live: &[u32],
    equal: &mut dyn FnMut(&mut Terms, Term, Term) -> bool,
) -> Facts {
    let (mut held, mut var_closed) = (Vec::with_capacity(2 * live.len()), Vec::with_capacity(live.len()));
    let ExitLocs { held_by, closed, want } = locs;
    want.clear();
    for &i in live {
        let Some(t) = src_run.exit.get(i) else { continue };
        if terms.is_junk(t) {
            continue;
        }
        if terms.closed(t) {
            var_closed.push((i, t));
        }
        want.push((i, t, false));
    }
    // A location whose term is none of the wanted ones (most of them)
    // costs one test of this mask of the wanted terms' low bits.
    let mask = want.iter().fold(0u64, |m, (_, t, _)| m | 1 << (t.0 % 64));
    for &(u, loc) in held_by.iter() {
        if mask & 1 << (u.0 % 64) == 0 {
            continue;
        }
        for (i, t, found) in want.iter_mut() {
            if *t == u {
                held.push((loc, *i));
                *found = true;
            }
        }
    }
    let mut written: Option<Vec<(Loc, Term)>> = None;
    let in_order = held.len();
    for &(i, t, found) in want.iter() {
        if found {
            continue;
        }
        // Out of order: `Facts::from_parts` sorts `held` again.
        for (loc, mt) in written.get_or_insert_with(|| written_locs(mach)).iter().take(16) {
            if !terms.is_junk(*mt) && equal(terms, t, *mt) {
                held.push((*loc, i));
            }
        }
    }
    // The walk above gives the held pairs in order (locations in order,
    // each with its variables in order), the run's closed locations are in
    // location order (`ExitLocs::fill`) and the closed variables in
    // variable order (`live` is): no order check unless the solver added
    // pairs.
    if held.len() == in_order {
        Facts::from_sorted(held, closed.clone(), var_closed)
    } else {
        Facts::from_parts(held, closed.clone(), var_closed)
    }
}

/// Locations the block wrote, with their final terms (most recent first).
fn written_locs(mach: &MachRun) -> Vec<(Loc, Term)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for w in mach.writes.iter().rev() {
        if seen.insert(Loc::reg(w.reg)) {
            if let Some(t) = mach.regs.get(w.reg) {
                out.push((Loc::reg(w.reg), t));
            }
        }
    }
    out.extend(mach.mem.iter().map(|(s, t)| (Loc::slot(s), t)));
    out
}

/// The result of [`fixpoint`].
pub struct Fixpoint {
    /// Facts at each block entry (`None`: unreachable).
    pub entry: Vec<Option<Facts>>,
    /// Whether the iteration stabilised within its budget.
    pub converged: bool,
    /// Per block, the exit facts its last visit returned (empty if it was
    /// never visited).
    pub exits: Vec<Vec<(usize, Facts)>>,
    /// Per block, whether its last visit ran from its final entry facts
    /// (nothing met into its entry changed them afterwards), so that the
    /// visit's results are the block's results at the fixpoint.
    pub fresh: Vec<bool>,
}

/// A transfer function: block index and its entry facts → the exit facts
/// for each successor.
pub type Step<'a> = dyn FnMut(usize, &Facts) -> Vec<(usize, Facts)> + 'a;

/// Iterate `step` (block index, its entry facts → exit facts per successor)
/// from `start` at block 0 until no entry state changes. The worklist always
/// takes the queued block with the smallest `prio` (callers pass positions
/// in a weak topological order, [`crate::wto`]), so a block is normally
/// visited after all its forward predecessors, an acyclic CFG needs one
/// visit per block, and a loop is stable before the blocks after it run; the
/// order changes only the work, not the result, because each block's state
/// only shrinks (meet) and the caller re-checks the fixpoint. A budget of 64
/// visits per block guards against a non-monotone step, reported as
/// `converged == false`. Blocks missing from `prio` come last.
pub fn fixpoint(n: usize, start: Facts, prio: &[usize], step: &mut Step) -> Fixpoint {
    let mut fp = Fixpoint { entry: vec![None; n], converged: true, exits: vec![Vec::new(); n], fresh: vec![false; n] };
    if n == 0 {
        return fp;
    }
    fp.entry[0] = Some(start);
    let mut work = Worklist::new(n, prio);
    work.insert(0);
    let mut budget = 64 * n + 64;
    while let Some(b) = work.pop_first() {
        if budget == 0 {
            fp.converged = false;
            return fp;
        }
        budget -= 1;
        // Lent to the step and put back before anything is met into it.
        let Some(facts) = fp.entry.get_mut(b).and_then(Option::take) else { continue };
        let out = step(b, &facts);
        if let Some(slot) = fp.entry.get_mut(b) {
            *slot = Some(facts);
        }
        if let Some(f) = fp.fresh.get_mut(b) {
            *f = true;
        }
        for (s, f) in &out {
            let Some(slot) = fp.entry.get_mut(*s) else { continue };
            let changed = match slot {
                Some(old) => old.meet_with(f),
                None => {
                    *slot = Some(f.clone());
                    true
                }
            };
            if changed {
                work.insert(*s);
                if let Some(fresh) = fp.fresh.get_mut(*s) {
                    *fresh = false;
                }
            }
        }
        if let Some(slot) = fp.exits.get_mut(b) {
            *slot = out;
        }
    }
    fp
}

/// The fixpoint's queued blocks, taken in the order of `(prio[b], b)`: a
/// bit set over the blocks' ranks in that order (a block is queued at most
/// once; taking the first is a scan for the lowest set bit).
struct Worklist {
    /// The blocks in `(prio, block)` order.
    order: Vec<usize>,
    /// Each block's index in `order`.
    rank: Vec<usize>,
    bits: Vec<u64>,
}

impl Worklist {
    fn new(n: usize, prio: &[usize]) -> Worklist {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&b| (prio.get(b).copied().unwrap_or(usize::MAX), b));
        let mut rank = vec![0; n];
        for (k, &b) in order.iter().enumerate() {
            if let Some(r) = rank.get_mut(b) {
                *r = k;
            }
        }
        Worklist { order, rank, bits: vec![0; n.div_ceil(64)] }
    }

    /// Queue block `b` (no effect if it is queued or out of range).
    fn insert(&mut self, b: usize) {
        let Some(&k) = self.rank.get(b) else { return };
        if let Some(w) = self.bits.get_mut(k / 64) {
            *w |= 1 << (k % 64);
        }
    }

    /// Take the queued block first in `(prio, block)` order.
    fn pop_first(&mut self) -> Option<usize> {
        let (i, w) = self.bits.iter_mut().enumerate().find(|(_, w)| **w != 0)?;
        let bit = w.trailing_zeros() as usize;
        *w &= *w - 1;
        self.order.get(i * 64 + bit).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worklist_takes_blocks_by_priority_then_number() {
        let mut w = Worklist::new(5, &[2, 0, usize::MAX, 1]);
        for b in [4, 2, 0, 3, 1, 3, 9] {
            w.insert(b);
        }
        let taken: Vec<usize> = std::iter::from_fn(|| w.pop_first()).collect();
        assert_eq!(taken, vec![1, 3, 0, 2, 4]);
    }

    /// Live-in sets as register names (word 0 only).
    fn live_in(text: &str) -> Vec<BTreeSet<String>> {
        let p = schedra_ir::parse::parse(text.as_bytes(), None).expect("parses");
        let vregs = Vregs::of(&p);
        let code = SrcCode::of(&p, &vregs);
        let names = |s: &Vec<u32>| s.iter().filter_map(|i| if let Var::V(id, 0) = code.var(*i) { Some(vregs.name(id).to_string()) } else { None }).collect();
        liveness(&code, &successors(&p)).live_in.iter().map(names).collect()
    }

    fn v(name: &str) -> String {
        name.to_string()
    }

    const JOIN: &str = "target v3d71\nb0:\n    %a = ldunif 0\n    %b = ldunif 1\n    %n = ldunif 2\n    brnz %n, b1, b2\nb1:\n    jmp b3\nb2:\n    jmp b3\nb3:\n    %d = fmov %a\n    %e = fadd %d, %d\n    tlbw %b\n    end\n";

    #[test]
    fn a_value_only_dead_computations_read_is_not_live() {
        let live = live_in(JOIN);
        assert!(!live[3].contains(&v("a")), "%a only feeds a dead chain: {:?}", live[3]);
        assert!(live[3].contains(&v("b")), "%b reaches an output");
        assert!(live[1].contains(&v("b")) && !live[1].contains(&v("n")));
    }

    #[test]
    fn outputs_branch_conditions_and_loop_carried_values_are_live() {
        let out = JOIN.replace("tlbw %b", "tlbw %e");
        assert!(live_in(&out)[3].contains(&v("a")), "%a now reaches tlbw through %d and %e");
        let lp = "target v3d71\nb0:\n    %n = mov 3\n    %x = ldunif 0\n    jmp b1\nb1:\n    %x = fadd %x, %x\n    %n = sub %n, 1\n    brnz %n, b2, b3\nb2:\n    jmp b1\nb3:\n    tlbw %x\n    end\n";
        let live = live_in(lp);
        assert!(live[1].contains(&v("n")) && live[1].contains(&v("x")), "{:?}", live[1]);
        assert!(live[2].contains(&v("n")) && live[2].contains(&v("x")), "{:?}", live[2]);
        let dead = lp.replace("tlbw %x", "tlbw %n");
        assert!(!live_in(&dead)[1].contains(&v("x")), "a loop-carried value nothing observes is not live");
    }
}
