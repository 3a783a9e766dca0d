//! Per-block dependency graph over a list of ops, shared by the pre-RA and
//! the post-RA schedulers.
//!
//! Algorithm: one forward pass over the ops in program order. For every
//! location (a physical register or a virtual register) it remembers the last
//! writer and the readers since that write; for every effect it remembers the
//! earlier effects it must stay behind. Each op then gets
//! - RAW from the last writer of each location it reads, delay = the writer's
//!   latency on that location;
//! - WAR from every reader since the last write of each location it writes,
//!   delay = `1 - latency` (the write may issue before the read as long as it
//!   lands after it: a read at cycle r sees the old value iff `w + L > r`);
//! - WAW from the last writer, delay = `L_first - L_second + 1` (the second
//!   write lands strictly later, so no two writes land together and the last
//!   one wins);
//! - order edges (delay 1) between effects on one output channel, between a
//!   fragment discard and every output or discard, between
//!   overlapping scratch accesses of which one is a write, and around
//!   barriers (ops that must stay in place, e.g. the end-of-thread send).
//!
//! Invariant: every edge goes from an earlier op to a later one in program
//! order, so the graph is acyclic, and any schedule in which each op issues at
//! or after `cycle(pred) + delay` for all of its incoming edges computes
//! exactly what the program order computes (under semantics.md's timing:
//! parallel reads, delayed writes). Transitively implied edges (older
//! writers, readers before an older write) are left out.

use crate::inline::{InlineItem, InlineVec};
use rustc_hash::FxHashMap as HashMap;
use schedra_ir::target::{OpDesc, OperandKind, Sem};
use schedra_ir::{Inst, Operand, Reg, Target};

/// A storage location an op reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Storage {
    /// One physical register.
    Phys(Reg),
    /// A virtual register, by a number the caller gives each name (the whole
    /// value, whatever its size).
    Virt(u32),
}

impl InlineItem for Storage {
    const FILL: Storage = Storage::Phys(0);
}

impl InlineItem for u32 {
    const FILL: u32 = 0;
}

/// An ordered side effect of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A write to this output channel (each channel keeps its own order).
    Output(Channel),
    /// A fragment discard: ordered with every output and every other
    /// discard (its effect records its place among the outputs).
    Discard,
    /// A scratch access of slots `lo..hi`.
    Scratch {
        /// Whether the access writes scratch.
        write: bool,
        /// First slot.
        lo: u32,
        /// One past the last slot.
        hi: u32,
    },
    /// The op stays after every earlier op and before every later one.
    Barrier,
}

impl InlineItem for Effect {
    const FILL: Effect = Effect::Barrier;
}

/// An output channel: the op's channel name and, for channels written per
/// index (r600 `export N`), the index. Two outputs are ordered iff their
/// channels are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    /// The channel's name (from the target's opcode table).
    pub name: &'static str,
    /// The index, for indexed channels.
    pub index: Option<u32>,
}

impl From<&'static str> for Channel {
    fn from(name: &'static str) -> Channel {
        Channel { name, index: None }
    }
}

/// The ordered effects of one op (inline: an op has at most a couple, most
/// have none).
pub type Effects = InlineVec<Effect, 1>;

/// What one op reads, writes and does, for dependency purposes (inline
/// lists: building a summary allocates nothing for the usual few operands).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpDeps {
    /// Locations read when the op issues.
    pub reads: InlineVec<Storage, 4>,
    /// Locations written, each with the latency after which the write lands.
    pub writes: InlineVec<(Storage, u32), 2>,
    /// Ordered effects.
    pub effects: Effects,
}

impl AsRef<OpDeps> for OpDeps {
    fn as_ref(&self) -> &OpDeps {
        self
    }
}

/// Why an edge exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// Read after write: the reader needs the value.
    Raw,
    /// Write after read: the write must land after the read.
    War,
    /// Write after write: the writes land in order.
    Waw,
    /// Effect or barrier order.
    Order,
}

/// A dependency: `to` issues at or after `cycle(from) + delay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The earlier op (index into the op list).
    pub from: usize,
    /// The later op.
    pub to: usize,
    /// Minimum issue distance in cycles (may be zero or negative).
    pub delay: i32,
    /// Why.
    pub kind: EdgeKind,
    /// The location the edge is about (register edges only).
    pub loc: Option<Storage>,
}

