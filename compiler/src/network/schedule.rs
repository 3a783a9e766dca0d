//! The scheduler of a bypass-network target: list scheduling of one block's
//! [`Graph`] into instructions, allocating the network while it schedules
//! (in the spirit of Mesa gpir's integrated scheduler, commit 54434fe).
//!
//! Algorithm, one instruction `j` at a time:
//! 1. ready ALU nodes and complex sequences are placed by priority into the
//!    free units of `j`; each operand is read from the network within its
//!    window, from a load placed in `j` (outside inputs and register loads
//!    are loaded again where they are read), or from the register a value
//!    was spilled to once its store has landed. A complex sequence is placed
//!    whole: a copy of x (or `pre x`) at `j`, `impl` and the second part at
//!    `j + 1`, the join at `j + 2`, the `post` op two later. Enough ALU
//!    units stay free for step 3; an op that finds none beyond them spills
//!    to make room: a value whose window ends at `j` is stored to a free
//!    register component where its copy was made, lands by `j + 1` and
//!    needs no move (undone with the op if the op still does not fit);
//! 2. stores are placed where their value is made in a storable unit, or
//!    after a move of it;
//! 3. every value with unplaced users whose network copy cannot be read at
//!    `j + 1` is moved in `j`, and at its first move also stored to a free
//!    register component, from which later readers load it.
//!
//! Rematerializing (the last attempts of [`schedule_block`]), an ALU op
//! whose sources are all inputs is placed only where one of its readers
//! can follow in the next instruction (or a store of it in the same one),
//! and when its window ends with readers left its network copy is dropped,
//! not moved or spilled: it is placed again for the next reader.
//!
//! The rules of one instruction (shared opcodes, load and store units,
//! sub-slots) are asked of the target ([`Rules::placed_ok`]) for every
//! tentative placement, and undone when refused. At the block's end every
//! register store has landed before the terminator, and a `brnz` reads its
//! condition from the network.
//!
//! Invariant: a placed read is inside its producer's window, never names a
//! forbidden unit, and a register load of a spilled value comes at least
//! `store_load_latency` instructions after its store (a spill to make room
//! is made only where that holds for its first possible load, `j + 1`).
//!
//! [`Rules::placed_ok`]: schedra_ir::target::Rules::placed_ok

mod split;

use super::nodes::{Graph, Kind, Node};
use super::regs::RegPool;
use crate::{CompileError, Fault, Sched};
use schedra_ir::target::network::{Network, ReadWindow, UnitKind};
use schedra_ir::target::{OpDesc, Target};
use schedra_ir::{Block, Body, Bundle, BypassRead, Inst, Op, Operand, PhysReg, Reg, SmolStr, Span, TermKind, Terminator};

/// Where a value can be read in the network.
#[derive(Clone, Copy, Debug)]
struct ReadPoint {
    unit: usize,
    at: usize,
    window: ReadWindow,
    storable: bool,
}

/// A value's register copy.
#[derive(Clone, Copy, Debug)]
struct Spilled {
    /// The component.
    reg: Reg,
    /// The instruction of its register store.
    stored: usize,
    /// The first instruction a register load of it may be in (the store
    /// has landed there).
    ready: usize,
}

/// Counts the statistics need.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Moves inserted.
    pub moves: usize,
    /// Values stored to register components.
    pub spills: usize,
    /// Register loads of spilled values.
    pub fills: usize,
    /// Most values with unplaced users readable in the network at once.
    pub max_live: usize,
    /// Spilled values whose range was split where a preallocated range of
    /// their component began.
    pub splits: usize,
    /// Values made again where they are read instead of being kept.
    pub remats: usize,
}

struct State<'a> {
    t: &'static Target,
    net: &'static Network,
    g: &'a Graph,
    instrs: Vec<Vec<(usize, Inst)>>,
    loc: Vec<Option<ReadPoint>>,
    spill: Vec<Option<Spilled>>,
    placed: Vec<Option<usize>>,
    pending: Vec<usize>,
    pool: &'a mut RegPool,
    counts: Counts,
    inject: Option<Fault>,
    careful: bool,
    /// No node has been placed for `STUCK / 2` instructions in the third
    /// attempt ([`schedule_block`]): a careful schedule starts complex
    /// sequences beside more live values.
    stalled: bool,
    /// Ops whose sources are all inputs are made again for each reader
    /// instead of being moved or spilled ([`State::remat`]).
    remat: bool,
}

fn inst(op: &'static OpDesc, dest: Option<Operand>, srcs: Vec<Operand>) -> Inst {
    Inst { opcode: SmolStr::new_static(op.name), dest, srcs, span: Span::default() }
}

fn read(unit: &'static str, dist: usize) -> Operand {
    Operand::Bypass(BypassRead { unit: SmolStr::new_static(unit), dist: dist.min(255) as u8 })
}

