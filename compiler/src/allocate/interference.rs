//! Interference and register constraints.
//!
//! [`build`] makes the interference graph of the values from
//! [`liveness::occupancy`]: at every gap, each variable written by the
//! instruction before the gap interferes with every variable occupying the
//! gap (and at a block's first gap, all occupants interfere pairwise, which
//! covers values live into unreachable blocks). Value–value edges form the
//! graph; value–register edges become each value's set of registers it may
//! never use. Invariant: two values without an edge never occupy one gap, so
//! they may share registers.
//!
//! [`Constraints`] collects what does not depend on other values: the
//! allocatable registers and alignment per size, registers a value may not use
//! because of target rules (checked with the target's own `op_regs_ok`, and
//! the end-of-program registers of the description), runs a wide destination may not partly overlap,
//! and copy hints.

use super::liveness::{self, Liveness, VarMap};
use super::ra_ir::{Func, Kind, Loc, RegSet, ValId};
use schedra_ir::target::{OpDesc, Sem};
use schedra_ir::SmolStr;
use schedra_ir::{Inst, Operand, PhysReg, Reg};
use std::sync::{Mutex, OnceLock};

/// The interference graph of a function's values.
#[derive(Clone, Debug)]
pub struct Graph {
    nv: usize,
    /// Words per row of `rows`.
    stride: usize,
    /// The adjacency matrix: row `a` is `rows[a * stride..][..stride]`, bit
    /// `b` set when `a` and `b` interfere (word-aligned rows, so a row is
    /// compared with a set of variables a word at a time).
    rows: Vec<u64>,
    /// Every edge as (value, neighbour), both directions, in the order
    /// found, when [`build_in`] was asked to record it (else empty); laid
    /// out by value on the first [`Graph::adj`].
    pairs: Vec<(ValId, ValId)>,
    /// `(adj_start, adj_list)`: the neighbours of value `v` are
    /// `adj_list[adj_start[v]..adj_start[v + 1]]`, in the order they were
    /// found (only a failed colouring asks, so it is laid out on demand).
    adj: std::cell::OnceCell<(Vec<u32>, Vec<ValId>)>,
    /// Physical registers each value may not use (live or written where the
    /// value occupies a register).
    pub phys: Vec<RegSet>,
    /// Values live across a block boundary somewhere.
    pub global: Vec<bool>,
}