/// The dependency graph of one block.
#[derive(Clone, Debug, Default)]
pub struct DepGraph {
    /// All edges, in creation order.
    pub edges: Vec<Edge>,
    /// Number of ops.
    n: usize,
    /// The edge lists by op, in one buffer: `[pred_start | succ_start |
    /// succ_list]`. Edges are created op by op (every edge into op `i` while
    /// op `i` is visited), so `edges` is ordered by target and the incoming
    /// edges of op `i` are `edges[pred_start[i]..pred_start[i + 1]]`; the
    /// outgoing ones are `succ_list[succ_start[i]..succ_start[i + 1]]`
    /// (indices into `edges`, in creation order).
    lists: Vec<u32>,
}

/// The bookkeeping of [`DepGraph::rebuild`], kept between graphs so that
/// its memory is reused.
#[derive(Default)]
pub struct GraphBuffers {
    locs: Locs,
    /// The effects later ones must stay behind, with their op.
    effects: Vec<(usize, Effect)>,
    /// Fill positions of the counting sort.
    next: Vec<u32>,
}

/// What the forward pass remembers of one location.
#[derive(Clone, Copy)]
struct LocState {
    last_write: Option<(usize, u32)>,
    /// The readers since the last write: a list in [`Locs::nodes`].
    head: usize,
    tail: usize,
    /// The newest of those readers.
    last_reader: Option<usize>,
}

/// End of a reader list.
const NIL: usize = usize::MAX;

/// Every location's state, with all reader lists in one arena (no
/// allocation per location). Reusable: [`Locs::reset`] forgets the
/// locations of the last graph without giving back the memory.
#[derive(Default)]
struct Locs {
    /// The state slot of each location, by [`dense_key`] (`NO_SLOT` when
    /// it has none yet); keys beyond [`DENSE_KEYS`] go to `far`.
    near: Vec<u32>,
    far: HashMap<Storage, usize>,
    states: Vec<LocState>,
    /// (reader op, next node) of every reader list.
    nodes: Vec<(usize, usize)>,
    /// The keys of `near` given a slot (to reset them).
    keys: Vec<usize>,
}

/// The state slots of one op's first few reads and writes, noted while its
/// edges are found so that recording its accesses looks them up once.
#[derive(Default)]
struct Slots {
    reads: [u32; 4],
    writes: [u32; 2],
}

impl Slots {
    fn note_read(&mut self, j: usize, k: usize) {
        if let Some(s) = self.reads.get_mut(j) {
            *s = k as u32;
        }
    }
    fn note_write(&mut self, j: usize, k: usize) {
        if let Some(s) = self.writes.get_mut(j) {
            *s = k as u32;
        }
    }
    /// The slot of read `j`, if noted.
    fn read(&self, j: usize) -> Option<usize> {
        self.reads.get(j).map(|&k| k as usize)
    }
    /// The slot of write `j`, if noted.
    fn write(&self, j: usize) -> Option<usize> {
        self.writes.get(j).map(|&k| k as usize)
    }
}

/// A location without a state slot in [`Locs::near`].
const NO_SLOT: u32 = u32::MAX;

/// Locations with a [`dense_key`] below this are found by indexing (every
/// physical register and the first 32K virtual registers); the rest by
/// hashing, so that a huge virtual register number costs no memory.
const DENSE_KEYS: usize = 1 << 17;

/// Physical registers at even keys, virtual ones at odd keys.
fn dense_key(l: Storage) -> usize {
    match l {
        Storage::Phys(r) => 2 * r as usize,
        Storage::Virt(v) => 2 * v as usize + 1,
    }
}

impl Locs {
    /// Forget every location (the dense table keeps its size, all slots
    /// `NO_SLOT` again).
    fn reset(&mut self) {
        for &k in &self.keys {
            if let Some(s) = self.near.get_mut(k) {
                *s = NO_SLOT;
            }
        }
        self.keys.clear();
        self.far.clear();
        self.states.clear();
        self.nodes.clear();
    }
    /// The state slot of `l` (created empty on first use). A location
    /// seen before in the dense table is found inline.
    #[inline]
    fn slot(&mut self, l: Storage) -> usize {
        match self.near.get(dense_key(l)) {
            Some(&s) if s != NO_SLOT => s as usize,
            _ => self.new_slot(l),
        }
    }

