//! Pre-RA list scheduler: reorders the instructions of each block of a
//! source-form program (virtual registers, possibly defined more than once,
//! and preallocated physical registers).
//!
//! Algorithm: per block, build the dependency graph over virtual and
//! physical registers and effects (`depgraph`), then
//! - `Sched::TopDown`: walk a single-issue clock; among the ready ops
//!   (all predecessors placed) prefer those whose operands have arrived,
//!   highest critical path first (the longest latency-weighted path to the
//!   block end). When the live values (sizes summed, live-ins and live-outs
//!   from a block-level liveness fixpoint counted) reach half of the
//!   target's allocatable registers, switch to the register-pressure
//!   heuristic in the spirit of i965's pre-RA mode: prefer the op that frees
//!   the most registers (last uses of values not live out) net of what it
//!   defines (signed: an op that frees one register and defines one ranks
//!   above one that only defines), then program order (the input order is
//!   usually a good low-pressure order). Each step looks at `WINDOW` ready ops of each of
//!   three views only (best critical path among loads, among other ops, and
//!   earliest in program order), so a step costs O(window), not O(ready).
//! - `Sched::BottomUp`: the mirror image: start from the block end, place an
//!   op once all its successors are placed, deepest first (the longest path
//!   from the block start), and reverse the result; under pressure (values
//!   live below the placed ops) prefer the op whose definition ends the most
//!   live registers net of the operands it makes live, then the latest in
//!   program order.
//!
//! Both are one loop, `list_schedule`, parameterised by a `Direction`
//! (`TopDown` or `BottomUp`) that supplies which neighbours an op waits for
//! and releases, the rank, the starting clock of each op, the pressure
//! tracker and whether the order is reversed at the end.
//!
//! Invariant: the result is a topological order of the dependency graph, so
//! every value reaching a use, every preallocated register's contents at its
//! reads, and every effect order per channel are those of the input
//! program; blocks, labels and terminators are unchanged.

use crate::depgraph::{DepGraph, GraphBuffers, Storage, OpDeps};
use crate::depgraph::push_effects;
use crate::{Options, Sched};
use schedra_ir::cfg::{BitSet, BlockSets, Successors};
use crate::source_ids::SourceIds;
use schedra_ir::{Inst, Operand, Program, Target};

/// The new order of each block's instructions of `src` (indices into the
/// block's `insts`, a permutation) under the scheduler `opts.sched` (see
/// the module doc), with `src`'s opcodes and names resolved in `ids`
/// (`SourceIds::new(src)`), built in the reused `ws`. Never changes meaning.
pub(crate) fn block_orders_with(ws: &mut ScheduleBuffers, src: &Program, ids: &SourceIds, opts: &Options) -> Vec<Vec<usize>> {
    let deps = Summaries::new(src, ids);
    let limit = src.target.rules.allocatable(src.stage).len().max(1);
    // Live-out sets only feed the pressure mode: when every name together
    // stays below its threshold, no block needs them (see `tracks_pressure`).
    let all: usize = (0..ids.len()).map(|v| ids.size(v as u32) as usize).sum();
    let live = (all >= threshold(limit)).then(|| live_out(&deps, ids, ids.succs()));
    (0..src.blocks.len())
        .map(|bi| {
            let lo = live.as_ref().map_or(&[][..], |l| l.block(bi));
            order_block(ws, deps.block(bi), (ids.cond(bi), lo), limit, opts.sched, ids)
        })
        .collect()
}

/// The live registers (virtual names' sizes summed) from which the
/// scheduler switches to its register-pressure mode, for `limit`
/// allocatable registers.
fn threshold(limit: usize) -> usize {
    (limit / 2).max(1)
}

/// Whether the live registers of a block with summaries `deps` and
/// live-out names `live_out` may reach `threshold`: every name live
/// inside the block is read or written in it or live out of it, so when
/// those names' sizes sum below it, the pressure mode never starts and
/// pressure need not be tracked.
fn tracks_pressure(deps: &[OpDeps], live_out: &BitSet, names: &Names, threshold: usize) -> bool {
    let mut seen = live_out.clone();
    for d in deps {
        virt_reads(d).chain(virt_writes(d)).for_each(|v| seen.insert(v as usize));
    }
    seen.iter().map(|v| names.size(v as u32) as usize).sum::<usize>() >= threshold
}