impl Graph {
    /// The neighbours of value `v`, in the order they were found (none
    /// when the graph was built without recording it, see [`build_in`]).
    pub fn adj(&self, v: ValId) -> &[ValId] {
        let (adj_start, adj_list) = self.adj.get_or_init(|| self.lay_out());
        let v = v as usize;
        match (adj_start.get(v), adj_start.get(v + 1)) {
            (Some(&a), Some(&b)) => adj_list.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
    /// Call `f` with each neighbour of value `v` that is in the set of
    /// values with words `mask`, in increasing order (read from the
    /// matrix: for users to whom the order does not matter).
    pub fn neighbours_in(&self, v: ValId, mask: &[u64], mut f: impl FnMut(ValId)) {
        let at = v as usize * self.stride;
        let row = if (v as usize) < self.nv {
            self.rows.get(at..at + self.stride).unwrap_or(&[])
        } else {
            &[]
        };
        for (wi, (&w, &m)) in row.iter().zip(mask).enumerate() {
            let mut w = w & m;
            while w != 0 {
                f((wi * 64) as ValId + w.trailing_zeros());
                w &= w - 1;
            }
        }
    }
    /// Lay the edges found out by value (a stable counting sort, so each
    /// value's neighbours keep the order they were found in).
    fn lay_out(&self) -> (Vec<u32>, Vec<ValId>) {
        let mut start = vec![0u32; self.nv + 1];
        for &(a, _) in &self.pairs {
            if let Some(c) = start.get_mut(a as usize + 1) {
                *c += 1;
            }
        }
        for i in 0..self.nv {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut list = vec![0; self.pairs.len()];
        for &(a, b) in &self.pairs {
            if let Some(c) = next.get_mut(a as usize) {
                if let Some(slot) = list.get_mut(*c as usize) {
                    *slot = b;
                }
                *c += 1;
            }
        }
        (start, list)
    }
    /// Whether values `a` and `b` interfere.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn interferes(&self, a: ValId, b: ValId) -> bool {
        let (a, b) = (a as usize, b as usize);
        a < self.nv && b < self.nv && self.bit(a, b)
    }
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    fn bit(&self, a: usize, b: usize) -> bool {
        self.rows
            .get(a * self.stride + b / 64)
            .is_some_and(|w| w & (1 << (b % 64)) != 0)
    }
    /// Make variable `d` interfere with every variable of the set with
    /// words `occ` other than itself (with those above `d` only, when
    /// `above`): value pairs become edges (new neighbours appended in
    /// increasing order), value–register pairs forbid the register to the
    /// value, register pairs are ignored. `vals` is [`value_mask`]`(nv)`;
    /// `record`: keep the edges' order for [`Graph::adj`].
    fn add_all(&mut self, vals: &[u64], d: usize, occ: &[u64], above: bool, record: bool) {
        let (nv, stride) = (self.nv, self.stride);
        let words = occ.iter().zip(vals).enumerate();
        if d >= nv {
            // A register: every value occupying the gap avoids it (no value
            // is above a register).
            if above {
                return;
            }
            let r = (d - nv) as Reg;
            for (wi, (&w, &m)) in words {
                let mut w = w & m;
                while w != 0 {
                    let x = wi * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    if let Some(s) = self.phys.get_mut(x) {
                        s.insert(r);
                    }
                }
            }
            return;
        }
        let row = d * stride;
        let (dw, dbit) = (d / 64, 1u64 << (d % 64));
        for (wi, (&w, &m)) in words {
            let seen = self.rows.get(row + wi).copied().unwrap_or(u64::MAX);
            let mut new = w & m & !seen;
            if wi == dw {
                new &= !dbit;
            }
            if above {
                new &= !low_mask(d + 1, wi);
            }
            if new == 0 {
                continue;
            }
            if let Some(r) = self.rows.get_mut(row + wi) {
                *r |= new;
            }
            while new != 0 {
                let x = wi * 64 + new.trailing_zeros() as usize;
                new &= new - 1;
                if let Some(r) = self.rows.get_mut(x * stride + dw) {
                    *r |= dbit;
                }
                if record {
                    self.pairs.push((d as ValId, x as ValId));
                    self.pairs.push((x as ValId, d as ValId));
                }
            }
        }
        // The registers occupying the gap (variables from `nv` on).
        if let Some(phys) = self.phys.get_mut(d) {
            phys.insert_shifted(occ, nv);
        }
    }
}

/// The bits of word `wi` that stand for elements below `n`.
fn low_mask(n: usize, wi: usize) -> u64 {
    let lo = wi * 64;
    if n >= lo + 64 {
        u64::MAX
    } else if n <= lo {
        0
    } else {
        (1u64 << (n - lo)) - 1
    }
}

/// The words of the set `0..nv` (the values among the variables), one per
/// row word of the matrix.
fn value_mask(nv: usize) -> Vec<u64> {
    (0..nv.div_ceil(64)).map(|wi| low_mask(nv, wi)).collect()
}

/// Build the interference graph of `f`.
pub fn build(f: &Func, vm: &VarMap, lv: &Liveness) -> Graph {
    build_in(f, vm, lv, true)
}

/// [`build`], keeping the order the edges are found in (what
/// [`Graph::adj`] answers) only when `record` (else `adj` is empty: only a
/// failed colouring asks, which can build the graph again).
pub fn build_in(f: &Func, vm: &VarMap, lv: &Liveness, record: bool) -> Graph {
    let nv = vm.nv;
    let stride = nv.div_ceil(64);
    let mut g = Graph {
        nv,
        stride,
        rows: vec![0; nv * stride],
        pairs: Vec::with_capacity(if record { 8 * nv } else { 0 }),
        adj: std::cell::OnceCell::new(),
        phys: vec![RegSet::default(); nv],
        global: vec![false; nv],
    };
    let vals = value_mask(nv);
    // The values live into or out of some block, as words.
    let mut global = vec![0u64; stride];
    for b in 0..f.blocks.len() {
        let (live_in, live_out) = (lv.live_in[b].words(), lv.live_out[b].words());
        for (((w, &m), &i), &o) in global.iter_mut().zip(&vals).zip(live_in).zip(live_out) {
            *w |= (i | o) & m;
        }
        let occ = liveness::occupancy(f, vm, lv, b);
        // At the block's first gap every pair of occupants interferes (a
        // register has no value above it: only values need visiting).
        let first = occ[0].words();
        for x in occ[0].iter().take_while(|&x| x < nv) {
            g.add_all(&vals, x, first, true, record);
        }
        for (k, inst) in f.blocks[b].insts.iter().enumerate() {
            let after = occ[k + 1].words();
            vm.each_def(inst, |d| g.add_all(&vals, d, after, false, record));
        }
    }
    for (v, on) in g.global.iter_mut().enumerate() {
        *on = global.get(v / 64).is_some_and(|w| w & (1 << (v % 64)) != 0);
    }
    g
}

/// A preferred register for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// The run of a physical register (input, preallocated copy target).
    Phys(PhysReg),
    /// The register of another value (copy source or target).
    Val(ValId),
}

/// Register constraints of every value that do not depend on other values.
#[derive(Clone, Debug)]
pub struct Constraints {
    /// Candidate runs per size (index = size), in allocation order: aligned,
    /// every register allocatable.
    pub cands: Vec<Vec<PhysReg>>,
    /// Registers each value may not use because of target rules.
    pub forbid: Vec<RegSet>,
    /// Runs each value may not partly overlap (wide destinations vs their
    /// physical sources).
    pub no_partial: Vec<Vec<PhysReg>>,
    /// Copy hints per value.
    pub hints: Vec<Vec<Hint>>,
}

/// Alignment of a run of `size` registers.
pub fn align(size: u8) -> u16 {
    match size {
        0 | 1 => 1,
        2 => 2,
        _ => 4,
    }
}

impl Constraints {
    /// Whether `run` is acceptable for value `v` as far as the rules go.
    pub fn allowed(&self, v: ValId, run: PhysReg) -> bool {
        let v = v as usize;
        let forbid_ok = self.forbid.get(v).is_none_or(|s| !s.overlaps(run));
        let partial_ok = self
            .no_partial
            .get(v)
            .is_none_or(|ps| ps.iter().all(|p| *p == run || !p.overlaps(run)));
        forbid_ok && partial_ok
    }
    /// Candidate runs for value `v` of size `size`, in allocation order.
    pub fn cands_for(&self, size: u8) -> &[PhysReg] {
        self.cands.get(size as usize).map_or(&[], |c| c.as_slice())
    }
}

/// Registers `desc` may not use as its destination (`as_dest`) or as a
/// source, by asking the target's rules about every single register.
fn rule_forbidden_uncached(f: &Func, desc: &'static OpDesc, as_dest: bool) -> RegSet {
    let mut s = RegSet::default();
    // One instruction, its register operands retargeted in place for each
    // register (nothing built or dropped per register).
    let first = Operand::Phys(PhysReg::one(0));
    let mut inst = Inst {
        opcode: SmolStr::new_static(desc.name),
        dest: as_dest.then(|| first.clone()),
        srcs: vec![first; desc.operands.len()],
        span: Default::default(),
    };
    for r in 0..f.target.regs.count {
        let run = PhysReg::one(r);
        if let Some(Operand::Phys(p)) = &mut inst.dest {
            *p = run;
        }
        for o in &mut inst.srcs {
            if let Operand::Phys(p) = o {
                *p = run;
            }
        }
        if f.target.rules.op_regs_ok(desc, &inst).is_err() {
            s.insert(r);
        }
    }
    s
}

/// Registers a value read or written in the last instructions of a final
/// block may not use: the registers the end-of-program delay slots may not
/// touch (`ProgramEnd::Marker`'s `untouchable`, v3d71 rf2-rf3).
fn end_forbidden(f: &Func) -> RegSet {
    let mut s = RegSet::default();
    f.target.end_untouchable().iter().for_each(|&r| s.insert(r));
    s
}

/// How many of a final block's last instructions keep away from the
/// registers the end-of-program delay slots may not touch: as many ops as
/// the delay slots can hold (delay slots × slots per bundle), since the
/// bundler may move any of them there. 0 without an end marker.
pub fn end_window(t: &schedra_ir::Target) -> usize {
    t.end_delay_slots().unwrap_or(0) * t.slots.len()
}

/// Compute the constraints of `f`'s values. `allocatable` lists the
/// registers the allocator may hand out, in preference order.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn constraints(f: &Func, allocatable: &[Reg]) -> Result<Constraints, crate::CompileError> {
    constraints_with(f, candidate_runs(f, allocatable))
}