    /// [`Locs::slot`] for a location not in the dense table yet, or beyond it.
    fn new_slot(&mut self, l: Storage) -> usize {
        let next = self.states.len();
        let key = dense_key(l);
        let k = if key < DENSE_KEYS {
            if key >= self.near.len() {
                // Grown in large steps: a block's keys arrive in no order.
                let len = (key + 1).max(2 * self.near.len()).clamp(128, DENSE_KEYS);
                self.near.resize(len, NO_SLOT);
            }
            match self.near.get_mut(key) {
                Some(s) if *s == NO_SLOT => {
                    *s = next as u32;
                    self.keys.push(key);
                    next
                }
                Some(s) => *s as usize,
                None => next,
            }
        } else {
            *self.far.entry(l).or_insert(next)
        };
        if k == next {
            self.states.push(LocState {
                last_write: None,
                head: NIL,
                tail: NIL,
                last_reader: None,
            });
        }
        k
    }
    fn state(&self, k: usize) -> Option<LocState> {
        self.states.get(k).copied()
    }
    /// The readers of slot `k` since its last write, oldest first.
    fn readers(&self, k: usize) -> impl Iterator<Item = usize> + '_ {
        let mut at = self.states.get(k).map_or(NIL, |s| s.head);
        std::iter::from_fn(move || {
            let &(op, next) = self.nodes.get(at)?;
            at = next;
            Some(op)
        })
    }
    fn write(&mut self, k: usize, i: usize, lat: u32) {
        if let Some(st) = self.states.get_mut(k) {
            *st = LocState {
                last_write: Some((i, lat)),
                head: NIL,
                tail: NIL,
                last_reader: None,
            };
        }
    }
    /// Record op `i`'s accesses (summary `op`, whose locations' slots
    /// `slots` noted when its edges were found): its writes first, then its
    /// reads, so that an op reading and writing one location gets no edge
    /// to itself.
    fn record(&mut self, i: usize, op: &OpDeps, slots: &Slots) {
        for (j, (w, lat)) in op.writes.iter().enumerate() {
            let k = slots.write(j).unwrap_or_else(|| self.slot(*w));
            self.write(k, i, *lat);
        }
        for (j, r) in op.reads.iter().enumerate() {
            let k = slots.read(j).unwrap_or_else(|| self.slot(*r));
            self.read(k, i);
        }
    }
    fn read(&mut self, k: usize, i: usize) {
        let node = self.nodes.len();
        let Some(st) = self.states.get_mut(k) else { return };
        if st.last_write.map(|(w, _)| w) == Some(i) || st.last_reader == Some(i) {
            return;
        }
        match self.nodes.get_mut(st.tail) {
            Some(t) => t.1 = node,
            None => st.head = node,
        }
        st.tail = node;
        st.last_reader = Some(i);
        self.nodes.push((i, NIL));
    }
}