/// Interned virtual register names with their sizes: the program's
/// [`SourceIds`].
type Names<'p> = SourceIds<'p>;

/// Every instruction's dependency summary, block after block, in one
/// buffer (built in place: no summary is moved or copied).
struct Summaries {
    all: Vec<OpDeps>,
    /// Where each block's summaries end in `all`.
    ends: Vec<usize>,
}

impl Summaries {
    fn new(src: &Program, ids: &SourceIds) -> Summaries {
        let n = src.blocks.iter().map(|b| b.insts().len()).sum();
        let mut all: Vec<OpDeps> = Vec::with_capacity(n);
        let mut ends = Vec::with_capacity(src.blocks.len());
        for (bi, b) in src.blocks.iter().enumerate() {
            for (k, i) in b.insts().iter().enumerate() {
                all.push(OpDeps::default());
                if let Some(d) = all.last_mut() {
                    source_deps(d, src.target, ids, (bi, k), i);
                }
            }
            ends.push(all.len());
        }
        Summaries { all, ends }
    }
    /// The summaries of block `b`'s instructions.
    fn block(&self, b: usize) -> &[OpDeps] {
        let start = b.checked_sub(1).and_then(|p| self.ends.get(p)).copied().unwrap_or(0);
        let end = self.ends.get(b).copied().unwrap_or(start);
        self.all.get(start..end).unwrap_or(&[])
    }
}

/// Fill `d` (empty) with the dependency summary of instruction `k` of
/// block `b` (`inst`), its opcode and names resolved in `ids`.
fn source_deps(d: &mut OpDeps, target: &Target, ids: &SourceIds, (b, k): (usize, usize), inst: &Inst) {
    let ids = ids.inst(b, k);
    let Some(desc) = ids.desc() else {
        d.effects.push(crate::depgraph::Effect::Barrier);
        return;
    };
    let lat = desc.latency.max(1);
    for (s, o) in inst.srcs.iter().enumerate() {
        match o {
            Operand::Virt(_) => d.reads.extend(ids.operand(1 + s).map(Storage::Virt)),
            Operand::Phys(p) => d.reads.extend(p.regs().map(Storage::Phys)),
            _ => {}
        }
    }
    match &inst.dest {
        Some(Operand::Virt(_)) => d.writes.extend(ids.operand(0).map(|v| (Storage::Virt(v), lat))),
        Some(Operand::Phys(p)) => d.writes.extend(p.regs().map(|r| (Storage::Phys(r), lat))),
        _ => {}
    }
    push_effects(&mut d.effects, target, desc, inst);
    crate::bundle::lower::push_unit_deps(d, desc);
}

fn virt_reads(d: &OpDeps) -> impl Iterator<Item = u32> + '_ {
    d.reads.iter().filter_map(|l| match l {
        Storage::Virt(v) => Some(*v),
        _ => None,
    })
}

fn virt_writes(d: &OpDeps) -> impl Iterator<Item = u32> + '_ {
    d.writes.iter().filter_map(|(l, _)| match l {
        Storage::Virt(v) => Some(*v),
        _ => None,
    })
}

/// Virtual registers live out of each block (classic backward fixpoint
/// over the CFG `succs`), from the dependency summaries `deps` of every
/// block's instructions and the name each block's branch reads; sets over
/// the name ids of `ids`.
fn live_out(deps: &Summaries, ids: &SourceIds, succs: &Successors) -> BlockSets {
    let nb = succs.len();
    let mut uses = BlockSets::new(nb, ids.len());
    let mut defs = BlockSets::new(nb, ids.len());
    let mut read = |defs: &BlockSets, b: usize, v: u32| {
        if !defs.contains(b, v as usize) {
            uses.insert(b, v as usize);
        }
    };
    for b in 0..nb {
        for op in deps.block(b) {
            virt_reads(op).for_each(|v| read(&defs, b, v));
            virt_writes(op).for_each(|v| defs.insert(b, v as usize));
        }
        if let Some(v) = ids.cond(b) {
            read(&defs, b, v);
        }
    }
    schedra_ir::cfg::live_out_of(succs, uses, &defs)
}

