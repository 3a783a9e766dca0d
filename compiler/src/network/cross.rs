//! The first level of register allocation on a bypass-network target (seed
//! 000's two-level allocator): the virtual registers whose values cross
//! blocks are coloured into register components, then named by them.
//!
//! A virtual register is *cross-block* when it is live on entry to some
//! block (read there, along some path, before the block writes it) or is a
//! stage input. Liveness is the backward fixpoint over the CFG
//! (`in = use ∪ (out − def)`, `out = ∪ in(succ)`). Two cross-block
//! registers interfere when one is written where the other is live after
//! the write; a `mov` from one to the other does not make them interfere
//! (Chaitin's rule), so the two may share a component and the move vanishes.
//!
//! The interference graph is coloured Chaitin/Briggs style: registers with
//! fewer neighbours than colours are simplified first, then the one with
//! fewest remaining neighbours is pushed optimistically, and colours are
//! picked popping the stack. The colours are the register components the
//! source never names; a stage input keeps its register. [`Choice::Lowest`]
//! takes the lowest free component; [`Choice::RoundRobin`] starts the
//! search for the k-th popped register k components on (as Mesa's gpir
//! does), spreading values over the file.
//!
//! [`Assignment::rewrite`] names every occurrence of a cross-block register
//! by its component, so the block graphs ([`super::nodes`]) read the entry
//! value with register loads and store each component's last value.
//! [`Assignment::block_ranges`] tells the second level, per block, where
//! each component is occupied ([`super::regs::Occupied`]).
//!
//! Invariant: two cross-block registers that are live at one point never
//! share a component, and no component the source names is handed out; so
//! the rewritten program computes what the source computes.

use super::regs::{Choice, Occupied};
use schedra_ir::cfg::{successor_labels, BlockIndex};
use crate::CompileError;
use schedra_ir::{Block, Operand, PhysReg, Program, Reg, TermKind};
use std::collections::{BTreeMap, BTreeSet};

/// Names of the virtual registers an instruction or terminator touches.
type Names = BTreeSet<String>;

/// The first-level result: a component per cross-block register, and the
/// block-level liveness the second level needs.
#[derive(Clone, Debug, Default)]
pub struct Assignment {
    /// Component of each cross-block virtual register.
    pub colour: BTreeMap<String, Reg>,
    /// Per block: the cross-block registers live on entry.
    live_in: Vec<Names>,
    /// Per block: the cross-block registers live on exit.
    live_out: Vec<Names>,
}

fn virt_name(o: &Operand) -> Option<&str> {
    match o {
        Operand::Virt(v) => Some(v.name.as_str()),
        _ => None,
    }
}

fn term_use(b: &Block) -> Option<&str> {
    match &b.term.kind {
        TermKind::Brnz { cond, .. } => virt_name(cond),
        _ => None,
    }
}

/// The registers a block reads before writing them (`use`), and writes
/// (`def`).
fn use_def(b: &Block) -> (Names, Names) {
    let (mut uses, mut defs) = (Names::new(), Names::new());
    for i in b.insts() {
        for s in i.srcs.iter().filter_map(virt_name) {
            if !defs.contains(s) {
                uses.insert(s.to_string());
            }
        }
        if let Some(d) = i.dest.as_ref().and_then(virt_name) {
            defs.insert(d.to_string());
        }
    }
    if let Some(c) = term_use(b) {
        if !defs.contains(c) {
            uses.insert(c.to_string());
        }
    }
    (uses, defs)
}

/// Per block, the virtual registers live on entry and on exit.
fn liveness(p: &Program) -> (Vec<Names>, Vec<Names>) {
    let index = BlockIndex::new(p);
    let succs: Vec<Vec<usize>> = p.blocks.iter().map(|b| successor_labels(&b.term).filter_map(|l| index.get(l)).collect()).collect();
    let ud: Vec<(Names, Names)> = p.blocks.iter().map(use_def).collect();
    let n = p.blocks.len();
    let (mut live_in, mut live_out) = (vec![Names::new(); n], vec![Names::new(); n]);
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let out: Names = succs.get(b).into_iter().flatten().filter_map(|s| live_in.get(*s)).flatten().cloned().collect();
            let Some((uses, defs)) = ud.get(b) else { continue };
            let inn: Names = uses.iter().cloned().chain(out.iter().filter(|v| !defs.contains(*v)).cloned()).collect();
            if live_in.get(b) != Some(&inn) || live_out.get(b) != Some(&out) {
                changed = true;
            }
            if let (Some(i), Some(o)) = (live_in.get_mut(b), live_out.get_mut(b)) {
                *i = inn;
                *o = out;
            }
        }
    }
    (live_in, live_out)
}