impl State<'_> {
    fn unit_name(&self, u: usize) -> &'static str {
        self.net.units.get(u).map_or("", |x| x.name)
    }
    fn unit_index(&self, name: &str) -> Option<usize> {
        self.net.units.iter().position(|u| u.name == name)
    }
    fn node(&self, n: usize) -> Option<&Node> {
        self.g.nodes.get(n)
    }
    fn instr(&mut self, j: usize) -> &mut Vec<(usize, Inst)> {
        while self.instrs.len() <= j {
            self.instrs.push(Vec::new());
        }
        // cannot fail: the loop made index j.
        let len = self.instrs.len();
        &mut self.instrs[j.min(len - 1)]
    }
    fn used(&self, j: usize, u: usize) -> bool {
        self.instrs.get(j).is_some_and(|i| i.iter().any(|(x, _)| *x == u))
    }
    /// Whether instruction `j` as it stands obeys the target's rules.
    fn ok(&self, j: usize) -> bool {
        let Some(ops) = self.instrs.get(j) else { return true };
        let mut with: Vec<(&OpDesc, &Inst, &str)> = Vec::with_capacity(ops.len());
        for (u, i) in ops {
            let Some(d) = self.t.op(&i.opcode) else { return false };
            with.push((d, i, self.unit_name(*u)));
        }
        self.t.rules.placed_ok(&with).is_ok()
    }
    /// Try to add `i` in unit `u` of instruction `j`.
    fn try_put(&mut self, j: usize, u: usize, i: Inst) -> bool {
        if self.used(j, u) {
            return false;
        }
        self.instr(j).push((u, i));
        if self.ok(j) {
            return true;
        }
        self.instr(j).pop();
        false
    }
    fn free_alu(&self, j: usize) -> usize {
        self.net.units.iter().enumerate().filter(|(u, x)| x.kind == UnitKind::Alu && !self.used(j, *u)).count()
    }

    /// A load of input node `n` readable at `j`, placed in `j` when no
    /// load already there (or in `j - 1`, within its window) gives it.
    fn load(&mut self, j: usize, n: usize, reg: Option<Reg>) -> Option<Operand> {
        let node = self.node(n)?;
        let op = match reg {
            Some(_) => self.t.op(self.net.ld_reg)?,
            None => node.op,
        };
        let want = match reg.or(node.reg) {
            Some(r) => inst(op, None, vec![Operand::Phys(PhysReg::one(r))]),
            None => inst(op, None, vec![Operand::Imm(schedra_ir::Imm::int(i64::from(node.index)))]),
        };
        for d in 0..=1usize {
            let Some(k) = j.checked_sub(d) else { break };
            let hit = self.instrs.get(k).and_then(|ops| ops.iter().find(|(_, i)| i.opcode == want.opcode && i.srcs == want.srcs).map(|(u, _)| *u));
            if let Some(u) = hit {
                let unit = self.net.units.get(u)?;
                if self.net.window(unit, op.name).contains(d as u32) {
                    return Some(read(unit.name, d));
                }
            }
        }
        for s in op.slots {
            let u = self.unit_index(s)?;
            if self.try_put(j, u, want.clone()) {
                return Some(read(self.unit_name(u), 0));
            }
        }
        None
    }

    /// A read of value `v` at instruction `j` by operand `k` of `op` in
    /// unit `u`, placing a load if needed.
    fn operand(&mut self, j: usize, v: usize, op: &str, u: usize, k: usize) -> Option<Operand> {
        let node = self.node(v)?;
        // A network copy of an input exists only where its load could not
        // share an instruction with its reader's other loads: read it.
        if let Some(l) = self.loc.get(v).copied().flatten() {
            let from = self.unit_name(l.unit);
            // Fault lima-complex-second-source: the rule of the add and mul
            // units' second source (any op there, `op: None`) is forgotten.
            let forbidden = self.net.forbidden(op, self.unit_name(u), k, from).filter(|f| !(self.inject == Some(Fault::LimaComplexSecondSource) && f.op.is_none()));
            if j >= l.at && l.window.contains((j - l.at) as u32) && forbidden.is_none() {
                return Some(read(from, j - l.at));
            }
        }
        if node.kind == Kind::Input {
            if let Some(o) = self.load(j, v, None) {
                return Some(o);
            }
        }
        if let Some(sp) = self.spill.get(v).copied().flatten() {
            if j >= sp.ready {
                let o = self.load(j, v, Some(sp.reg));
                if o.is_some() {
                    self.counts.fills += 1;
                }
                return o;
            }
        }
        None
    }

    /// Undo instruction `j` back to `len` ops.
    fn truncate(&mut self, j: usize, len: usize) {
        if let Some(i) = self.instrs.get_mut(j) {
            i.truncate(len);
        }
    }

    /// Place `op` reading `srcs` in some unit of `units` at `j`; the unit.
    fn place_op(&mut self, j: usize, op: &'static OpDesc, srcs: &[usize], units: &[&'static str]) -> Option<usize> {
        for s in units {
            let Some(u) = self.unit_index(s) else { continue };
            if self.used(j, u) {
                continue;
            }
            let mark = self.instr(j).len();
            let mut reads = Vec::with_capacity(srcs.len());
            for (k, v) in srcs.iter().enumerate() {
                match self.operand(j, *v, op.name, u, k) {
                    Some(o) => reads.push(o),
                    None => break,
                }
            }
            if reads.len() == srcs.len() && self.try_put(j, u, inst(op, None, reads)) {
                return Some(u);
            }
            self.truncate(j, mark);
        }
        None
    }

    fn set_loc(&mut self, v: usize, u: usize, at: usize, op: &str) {
        let Some(unit) = self.net.units.get(u) else { return };
        let l = ReadPoint { unit: u, at, window: self.net.window(unit, op), storable: self.net.storable(unit, op) };
        if let Some(x) = self.loc.get_mut(v) {
            *x = Some(l);
        }
    }

    fn used_by(&mut self, n: usize) {
        let srcs = self.node(n).map(|x| x.srcs.clone()).unwrap_or_default();
        for s in srcs {
            if let Some(p) = self.pending.get_mut(s) {
                *p = p.saturating_sub(1);
            }
        }
    }

    fn mark(&mut self, n: usize, j: usize) {
        if let Some(p) = self.placed.get_mut(n) {
            *p = Some(j);
        }
        self.used_by(n);
    }

    /// Whether `n`'s ordering constraints allow it at `j`.
    fn deps_ok(&self, n: usize, j: usize) -> bool {
        let Some(node) = self.node(n) else { return false };
        let at = |x: &usize| self.placed.get(*x).copied().flatten();
        node.after.iter().all(|x| at(x).is_some_and(|p| p < j)) && node.not_before.iter().all(|x| at(x).is_some_and(|p| p <= j))
    }

    fn srcs_ready(&self, n: usize, j: usize) -> bool {
        let Some(node) = self.node(n) else { return false };
        node.srcs.iter().all(|s| self.srcs_ready_one(*s, j))
    }

    /// Whether source `s` can be read by a node placed at `j`.
    fn srcs_ready_one(&self, s: usize, j: usize) -> bool {
        match self.node(s).map(|x| x.kind) {
            Some(Kind::Input) => true,
            _ => self.loc.get(s).copied().flatten().is_some_and(|l| l.at < j) || self.spill.get(s).copied().flatten().is_some(),
        }
    }

    /// Place a complex sequence node `n` starting at `a`.
    fn place_complex(&mut self, a: usize, n: usize) -> bool {
        let Some(node) = self.node(n) else { return false };
        let Kind::Complex(seq) = node.kind else { return false };
        let Some(&x) = node.srcs.first() else { return false };
        let t = self.t;
        let ops = (seq.pre.map_or(t.op(self.net.mov), |p| t.op(p)), t.op(seq.imp), t.op(seq.second), t.op(seq.join), seq.post.map(|p| t.op(p)));
        let (Some(first), Some(imp), Some(second), Some(join)) = (ops.0, ops.1, ops.2, ops.3) else { return false };
        let post = match ops.4 {
            Some(None) => return false,
            Some(Some(p)) => Some(p),
            None => None,
        };
        let marks: Vec<usize> = (a..a + 7).map(|j| self.instrs.get(j).map_or(0, Vec::len)).collect();
        let undo = |s: &mut Self| {
            for (k, m) in marks.iter().enumerate() {
                s.truncate(a + k, *m);
            }
        };
        // The copy of x must be readable one and two instructions later.
        let units: Vec<&'static str> = first.slots.iter().copied().filter(|s| self.net.unit(s).is_some_and(|u| u.window.contains(1) && u.window.contains(2))).collect();
        let Some(cu) = self.place_op(a, first, &[x], &units) else {
            undo(self);
            return false;
        };
        let mut copy = self.unit_name(cu);
        let mut ok = true;
        // Fault lima-schedule-first-move: the `pre` result is moved before
        // the sequence reads it, one instruction later.
        let first_at = a;
        let mut a = a;
        if self.inject == Some(Fault::LimaScheduleFirstMove) && seq.pre.is_some() {
            let mov = t.op(self.net.mov);
            let units: Vec<&'static str> = mov.map(|m| m.slots.iter().copied().filter(|s| *s != copy && self.net.unit(s).is_some_and(|u| u.window.contains(2)) && !imp.slots.contains(s) && !second.slots.contains(s) && !join.slots.contains(s)).collect()).unwrap_or_default();
            let idx: Vec<usize> = units.iter().filter_map(|s| self.unit_index(s)).collect();
            let mut mu = None;
            for u in idx {
                if let Some(m) = mov {
                    if self.try_put(a + 1, u, inst(m, None, vec![read(copy, 1)])) {
                        mu = Some(u);
                        break;
                    }
                }
            }
            match mu {
                Some(u) => {
                    copy = self.unit_name(u);
                    a += 1;
                }
                None => ok = false,
            }
        }
        let (iu, su, ju) = (imp.slots.first().and_then(|s| self.unit_index(s)), second.slots.first().and_then(|s| self.unit_index(s)), join.slots.first().and_then(|s| self.unit_index(s)));
        let (Some(iu), Some(su), Some(ju)) = (iu, su, ju) else {
            undo(self);
            return false;
        };
        ok &= self.try_put(a + 1, iu, inst(imp, None, vec![read(copy, 1)]));
        ok &= ok && self.try_put(a + 1, su, inst(second, None, vec![read(copy, 1)]));
        let (iname, sname) = (self.unit_name(iu), self.unit_name(su));
        ok &= ok && self.try_put(a + 2, ju, inst(join, None, vec![read(iname, 1), read(sname, 1), read(copy, 2)]));
        let jname = self.unit_name(ju);
        let mut result = (ju, a + 2, join.name);
        if let (true, Some(post)) = (ok, post) {
            let pu = post.slots.first().and_then(|s| self.unit_index(s));
            // Fault lima-postlog2-move: a move stands between the join and
            // the post op.
            let (from, at) = match self.inject {
                Some(Fault::LimaPostlog2Move) => match self.t.op(self.net.mov) {
                    Some(m) if pu.is_some_and(|p| self.try_put(a + 4, p, inst(m, None, vec![read(jname, 2)]))) => (self.unit_name(pu.unwrap_or(0)), a + 5),
                    _ => ("", 0),
                },
                _ => (jname, a + 4),
            };
            let dist = if at == a + 5 { 1 } else { 2 };
            match pu {
                Some(pu) if at > 0 && self.try_put(at, pu, inst(post, None, vec![read(from, dist)])) => result = (pu, at, post.name),
                _ => ok = false,
            }
        }
        if !ok {
            undo(self);
            return false;
        }
        self.set_loc(n, result.0, result.1, result.2);
        self.mark(n, first_at);
        true
    }

    /// A move of `v` at `j` (preferring units whose window is longest);
    /// the unit, with `v`'s network copy updated.
    fn mov(&mut self, j: usize, v: usize) -> Option<usize> {
        let mov = self.t.op(self.net.mov)?;
        let mut units: Vec<&'static str> = mov.slots.to_vec();
        // Longest window first; among those, the unit the block's unplaced
        // ops need least.
        let mut demand = vec![0usize; units.len()];
        for (i, x) in self.g.nodes.iter().enumerate() {
            if x.kind == Kind::Alu && self.placed.get(i).copied().flatten().is_none() {
                for (d, unit) in demand.iter_mut().zip(&units) {
                    *d += usize::from(x.op.slots.contains(unit));
                }
            }
        }
        let mut keyed: Vec<(std::cmp::Reverse<u32>, usize, &'static str)> = units.iter().zip(&demand).map(|(s, d)| (std::cmp::Reverse(self.net.unit(s).map_or(0, |u| u.window.max)), *d, *s)).collect();
        // A stable sort on (window, demand), as before: ties keep the
        // table's order.
        keyed.sort_by_key(|k| (k.0, k.1));
        units = keyed.into_iter().map(|k| k.2).collect();
        if self.careful {
            units.retain(|s| self.net.unit(s).is_some_and(|u| u.window.max >= 2));
        }
        let u = self.place_op(j, mov, &[v], &units)?;
        self.set_loc(v, u, j, mov.name);
        self.counts.moves += 1;
        Some(u)
    }

    /// Place store node `n` at `j` storing the value of node `v` (its
    /// source), if `v` can be stored there.
    fn place_store_of(&mut self, j: usize, n: usize, v: usize, may_move: bool) -> bool {
        let Some(node) = self.node(n) else { return false };
        let (op, index, reg) = (node.op, node.index, node.reg);
        let fresh = self.loc.get(v).copied().flatten().filter(|l| l.at == j && l.storable && self.node(v).is_some_and(|x| x.kind != Kind::Input));
        let mark = self.instr(j).len();
        let before = self.loc.get(v).copied().flatten();
        let unit = match fresh {
            Some(l) => l.unit,
            None if may_move => match self.mov(j, v) {
                Some(u) => u,
                None => return false,
            },
            None => return false,
        };
        let value = read(self.unit_name(unit), 0);
        let (dest, srcs) = match reg {
            Some(r) => (Some(Operand::Phys(PhysReg::one(r))), vec![value]),
            None => (None, vec![Operand::Imm(schedra_ir::Imm::int(i64::from(index))), value]),
        };
        for s in op.slots {
            let Some(u) = self.unit_index(s) else { continue };
            if self.try_put(j, u, inst(op, dest.clone(), srcs.clone())) {
                self.mark(n, j);
                return true;
            }
        }
        if fresh.is_none() {
            // The move is undone with the store: its copy never existed.
            self.counts.moves = self.counts.moves.saturating_sub(1);
            if let Some(l) = self.loc.get_mut(v) {
                *l = before;
            }
        }
        self.truncate(j, mark);
        false
    }

    /// Store value `v` (made at `j` in a storable unit) to a free register.
    fn spill(&mut self, j: usize, v: usize) {
        let Some(st) = self.t.op(self.net.st_reg) else { return };
        let Some(l) = self.loc.get(v).copied().flatten().filter(|l| l.at == j && l.storable) else { return };
        let value = read(self.unit_name(l.unit), 0);
        let (pending, placed) = (&self.pending, &self.placed);
        let candidates = self.pool.candidates(|n| pending.get(n).is_some_and(|p| *p > 0), |n| placed.get(n).copied().flatten().is_some());
        for r in candidates {
            let comp = usize::from(r % 4);
            let slot = st.slots.iter().filter_map(|s| self.unit_index(s)).find(|u| self.net.units.get(*u).is_some_and(|x| usize::from(x.component) == comp));
            let Some(u) = slot else { continue };
            if self.try_put(j, u, inst(st, Some(Operand::Phys(PhysReg::one(r))), vec![value.clone()])) {
                self.pool.take(r, v);
                if let Some(s) = self.spill.get_mut(v) {
                    *s = Some(Spilled { reg: r, stored: j, ready: j + self.net.store_load_latency as usize });
                }
                self.counts.spills += 1;
                return;
            }
        }
    }

    /// Spill to make room at `j`: store a value of the network (in node
    /// order) to a free register component in the instruction that made
    /// its network copy, and end that copy at `j`, so that it needs no
    /// move: its readers load it from `j + 1` on, so the store must land by
    /// then (`store_load_latency` instructions after it), which only a copy
    /// whose window ends at `j` allows. `placed_here`: another node was
    /// already placed speculatively at `j`. The value stored, if any.
    fn spill_for_room(&mut self, j: usize, placed_here: bool) -> Option<usize> {
        let st = self.t.op(self.net.st_reg)?;
        let lat = self.net.store_load_latency as usize;
        for v in 0..self.g.nodes.len() {
            let Some(l) = self.loc.get(v).copied().flatten() else { continue };
            let free = self.pending.get(v).copied().unwrap_or(0) > 0 && self.spill.get(v).copied().flatten().is_none() && self.node(v).is_some_and(|x| x.kind != Kind::Input);
            let live = l.at <= j && l.at + l.window.max as usize >= j;
            // Fault lima-spill-speculative: after a node was placed
            // speculatively at `j`, a value is spilled even where its store
            // lands after `j + 1`.
            let in_time = l.at + lat <= j + 1 || (self.inject == Some(Fault::LimaSpillSpeculative) && placed_here);
            if !free || !live || !l.storable || !in_time {
                continue;
            }
            let value = read(self.unit_name(l.unit), 0);
            let (pending, placed) = (&self.pending, &self.placed);
            let candidates = self.pool.candidates(|n| pending.get(n).is_some_and(|p| *p > 0), |n| placed.get(n).copied().flatten().is_some());
            for r in candidates {
                // A later store to the component would land over this one,
                // and a load placed while it is in flight would read it
                // too early.
                if (l.at..=j).any(|k| self.names(k, r)) {
                    continue;
                }
                let comp = usize::from(r % 4);
                let slot = st.slots.iter().filter_map(|s| self.unit_index(s)).find(|u| self.net.units.get(*u).is_some_and(|x| usize::from(x.component) == comp));
                let Some(u) = slot else { continue };
                if self.try_put(l.at, u, inst(st, Some(Operand::Phys(PhysReg::one(r))), vec![value.clone()])) {
                    self.pool.take(r, v);
                    if let Some(s) = self.spill.get_mut(v) {
                        *s = Some(Spilled { reg: r, stored: l.at, ready: j + 1 });
                    }
                    if let Some(Some(x)) = self.loc.get_mut(v) {
                        x.window.max = (j - l.at) as u32;
                    }
                    self.counts.spills += 1;
                    return Some(v);
                }
            }
        }
        None
    }

    /// Whether instruction `k` loads or stores component `r`.
    fn names(&self, k: usize, r: Reg) -> bool {
        let is_r = |o: &Operand| matches!(o, Operand::Phys(p) if p.regs().any(|x| x == r));
        self.instrs.get(k).is_some_and(|ops| ops.iter().any(|(_, i)| i.dest.iter().chain(i.srcs.iter()).any(is_r)))
    }

    /// Values whose network copy is last readable at `j` and that still
    /// have unplaced users and no landed register copy by `j + 1`.
    fn expiring(&self, j: usize) -> Vec<usize> {
        (0..self.g.nodes.len())
            .filter(|&v| {
                let pending = self.pending.get(v).copied().unwrap_or(0) > 0 && self.node(v).is_some_and(|x| x.kind != Kind::Input) && !self.remat(v);
                let Some(l) = self.loc.get(v).copied().flatten() else { return false };
                // The branch condition too leaves the network once its
                // register copy has landed: the block's end loads it back.
                let landed = self.spill.get(v).copied().flatten().is_some_and(|sp| j + 1 >= sp.ready);
                pending && !landed && j >= l.at && l.window.contains((j - l.at) as u32) && !l.window.contains((j + 1 - l.at) as u32)
            })
            .collect()
    }

    /// The inputs among `srcs` whose loads cannot share one instruction
    /// with the others': each load unit takes one vector index and one kind
    /// per instruction, so inputs are given units in turn (those only one
    /// unit loads first), sharing a unit that already loads their kind and
    /// vector; an input left without a unit conflicts.
    fn load_conflicts(&self, srcs: &[usize]) -> Vec<usize> {
        let mut inputs: Vec<(usize, Vec<&str>)> = Vec::new();
        for &v in srcs {
            let Some(n) = self.node(v).filter(|x| x.kind == Kind::Input) else { continue };
            let mut groups: Vec<&str> = n.op.slots.iter().filter_map(|s| self.net.unit(s)).map(|u| u.group).collect();
            groups.dedup();
            if !groups.is_empty() {
                inputs.push((v, groups));
            }
        }
        inputs.sort_by_key(|(_, g)| g.len());
        let mut out = Vec::new();
        let mut held: Vec<(&str, &str, u32)> = Vec::new();
        for (v, groups) in inputs {
            let Some(n) = self.node(v) else { continue };
            let vector = n.reg.map_or(n.index / 4, |r| u32::from(r) / 4);
            let consts = n.op.sem == schedra_ir::target::Sem::Const;
            let shares = |(g, o, q): &(&str, &str, u32)| groups.contains(g) && *o == n.op.name && (*q == vector || consts);
            if held.iter().any(shares) {
                continue;
            }
            match groups.iter().find(|g| !held.iter().any(|(h, _, _)| h == *g)) {
                Some(g) => held.push((g, n.op.name, vector)),
                None => out.push(v),
            }
        }
        out
    }

    /// The state a tentative placement from instruction `from` on may
    /// change (placements never touch earlier instructions).
    fn snapshot(&self, from: usize) -> Snapshot {
        let tail = self.instrs.get(from..).map(<[_]>::to_vec).unwrap_or_default();
        Snapshot { from, tail, len: self.instrs.len(), loc: self.loc.clone(), spill: self.spill.clone(), placed: self.placed.clone(), pending: self.pending.clone(), counts: self.counts }
    }
    fn restore(&mut self, s: Snapshot) {
        self.instrs.truncate(s.from.min(s.len));
        self.instrs.extend(s.tail);
        self.loc = s.loc;
        self.spill = s.spill;
        self.placed = s.placed;
        self.pending = s.pending;
        self.counts = s.counts;
    }
    /// Whether a move of every value in `forced` still fits in `j`
    /// (tried, then undone).
    fn moves_fit(&mut self, j: usize, forced: &[usize]) -> bool {
        let snap = self.snapshot(j);
        let ok = forced.iter().all(|&v| self.pending.get(v).copied().unwrap_or(0) == 0 || self.mov(j, v).is_some());
        self.restore(snap);
        ok
    }

    /// How many load units can load registers (each one vector per
    /// instruction).
    fn register_load_units(&self) -> usize {
        let Some(ld) = self.t.op(self.net.ld_reg) else { return 0 };
        let mut groups: Vec<&str> = ld.slots.iter().filter_map(|s| self.net.unit(s)).map(|u| u.group).collect();
        groups.sort();
        groups.dedup();
        groups.len()
    }

    /// How many register load units stay free for register vectors where
    /// `srcs` are read at `j`: the inputs among `srcs` without a network
    /// copy readable there are loaded again, and each distinct load of
    /// theirs that only register load units make takes one of them.
    fn register_load_units_left(&self, srcs: &[usize], j: usize) -> usize {
        let Some(ld) = self.t.op(self.net.ld_reg) else { return 0 };
        let reg_groups: Vec<&str> = ld.slots.iter().filter_map(|s| self.net.unit(s)).map(|u| u.group).collect();
        let mut taken: Vec<(&str, u32)> = Vec::new();
        for &v in srcs {
            let Some(n) = self.node(v).filter(|x| x.kind == Kind::Input) else { continue };
            let readable = self.loc.get(v).copied().flatten().is_some_and(|l| j >= l.at && l.window.contains((j - l.at) as u32));
            let only_reg = !n.op.slots.is_empty() && n.op.slots.iter().filter_map(|s| self.net.unit(s)).all(|u| reg_groups.contains(&u.group));
            let key = (n.op.name, n.reg.map_or(n.index / 4, |r| u32::from(r) / 4));
            if !readable && only_reg && !taken.contains(&key) {
                taken.push(key);
            }
        }
        self.register_load_units().saturating_sub(taken.len())
    }

    /// Whether no register component is free to spill to.
    fn pool_full(&self) -> bool {
        let (pending, placed) = (&self.pending, &self.placed);
        self.pool.candidates(|n| pending.get(n).is_some_and(|p| *p > 0), |n| placed.get(n).copied().flatten().is_some()).is_empty()
    }

    /// Whether value `v` lives only in the network at `j`: it has unplaced
    /// readers, no register copy, and a network copy from `j` on.
    fn held(&self, v: usize, j: usize) -> bool {
        self.pending.get(v).copied().unwrap_or(0) > 0
            && self.spill.get(v).copied().flatten().is_none()
            && self.node(v).is_some_and(|x| x.kind != Kind::Input)
            && self.loc.get(v).copied().flatten().is_some_and(|l| l.at + l.window.max as usize >= j)
    }

    /// The most values the network can keep by moves alone and still leave
    /// a unit free in every other instruction: a value moved into a unit
    /// whose window is `w` takes that unit one instruction in `w`, so the
    /// units able to keep one (window at least 2) keep the sum of their
    /// windows with no unit free; one unit's worth fewer leaves room.
    fn held_capacity(&self) -> usize {
        let Some(mov) = self.t.op(self.net.mov) else { return 0 };
        let windows: Vec<usize> = mov.slots.iter().filter_map(|s| self.net.unit(s)).map(|u| u.window.max as usize).filter(|w| *w >= 2).collect();
        windows.iter().sum::<usize>().saturating_sub(windows.iter().copied().max().unwrap_or(0))
    }

    /// Whether node `n` should wait at `j` for a store that frees the
    /// network: `n` makes a value with readers and is not the last reader
    /// of a held value, the values held only in the network fill its
    /// capacity, no register component is free, and a store could take
    /// the unit instead (a store whose order allows it at `j` and whose
    /// value is made).
    fn overfills(&self, n: usize, j: usize) -> bool {
        let Some(node) = self.node(n) else { return false };
        let makes = !node.users.is_empty() || self.g.cond == Some(n);
        let frees = node.srcs.iter().any(|&v| self.held(v, j) && self.pending.get(v).copied().unwrap_or(0) == node.srcs.iter().filter(|x| **x == v).count());
        if !makes || frees {
            return false;
        }
        let held = (0..self.g.nodes.len()).filter(|&v| self.held(v, j)).count();
        let store_waits = || (0..self.g.nodes.len()).any(|x| self.node(x).is_some_and(|y| y.kind == Kind::Store) && self.placed.get(x).copied().flatten().is_none() && self.deps_ok(x, j) && self.srcs_ready(x, j));
        held >= self.held_capacity() && self.pool_full() && store_waits()
    }

    /// How many of the values live in the network at `j` node `n` reads
    /// last (they leave the network with it).
    fn consumed_by(&self, n: usize, j: usize) -> usize {
        let Some(node) = self.node(n) else { return 0 };
        let mut srcs = node.srcs.clone();
        srcs.sort_unstable();
        srcs.dedup();
        srcs.iter()
            .filter(|&&v| {
                let reads = node.srcs.iter().filter(|x| **x == v).count();
                self.pending.get(v).copied().unwrap_or(0) == reads && self.loc.get(v).copied().flatten().is_some_and(|l| j > l.at && l.window.contains((j - l.at) as u32))
            })
            .count()
    }

    /// Whether `v` is made again for each reader: rematerialization is on
    /// and `v` is an ALU op whose sources are all inputs (loaded wherever
    /// they are read), so making it costs a unit and holds nothing. The
    /// branch condition is kept: the block's end reads it.
    fn remat(&self, v: usize) -> bool {
        self.remat && self.g.cond != Some(v) && self.node(v).is_some_and(|x| x.kind == Kind::Alu && x.srcs.iter().all(|&s| self.node(s).is_some_and(|y| y.kind == Kind::Input)))
    }

    /// Whether a rematerialized `v` is wanted at `j`: a reader of it could
    /// be placed in `j + 1` once `v` is (its ordering allows it and every
    /// other source is ready or is made again too), or a store of it in `j`.
    fn wanted(&self, v: usize, j: usize) -> bool {
        let Some(node) = self.node(v) else { return false };
        node.users.iter().any(|&u| {
            let Some(user) = self.node(u) else { return false };
            if self.placed.get(u).copied().flatten().is_some() {
                return false;
            }
            if user.kind == Kind::Store {
                return self.deps_ok(u, j);
            }
            let others = user.srcs.iter().all(|&x| x == v || self.remat(x) || self.srcs_ready_one(x, j + 1));
            self.deps_ok(u, j + 1) && others
        })
    }

    /// Drop the network copies of rematerialized values whose window ends
    /// at `j` while readers remain: they are made again where needed.
    fn drop_remats(&mut self, j: usize) {
        for v in 0..self.g.nodes.len() {
            let Some(l) = self.loc.get(v).copied().flatten() else { continue };
            let pending = self.pending.get(v).copied().unwrap_or(0) > 0;
            if pending && self.remat(v) && j >= l.at && !l.window.contains((j + 1 - l.at) as u32) {
                if let (Some(l), Some(p)) = (self.loc.get_mut(v), self.placed.get_mut(v)) {
                    (*l, *p) = (None, None);
                }
                self.counts.remats += 1;
            }
        }
    }

    fn live(&self, j: usize) -> usize {
        (0..self.g.nodes.len())
            .filter(|&v| {
                self.pending.get(v).copied().unwrap_or(0) > 0 && self.loc.get(v).copied().flatten().is_some_and(|l| j > l.at && l.window.contains((j - l.at) as u32))
            })
            .count()
    }
}