/// The scheduler's per-block structures, kept between blocks (and between
/// compiles, in a [`crate::Context`]) so that their memory is reused: the dependency
/// graph and its bookkeeping, the ready lists, and the counts, clocks and
/// priorities of the ops.
#[derive(Default)]
pub(crate) struct ScheduleBuffers {
    graph: DepGraph,
    graph_buffers: GraphBuffers,
    ready: Ready,
    left: Vec<usize>,
    earliest: Vec<i64>,
    own: Vec<u32>,
    path: Vec<i64>,
}

/// The new order of one block's instructions (indices into its `insts`),
/// given their dependency summaries `deps`, the name its branch reads
/// (`cond`) and its live-out names (as [`BitSet::words`]); built in the
/// reused `ws`.
fn order_block(
    ws: &mut ScheduleBuffers,
    deps: &[OpDeps],
    (cond, live_out): (Option<u32>, &[u64]),
    limit: usize,
    dir: Sched,
    names: &Names,
) -> Vec<usize> {
    if deps.len() <= 1 {
        // Nothing to reorder.
        return (0..deps.len()).collect();
    }
    ws.graph.rebuild(&mut ws.graph_buffers, deps, |_| true);
    let mut live_out_b = BitSet::from_words(names.len(), live_out);
    if let Some(c) = cond {
        live_out_b.insert(c as usize);
    }
    let live_out = &live_out_b;
    match dir {
        Sched::TopDown => list_schedule::<TopDown>(ws, deps, live_out, limit, names),
        Sched::BottomUp => list_schedule::<BottomUp>(ws, deps, live_out, limit, names),
    }
}

/// Register-pressure bookkeeping for the top-down scheduler (dense over
/// name ids).
struct Pressure<'a> {
    /// Reads of each name not issued yet.
    remaining: Vec<usize>,
    live: BitSet,
    live_out: &'a BitSet,
    regs: usize,
}