/// The interference graph among `cross`: an edge wherever one is written
/// while the other is live after the write (a move's source excepted).
fn interference(p: &Program, cross: &Names, live_out: &[Names]) -> BTreeMap<String, Names> {
    let mut g: BTreeMap<String, Names> = cross.iter().map(|v| (v.clone(), Names::new())).collect();
    let mut edge = |a: &str, b: &str| {
        if a != b && cross.contains(a) && cross.contains(b) {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default().insert(a.to_string());
        }
    };
    for (b, blk) in p.blocks.iter().enumerate() {
        let mut live: Names = live_out.get(b).cloned().unwrap_or_default();
        if let Some(c) = term_use(blk) {
            live.insert(c.to_string());
        }
        for i in blk.insts().iter().rev() {
            let copy_of = match (p.target.op(&i.opcode), i.srcs.as_slice()) {
                (Some(d), [s]) if d.sem == schedra_ir::target::Sem::Mov => virt_name(s),
                _ => None,
            };
            if let Some(d) = i.dest.as_ref().and_then(virt_name) {
                for l in live.iter().filter(|l| Some(l.as_str()) != copy_of) {
                    edge(d, l);
                }
                live.remove(d);
            }
            live.extend(i.srcs.iter().filter_map(virt_name).map(str::to_string));
        }
    }
    g
}

/// Colour `g` with `colours`, keeping `fixed`; `None` when some register
/// finds no colour.
fn colour(g: &BTreeMap<String, Names>, colours: &[Reg], fixed: &BTreeMap<String, Reg>, choice: Choice) -> Option<BTreeMap<String, Reg>> {
    let k = colours.len();
    let mut degree: BTreeMap<&str, usize> = g.iter().filter(|(v, _)| !fixed.contains_key(*v)).map(|(v, n)| (v.as_str(), n.len())).collect();
    let mut stack: Vec<&str> = Vec::with_capacity(degree.len());
    while !degree.is_empty() {
        // Simplifiable first; otherwise the fewest neighbours (optimistic).
        let pick = degree.iter().find(|(_, d)| **d < k).or_else(|| degree.iter().min_by_key(|(_, d)| **d)).map(|(v, _)| *v)?;
        degree.remove(pick);
        for n in g.get(pick).into_iter().flatten() {
            if let Some(d) = degree.get_mut(n.as_str()) {
                *d = d.saturating_sub(1);
            }
        }
        stack.push(pick);
    }
    let mut out = fixed.clone();
    for (popped, v) in stack.iter().rev().enumerate() {
        let taken: BTreeSet<Reg> = g.get(*v).into_iter().flatten().filter_map(|n| out.get(n)).copied().collect();
        let start = match choice {
            Choice::Lowest => 0,
            Choice::RoundRobin => popped % k.max(1),
        };
        let c = (0..k).map(|i| (i + start) % k).filter_map(|i| colours.get(i)).find(|c| !taken.contains(c))?;
        out.insert((*v).to_string(), *c);
    }
    Some(out)
}

impl Assignment {
    /// Colour the cross-block registers of `p` into the components in
    /// `free` (those the source never names), by `choice`.
    pub fn of(p: &Program, free: &[Reg], choice: Choice) -> Result<Assignment, CompileError> {
        let (live_in, live_out) = liveness(p);
        let mut cross: Names = live_in.iter().flatten().cloned().collect();
        let fixed: BTreeMap<String, Reg> = p.inputs.iter().filter_map(|i| i.vreg.as_ref().map(|v| (v.name.to_string(), i.reg.base))).collect();
        cross.extend(fixed.keys().cloned());
        if cross.is_empty() {
            return Ok(Assignment { colour: BTreeMap::new(), live_in, live_out });
        }
        let g = interference(p, &cross, &live_out);
        let colour = colour(&g, free, &fixed, choice).ok_or_else(|| {
            CompileError::Allocation(format!("more values cross blocks at once than the {} register components left free", free.len()))
        })?;
        let keep = |s: Vec<Names>| s.into_iter().map(|n| n.into_iter().filter(|v| colour.contains_key(v)).collect()).collect();
        Ok(Assignment { live_in: keep(live_in), live_out: keep(live_out), colour })
    }