/// The state a tentative placement may change, to undo it.
struct Snapshot {
    /// The first instruction saved, the saved instructions from there on,
    /// and how many instructions there were.
    from: usize,
    tail: Vec<Vec<(usize, Inst)>>,
    len: usize,
    loc: Vec<Option<ReadPoint>>,
    spill: Vec<Option<Spilled>>,
    placed: Vec<Option<usize>>,
    pending: Vec<usize>,
    counts: Counts,
}

/// Most values live in the network where a careful schedule starts a
/// complex sequence, besides those the sequence reads last (one value may
/// wait there for a sequence's result).
const CAREFUL_LIVE: usize = 1;

/// How many of the depth-first order's unplaced nodes, from its front, are
/// offered each instruction ([`Priority::DepthFirst`]).
const DEPTH_FIRST_WINDOW: usize = 8;

/// Instructions without a placed node after which a block's schedule is
/// given up (moves alone never place a node).
const STUCK: usize = 64;

/// Scheduling options of one block.
pub struct BlockJob<'a> {
    /// The target.
    pub t: &'static Target,
    /// Its network.
    pub net: &'static Network,
    /// The block's graph.
    pub g: &'a Graph,
    /// The source block (label and terminator).
    pub block: &'a Block,
    /// Priority order.
    pub sched: Sched,
    /// The injected fault, if any.
    pub inject: Option<Fault>,
}