impl<'a> Pressure<'a> {
    fn new(deps: &[OpDeps], live_out: &'a BitSet, names: &Names) -> Pressure<'a> {
        let n = names.len();
        let mut remaining = vec![0usize; n];
        let mut defined = BitSet::new(n);
        let mut live = BitSet::new(n);
        for d in deps {
            for v in virt_reads(d) {
                if let Some(r) = remaining.get_mut(v as usize) {
                    *r += 1;
                }
                if !defined.contains(v as usize) {
                    live.insert(v as usize);
                }
            }
            virt_writes(d).for_each(|w| defined.insert(w as usize));
        }
        // Live at the start: upward-exposed uses, and live-outs not defined here.
        let mut out_only = live_out.clone();
        out_only.subtract(&defined);
        live.union_with(&out_only);
        let regs = live.iter().map(|v| names.size(v as u32) as usize).sum();
        Pressure {
            remaining,
            live,
            live_out,
            regs,
        }
    }

    fn remaining(&self, v: u32) -> usize {
        self.remaining.get(v as usize).copied().unwrap_or(0)
    }

    /// Registers freed minus registers newly occupied if `d` issues now.
    fn gain(&self, d: &OpDeps, names: &Names) -> i64 {
        let mut g = 0i64;
        for (k, v) in virt_reads(d).enumerate() {
            if !virt_reads(d).take(k).any(|x| x == v)
                && self.remaining(v) == 1
                && !self.live_out.contains(v as usize)
                && !virt_writes(d).any(|w| w == v)
            {
                g += names.size(v) as i64;
            }
        }
        for w in virt_writes(d) {
            if !self.live.contains(w as usize) {
                g -= names.size(w) as i64;
            }
        }
        g
    }

    fn issue(&mut self, d: &OpDeps, names: &Names) {
        for v in virt_reads(d) {
            if let Some(r) = self.remaining.get_mut(v as usize) {
                *r = r.saturating_sub(1);
                if *r == 0 && !self.live_out.contains(v as usize) && self.live.contains(v as usize) {
                    self.live.remove(v as usize);
                    self.regs = self.regs.saturating_sub(names.size(v) as usize);
                }
            }
        }
        for w in virt_writes(d) {
            let used_later = self.remaining(w) > 0 || self.live_out.contains(w as usize);
            if used_later && !self.live.contains(w as usize) {
                self.live.insert(w as usize);
                self.regs += names.size(w) as usize;
            }
        }
    }
}

/// Each op's own latency (its longest write) into `out`.
fn own_latency(deps: &[OpDeps], out: &mut Vec<u32>) {
    out.clear();
    out.extend(deps.iter().map(|d| d.writes.iter().map(|w| w.1).max().unwrap_or(0)));
}

/// How many of the best-ranked ready ops the heuristics look at per step
/// (keeps a step O(window) when thousands of loads are ready at once).
const WINDOW: usize = 24;

/// Ready ops kept sorted by a static rank (best first), in two lists: ops
/// that read no virtual register (loads: they can only add pressure) and the
/// rest, so that a window over each always shows the consumers that end live
/// ranges even when thousands of loads are ready; plus all of them in
/// program order (the register-pressure fallback).
#[derive(Default)]
struct Ready {
    lists: [Vec<usize>; 2],
    /// Every ready op, by index (the program-order view).
    by_index: BitSet,
    rank: Vec<(i64, std::cmp::Reverse<usize>)>,
    fresh: Vec<bool>,
    /// Bottom-up: the program-order view offers the latest ops.
    backwards: bool,
}

impl Ready {
    /// Empty, for the ops `deps` (whose ranks the caller fills into
    /// `rank`), reusing the memory.
    fn reset(&mut self, deps: &[OpDeps], backwards: bool) {
        self.fresh.clear();
        self.fresh.extend(deps.iter().map(|d| {
            if backwards {
                virt_writes(d).next().is_none()
            } else {
                virt_reads(d).next().is_none()
            }
        }));
        self.lists.iter_mut().for_each(Vec::clear);
        self.by_index = BitSet::new(deps.len());
        self.backwards = backwards;
    }
    fn key(&self, i: usize) -> (i64, std::cmp::Reverse<usize>) {
        self.rank
            .get(i)
            .copied()
            .unwrap_or((i64::MIN, std::cmp::Reverse(i)))
    }
    fn which(&self, i: usize) -> usize {
        usize::from(self.fresh.get(i).copied().unwrap_or(false))
    }
    fn insert(&mut self, i: usize) {
        let k = self.key(i);
        let w = self.which(i);
        let pos = self.lists[w].partition_point(|&j| self.key(j) > k);
        self.lists[w].insert(pos, i);
        self.by_index.insert(i);
    }
    /// Remove and return the best by `score` (ties: rank) among the first
    /// [`WINDOW`] items of each list and the [`WINDOW`] earliest in program
    /// order.
    fn take_best<K: Ord>(&mut self, score: impl Fn(usize) -> K) -> Option<usize> {
        // The last best, as `max_by`; each candidate scored once.
        let mut best: Option<((K, Rank), usize)> = None;
        let mut offer = |a: usize| {
            let k = (score(a), self.key(a));
            if best.as_ref().is_none_or(|(b, _)| k >= *b) {
                best = Some((k, a));
            }
        };
        for l in &self.lists {
            l.iter().take(WINDOW).for_each(|&a| offer(a));
        }
        // Every ready op is in one of the lists: when both fit in their
        // windows, the program-order view only repeats ops already offered
        // (and repeats cannot change the best, whose rank is unique), so it
        // is left out.
        if self.lists.iter().any(|l| l.len() > WINDOW) {
            if self.backwards {
                self.by_index.iter_rev().take(WINDOW).for_each(&mut offer);
            } else {
                self.by_index.iter().take(WINDOW).for_each(&mut offer);
            }
        }
        let (_, i) = best?;
        let w = self.which(i);
        if let Some(pos) = self.lists[w].iter().position(|&j| j == i) {
            self.lists[w].remove(pos);
        }
        self.by_index.remove(i);
        Some(i)
    }
}

/// An op's static rank: its priority, then its position in the walk's
/// direction.
type Rank = (i64, std::cmp::Reverse<usize>);

/// Register pressure seen from the block end (bottom-up): the values live
/// below the ops placed so far.
struct ReversePressure {
    live: BitSet,
    regs: usize,
}

impl ReversePressure {
    fn new(live_out: &BitSet, names: &Names) -> ReversePressure {
        ReversePressure {
            live: live_out.clone(),
            regs: live_out.iter().map(|v| names.size(v as u32) as usize).sum(),
        }
    }
    /// Registers freed (a definition ends a live range, seen upwards) minus
    /// registers a placement makes live (its operands).
    fn gain(&self, d: &OpDeps, names: &Names) -> i64 {
        let freed: i64 = virt_writes(d)
            .filter(|&w| self.live.contains(w as usize))
            .map(|w| names.size(w) as i64)
            .sum();
        let mut added = 0i64;
        for (k, v) in virt_reads(d).enumerate() {
            let seen = virt_reads(d).take(k).any(|x| x == v);
            if !seen && (!self.live.contains(v as usize) || virt_writes(d).any(|w| w == v)) {
                added += names.size(v) as i64;
            }
        }
        freed - added
    }
    fn place(&mut self, d: &OpDeps, names: &Names) {
        for w in virt_writes(d) {
            if self.live.contains(w as usize) {
                self.live.remove(w as usize);
                self.regs = self.regs.saturating_sub(names.size(w) as usize);
            }
        }
        for v in virt_reads(d) {
            if !self.live.contains(v as usize) {
                self.live.insert(v as usize);
                self.regs += names.size(v) as usize;
            }
        }
    }
}

/// How a pressure tracker is consulted by [`list_schedule`], whichever way
/// the walk goes.
trait PressureModel {
    /// Registers occupied by the live values at the current point.
    fn regs(&self) -> usize;
    /// Registers freed minus registers newly occupied if `d` is placed next.
    fn gain(&self, d: &OpDeps, names: &Names) -> i64;
    /// Account for `d` having been placed.
    fn place(&mut self, d: &OpDeps, names: &Names);
}

impl PressureModel for Pressure<'_> {
    fn regs(&self) -> usize {
        self.regs
    }
    fn gain(&self, d: &OpDeps, names: &Names) -> i64 {
        Pressure::gain(self, d, names)
    }
    fn place(&mut self, d: &OpDeps, names: &Names) {
        self.issue(d, names)
    }
}