    /// `p` with every cross-block register named by its component.
    pub fn rewrite(&self, p: &Program) -> Result<Program, CompileError> {
        let mut q = p.clone();
        let name = |o: &mut Operand| -> Result<(), CompileError> {
            let Operand::Virt(v) = &*o else { return Ok(()) };
            let Some(&r) = self.colour.get(v.name.as_str()) else { return Ok(()) };
            if v.size.is_some_and(|s| s > 1) {
                return Err(CompileError::Unsupported(format!("%{} is wider than one component and crosses blocks", v.name)));
            }
            *o = Operand::Phys(PhysReg::one(r));
            Ok(())
        };
        for b in &mut q.blocks {
            for i in b.insts_mut() {
                for o in i.dest.iter_mut().chain(i.srcs.iter_mut()) {
                    name(o)?;
                }
            }
            if let TermKind::Brnz { cond, .. } = &mut b.term.kind {
                name(cond)?;
            }
        }
        Ok(q)
    }

    /// Where block `b` occupies each cross-block component, for the second
    /// level: live through the block, or live on entry, or written.
    pub fn block_ranges(&self, p: &Program, b: usize) -> Vec<(Reg, Occupied)> {
        let (Some(blk), Some(inn), Some(out)) = (p.blocks.get(b), self.live_in.get(b), self.live_out.get(b)) else { return Vec::new() };
        let (_, defs) = use_def(blk);
        let mut by_reg: BTreeMap<Reg, Occupied> = BTreeMap::new();
        for (v, &r) in &self.colour {
            let (i, o, d) = (inn.contains(v), out.contains(v), defs.contains(v));
            let occ = Occupied { on_entry: i, written: d, through: o && !d };
            let e = by_reg.entry(r).or_default();
            e.on_entry |= occ.on_entry;
            e.written |= occ.written;
            e.through |= occ.through;
        }
        by_reg.into_iter().filter(|(_, o)| o.on_entry || o.written || o.through).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Program {
        schedra_ir::parse::parse(text.as_bytes(), None).expect("parse")
    }

    const DIAMOND: &str = "target lima-gp\nb0:\n    %a = ld_att 0\n    %c = ld_uni 0\n    brnz %c, l, r\nl:\n    %y = mul %a, %a\n    jmp j\nr:\n    %y = neg %a\n    jmp j\nj:\n    %s = add %y, %a\n    st_var 0, %s\n    end\n";

    #[test]
    fn values_crossing_blocks_are_found_and_kept_apart() {
        let p = parse(DIAMOND);
        let free: Vec<Reg> = (0..64).collect();
        let a = Assignment::of(&p, &free, Choice::Lowest).expect("colours");
        let names: Vec<&str> = a.colour.keys().map(String::as_str).collect();
        assert_eq!(names, ["a", "y"], "%c and %s stay in their blocks");
        assert_ne!(a.colour.get("a"), a.colour.get("y"), "%a is live where %y is written");
        let q = a.rewrite(&p).expect("rewrite");
        let text = schedra_ir::print::print(&q);
        assert!(!text.contains("%a") && !text.contains("%y") && text.contains("%c"), "{text}");
    }

    #[test]
    fn a_move_between_cross_block_registers_may_share_a_component() {
        let p = parse("target lima-gp\nb0:\n    %a = ld_att 0\n    jmp b1\nb1:\n    %b = mov %a\n    jmp b2\nb2:\n    st_var 0, %b\n    end\n");
        let a = Assignment::of(&p, &(0..64).collect::<Vec<Reg>>(), Choice::Lowest).expect("colours");
        assert_eq!(a.colour.get("a"), a.colour.get("b"));
    }

    #[test]
    fn only_free_components_are_used_and_too_few_is_an_error() {
        let p = parse(DIAMOND);
        let a = Assignment::of(&p, &[9, 40], Choice::RoundRobin).expect("two components suffice");
        assert!(a.colour.values().all(|r| [9, 40].contains(r)));
        assert!(matches!(Assignment::of(&p, &[9], Choice::Lowest), Err(CompileError::Allocation(_))));
    }

    #[test]
    fn a_loop_carried_value_is_live_through_the_loop() {
        let p = parse("target lima-gp\nb0:\n    %i = ld_const 0\n    %k = ld_uni 3\n    jmp h\nh:\n    %i = add %i, %k\n    %m = lt %i, %k\n    brnz %m, h, x\nx:\n    st_var 0, %i\n    end\n");
        let a = Assignment::of(&p, &(0..64).collect::<Vec<Reg>>(), Choice::Lowest).expect("colours");
        let (ri, rk) = (a.colour["i"], a.colour["k"]);
        assert_ne!(ri, rk);
        let h = a.block_ranges(&p, 1);
        let occ = |r: Reg| h.iter().find(|(x, _)| *x == r).map(|(_, o)| *o).expect("occupied");
        assert!(occ(rk).through && !occ(rk).written, "the bound is read and kept");
        assert!(occ(ri).on_entry && occ(ri).written && !occ(ri).through, "the counter is read, then written");
    }
}