/// Schedule one block; its machine block and counts.
///
/// A first attempt packs freely; when it runs out of units for the moves
/// that keep values alive, the block is scheduled again in a careful mode
/// (complex sequences start only with at most `CAREFUL_LIVE` values in the network, no moves into a
/// unit whose window is shorter than two), which always leaves a move a
/// unit. When that one stalls too, a third attempt is careful but, once
/// no node has been placed for `STUCK / 2` instructions, starts complex
/// sequences beside more live values: every register component may hold a
/// value waiting for a store that comes after the sequence's result in its
/// channel's order, while values only the network holds wait for stores
/// further down, so the careful test alone never lets the sequence start.
/// When all three fail, the three are tried again in the other mode's
/// priority (source order under `--sched topdown`, height under
/// `--sched bottomup`): the height priority computes values long before
/// the stores that consume them, and under pressure beyond the register
/// file and the network those values fill both, while source order keeps
/// the live values of the source, which may be too many. When those
/// fail too, the three are tried in a depth-first order from the block's
/// consumers ([`depth_first`]), which makes each value just before the op
/// that needs it: under pressure where the source itself keeps most of
/// the register file live, it is the order that leaves the network and
/// the registers room. When those fail as well, the depth-first three are
/// tried once more rematerializing ([`State::remat`]): an ALU op whose
/// sources are all inputs is not kept at all but made again, one
/// instruction before each reader that needs it, so it holds neither a
/// register component nor a place in the network. The careful attempt's
/// error (of the priority asked for) stands when all fail.
pub fn schedule_block(job: BlockJob<'_>, pool: &mut RegPool) -> Result<(Block, Counts), CompileError> {
    let orders = match job.sched {
        Sched::TopDown => [(Priority::Height, false), (Priority::Source, false), (Priority::DepthFirst, false), (Priority::DepthFirst, true)],
        Sched::BottomUp => [(Priority::Source, false), (Priority::Height, false), (Priority::DepthFirst, false), (Priority::DepthFirst, true)],
    };
    let mut first_error = None;
    for (prio, remat) in orders {
        for (careful, unstall) in [(false, false), (true, false), (true, true)] {
            match schedule_once(&job, pool, prio, remat, careful, unstall) {
                Err(e @ CompileError::Allocation(_)) => {
                    if careful && !unstall && first_error.is_none() {
                        first_error = Some(e);
                    }
                }
                r => return r,
            }
        }
    }
    Err(first_error.unwrap_or_else(|| CompileError::Allocation(format!("block {}: no schedule found", job.block.label))))
}