impl PressureModel for ReversePressure {
    fn regs(&self) -> usize {
        self.regs
    }
    fn gain(&self, d: &OpDeps, names: &Names) -> i64 {
        ReversePressure::gain(self, d, names)
    }
    fn place(&mut self, d: &OpDeps, names: &Names) {
        ReversePressure::place(self, d, names)
    }
}

/// Which way a list schedule walks the dependency graph: everything
/// [`list_schedule`] needs to know that differs between the top-down and
/// the bottom-up scheduler.
trait Direction {
    /// The pressure tracker for this direction.
    type Pressure<'a>: PressureModel;
    /// Whether the walk starts at the block end (the order is reversed at
    /// the end, and the program-order view offers the latest ops).
    const BACKWARDS: bool;
    /// A fresh pressure tracker at the walk's starting point.
    fn pressure<'a>(deps: &[OpDeps], live_out: &'a BitSet, names: &Names) -> Self::Pressure<'a>;
    /// The static rank of each op into `ws.ready.rank`, best first
    /// (critical path, then program order in the walk's direction).
    fn rank(ws: &mut ScheduleBuffers, deps: &[OpDeps]);
    /// The clock before which each op's inputs (in walk order) are not
    /// ready, into `ws.earliest`.
    fn earliest(ws: &mut ScheduleBuffers, deps: &[OpDeps]);
    /// How many neighbours must be placed before op `i` is ready.
    fn blockers(g: &DepGraph, i: usize) -> usize;
    /// The neighbours placing op `i` unblocks, with the edge delay.
    fn released(g: &DepGraph, i: usize) -> impl Iterator<Item = (usize, i32)> + '_;
    /// The tie-break under pressure among ops of equal gain (larger wins):
    /// the earliest op in the walk's direction.
    fn pressure_tie(i: usize) -> i64;
}

