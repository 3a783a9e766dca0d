//! Post-RA list scheduler: lowered machine ops of one block → bundles.
//!
//! Algorithm: cycle-driven top-down list scheduling over the block's
//! dependency graph. An op is *ready* once all its predecessors are placed;
//! its earliest cycle is the largest `cycle(pred) + delay` over its incoming
//! edges (negative delays count as zero: a successor never goes before its
//! predecessor, it may share its bundle when the delay is <= 0, which is how
//! parallel reads let a write-after-read pair share one bundle). Each cycle
//! the bundle is filled greedily with the ready ops whose earliest cycle has
//! come, highest critical path first (ties: program order; the best
//! `WINDOW` due ops are tried per slot), as long as the
//! bundle stays legal ([`fits`]): a slot per op, no two writes to one
//! register, the immediate limit, `rules.bundle_ok` (r600 read ports). Ops
//! released by a placement with delay <= 0 may join the same bundle.
//!
//! The target's [`Clock`] decides how the schedule waits ([`pads`]): on an
//! interlocked clock the best ready op issues anyway and the hardware
//! stalls; on the others a cycle with nothing to issue is an empty bundle,
//! and the block is padded until every write has landed (an encoded-waits
//! target accepts empty bundles as NOPs; its bundles carry no `wait N` from
//! here). Read windows: a block in which an op's result expires
//! ([`schedra_ir::target::ReadWindow`] with a maximum) is checked after
//! scheduling, and a reader placed past the window is an error
//! ([`check_windows`]); this scheduler does not place readers to meet
//! windows, and reads in later blocks are left to the verifier.
//!
//! Invariant: every edge `from -> to` of the graph holds as
//! `cycle(to) >= cycle(from) + max(delay, 0)` with `from` placed no later
//! than `to`, every bundle satisfies [`fits`], no read of an expiring result
//! in the block is past its window, and on a non-interlocked clock no write
//! is in flight after the last bundle. With the graph's invariant this makes
//! the bundles compute what the ops computed in order.

use crate::depgraph::{DepGraph, Edge, EdgeKind, GraphBuffers, Storage};
use super::lower::LoweredOp;
use crate::{CompileError, Fault, Options};
use schedra_ir::target::{Clock, OperandKind};
use schedra_ir::{Inst, OpDesc, Reg, Target};

/// A block's schedule: the bundles in issue order, each the ops it holds
/// (index into the lowered op list) with their slots; and the cycle of
/// each op. The bundles sit in one buffer (no allocation per bundle).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// The members of every bundle, bundle after bundle.
    members: Vec<(usize, &'static str)>,
    /// Where each bundle ends in `members`.
    ends: Vec<usize>,
    /// Bundle index of each op.
    pub cycle_of: Vec<usize>,
}