/// The order in which ready nodes are offered an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Priority {
    /// Longest path to the block's end first (`--sched topdown`).
    Height,
    /// Source order (`--sched bottomup`).
    Source,
    /// A depth-first walk from the block's consumers ([`depth_first`]),
    /// only its first [`DEPTH_FIRST_WINDOW`] unplaced nodes offered at a
    /// time.
    DepthFirst,
}

/// The nodes in the order of a depth-first walk from the block's consumers
/// (the nodes nothing reads: stores, outputs, the branch condition, in
/// source order), each node after its operands and the nodes it must
/// follow: every value is made just before the first consumer that needs
/// it, so few values wait at once (Sethi and Ullman's order on trees).
/// Input nodes are left out ([`schedra_ir::cfg::postorder`] over the
/// nodes each must follow).
fn depth_first(g: &Graph) -> Vec<usize> {
    let n = g.nodes.len();
    let mut roots: Vec<usize> = (0..n).filter(|&i| g.nodes[i].users.is_empty() || g.cond == Some(i)).collect();
    roots.sort_by_key(|&i| (g.nodes[i].order, i));
    roots.extend(0..n);
    let before: Vec<Vec<usize>> = g.nodes.iter().map(|x| x.srcs.iter().chain(&x.after).chain(&x.not_before).copied().collect()).collect();
    let mut out = schedra_ir::cfg::postorder(n, roots, |v| before[v].as_slice());
    out.retain(|&i| g.nodes[i].kind != Kind::Input);
    out
}