/// Top-down: predecessors first, critical path (height) as priority.
struct TopDown;

impl Direction for TopDown {
    type Pressure<'a> = Pressure<'a>;
    const BACKWARDS: bool = false;
    fn pressure<'a>(deps: &[OpDeps], live_out: &'a BitSet, names: &Names) -> Pressure<'a> {
        Pressure::new(deps, live_out, names)
    }
    fn rank(ws: &mut ScheduleBuffers, deps: &[OpDeps]) {
        own_latency(deps, &mut ws.own);
        ws.graph.heights_into(&ws.own, &mut ws.path);
        let height = &ws.path;
        ws.ready.rank.clear();
        ws.ready.rank.extend(
            (0..deps.len()).map(|i| (height.get(i).copied().unwrap_or(0), std::cmp::Reverse(i))),
        );
    }
    fn earliest(ws: &mut ScheduleBuffers, deps: &[OpDeps]) {
        ws.earliest.clear();
        ws.earliest.resize(deps.len(), 0);
    }
    fn blockers(g: &DepGraph, i: usize) -> usize {
        g.pred_count(i)
    }
    fn released(g: &DepGraph, i: usize) -> impl Iterator<Item = (usize, i32)> + '_ {
        g.succs_of(i).map(|e| (e.to, e.delay))
    }
    fn pressure_tie(i: usize) -> i64 {
        -(i as i64)
    }
}

/// Bottom-up: successors first, depth from the block start as priority,
/// on a reverse clock (an op may be placed once every successor is `delay`
/// reverse cycles behind it).
struct BottomUp;

impl Direction for BottomUp {
    type Pressure<'a> = ReversePressure;
    const BACKWARDS: bool = true;
    fn pressure(_: &[OpDeps], live_out: &BitSet, names: &Names) -> ReversePressure {
        ReversePressure::new(live_out, names)
    }
    fn rank(ws: &mut ScheduleBuffers, deps: &[OpDeps]) {
        ws.graph.depths_into(&mut ws.path);
        let depth = &ws.path;
        let n = deps.len();
        // Latest in program order first among equals.
        ws.ready.rank.clear();
        ws.ready.rank.extend(
            (0..n).map(|i| (depth.get(i).copied().unwrap_or(0), std::cmp::Reverse(n - i))),
        );
    }
    fn earliest(ws: &mut ScheduleBuffers, deps: &[OpDeps]) {
        own_latency(deps, &mut ws.own);
        ws.earliest.clear();
        ws.earliest.extend(ws.own.iter().map(|&l| l as i64 - 1));
    }
    fn blockers(g: &DepGraph, i: usize) -> usize {
        g.succ_count(i)
    }
    fn released(g: &DepGraph, i: usize) -> impl Iterator<Item = (usize, i32)> + '_ {
        g.preds_of(i).map(|e| (e.from, e.delay))
    }
    fn pressure_tie(i: usize) -> i64 {
        i as i64
    }
}