/// [`constraints`] given the candidate runs ([`candidate_runs`] of the
/// allocatable registers, which spilling never changes: it adds no values,
/// so the allocator computes them once and hands each round a copy).
pub fn constraints_with(
    f: &Func,
    cands: Vec<Vec<PhysReg>>,
) -> Result<Constraints, crate::CompileError> {
    let nv = f.vals.len();
    let mut k = Constraints {
        cands,
        forbid: vec![RegSet::default(); nv],
        no_partial: vec![Vec::new(); nv],
        hints: vec![Vec::new(); nv],
    };
    let end_set = end_forbidden(f);
    let window = end_window(f.target);
    let rules = RuleSets::new(f);
    for b in &f.blocks {
        let n = b.insts.len();
        let final_block = matches!(b.term.kind, schedra_ir::TermKind::End);
        for (idx, i) in b.insts.iter().enumerate() {
            let in_window = final_block && idx + window >= n && !end_set.is_empty();
            constrain_inst(&mut k, &rules, i, in_window.then_some(&end_set));
        }
        if let (Some(Loc::Val(v)), true) = (b.cond.as_ref().and_then(|c| c.loc()), final_block) {
            forbid(&mut k, v, &end_set);
        }
    }
    Ok(k)
}

/// For each value size `1..=max` (index = size), the runs of `allocatable`
/// registers a value of that size may take, in preference order: aligned,
/// inside the register file, every register allocatable.
pub fn candidate_runs(f: &Func, allocatable: &[Reg]) -> Vec<Vec<PhysReg>> {
    let mut alloc_set = RegSet::default();
    allocatable.iter().for_each(|&r| alloc_set.insert(r));
    let max = f
        .vals
        .iter()
        .map(|v| v.size)
        .max()
        .unwrap_or(1)
        .max(f.target.max_value_size);
    let mut cands = vec![Vec::new(); max as usize + 1];
    for (size, c) in cands.iter_mut().enumerate().skip(1) {
        for &r in allocatable {
            let run = PhysReg {
                base: r,
                size: size as u8,
            };
            if r % align(size as u8) == 0
                && (r as usize + size) <= f.target.regs.count as usize
                && !run.regs().any(|x| !alloc_set.contains(x))
            {
                c.push(run);
            }
        }
    }
    cands
}