fn schedule_once(job: &BlockJob<'_>, pool: &mut RegPool, prio: Priority, remat: bool, careful: bool, unstall: bool) -> Result<(Block, Counts), CompileError> {
    let g = job.g;
    let n = g.nodes.len();
    let mut pending: Vec<usize> = g.nodes.iter().map(|x| x.users.len()).collect();
    if let Some(c) = g.cond {
        if let Some(p) = pending.get_mut(c) {
            *p += 1;
        }
    }
    pool.start_block();
    let mut s = State { t: job.t, net: job.net, g, instrs: Vec::new(), loc: vec![None; n], spill: vec![None; n], placed: vec![None; n], pending, pool, counts: Counts::default(), inject: job.inject, careful, stalled: false, remat };
    let heights = g.heights();
    let mut order: Vec<usize> = (0..n).filter(|&i| g.nodes.get(i).is_some_and(|x| x.kind != Kind::Input)).collect();
    match prio {
        Priority::Height => order.sort_by_key(|&i| (std::cmp::Reverse(heights.get(i).copied().unwrap_or(0)), g.nodes.get(i).map_or(0, |x| x.order), i)),
        Priority::Source => order.sort_by_key(|&i| (g.nodes.get(i).map_or(0, |x| x.order), i)),
        Priority::DepthFirst => order = depth_first(g),
    }
    let limit = 8 * n + 64;
    let mut j = 0;
    // The instruction where a node was last placed: a block that places
    // nothing for `STUCK` instructions only moves values around and never
    // will.
    let (mut progress, mut placed) = (0, 0);
    while order.iter().any(|&i| s.placed.get(i).copied().flatten().is_none()) {
        if j > limit || j > progress + STUCK {
            return Err(CompileError::Allocation(format!("block {}: no schedule found within {} instructions", job.block.label, j.min(limit))));
        }
        s.stalled = unstall && j > progress + STUCK / 2;
        if prio == Priority::DepthFirst {
            // Only the next few nodes of the walk are offered, so that
            // ready leaves far ahead do not fill the network and the
            // registers again.
            let window: Vec<usize> = order.iter().copied().filter(|&i| s.placed.get(i).copied().flatten().is_none()).take(DEPTH_FIRST_WINDOW).collect();
            step(&mut s, &window, j)?;
        } else {
            step(&mut s, &order, j)?;
        }
        // Placements, not counting values made again.
        let now = (0..n).filter(|&v| s.placed.get(v).copied().flatten().is_some() && !s.remat(v)).count();
        if now > placed {
            (progress, placed) = (j, now);
        }
        s.counts.max_live = s.counts.max_live.max(s.live(j + 1));
        j += 1;
    }
    // The block ends after its last op, with every register store landed
    // and the condition readable; the instructions up to there still move
    // the condition when its window ends (an input condition, or one only a
    // register holds, is moved into the network: a condition held in the
    // network all through the block would take a unit and a place in the
    // network from every instruction, and a careful schedule would start
    // no complex sequence beside it).
    let mut end = j;
    loop {
        let last = s.instrs.iter().rposition(|ops| !ops.is_empty()).map_or(0, |k| k + 1);
        let landed = s.instrs.iter().enumerate().all(|(k, ops)| !ops.iter().any(|(_, i)| i.dest.is_some()) || k + job.net.store_load_latency as usize <= end);
        let readable = |s: &State<'_>, at: usize| match g.cond {
            Some(c) => s.loc.get(c).copied().flatten().is_some_and(|l| at >= l.at && l.window.contains((at - l.at) as u32)),
            None => true,
        };
        if end >= last && landed && readable(&s, end) {
            break;
        }
        step(&mut s, &order, end)?;
        if let Some(c) = g.cond {
            let input = s.node(c).is_some_and(|x| x.kind == Kind::Input);
            let spilled = s.spill.get(c).copied().flatten().is_some();
            if (input || spilled) && !readable(&s, end + 1) {
                s.mov(end, c);
            }
        }
        end += 1;
        if end > limit + 16 {
            return Err(CompileError::Allocation(format!("block {}: the block end does not settle", job.block.label)));
        }
    }
    let term = match &job.block.term.kind {
        TermKind::Brnz { nonzero, zero, .. } => {
            let c = g.cond.and_then(|c| s.loc.get(c).copied().flatten()).ok_or_else(|| CompileError::Allocation("lost the branch condition".into()))?;
            TermKind::Brnz { cond: read(s.unit_name(c.unit), end - c.at), nonzero: nonzero.clone(), zero: zero.clone() }
        }
        k => k.clone(),
    };
    s.instrs.truncate(end);
    while s.instrs.len() < end {
        s.instrs.push(Vec::new());
    }
    let bundles = s
        .instrs
        .iter()
        .map(|ops| {
            let mut ops = ops.clone();
            ops.sort_by_key(|(u, _)| *u);
            Bundle { ops: ops.into_iter().map(|(u, inst)| Op { slot: SmolStr::new_static(s.unit_name(u)), inst }).collect(), wait: 0, span: Span::default() }
        })
        .collect();
    let counts = s.counts;
    Ok((Block { label: job.block.label.clone(), body: Body::Machine(bundles), term: Terminator { kind: term, span: Span::default() }, span: Span::default() }, counts))
}