impl Schedule {
    /// How many bundles.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    /// The ops of bundle `i` with their slots (empty past the end).
    pub fn bundle(&self, i: usize) -> &[(usize, &'static str)] {
        let start = match i.checked_sub(1) {
            Some(j) => self.ends.get(j).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.members.get(start..end).unwrap_or(&[])
    }
    /// Every bundle in issue order.
    pub fn bundles(&self) -> impl Iterator<Item = &[(usize, &'static str)]> + '_ {
        (0..self.len()).map(move |i| self.bundle(i))
    }
    /// Append a bundle holding `ops`.
    pub fn push(&mut self, ops: impl IntoIterator<Item = (usize, &'static str)>) {
        self.members.extend(ops);
        self.ends.push(self.members.len());
    }
    /// Keep the first `n` bundles.
    pub fn truncate(&mut self, n: usize) {
        self.ends.truncate(n);
        self.members.truncate(self.ends.last().copied().unwrap_or(0));
    }
    /// Insert an empty bundle before bundle `q` (at the end if `q` is past
    /// it); the cycles of the ops are not changed.
    pub fn insert_empty(&mut self, q: usize) {
        let q = q.min(self.ends.len());
        let at = match q.checked_sub(1) {
            Some(j) => self.ends.get(j).copied().unwrap_or(0),
            None => 0,
        };
        self.ends.insert(q, at);
    }
}

/// Build the post-RA dependency graph of `ops`. `pinned` lists the
/// registers the source program preallocated. This is the single decision
/// point of the faults `SchedIgnoreWar` (write-after-read edges on physical
/// registers are dropped) and `R600PinnedWar` (those on pinned registers
/// are dropped: the group interference check ignores them; only on the
/// fault's own target, r600).
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn build_graph(target: &Target, ops: &[LoweredOp], pinned: &[Reg], opts: &Options) -> DepGraph {
    let mut g = DepGraph::default();
    build_graph_in(&mut g, &mut GraphBuffers::default(), (target, ops), pinned, opts);
    g
}

/// [`build_graph`] into `g` (replacing its graph), reusing `bufs`.
pub fn build_graph_in(
    g: &mut DepGraph,
    bufs: &mut GraphBuffers,
    (target, ops): (&Target, &[LoweredOp]),
    pinned: &[Reg],
    opts: &Options,
) {
    let pinned_fault = opts.has(Fault::R600PinnedWar) && Fault::R600PinnedWar.applies_to(target);
    g.rebuild(bufs, ops, |e: &Edge| {
        let phys = match e.loc {
            Some(Storage::Phys(r)) if e.kind == EdgeKind::War => Some(r),
            _ => None,
        };
        let Some(r) = phys else { return true };
        if opts.has(Fault::SchedIgnoreWar) {
            return false;
        }
        !(pinned_fault && pinned.contains(&r))
    })
}

/// Scratch lists of one bundle check, reused from trial to trial. The
/// first `known` members of the next trial are those of an accepted
/// bundle ([`Trial::commit`]): their writes and immediates are kept, so a
/// trial walks only the members after them.
#[derive(Default)]
struct Trial {
    /// On success, the slot of each member (in order).
    slots: Vec<&'static str>,
    /// The physical registers below 128 written so far, one bit each.
    low_regs: u128,
    /// The physical registers from 128 up written so far.
    regs: Vec<Reg>,
    /// The distinct immediate words so far.
    imms: Vec<u32>,
    known: usize,
    known_low_regs: u128,
    known_regs: usize,
    known_imms: usize,
}

impl Trial {
    /// The next trial starts from no known members.
    fn forget(&mut self) {
        (self.known, self.known_low_regs, self.known_regs, self.known_imms) = (0, 0, 0, 0);
    }
    /// The `n` members just checked form an accepted bundle: the next
    /// trial extends them.
    fn commit(&mut self, n: usize) {
        (self.known, self.known_low_regs, self.known_regs, self.known_imms) =
            (n, self.low_regs, self.regs.len(), self.imms.len());
    }
    /// Record a write of physical register `r`; `false` if the trial
    /// already writes it.
    fn write(&mut self, r: Reg) -> bool {
        if let Some(bit) = 1u128.checked_shl(u32::from(r)) {
            let fresh = self.low_regs & bit == 0;
            self.low_regs |= bit;
            return fresh;
        }
        if self.regs.contains(&r) {
            return false;
        }
        self.regs.push(r);
        true
    }
}

/// Why a trial bundle is legal or not.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Fits,
    /// Illegal by a check that more members can only keep failing: a
    /// register written twice, too many immediates, no slot assignment.
    FailsForGood,
    /// Illegal by the target's bundle rule (not assumed monotone).
    FailsRule,
}

/// [`fits`] without allocating once `t` has grown: on success `t.slots`
/// holds the slot of each member (in order); on failure its contents are
/// unspecified.
fn fits_into(target: &Target, ops: &[LoweredOp], members: &[usize], t: &mut Trial) -> bool {
    verdict(target, ops, members, t) == Verdict::Fits
}

/// The checks of [`fits_into`], telling which kind of check failed (the
/// first `t.known` members are an accepted bundle, see [`Trial`]).
fn verdict(target: &Target, ops: &[LoweredOp], members: &[usize], t: &mut Trial) -> Verdict {
    if members.iter().any(|&m| m >= ops.len()) {
        return Verdict::FailsForGood;
    }
    if t.known > members.len() {
        t.forget();
    }
    // The members after the known ones.
    let new = members.get(t.known..).unwrap_or(&[]);
    let new_ops = || new.iter().filter_map(|&m| ops.get(m));
    // No physical register written twice in the bundle.
    t.low_regs = t.known_low_regs;
    t.regs.truncate(t.known_regs);
    t.imms.truncate(t.known_imms);
    for o in new_ops() {
        for (l, _) in &o.deps.writes {
            if let Storage::Phys(r) = l {
                if !t.write(*r) {
                    return Verdict::FailsForGood;
                }
            }
        }
    }
    for op in new_ops() {
        let value_imms = op.inst.srcs.iter().zip(op.desc.operands).filter(|(_, k)| **k != OperandKind::Index);
        for bits in value_imms.filter_map(|(o, _)| o.imm().map(|i| i.bits)) {
            if !t.imms.contains(&bits) {
                t.imms.push(bits);
            }
        }
    }
    if t.imms.len() > target.rules.max_bundle_imms() {
        return Verdict::FailsForGood;
    }
    if let [m] = members {
        // Alone, an op takes its first slot.
        t.slots.clear();
        let Some(&first) = ops.get(*m).and_then(|op| op.slots.first()) else {
            return Verdict::FailsForGood;
        };
        t.slots.push(first);
    } else if !assign_slots_into(ops, members, &mut t.slots) {
        return Verdict::FailsForGood;
    }
    match bundle_ok(target, ops, members) {
        true => Verdict::Fits,
        false => Verdict::FailsRule,
    }
}

/// The target's bundle rule over the members (an array of the exact size
/// for up to three members, else a stack buffer for the usual few).
fn bundle_ok(target: &Target, ops: &[LoweredOp], members: &[usize]) -> bool {
    let pair = |m: usize| ops.get(m).map(|o| (o.desc, &o.inst));
    let ok = |pairs: &[(&OpDesc, &Inst)]| target.rules.bundle_ok(pairs).is_ok();
    match *members {
        [a] => {
            if let Some(pa) = pair(a) {
                return ok(&[pa]);
            }
        }
        [a, b] => {
            if let (Some(pa), Some(pb)) = (pair(a), pair(b)) {
                return ok(&[pa, pb]);
            }
        }
        [a, b, c] => {
            if let (Some(pa), Some(pb), Some(pc)) = (pair(a), pair(b), pair(c)) {
                return ok(&[pa, pb, pc]);
            }
        }
        _ => {}
    }
    let Some(first) = members.first().and_then(|&m| pair(m)) else {
        return ok(&[]);
    };
    const INLINE: usize = 8;
    if members.len() <= INLINE {
        let mut buf: [(&OpDesc, &Inst); INLINE] = [first; INLINE];
        let mut n = 0;
        for p in members.iter().filter_map(|&m| pair(m)) {
            buf[n] = p;
            n += 1;
        }
        return ok(&buf[..n]);
    }
    let pairs: Vec<(&OpDesc, &Inst)> = members.iter().filter_map(|&m| pair(m)).collect();
    ok(&pairs)
}

/// The first-fit slot assignment of `members` (backtracking: members in
/// order, each trying its slots in order) into `used`; whether there is one.
fn assign_slots_into(ops: &[LoweredOp], members: &[usize], used: &mut Vec<&'static str>) -> bool {
    if let [a, b] = members {
        // The usual pair, without the recursion: the first slot of `a`
        // that leaves `b` one, and `b`'s first one then.
        let (Some(a), Some(b)) = (ops.get(*a), ops.get(*b)) else { return false };
        for &sa in a.slots.iter() {
            if let Some(&sb) = b.slots.iter().find(|sb| !same_slot(sa, sb)) {
                used.clear();
                used.extend([sa, sb]);
                return true;
            }
        }
        return false;
    }
    if let [a, b, c] = members {
        // Three members, the same search as loops.
        let (Some(a), Some(b), Some(c)) = (ops.get(*a), ops.get(*b), ops.get(*c)) else {
            return false;
        };
        for &sa in a.slots.iter() {
            for &sb in b.slots.iter().filter(|sb| !same_slot(sa, sb)) {
                if let Some(&sc) = c.slots.iter().find(|sc| !same_slot(sa, sc) && !same_slot(sb, sc)) {
                    used.clear();
                    used.extend([sa, sb, sc]);
                    return true;
                }
            }
        }
        return false;
    }
    used.clear();
    first_fit(ops, members, 0, used)
}

/// The first-fit slot assignment of `members[k..]` after the slots in
/// `used` (backtracking), appended to `used`; whether there is one.
fn first_fit(ops: &[LoweredOp], members: &[usize], k: usize, used: &mut Vec<&'static str>) -> bool {
    let Some(&m) = members.get(k) else {
        return true;
    };
    let Some(op) = ops.get(m) else { return false };
    for s in op.slots.iter() {
        if !used.iter().any(|u| same_slot(u, s)) {
            used.push(s);
            if first_fit(ops, members, k + 1, used) {
                return true;
            }
            used.pop();
        }
    }
    false
}

/// Whether two slot names are equal (both usually come from the target's
/// tables, so the same text at the same address; otherwise the first
/// letter usually tells them apart without a full comparison).
fn same_slot(a: &str, b: &str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len())
        || (a.as_bytes().first() == b.as_bytes().first() && a == b)
}

/// How many due ready ops (best first) are tried for each bundle slot.
const WINDOW: usize = 48;

/// The shortest ready list the `sched-stuck-ready` fault searches wrongly.
const STUCK_LEN: usize = 4;

#[derive(Default)]
struct State {
    left: Vec<usize>,
    earliest: Vec<i64>,
    /// Ready ops, best priority first.
    ready: Vec<usize>,
    prio: Vec<i64>,
    cycle_of: Vec<Option<usize>>,
    /// The `sched-stuck-ready` fault is injected (see [`State::unready`]).
    stuck_ready: bool,
    /// On a target with an SFU spacing (`WaitClock::sfu_spacing`): which
    /// ops are SFU ops (empty otherwise), the spacing, and the first cycle
    /// the next SFU op may issue.
    sfu: Vec<bool>,
    sfu_spacing: usize,
    sfu_next: usize,
}

impl State {
    /// Start scheduling the ops of `g` whose own latencies are `own`
    /// (critical-path priorities, the roots ready), reusing the memory.
    fn reset(&mut self, g: &DepGraph, own: &[u32]) {
        let n = g.len();
        self.left.clear();
        self.left.extend((0..n).map(|i| g.pred_count(i)));
        self.earliest.clear();
        self.earliest.resize(n, 0);
        self.ready.clear();
        g.heights_into(own, &mut self.prio);
        self.cycle_of.clear();
        self.cycle_of.resize(n, None);
        for i in 0..n {
            if self.left.get(i) == Some(&0) {
                self.make_ready(i);
            }
        }
    }

    /// Track the SFU spacing of `target` for `ops` (nothing on a target
    /// without one).
    fn space_sfu(&mut self, target: &Target, ops: &[LoweredOp]) {
        self.sfu.clear();
        self.sfu_next = 0;
        self.sfu_spacing = target.wait_timing().sfu_spacing as usize;
        if self.sfu_spacing > 0 {
            self.sfu.extend(ops.iter().map(|o| o.desc.sfu));
        }
    }

    /// Whether op `i` is held back at `cycle` by the SFU spacing.
    fn sfu_blocked(&self, i: usize, cycle: usize) -> bool {
        cycle < self.sfu_next && self.sfu.get(i).copied().unwrap_or(false)
    }

    fn key(&self, i: usize) -> (std::cmp::Reverse<i64>, usize) {
        (std::cmp::Reverse(self.prio.get(i).copied().unwrap_or(0)), i)
    }

    fn make_ready(&mut self, i: usize) {
        let k = self.key(i);
        let pos = self.ready.partition_point(|&j| self.key(j) < k);
        self.ready.insert(pos, i);
    }

    /// Remove the placed op `i` from the ready list. Under the
    /// `sched-stuck-ready` fault a list of [`STUCK_LEN`] or more ops is
    /// searched with a cursor that does not step past an op of `i`'s
    /// priority when that priority is 0 (ops nothing waits for), so such an
    /// op ahead of `i` holds it forever: the loop spins without allocating.
    fn unready(&mut self, i: usize) {
        if !self.stuck_ready || self.ready.len() < STUCK_LEN {
            if let Some(pos) = self.ready.iter().position(|&r| r == i) {
                self.ready.remove(pos);
            }
            return;
        }
        let p = self.prio.get(i).copied().unwrap_or(0);
        let mut pos = 0;
        while let Some(&j) = self.ready.get(pos) {
            if j == i {
                self.ready.remove(pos);
                return;
            }
            if self.prio.get(j).copied().unwrap_or(0) != p || p != 0 {
                pos += 1;
            }
        }
    }

    fn place(&mut self, g: &DepGraph, i: usize, cycle: usize) {
        self.unready(i);
        if let Some(c) = self.cycle_of.get_mut(i) {
            *c = Some(cycle);
        }
        if self.sfu.get(i).copied().unwrap_or(false) {
            self.sfu_next = cycle + self.sfu_spacing;
        }
        for e in g.succs_of(i) {
            let to = e.to;
            if let Some(x) = self.earliest.get_mut(to) {
                *x = (*x).max(cycle as i64 + e.delay.max(0) as i64);
            }
            if let Some(l) = self.left.get_mut(to) {
                *l = l.saturating_sub(1);
                if *l == 0 {
                    self.make_ready(to);
                }
            }
        }
    }

    /// Ready ops whose earliest cycle has come, best first (at most
    /// [`WINDOW`] of them).
    fn candidates(&self, cycle: usize) -> impl Iterator<Item = usize> + '_ {
        self.ready
            .iter()
            .copied()
            .filter(move |&i| self.earliest.get(i).is_some_and(|&e| e <= cycle as i64) && !self.sfu_blocked(i, cycle))
            .take(WINDOW)
    }
}

/// Schedule the lowered ops of one block into bundles (see the module doc).
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn schedule(
    target: &Target,
    ops: &[LoweredOp],
    g: &DepGraph,
) -> Result<Schedule, CompileError> {
    schedule_in(&mut BundleBuffers::default(), target, ops, g)
}

/// The scheduler's bookkeeping, kept between blocks so that its memory is
/// reused.
#[derive(Default)]
pub struct BundleBuffers {
    st: State,
    own: Vec<u32>,
    open: OpenBundle,
}

impl BundleBuffers {
    /// Schedule the next blocks under `opts`' injected fault (only
    /// `sched-stuck-ready` acts here).
    pub fn inject(&mut self, opts: &Options) {
        self.st.stuck_ready = opts.has(Fault::SchedStuckReady);
    }
}

/// [`schedule`] with its bookkeeping in `bufs`.
pub fn schedule_in(
    bufs: &mut BundleBuffers,
    target: &Target,
    ops: &[LoweredOp],
    g: &DepGraph,
) -> Result<Schedule, CompileError> {
    let BundleBuffers { st, own, open } = bufs;
    own.clear();
    own.extend(ops.iter().map(|o| o.deps.writes.iter().map(|w| w.1).max().unwrap_or(0)));
    st.reset(g, own);
    st.space_sfu(target, ops);
    // Every op sits in one bundle; usually fewer bundles than ops.
    let mut s = Schedule {
        members: Vec::with_capacity(ops.len()),
        ends: Vec::with_capacity(ops.len() + 1),
        cycle_of: Vec::with_capacity(ops.len()),
    };
    let mut placed = 0;
    while placed < ops.len() {
        let cycle = s.len();
        open.members.clear();
        open.slots.clear();
        open.trial.forget();
        placed += open.fill(target, ops, g, st, cycle);
        if open.members.is_empty() && place_alone(open, (target, ops), g, st, cycle)? {
            placed += 1;
        }
        s.push(open.members.iter().copied().zip(open.slots.iter().copied()));
    }
    s.cycle_of.extend(st.cycle_of.iter().map(|c| c.unwrap_or(0)));
    if pads(target.clock) {
        let land = landing_end(ops, &s);
        while s.len() < land {
            s.push([]);
        }
    }
    check_windows(ops, g, &s)?;
    Ok(s)
}

/// Whether this scheduler waits on `clock` with empty bundles (and pads a
/// block until its writes have landed) rather than letting the hardware
/// stall: every clock but [`Clock::Interlocked`].
pub fn pads(clock: Clock) -> bool {
    match clock {
        Clock::Interlocked => false,
        Clock::Padded | Clock::EncodedWaits { .. } => true,
    }
}

/// Fails when a read-after-write edge of `g` puts the reader further from
/// the writer than the writer's read window allows (`OpDesc::window`'s
/// maximum, in cycles from issue). Costs nothing on a block in which no
/// result expires.
pub fn check_windows(ops: &[LoweredOp], g: &DepGraph, s: &Schedule) -> Result<(), CompileError> {
    if ops.iter().all(|o| o.desc.lifetime.is_none()) {
        return Ok(());
    }
    for e in g.edges.iter().filter(|e| e.kind == EdgeKind::Raw) {
        let (Some(w), Some(&from), Some(&to)) = (ops.get(e.from), s.cycle_of.get(e.from), s.cycle_of.get(e.to)) else { continue };
        let distance = to.saturating_sub(from) as u64;
        if w.desc.window().expired(distance) {
            let reader = ops.get(e.to).map_or("?", |o| o.inst.opcode.as_str());
            return Err(CompileError::Unsupported(format!(
                "`{}` reads the result of `{}` {distance} cycles after it issues, past its read window (at most {})",
                reader,
                w.inst.opcode,
                w.desc.lifetime.unwrap_or(0)
            )));
        }
    }
    Ok(())
}

/// [`schedule`] of a block of at most one op, which needs no dependency
/// graph: the op alone in the first bundle, padded until its writes have
/// landed on a non-interlocked target (the same schedule and the same
/// error as [`schedule_in`]); `None` for a longer block.
pub fn schedule_alone(
    bufs: &mut BundleBuffers,
    target: &Target,
    ops: &[LoweredOp],
) -> Option<Result<Schedule, CompileError>> {
    let mut s = Schedule::default();
    match ops {
        [] => return Some(Ok(s)),
        [op] => {
            let t = &mut bufs.open.trial;
            t.forget();
            if verdict(target, ops, &[0], t) != Verdict::Fits {
                return Some(Err(CompileError::Unsupported(format!(
                    "`{}` fits no bundle on its own",
                    op.inst.opcode
                ))));
            }
            s.push(t.slots.first().map(|&slot| (0, slot)));
            s.cycle_of.push(0);
        }
        _ => return None,
    }
    if pads(target.clock) {
        let land = landing_end(ops, &s);
        while s.len() < land {
            s.push([]);
        }
    }
    Some(Ok(s))
}

/// The bundle being filled for one cycle: its members, their slots, and a
/// scratch slot assignment reused across trials.
#[derive(Default)]
struct OpenBundle {
    members: Vec<usize>,
    slots: Vec<&'static str>,
    trial: Trial,
    /// Candidates that failed for good in this cycle.
    failed: Vec<usize>,
}

impl OpenBundle {
    /// Add, one at a time, the first due candidate of `cycle` (best
    /// priority) that fits with the members so far, placing it in `st`,
    /// until none fits; returns how many were added.
    fn fill(
        &mut self,
        target: &Target,
        ops: &[LoweredOp],
        g: &DepGraph,
        st: &mut State,
        cycle: usize,
    ) -> usize {
        let mut added = 0;
        // Candidates that failed for good this cycle: with more members
        // they fail again, so they are not tried again.
        self.failed.clear();
        loop {
            let mut found = None;
            for c in st.candidates(cycle) {
                if self.failed.contains(&c) {
                    continue;
                }
                self.members.push(c);
                match verdict(target, ops, &self.members, &mut self.trial) {
                    Verdict::Fits => {
                        found = Some(c);
                        break;
                    }
                    Verdict::FailsForGood => self.failed.push(c),
                    Verdict::FailsRule => {}
                }
                self.members.pop();
            }
            let Some(c) = found else { return added };
            std::mem::swap(&mut self.slots, &mut self.trial.slots);
            self.trial.commit(self.members.len());
            st.place(g, c, cycle);
            added += 1;
        }
    }
}

/// When no candidate fits the empty bundle `open` at `cycle`: the next
/// ready op (earliest, then best priority, then first) goes alone into
/// `open` with its slot if it is due or the target interlocks (stalls
/// instead of taking a nop); `false` for an empty bundle (a nop cycle).
/// Fails on a dependency cycle (nothing ready) or an op that fits no bundle
/// on its own.
fn place_alone(
    open: &mut OpenBundle,
    (target, ops): (&Target, &[LoweredOp]),
    g: &DepGraph,
    st: &mut State,
    cycle: usize,
) -> Result<bool, CompileError> {
    let next = st.ready.iter().copied().min_by_key(|&i| {
        (
            st.earliest.get(i).copied().unwrap_or(0),
            std::cmp::Reverse(st.prio.get(i).copied().unwrap_or(0)),
            i,
        )
    });
    let Some(next) = next else {
        return Err(CompileError::Unsupported(
            "dependency cycle in a block".into(),
        ));
    };
    let due = st.earliest.get(next).copied().unwrap_or(0) <= cycle as i64 && !st.sfu_blocked(next, cycle);
    if !due && pads(target.clock) {
        return Ok(false);
    }
    if !fits_into(target, ops, &[next], &mut open.trial) {
        return Err(CompileError::Unsupported(format!(
            "`{}` fits no bundle on its own",
            ops.get(next).map_or("?", |o| o.inst.opcode.as_str())
        )));
    }
    std::mem::swap(&mut open.slots, &mut open.trial.slots);
    open.members.push(next);
    st.place(g, next, cycle);
    Ok(true)
}

/// The first cycle at which every write of the schedule has landed.
pub fn landing_end(ops: &[LoweredOp], s: &Schedule) -> usize {
    ops.iter()
        .zip(&s.cycle_of)
        .flat_map(|(o, &c)| o.deps.writes.iter().map(move |w| c + w.1 as usize))
        .max()
        .unwrap_or(0)
}

/// Order `ops` as the target lists its slots (the printed order of a
/// bundle); an op in a slot the target does not name goes last.
pub(crate) fn sort_by_slot(target: &Target, ops: &mut [schedra_ir::Op]) {
    ops.sort_by_key(|o| slot_rank(target, &o.slot));
}

/// Where slot `slot` comes in the target's slot list (`usize::MAX` for a
/// slot the target does not name): the key of [`sort_by_slot`].
pub(crate) fn slot_rank(target: &Target, slot: &str) -> usize {
    target
        .slots
        .iter()
        .position(|s| same_slot(s, slot))
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::lower::lower_block;
    use schedra_ir::target::{gen8::GEN8, r600::R600, v3d71::V3D71};
    use schedra_ir::{Imm, Operand, PhysReg, Span};

    fn reg(r: u16) -> Operand {
        Operand::Phys(PhysReg::one(r))
    }
    fn inst(op: &str, dest: Option<u16>, srcs: Vec<Operand>) -> Inst {
        Inst {
            opcode: op.into(),
            dest: dest.map(reg),
            srcs,
            span: Span::default(),
        }
    }
    fn run(t: &'static Target, insts: &[Inst], opts: &Options) -> (Vec<LoweredOp>, Schedule) {
        let ops = lower_block(t, insts, opts).unwrap();
        let g = build_graph(t, &ops, &[], opts);
        let s = schedule(t, &ops, &g).unwrap();
        (ops, s)
    }

    #[test]
    fn slot_assignment_of_pairs_and_triples_is_the_backtracking_one() {
        let imm = || Operand::Imm(Imm::int(1));
        let cases: [(&'static Target, Vec<Inst>); 2] = [
            (
                &V3D71,
                vec![
                    inst("fadd", Some(4), vec![reg(1), reg(2)]),
                    inst("fmul", Some(5), vec![reg(1), reg(3)]),
                    inst("recip", Some(6), vec![reg(4)]),
                    inst("ldvary", Some(7), vec![imm()]),
                    inst("add", Some(8), vec![reg(1), reg(2)]),
                ],
            ),
            (
                &R600,
                vec![
                    inst("mov", Some(5), vec![reg(4)]),
                    inst("mov", Some(8), vec![reg(4)]),
                    inst("add", Some(9), vec![reg(4), reg(1)]),
                    inst("mov", Some(14), vec![reg(1)]),
                ],
            ),
        ];
        for (t, insts) in cases {
            let ops = lower_block(t, &insts, &Options::default()).unwrap();
            let n = ops.len();
            let mut members = Vec::new();
            for a in 0..n {
                for b in 0..n {
                    for c in 0..=n {
                        members.clear();
                        members.extend([a, b]);
                        members.extend((c < n).then_some(c));
                        let (mut fast, mut slow) = (Vec::new(), Vec::new());
                        let found = assign_slots_into(&ops, &members, &mut fast);
                        assert_eq!(found, first_fit(&ops, &members, 0, &mut slow), "{members:?}");
                        assert!(!found || fast == slow, "{members:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_reader_past_an_expiring_result_s_window_is_an_error() {
        let o = Options::default();
        let expiring = schedra_ir::target::testing::with_lifetime(&V3D71, "v3d71-expiring", "fmul", 1);
        // fmul issues at 0; the fadd waits for the 4-cycle scratch read.
        let late = [
            inst("fmul", Some(5), vec![reg(1), reg(3)]),
            inst("scratchr", Some(6), vec![Operand::Imm(Imm::int(0))]),
            inst("fadd", Some(7), vec![reg(5), reg(6)]),
        ];
        let (_, s) = run(&V3D71, &late, &o);
        assert_eq!(s.cycle_of[2] - s.cycle_of[0], 4, "without a lifetime the read is 4 cycles late and fine");
        let ops = lower_block(expiring, &late, &o).unwrap();
        let g = build_graph(expiring, &ops, &[], &o);
        let err = schedule(expiring, &ops, &g).expect_err("read past the window");
        assert!(err.to_string().contains("past its read window (at most 1)"), "{err}");
        // A reader one cycle later is inside the window.
        let near = [inst("fmul", Some(5), vec![reg(1), reg(3)]), inst("fadd", Some(7), vec![reg(5), reg(1)])];
        let (_, s) = run(expiring, &near, &o);
        assert_eq!(s.cycle_of[1] - s.cycle_of[0], 1);
    }

    #[test]
    fn independent_ops_pair_and_dependent_ones_wait() {
        let o = Options::default();
        let insts = [
            inst("fadd", Some(4), vec![reg(1), reg(2)]),
            inst("fmul", Some(5), vec![reg(1), reg(3)]),
            inst("recip", Some(6), vec![reg(4)]),
            inst("fadd", Some(7), vec![reg(6), reg(5)]),
        ];
        let (_, s) = run(&V3D71, &insts, &o);
        assert_eq!(s.cycle_of[0], s.cycle_of[1]);
        assert_eq!(s.cycle_of[2], s.cycle_of[0] + 1);
        assert_eq!(s.cycle_of[3], s.cycle_of[2] + 2);
        assert_eq!(s.len(), s.cycle_of[3] + 1);
    }

    #[test]
    fn ldvary_copy_waits_two_cycles_and_sfu_fault_shortens() {
        let o = Options::default();
        let insts = [inst("ldvary", Some(4), vec![Operand::Imm(Imm::int(0))])];
        let (_, s) = run(&V3D71, &insts, &o);
        assert_eq!(s.cycle_of, vec![0, 2]);
        let f = Options {
            inject: Some(Fault::V3dLdvarySameCycle),
            ..o
        };
        let (_, s) = run(&V3D71, &insts, &f);
        assert_eq!(s.cycle_of, vec![0, 1]);
    }

    #[test]
    fn war_pair_shares_a_group_on_r600() {
        // R1.y = mov R1.x ; R1.x = mov 1.0: parallel reads allow one group.
        let insts = [
            inst("mov", Some(5), vec![reg(4)]),
            inst("mov", Some(4), vec![Operand::Imm(Imm::f32(1.0))]),
        ];
        let (_, s) = run(&R600, &insts, &Options::default());
        assert_eq!(s.len(), 1);
        assert_eq!(s.bundle(0).len(), 2);
    }

    #[test]
    fn one_immediate_per_v3d_bundle() {
        let insts = [
            inst("add", Some(4), vec![reg(1), Operand::Imm(Imm::int(1))]),
            inst("add", Some(5), vec![reg(1), Operand::Imm(Imm::int(2))]),
        ];
        let (_, s) = run(&V3D71, &insts, &Options::default());
        assert_eq!(s.len(), 2);
        let insts = [
            inst("add", Some(4), vec![reg(1), Operand::Imm(Imm::int(1))]),
            inst("add", Some(5), vec![reg(2), Operand::Imm(Imm::int(1))]),
        ];
        let (_, s) = run(&V3D71, &insts, &Options::default());
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn gen8_issues_one_op_per_bundle_without_nops() {
        let r2 = |b: u16| Operand::Phys(PhysReg { base: b, size: 2 });
        let insts = [
            Inst {
                opcode: "mul".into(),
                dest: Some(r2(10)),
                srcs: vec![r2(2), r2(2)],
                span: Span::default(),
            },
            Inst {
                opcode: "add".into(),
                dest: Some(r2(12)),
                srcs: vec![r2(10), r2(2)],
                span: Span::default(),
            },
            Inst {
                opcode: "mov".into(),
                dest: Some(r2(14)),
                srcs: vec![r2(2)],
                span: Span::default(),
            },
        ];
        let (_, s) = run(&GEN8, &insts, &Options::default());
        assert_eq!(s.len(), 3);
        assert!(s.bundles().all(|b| b.len() == 1));
        assert!(s.cycle_of[0] < s.cycle_of[1]);
        // The independent mov fills the latency gap between mul and add.
        assert_eq!(s.cycle_of[2], 1);
    }

    #[test]
    fn pinned_war_fault_drops_pinned_war_edges_on_r600_only() {
        let insts = [
            inst("mov", Some(8), vec![reg(4)]),
            inst("mov", Some(4), vec![reg(5)]),
        ];
        let f = Options {
            inject: Some(Fault::R600PinnedWar),
            ..Default::default()
        };
        for (t, dropped) in [(&R600, true), (&V3D71, false)] {
            let ops = lower_block(t, &insts, &f).unwrap();
            let war = |pinned: &[Reg]| {
                build_graph(t, &ops, pinned, &f)
                    .edges
                    .iter()
                    .any(|e| e.kind == EdgeKind::War)
            };
            assert!(war(&[9]));
            assert_eq!(war(&[4]), !dropped, "{}", t.name);
        }
    }

    #[test]
    fn ignore_war_fault_lets_a_write_pass_a_read() {
        // rf4 is read late (after a recip chain) and overwritten by a ready op.
        let insts = [
            inst("recip", Some(5), vec![reg(1)]),
            inst("recip", Some(6), vec![reg(5)]),
            inst("fadd", Some(7), vec![reg(6), reg(4)]),
            inst("mov", Some(4), vec![reg(2)]),
        ];
        let (_, s) = run(&V3D71, &insts, &Options::default());
        assert!(s.cycle_of[3] >= s.cycle_of[2]);
        let (_, s) = run(
            &V3D71,
            &insts,
            &Options {
                inject: Some(Fault::SchedIgnoreWar),
                ..Default::default()
            },
        );
        assert!(s.cycle_of[3] < s.cycle_of[2]);
    }
}