/// The list scheduler of the module doc, walking in direction `D`: a
/// single-issue clock; among the ready ops prefer those whose inputs have
/// arrived, then the rank; once the live registers reach half of `limit`,
/// prefer the op with the best (non-negative) pressure gain, then the
/// earliest in the walk's direction. Returns the block order.
fn list_schedule<D: Direction>(
    ws: &mut ScheduleBuffers,
    deps: &[OpDeps],
    live_out: &BitSet,
    limit: usize,
    names: &Names,
) -> Vec<usize> {
    let n = deps.len();
    ws.left.clear();
    ws.left.extend((0..n).map(|i| D::blockers(&ws.graph, i)));
    D::earliest(ws, deps);
    ws.ready.reset(deps, D::BACKWARDS);
    D::rank(ws, deps);
    let ScheduleBuffers { graph: g, ready, left, earliest, .. } = ws;
    let g = &*g;
    for i in 0..n {
        if left.get(i) == Some(&0) {
            ready.insert(i);
        }
    }
    let threshold = threshold(limit);
    let mut pressure = tracks_pressure(deps, live_out, names, threshold).then(|| D::pressure(deps, live_out, names));
    let mut order = Vec::with_capacity(n);
    let mut clock = 0i64;
    loop {
        let high = pressure.as_ref().is_some_and(|p| p.regs() >= threshold);
        // Normal: inputs arrived, then the rank. Under pressure (i965
        // pre-RA style): registers freed, then program order.
        let key = |i: usize| match (high, &pressure, deps.get(i)) {
            (true, Some(p), Some(d)) => (p.gain(d, names), true, D::pressure_tie(i)),
            (true, _, _) => (0, true, D::pressure_tie(i)),
            _ => (0, earliest.get(i).copied().unwrap_or(0) <= clock, 0),
        };
        let Some(i) = ready.take_best(key) else { break };
        clock = clock.max(earliest.get(i).copied().unwrap_or(0));
        if let (Some(p), Some(d)) = (&mut pressure, deps.get(i)) {
            p.place(d, names);
        }
        order.push(i);
        for (j, delay) in D::released(g, i) {
            if let Some(x) = earliest.get_mut(j) {
                *x = (*x).max(clock + delay.max(0) as i64);
            }
            if let Some(l) = left.get_mut(j) {
                *l -= 1;
                if *l == 0 {
                    ready.insert(j);
                }
            }
        }
        clock += 1;
    }
    if D::BACKWARDS {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{schedule, Source};
    use schedra_ir::target::v3d71::V3D71;

    /// The pipeline's scheduling stage on `p`, as a program.
    fn schedule_program(p: &Program, opts: &Options) -> Program {
        let s = Source::new(p).unwrap();
        schedule(&mut crate::Context::new(), &s, opts).program(&s)
    }
    use schedra_ir::{Block, Body, Form, Imm, PhysReg, Span, Stage, TermKind, Terminator, VirtReg};

    fn v(n: &str) -> Operand {
        Operand::Virt(VirtReg {
            name: n.into(),
            size: None,
        })
    }
    fn inst(op: &str, dest: Option<Operand>, srcs: Vec<Operand>) -> Inst {
        Inst {
            opcode: op.into(),
            dest,
            srcs,
            span: Span::default(),
        }
    }
    fn prog(insts: Vec<Inst>) -> Program {
        let block = Block {
            label: "b0".into(),
            body: Body::Source(insts),
            term: Terminator {
                kind: TermKind::End,
                span: Span::default(),
            },
            span: Span::default(),
        };
        Program {
            name: None,
            target: &V3D71,
            stage: Stage::Fragment,
            form: Form::Source,
            inputs: vec![],
            blocks: vec![block],
        }
    }
    fn order(p: &Program) -> Vec<String> {
        p.blocks[0]
            .insts()
            .iter()
            .map(|i| {
                format!(
                    "{}{:?}",
                    i.opcode,
                    i.dest
                        .as_ref()
                        .and_then(|d| d.virt())
                        .map(|v| v.name.clone())
                )
            })
            .collect()
    }
    fn is_topological(src: &Program, out: &Program) -> bool {
        let ids = SourceIds::new(src);
        let deps: Vec<OpDeps> = src.blocks[0]
            .insts()
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let mut d = OpDeps::default();
                source_deps(&mut d, src.target, &ids, (0, k), i);
                d
            })
            .collect();
        let g = DepGraph::build(&deps, |_| true);
        let pos: Vec<usize> = src.blocks[0]
            .insts()
            .iter()
            .map(|i| out.blocks[0].insts().iter().position(|j| j == i).unwrap())
            .collect();
        g.edges.iter().all(|e| pos[e.from] < pos[e.to])
    }

    #[test]
    fn top_down_starts_the_long_chain_first() {
        let p = prog(vec![
            inst("ldunif", Some(v("a")), vec![Operand::Imm(Imm::int(0))]),
            inst("tlbw", None, vec![v("a")]),
            inst("ldunif", Some(v("b")), vec![Operand::Imm(Imm::int(1))]),
            inst("recip", Some(v("c")), vec![v("b")]),
            inst("recip", Some(v("d")), vec![v("c")]),
            inst("tlbw", None, vec![v("d")]),
        ]);
        let q = schedule_program(&p, &Options::default());
        assert_eq!(order(&q)[0], "ldunifSome(\"b\")");
        assert!(is_topological(&p, &q));
        // tlbw order is kept.
        let t: Vec<&Inst> = q.blocks[0]
            .insts()
            .iter()
            .filter(|i| i.opcode == "tlbw")
            .collect();
        assert_eq!(t[0].srcs, vec![v("a")]);
    }

    #[test]
    fn non_ssa_redefinitions_and_preallocated_registers_keep_order() {
        let r1 = Operand::Phys(PhysReg::one(1));
        let p = prog(vec![
            inst("ldunif", Some(v("a")), vec![Operand::Imm(Imm::int(0))]),
            inst("fadd", Some(v("b")), vec![v("a"), r1.clone()]),
            inst("ldunif", Some(v("a")), vec![Operand::Imm(Imm::int(1))]),
            inst("mov", Some(r1.clone()), vec![v("a")]),
            inst("fadd", Some(v("c")), vec![v("b"), r1.clone()]),
            inst("tlbw", None, vec![v("c")]),
        ]);
        for sched in [Sched::TopDown, Sched::BottomUp] {
            let q = schedule_program(
                &p,
                &Options {
                    sched,
                    ..Default::default()
                },
            );
            assert!(is_topological(&p, &q), "{sched:?}");
            assert_eq!(q.blocks[0].insts().len(), 6);
        }
    }

    #[test]
    fn pressure_mode_prefers_ops_that_end_live_ranges() {
        // Many independent loads, each consumed once: under a tiny register
        // limit the consumers are pulled next to their loads.
        let mut insts = Vec::new();
        for k in 0..6 {
            insts.push(inst(
                "ldunif",
                Some(v(&format!("u{k}"))),
                vec![Operand::Imm(Imm::int(k))],
            ));
        }
        for k in 0..6 {
            insts.push(inst("tlbw", None, vec![v(&format!("u{k}"))]));
        }
        let p = prog(insts);
        let ids = SourceIds::new(&p);
        let deps: Vec<OpDeps> = p.blocks[0]
            .insts()
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let mut d = OpDeps::default();
                source_deps(&mut d, &V3D71, &ids, (0, k), i);
                d
            })
            .collect();
        let wide = order_block(&mut Default::default(), &deps, (None, &[]), 64, Sched::TopDown, &ids);
        let tight = order_block(&mut Default::default(), &deps, (None, &[]), 2, Sched::TopDown, &ids);
        let max_live = |o: &[usize]| {
            let (mut live, mut best) = (0i32, 0i32);
            for &i in o {
                live += if i < 6 { 1 } else { -1 };
                best = best.max(live);
            }
            best
        };
        assert!(max_live(&tight) < max_live(&wide), "{tight:?} vs {wide:?}");
    }

    #[test]
    fn pressure_is_tracked_wherever_it_can_reach_the_threshold() {
        // Over the corpus, walking each block in program order both ways:
        // the live registers never exceed what `tracks_pressure` bounds.
        let mut checked = 0;
        for (path, p) in crate::test_corpus::programs() {
            let ids = SourceIds::new(&p);
            let deps = Summaries::new(&p, &ids);
            let live = live_out(&deps, &ids, ids.succs());
            for b in 0..p.blocks.len() {
                let mut lo = BitSet::from_words(ids.len(), live.block(b));
                if let Some(c) = ids.cond(b) {
                    lo.insert(c as usize);
                }
                let bd = deps.block(b);
                let mut down = Pressure::new(bd, &lo, &ids);
                let mut up = ReversePressure::new(&lo, &ids);
                let mut most = down.regs.max(up.regs);
                for (d, r) in bd.iter().zip(bd.iter().rev()) {
                    down.issue(d, &ids);
                    up.place(r, &ids);
                    most = most.max(down.regs).max(up.regs);
                }
                assert!(most == 0 || tracks_pressure(bd, &lo, &ids, most), "{} block {b}", path.display());
                checked += 1;
            }
        }
        assert!(checked > 20, "{checked}");
    }
}