/// One instruction's worth of placement (see the module docs).
fn step(s: &mut State<'_>, order: &[usize], j: usize) -> Result<(), CompileError> {
    s.instr(j);
    let mut forced = s.expiring(j);
    // Whether a node has been placed (speculatively, and kept) at `j`.
    let mut placed_here = false;
    for &n in order {
        if s.placed.get(n).copied().flatten().is_some() || !s.deps_ok(n, j) || !s.srcs_ready(n, j) || (s.remat(n) && !s.wanted(n, j)) {
            continue;
        }
        let Some(node) = s.node(n) else { continue };
        let (kind, op, srcs) = (node.kind, node.op, node.srcs.clone());
        // Only ops and sequences place anything here, and only with a unit
        // beyond the moves' reserve.
        if !matches!(kind, Kind::Alu | Kind::Complex(_)) || s.overfills(n, j) {
            continue;
        }
        // Every placement must leave room for the moves of `forced`; a
        // spill to make room stores into the two instructions before `j`.
        let snap = s.snapshot(j.saturating_sub(2));
        let mut room = Vec::new();
        while kind == Kind::Alu && s.free_alu(j) <= forced.iter().filter(|v| !room.contains(*v)).count() {
            match s.spill_for_room(j, placed_here) {
                Some(w) => room.push(w),
                None => break,
            }
        }
        let forced_now: Vec<usize> = forced.iter().copied().filter(|v| !room.contains(v)).collect();
        let reserve = forced_now.len();
        if s.free_alu(j) <= reserve {
            s.restore(snap);
            continue;
        }
        match kind {
            Kind::Alu if s.free_alu(j) > reserve => {
                if let Some(u) = s.place_op(j, op, &srcs, op.slots) {
                    s.set_loc(n, u, j, op.name);
                    s.mark(n, j);
                    store_users(s, j, n);
                } else if s.free_alu(j) > reserve + 1 {
                    // Inputs that cannot all be loaded in one instruction
                    // (two vectors of one load unit): copy one into the
                    // network first.
                    for v in s.load_conflicts(&srcs) {
                        if s.loc.get(v).copied().flatten().is_none_or(|l| l.at + 1 < j) && s.free_alu(j) > reserve {
                            s.mov(j, v);
                        }
                    }
                    // Sources spilled to more register vectors than the
                    // load units left beside the inputs' loads reach in
                    // one instruction: bring one back into the network.
                    let stale = |s: &State<'_>, v: usize| s.loc.get(v).copied().flatten().is_none_or(|l| j + 1 < l.at || !l.window.contains((j + 1 - l.at) as u32));
                    let in_regs: Vec<(usize, u16)> = srcs.iter().filter_map(|&v| s.spill.get(v).copied().flatten().filter(|_| stale(s, v)).map(|sp| (v, sp.reg / 4))).collect();
                    let mut vectors: Vec<u16> = in_regs.iter().map(|(_, q)| *q).collect();
                    vectors.sort();
                    vectors.dedup();
                    if vectors.len() > s.register_load_units_left(&srcs, j) && s.free_alu(j) > reserve {
                        if let Some(&(v, _)) = in_regs.first() {
                            s.mov(j, v);
                        }
                    }
                }
            }
            // A sequence adds up to three results to the network (the copy
            // of x and its two parts): start one only where they fit.
            Kind::Complex(_) if s.free_alu(j) > reserve && s.live(j) + 3 <= s.net.value_regs && (!s.careful || s.stalled || s.live(j) - s.consumed_by(n, j) <= CAREFUL_LIVE) => {
                s.place_complex(j, n);
            }
            _ => {}
        }
        // ... and for the values whose windows end in the next two
        // instructions, where a complex sequence may have booked units.
        let later = (1..=2).all(|k| {
            let f = s.expiring(j + k);
            s.moves_fit(j + k, &f)
        });
        let placed = s.placed.get(n).copied().flatten().is_some();
        if !s.moves_fit(j, &forced_now) || !later || (!room.is_empty() && !placed) {
            s.restore(snap);
        } else if placed {
            placed_here = true;
            forced = forced_now;
        }
    }
    for &n in order {
        if s.node(n).is_some_and(|x| x.kind == Kind::Store) && s.placed.get(n).copied().flatten().is_none() && s.deps_ok(n, j) {
            s.store_split(j, n, false);
        }
    }
    for v in s.expiring(j) {
        if s.pending.get(v).copied().unwrap_or(0) == 0 {
            continue;
        }
        if s.mov(j, v).is_none() {
            let label = "network";
            return Err(CompileError::Allocation(format!("the {label} is full at instruction {j}: no unit left to move a value")));
        }
        store_users(s, j, v);
        if s.pending.get(v).copied().unwrap_or(0) > 0 && s.spill.get(v).copied().flatten().is_none() {
            s.spill(j, v);
        }
    }
    for &n in order {
        if s.node(n).is_some_and(|x| x.kind == Kind::Store) && s.placed.get(n).copied().flatten().is_none() && s.deps_ok(n, j) {
            let v = s.node(n).and_then(|x| x.srcs.first().copied()).unwrap_or(0);
            let ready = s.node(v).is_some_and(|x| x.kind == Kind::Input) || s.loc.get(v).copied().flatten().is_some_and(|l| l.at < j) || s.spill.get(v).copied().flatten().is_some();
            if ready && s.free_alu(j) > 0 {
                // The store's move is a new network copy: like any
                // placement it must leave room for the moves of the next
                // two instructions.
                let snap = s.snapshot(j);
                if s.store_split(j, n, true) && !(1..=2).all(|k| {
                    let f = s.expiring(j + k);
                    s.moves_fit(j + k, &f)
                }) {
                    s.restore(snap);
                }
            }
        }
    }
    s.drop_remats(j);
    s.pool.release(|v, r| s.pending.get(v).copied().unwrap_or(0) == 0 || s.spill.get(v).copied().flatten().is_none_or(|sp| sp.reg != r));
    Ok(())
}