/// One memo cell per op of a target's opcode table and role
/// (`[sources, destination]`): the set, `None` when empty.
type RuleTable = [[OnceLock<Option<RegSet>>; 2]];

/// The registers each opcode's rules forbid to its destination or its
/// sources ([`rule_forbidden_uncached`]), memoised for the whole process:
/// the set depends only on the target's rules (static data) and the op, so
/// each (target, op, role) is computed once, on first use, instead of once
/// per compile. The table of `f`'s target is looked up once per
/// [`constraints`] call; each query is then an index.
struct RuleSets<'f> {
    f: &'f Func,
    table: &'static RuleTable,
}

impl<'f> RuleSets<'f> {
    fn new(f: &'f Func) -> RuleSets<'f> {
        type Tables = Mutex<Vec<(usize, &'static RuleTable)>>;
        static TABLES: OnceLock<Tables> = OnceLock::new();
        let key = std::ptr::from_ref(f.target) as usize;
        let fresh = || -> &'static RuleTable {
            let cells: Vec<[OnceLock<Option<RegSet>>; 2]> =
                f.target.ops.iter().map(|_| Default::default()).collect();
            Box::leak(cells.into_boxed_slice())
        };
        // Targets are static: at most one leaked table per target.
        let table = match TABLES.get_or_init(Default::default).lock() {
            Ok(mut tables) => match tables.iter().find(|(k, _)| *k == key) {
                Some((_, t)) => *t,
                None => {
                    let t = fresh();
                    tables.push((key, t));
                    t
                }
            },
            Err(_) => fresh(),
        };
        RuleSets { f, table }
    }
    /// The registers `desc` forbids to its destination (`as_dest`) or
    /// sources; `None` when there are none (on some targets, every op: the
    /// caller then has nothing to add).
    fn get(&self, desc: &'static OpDesc, as_dest: bool) -> Option<RegSet> {
        let f = self.f;
        let cell = super::ra_ir::op_index(f.target, desc)
            .and_then(|i| self.table.get(i))
            .and_then(|e| e.get(as_dest as usize));
        let uncached = || Some(rule_forbidden_uncached(f, desc, as_dest)).filter(|s| !s.is_empty());
        match cell {
            Some(c) => *c.get_or_init(uncached),
            None => uncached(),
        }
    }
}

/// Add `set` to the registers value `v` may not take.
fn forbid(k: &mut Constraints, v: ValId, set: &RegSet) {
    if let Some(s) = k.forbid.get_mut(v as usize) {
        s.union_with(set);
    }
}

/// Add the constraints instruction `i` puts on the values it defines and
/// reads: its opcode's register rules, `end` (the end-of-program set when
/// `i` is within [`end_window`] of the end and the set is not empty, else
/// `None`), no partial overlap of a destination that must not share
/// registers with its sources, and copy hints.
fn constrain_inst(
    k: &mut Constraints,
    rules: &RuleSets,
    i: &super::ra_ir::RInst,
    end: Option<&RegSet>,
) {
    if let Some(Loc::Val(v)) = i.dest {
        if let Some(set) = rules.get(i.desc, true) {
            forbid(k, v, &set);
        }
        if let Some(end) = end {
            forbid(k, v, end);
        }
        if super::liveness::dest_excludes_srcs(rules.f, i) {
            if let Some(np) = k.no_partial.get_mut(v as usize) {
                np.extend(i.use_locs().filter_map(Loc::phys));
            }
        }
        add_copy_hints(k, i);
    }
    // The sources' rule set, looked up once (at the first value source).
    let mut src_rule: Option<Option<RegSet>> = None;
    for l in i.use_locs() {
        if let Loc::Val(v) = l {
            if let Some(set) = src_rule.get_or_insert_with(|| rules.get(i.desc, false)) {
                forbid(k, v, set);
            }
            if let Some(end) = end {
                forbid(k, v, end);
            }
        }
    }
    if let (Some(Loc::Phys(p)), Sem::Mov, Some(Loc::Val(v))) =
        (i.dest, i.desc.sem, i.use_locs().next())
    {
        if let Some(h) = k.hints.get_mut(v as usize) {
            h.push(Hint::Phys(p));
        }
    }
}

fn add_copy_hints(k: &mut Constraints, i: &super::ra_ir::RInst) {
    let (Some(Loc::Val(d)), Sem::Mov) = (i.dest, i.desc.sem) else {
        return;
    };
    match i.use_locs().next() {
        Some(Loc::Phys(p)) => {
            let first = i.kind == Kind::InputCopy;
            let h = &mut k.hints[d as usize];
            if first {
                h.insert(0, Hint::Phys(p));
            } else {
                h.push(Hint::Phys(p));
            }
        }
        Some(Loc::Val(s)) if s != d => {
            k.hints[d as usize].push(Hint::Val(s));
            k.hints[s as usize].push(Hint::Val(d));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::liveness::{analyze, VarMap};

    use crate::allocate::ra_ir::test_func as func;

    #[test]
    fn gen8_rules_forbid_g127_for_send_results_and_low_registers_for_eot() {
        let f =
            func("target gen8\ninput %x:2 = $g2:2\nb0:\n %t:4 = send.tex %x\n send.eot %t\n end\n");
        let k = constraints(&f, &f.target.rules.allocatable(f.stage)).expect("constraints");
        let t = (0..f.vals.len() as ValId).find(|&v| f.val_name(v) == Some("t")).unwrap_or(0);
        assert!(k.forbid[t as usize].contains(127));
        assert!(k.forbid[t as usize].contains(111) && !k.forbid[t as usize].contains(112));
        assert!(
            !k.allowed(t, PhysReg { base: 124, size: 4 })
                && k.allowed(t, PhysReg { base: 120, size: 4 })
        );
        assert!(k
            .cands_for(4)
            .iter()
            .all(|r| r.base % 4 == 0 && r.base >= 2));
    }

    #[test]
    fn the_end_window_is_what_the_delay_slots_can_hold() {
        use schedra_ir::target::{gen8::GEN8, r600::R600, v3d71::V3D71};
        assert_eq!(end_window(&V3D71), 6, "two delay slots of three slots each");
        assert_eq!((end_window(&GEN8), end_window(&R600)), (0, 0));
    }

    #[test]
    fn v3d71_values_near_the_end_avoid_rf2_rf3() {
        let f = func("target v3d71\ninput %w = $rf2\nb0:\n %a = fmul %w, %w\n tlbw %a\n end\n");
        let k = constraints(&f, &f.target.rules.allocatable(f.stage)).expect("constraints");
        for v in 0..f.vals.len() {
            assert!(k.forbid[v].contains(2) && k.forbid[v].contains(3) && !k.forbid[v].contains(1));
        }
        assert_eq!(
            k.hints[0].first(),
            Some(&Hint::Phys(PhysReg::one(2))),
            "the input prefers its register"
        );
    }

    #[test]
    fn values_interfere_with_preallocated_and_implicit_writes() {
        let f = func("target v3d71\nb0:\n %a = ldvary 0\n %b = ldvary 1\n $rf9 = mov %b\n %c = fadd %a, $rf9\n tlbw %c\n end\n");
        let vm = VarMap::new(&f, true, true);
        let g = build(&f, &vm, &analyze(&f, &vm));
        assert!(g.interferes(0, 1) && !g.interferes(1, 2));
        assert!(g.phys[0].contains(0), "%a lives across ldvary's rf0 write");
        assert!(g.phys[0].contains(9), "%a lives across the write of rf9");
        let vm_fault = VarMap::new(&f, false, true);
        let g2 = build(&f, &vm_fault, &analyze(&f, &vm_fault));
        assert!(
            !g2.phys[0].contains(0),
            "without implicit writes rf0 looks free"
        );
    }
}