impl DepGraph {
    /// Build the graph of `ops` (in program order). `keep` decides whether an
    /// edge is kept; the post-RA scheduler uses it for fault injection, every
    /// other caller passes `|_| true`.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn build<T: AsRef<OpDeps>>(ops: &[T], keep: impl Fn(&Edge) -> bool) -> DepGraph {
        let mut g = DepGraph::default();
        g.rebuild(&mut GraphBuffers::default(), ops, keep);
        g
    }

    /// [`DepGraph::build`] into `self` (replacing its graph), with the
    /// bookkeeping in `bufs`: when both are reused from block to block,
    /// building a graph allocates nothing once they have grown.
    pub fn rebuild<T: AsRef<OpDeps>>(
        &mut self,
        bufs: &mut GraphBuffers,
        ops: &[T],
        keep: impl Fn(&Edge) -> bool,
    ) {
        self.n = ops.len();
        self.edges.clear();
        // About three edges per op in practice: sized once.
        self.edges.reserve(3 * ops.len());
        let locs = &mut bufs.locs;
        locs.reset();
        locs.states.reserve(2 * ops.len());
        locs.nodes.reserve(2 * ops.len());
        let effects = &mut bufs.effects;
        effects.clear();
        let mut last_barrier: Option<usize> = None;
        let mut pred_start = std::mem::take(&mut self.lists);
        pred_start.clear();
        for (i, op) in ops.iter().enumerate() {
            let op = op.as_ref();
            pred_start.push(self.edges.len() as u32);
            let mut slots = Slots::default();
            self.register_edges(locs, (i, op), &keep, &mut slots);
            locs.record(i, op, &slots);
            self.order_effects(i, op, effects, &mut last_barrier, &keep);
        }
        pred_start.push(self.edges.len() as u32);
        self.lists = pred_start;
        self.index(&mut bufs.next);
    }

    /// Add the register edges into op `i` (summary `op`) that `keep`
    /// accepts, from the accesses `locs` records before it: RAW from the
    /// last write of each read, then for each write WAR from the readers
    /// since the last write and WAW from that write. No self-edges.
    fn register_edges(
        &mut self,
        locs: &mut Locs,
        (i, op): (usize, &OpDeps),
        keep: &impl Fn(&Edge) -> bool,
        slots: &mut Slots,
    ) {
        let mut add = |e: Edge| {
            if e.from != e.to && keep(&e) {
                self.push(e);
            }
        };
        let edge = |from, delay, kind, loc| Edge {
            from,
            to: i,
            delay,
            kind,
            loc: Some(loc),
        };
        for (j, r) in op.reads.iter().enumerate() {
            let k = locs.slot(*r);
            slots.note_read(j, k);
            if let Some((w, l)) = locs.state(k).and_then(|st| st.last_write) {
                add(edge(w, l as i32, EdgeKind::Raw, *r));
            }
        }
        for (j, (w, lat)) in op.writes.iter().enumerate() {
            let k = locs.slot(*w);
            slots.note_write(j, k);
            for rd in locs.readers(k) {
                add(edge(rd, 1 - *lat as i32, EdgeKind::War, *w));
            }
            if let Some((pw, pl)) = locs.state(k).and_then(|st| st.last_write) {
                add(edge(pw, pl as i32 - *lat as i32 + 1, EdgeKind::Waw, *w));
            }
        }
    }

    fn order_effects(
        &mut self,
        i: usize,
        op: &OpDeps,
        effects: &mut Vec<(usize, Effect)>,
        last_barrier: &mut Option<usize>,
        keep: &impl Fn(&Edge) -> bool,
    ) {
        let order = |from: usize| Edge {
            from,
            to: i,
            delay: 1,
            kind: EdgeKind::Order,
            loc: None,
        };
        if op.effects.contains(&Effect::Barrier) {
            for from in 0..i {
                let e = order(from);
                if keep(&e) {
                    self.push(e);
                }
            }
            *last_barrier = Some(i);
            effects.clear();
            return;
        }
        if let Some(b) = *last_barrier {
            let e = order(b);
            if keep(&e) {
                self.push(e);
            }
        }
        for eff in &op.effects {
            // One edge per conflicting op (its effects sit side by side).
            let mut last = None;
            for &(from, old) in effects.iter() {
                if conflicts(&old, eff) && last != Some(from) {
                    last = Some(from);
                    let e = order(from);
                    if keep(&e) {
                        self.push(e);
                    }
                }
            }
        }
        for eff in &op.effects {
            // A new output on a channel stands for the older ones on it: later
            // effects ordered after it are ordered after them too.
            match eff {
                Effect::Output(c) => effects.retain(|(_, old)| !matches!(old, Effect::Output(o) if o == c)),
                // A discard is ordered after every output and discard
                // before it, and everything that conflicts with those
                // conflicts with it.
                Effect::Discard => effects.retain(|(_, old)| !matches!(old, Effect::Output(_) | Effect::Discard)),
                _ => {}
            }
            effects.push((i, *eff));
        }
    }

    fn push(&mut self, e: Edge) {
        if e.to < self.n && e.from < self.n {
            self.edges.push(e);
        }
    }

    /// Lay out the outgoing edge lists after the incoming starts already in
    /// `lists` (counting sort by source op, stable, so each list keeps
    /// creation order).
    fn index(&mut self, next: &mut Vec<u32>) {
        let (n, m) = (self.n, self.edges.len());
        let mut lists = std::mem::take(&mut self.lists);
        lists.resize(2 * (n + 1) + m, 0);
        next.clear();
        next.resize(n + 1, 0);
        let (_, rest) = lists.split_at_mut(n + 1);
        let (start, list) = rest.split_at_mut(n + 1);
        for e in &self.edges {
            if let Some(c) = start.get_mut(e.from + 1) {
                *c += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        next.copy_from_slice(start);
        for (k, e) in self.edges.iter().enumerate() {
            if let Some(c) = next.get_mut(e.from) {
                if let Some(slot) = list.get_mut(*c as usize) {
                    *slot = k as u32;
                }
                *c += 1;
            }
        }
        self.lists = lists;
    }

    /// Where op `i`'s entries start and end in starts list `part` (0
    /// incoming, 1 outgoing).
    fn span(&self, part: usize, i: usize) -> std::ops::Range<usize> {
        let at = part * (self.n + 1) + i;
        match (self.lists.get(at), self.lists.get(at + 1)) {
            (Some(&a), Some(&b)) if i < self.n => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// The incoming edges of op `i`, as a slice of `edges`.
    fn preds(&self, i: usize) -> &[Edge] {
        self.edges.get(self.span(0, i)).unwrap_or(&[])
    }

    /// The indices (into `edges`) of op `i`'s outgoing edges.
    fn succ_ids(&self, i: usize) -> &[u32] {
        let base = 2 * (self.n + 1);
        let r = self.span(1, i);
        self.lists.get(base + r.start..base + r.end).unwrap_or(&[])
    }

    /// Number of ops.
    pub fn len(&self) -> usize {
        self.n
    }

    /// How many incoming edges op `i` has.
    pub fn pred_count(&self, i: usize) -> usize {
        self.preds(i).len()
    }

    /// How many outgoing edges op `i` has.
    pub fn succ_count(&self, i: usize) -> usize {
        self.succ_ids(i).len()
    }

    /// The incoming edges of op `i`.
    pub fn preds_of(&self, i: usize) -> impl Iterator<Item = &Edge> {
        self.preds(i).iter()
    }

    /// The outgoing edges of op `i`.
    pub fn succs_of(&self, i: usize) -> impl Iterator<Item = &Edge> {
        self.succ_ids(i).iter().filter_map(|&k| self.edges.get(k as usize))
    }

    /// For each op, the longest delay-weighted path from it to the end of
    /// the block, counting `own[i]` (its own latency) at the path's end: the
    /// critical-path priority of a top-down scheduler.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn heights(&self, own: &[u32]) -> Vec<i64> {
        let mut h = Vec::new();
        self.heights_into(own, &mut h);
        h
    }

    /// [`DepGraph::heights`] into `h` (replacing its contents).
    pub fn heights_into(&self, own: &[u32], h: &mut Vec<i64>) {
        let n = self.len();
        h.clear();
        h.resize(n, 0);
        for i in (0..n).rev() {
            let mut best = own.get(i).copied().unwrap_or(0) as i64;
            for e in self.succs_of(i) {
                best = best.max(e.delay.max(0) as i64 + h.get(e.to).copied().unwrap_or(0));
            }
            if let Some(x) = h.get_mut(i) {
                *x = best;
            }
        }
    }

    /// For each op, the longest delay-weighted path from the start of the
    /// block to it: the priority of a bottom-up scheduler.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn depths(&self) -> Vec<i64> {
        let mut d = Vec::new();
        self.depths_into(&mut d);
        d
    }

    /// [`DepGraph::depths`] into `d` (replacing its contents).
    pub fn depths_into(&self, d: &mut Vec<i64>) {
        let n = self.len();
        d.clear();
        d.resize(n, 0);
        for i in 0..n {
            let best = self
                .preds_of(i)
                .map(|e| d.get(e.from).copied().unwrap_or(0) + e.delay.max(0) as i64)
                .max()
                .unwrap_or(0);
            if let Some(x) = d.get_mut(i) {
                *x = best;
            }
        }
    }
}

/// Whether two effects must keep their relative order.
fn conflicts(a: &Effect, b: &Effect) -> bool {
    match (a, b) {
        (Effect::Output(x), Effect::Output(y)) => x == y,
        (Effect::Discard, Effect::Output(_) | Effect::Discard) | (Effect::Output(_), Effect::Discard) => true,
        (
            Effect::Scratch {
                write: w1,
                lo: l1,
                hi: h1,
            },
            Effect::Scratch {
                write: w2,
                lo: l2,
                hi: h2,
            },
        ) => (*w1 || *w2) && l1 < h2 && l2 < h1,
        (Effect::Barrier, _) | (_, Effect::Barrier) => true,
        _ => false,
    }
}

/// The ordered effects of an op (either form).
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn effects(target: &Target, desc: &OpDesc, inst: &Inst) -> Effects {
    let mut out = Effects::default();
    push_effects(&mut out, target, desc, inst);
    out
}

/// Append [`effects`] of an op to `out` (a summary's list, filled in
/// place rather than built and moved).
pub fn push_effects(out: &mut Effects, target: &Target, desc: &OpDesc, inst: &Inst) {
    // The index operand's value (only outputs and scratch accesses ask).
    let index = || {
        inst.srcs
            .iter()
            .zip(desc.operands)
            .find(|(_, k)| **k == OperandKind::Index)
            .and_then(|(o, _)| o.imm())
            .map(|i| i.bits)
    };
    if target.ends_thread(desc) {
        out.push(Effect::Barrier);
    }
    match desc.sem {
        Sem::Output(ch, with_index) => {
            let index = if with_index { index() } else { None };
            out.push(Effect::Output(Channel { name: ch, index }));
        }
        Sem::Discard => out.push(Effect::Discard),
        Sem::ScratchRead | Sem::ScratchWrite => {
            let write = desc.sem == Sem::ScratchWrite;
            let size = if write {
                value_size(desc, inst)
            } else {
                dest_size(inst)
            };
            match index() {
                Some(lo) => out.push(Effect::Scratch {
                    write,
                    lo,
                    hi: lo.saturating_add(size.max(1)),
                }),
                None => out.push(Effect::Scratch {
                    write,
                    lo: 0,
                    hi: u32::MAX,
                }),
            }
        }
        _ => {}
    }
}

fn dest_size(inst: &Inst) -> u32 {
    match &inst.dest {
        Some(Operand::Phys(p)) => p.size as u32,
        Some(Operand::Virt(v)) => v.size.unwrap_or(1) as u32,
        _ => 1,
    }
}

fn value_size(desc: &OpDesc, inst: &Inst) -> u32 {
    inst.srcs
        .iter()
        .zip(desc.operands)
        .filter(|(_, k)| **k != OperandKind::Index)
        .map(|(o, _)| match o {
            Operand::Phys(p) => p.size as u32,
            Operand::Virt(v) => v.size.unwrap_or(1) as u32,
            _ => 1,
        })
        .max()
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(reads: &[u16], writes: &[(u16, u32)]) -> OpDeps {
        OpDeps {
            reads: reads.iter().map(|r| Storage::Phys(*r)).collect(),
            writes: writes.iter().map(|(r, l)| (Storage::Phys(*r), *l)).collect(),
            effects: Default::default(),
        }
    }

    fn has(g: &DepGraph, from: usize, to: usize, kind: EdgeKind, delay: i32) -> bool {
        g.edges
            .iter()
            .any(|e| e.from == from && e.to == to && e.kind == kind && e.delay == delay)
    }

    #[test]
    fn raw_war_waw_with_delays() {
        // 0: r1 = ... (L2); 1: r2 = f(r1) (L1); 2: r1 = ... (L1)
        let ops = [op(&[], &[(1, 2)]), op(&[1], &[(2, 1)]), op(&[], &[(1, 1)])];
        let g = DepGraph::build(&ops, |_| true);
        assert!(has(&g, 0, 1, EdgeKind::Raw, 2));
        assert!(has(&g, 1, 2, EdgeKind::War, 0));
        assert!(has(&g, 0, 2, EdgeKind::Waw, 2));
        assert_eq!(g.edges.len(), 3);
    }

    #[test]
    fn delayed_writer_may_issue_before_reader() {
        // 0 reads r0; 1 writes r0 with latency 2: may issue one cycle earlier.
        let ops = [op(&[0], &[(4, 1)]), op(&[], &[(0, 2)])];
        let g = DepGraph::build(&ops, |_| true);
        assert!(has(&g, 0, 1, EdgeKind::War, -1));
    }

    #[test]
    fn effects_keep_channel_order_only() {
        let out = |c: Channel| OpDeps {
            effects: [Effect::Output(c)].into_iter().collect(),
            ..Default::default()
        };
        let export0 = Channel {
            name: "export",
            index: Some(0),
        };
        let ops = [out("tlb".into()), out(export0), out("tlb".into())];
        let g = DepGraph::build(&ops, |_| true);
        assert!(has(&g, 0, 2, EdgeKind::Order, 1));
        assert!(!g.edges.iter().any(|e| e.to == 1 || e.from == 1));
    }

    #[test]
    fn a_discard_is_ordered_with_every_output() {
        let out = |c: Channel| OpDeps { effects: [Effect::Output(c)].into_iter().collect(), ..Default::default() };
        let discard = OpDeps { effects: [Effect::Discard].into_iter().collect(), ..Default::default() };
        let export0 = Channel { name: "export", index: Some(0) };
        let export1 = Channel { name: "export", index: Some(1) };
        // 0: export 0; 1: discard; 2: export 1; 3: discard; 4: export 0
        let ops = [out(export0), discard.clone(), out(export1), discard, out(export0)];
        let g = DepGraph::build(&ops, |_| true);
        assert!(has(&g, 0, 1, EdgeKind::Order, 1), "a discard stays after an earlier output");
        assert!(has(&g, 1, 2, EdgeKind::Order, 1), "an output on another channel stays after the discard");
        assert!(has(&g, 2, 3, EdgeKind::Order, 1) && has(&g, 3, 4, EdgeKind::Order, 1));
        // The second discard stands for the first and the outputs before it.
        assert!(!g.edges.iter().any(|e| e.from == 0 && e.to == 4));
    }

    #[test]
    fn one_channel_gets_a_chain_not_a_clique() {
        let out = OpDeps {
            effects: [Effect::Output("tlb".into())].into_iter().collect(),
            ..Default::default()
        };
        let g = DepGraph::build(&vec![out; 50], |_| true);
        assert_eq!(g.edges.len(), 49);
        assert!((0..49).all(|i| has(&g, i, i + 1, EdgeKind::Order, 1)));
    }

    #[test]
    fn scratch_overlap_and_barrier() {
        let s = |write, lo, hi| OpDeps {
            effects: [Effect::Scratch { write, lo, hi }].into_iter().collect(),
            ..Default::default()
        };
        let ops = [
            s(true, 0, 2),
            s(false, 1, 2),
            s(false, 2, 3),
            OpDeps {
                effects: [Effect::Barrier].into_iter().collect(),
                ..Default::default()
            },
        ];
        let g = DepGraph::build(&ops, |_| true);
        assert!(has(&g, 0, 1, EdgeKind::Order, 1));
        assert!(!g.edges.iter().any(|e| e.to == 2 && e.from == 0));
        for i in 0..3 {
            assert!(has(&g, i, 3, EdgeKind::Order, 1));
        }
    }

    #[test]
    fn keep_filter_drops_edges_and_heights_follow_paths() {
        let ops = [op(&[], &[(1, 2)]), op(&[1], &[(2, 1)]), op(&[2], &[])];
        let g = DepGraph::build(&ops, |e| e.kind != EdgeKind::War);
        assert_eq!(g.heights(&[2, 1, 0]), vec![3, 1, 0]);
        assert_eq!(g.depths(), vec![0, 2, 3]);
        let ops = [op(&[1], &[]), op(&[], &[(1, 1)])];
        assert!(DepGraph::build(&ops, |e| e.kind != EdgeKind::War)
            .edges
            .is_empty());
    }

    #[test]
    fn virtual_registers_defined_twice() {
        let ops = [
            OpDeps {
                writes: [(Storage::Virt(0), 1)].into_iter().collect(),
                ..Default::default()
            },
            OpDeps {
                reads: [Storage::Virt(0)].into_iter().collect(),
                writes: [(Storage::Virt(1), 1)].into_iter().collect(),
                ..Default::default()
            },
            OpDeps {
                writes: [(Storage::Virt(0), 1)].into_iter().collect(),
                ..Default::default()
            },
        ];
        let g = DepGraph::build(&ops, |_| true);
        assert!(has(&g, 1, 2, EdgeKind::War, 0));
        assert!(has(&g, 0, 2, EdgeKind::Waw, 1));
    }
}