/// Place the stores joined to `v` that are ready in `j`, where `v` was just
/// made: they store `v`.
fn store_users(s: &mut State<'_>, j: usize, v: usize) {
    let children: Vec<usize> = (0..s.g.nodes.len()).filter(|&u| joined(s, u, v)).collect();
    for u in children {
        if s.node(u).is_some_and(|x| x.kind == Kind::Store) && s.placed.get(u).copied().flatten().is_none() && s.deps_ok(u, j) {
            s.store_split_of(j, u, v, false);
        }
    }
}

/// Whether node `u` is a child placed together with its parent `v`: it
/// reads `v`. A node that depends on `v` only by a fake dependency (it must
/// merely not come before `v`) is not one.
fn joined(s: &State<'_>, u: usize, v: usize) -> bool {
    let Some(n) = s.node(u) else { return false };
    // Fault lima-fake-dep-children: fake dependents are joined too.
    n.srcs.contains(&v) || (s.inject == Some(Fault::LimaFakeDepChildren) && n.not_before.contains(&v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{nodes, regs};

    /// The block of `corpus/regressions/lima-remat-input-ops.ir` scheduled
    /// once in the depth-first order, rematerializing or not.
    fn depth_first_once(remat: bool) -> Result<Counts, CompileError> {
        let text = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/regressions/lima-remat-input-ops.ir")).expect("regression file");
        let p = schedra_ir::parse::parse(&text, None).expect("parses");
        let net = p.target.network.expect("a network target");
        let b = p.blocks.first().expect("a block");
        let g = nodes::Graph::of(&p, net, b).expect("graph");
        let mut pool = regs::RegPool::new((0..p.target.regs.count).collect(), regs::Choice::RoundRobin);
        let job = BlockJob { t: p.target, net, g: &g, block: b, sched: Sched::TopDown, inject: None };
        schedule_once(&job, &mut pool, Priority::DepthFirst, remat, false, false).map(|(_, c)| c)
    }

    #[test]
    fn ops_of_inputs_made_again_fit_a_block_that_fills_the_machine_otherwise() {
        assert!(depth_first_once(false).is_err(), "the block fills the components and the network when every value is kept");
        let c = depth_first_once(true).expect("schedules rematerializing");
        assert!(c.remats > 0, "{c:?}");
    }
}
