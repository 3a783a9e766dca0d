//! Operand simplification: a register read becomes the immediate 0 or an
//! earlier-defined value of the same size.
//!
//! - [`to_zero`]: every register source or non-zero immediate where the
//!   opcode and the target accept the immediate 0, every non-zero index
//!   operand (`ldunif 7` → `ldunif 0`), and every `brnz` condition;
//! - [`to_earlier`]: every virtual-register use for which a value of the
//!   same size with a strictly lower rank (inputs first, then definition
//!   order) is defined on every path to the use; the lowest-ranked one is
//!   chosen.
//!
//! - [`to_mov`]: an ALU op becomes a `mov` of one of its register or
//!   immediate sources (`%d = fadd %a, %b` → `%d = mov %a`).
//!
//! All of them cut dataflow edges so that the instruction removal pass finds
//! more dead code. Invariant: each accepted replacement strictly lowers the
//! number of register reads, the sum of the ranks read, the number of
//! non-zero constants or the number of operands, so the passes cannot undo
//! each other forever.

use super::passes::Opp;
use super::repair::imm_ok_at;
use super::scope::{defined, Scope};
use schedra_ir::target::{Dest, OperandKind, Sem, Sizes};
use schedra_ir::{Imm, Inst, Operand, Program, Target, TermKind, VirtReg};
use schedra_ir::SmolStr;
use std::collections::BTreeSet;

/// Where an operand sits: a source of an instruction, or a block's `brnz`
/// condition (`inst == None`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// Block index.
    pub block: usize,
    /// Instruction index, or `None` for the terminator's condition.
    pub inst: Option<usize>,
    /// Source index (0 for a condition).
    pub src: usize,
}

fn is_reg(o: &Operand) -> bool {
    matches!(o, Operand::Virt(_) | Operand::Phys(_))
}

/// Register sources that may become the immediate 0.
pub fn to_zero(p: &Program) -> Vec<Opp> {
    let zero = Imm::int(0);
    let mut out = Vec::new();
    for (b, block) in p.blocks.iter().enumerate() {
        for (i, inst) in block.insts().iter().enumerate() {
            let Some(desc) = p.target.op(&inst.opcode) else { continue };
            for (k, s) in inst.srcs.iter().enumerate() {
                let nonzero = matches!(s, Operand::Imm(i) if i.bits != 0);
                let index = desc.operands.get(k) == Some(&OperandKind::Index);
                if (index && nonzero) || ((is_reg(s) || nonzero) && imm_ok_at(p.target, desc, k, zero)) {
                    out.push(Opp::Operand { site: Site { block: b, inst: Some(i), src: k }, to: Operand::Imm(zero) });
                }
            }
        }
        if let TermKind::Brnz { cond, .. } = &block.term.kind {
            if is_reg(cond) {
                out.push(Opp::Operand { site: Site { block: b, inst: None, src: 0 }, to: Operand::Imm(zero) });
            }
        }
    }
    out
}

/// Virtual-register uses that an earlier-ranked value could replace.
pub fn to_earlier(p: &Program) -> Vec<Opp> {
    let scope = Scope::of(p);
    let mut out = Vec::new();
    each_use(p, &scope, true, |site, s, defs| {
        if let Some(to) = earlier(&scope, defs, s) {
            out.push(Opp::Operand { site, to });
        }
    });
    out
}

/// Every virtual-register use with every defined value of the same size
/// ranked below it (inputs first, then definition order), nearest first:
/// the replacements the second-order search tries before a removal.
pub fn to_any_earlier(p: &Program) -> Vec<Opp> {
    let scope = Scope::of(p);
    let mut out = Vec::new();
    each_use(p, &scope, false, |site, s, defs| {
        let Some(v) = s.virt() else { return };
        let (size, rank) = (scope.size(&v.name), scope.rank_of(&v.name));
        let mut lower: Vec<&SmolStr> = defs.iter().filter(|n| scope.size(n) == size && scope.rank_of(n) < rank).collect();
        lower.sort_by_key(|n| std::cmp::Reverse(scope.rank_of(n)));
        for n in lower {
            out.push(Opp::Operand { site: site.clone(), to: Operand::Virt(VirtReg { name: n.clone(), size: v.size }) });
        }
    });
    out
}

/// Visit every operand of `p` with the names defined before it (its
/// block's entry scope, then the block's earlier destinations): each
/// instruction's sources in order, then, with `conditions`, a `brnz`'s
/// condition.
fn each_use(p: &Program, scope: &Scope, conditions: bool, mut visit: impl FnMut(Site, &Operand, &BTreeSet<SmolStr>)) {
    for (b, block) in p.blocks.iter().enumerate() {
        let mut defs = scope.entry.get(b).cloned().unwrap_or_default();
        for (i, inst) in block.insts().iter().enumerate() {
            for (k, s) in inst.srcs.iter().enumerate() {
                visit(Site { block: b, inst: Some(i), src: k }, s, &defs);
            }
            if let Some((n, _)) = defined(inst.dest.as_ref()) {
                defs.insert(SmolStr::new(n));
            }
        }
        if let (true, TermKind::Brnz { cond, .. }) = (conditions, &block.term.kind) {
            visit(Site { block: b, inst: None, src: 0 }, cond, &defs);
        }
    }
}

/// The programs with two neighbouring instructions of one block swapped,
/// where the second neither reads nor redefines what the first defines and
/// does not define what the first reads (source order is a scheduling
/// priority, so the swap changes where a schedule's pressure falls).
pub fn reorders(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    for (b, block) in p.blocks.iter().enumerate() {
        for i in 1..block.insts().len() {
            let (x, y) = (&block.insts()[i - 1], &block.insts()[i]);
            let names = |o: &Operand| o.virt().map(|v| v.name.clone());
            let (dx, dy) = (x.dest.as_ref().and_then(names), y.dest.as_ref().and_then(names));
            let reads = |inst: &Inst, n: &Option<SmolStr>| n.as_ref().is_some_and(|n| inst.srcs.iter().any(|s| names(s).as_ref() == Some(n)));
            if reads(y, &dx) || reads(x, &dy) || (dx.is_some() && dx == dy) || x.dest.as_ref().is_some_and(|d| matches!(d, Operand::Phys(_))) || y.dest.as_ref().is_some_and(|d| matches!(d, Operand::Phys(_))) {
                continue;
            }
            let mut q = p.clone();
            q.blocks[b].insts_mut().swap(i - 1, i);
            out.push(q);
        }
    }
    out
}

/// The programs with one op given another opcode of the target with the
/// same operand kinds, destination kind and sizes (not a move, not an
/// outside input, not machine-only), in table order.
pub fn other_opcodes(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    for (b, block) in p.blocks.iter().enumerate() {
        for (i, inst) in block.insts().iter().enumerate() {
            let Some(desc) = p.target.op(&inst.opcode) else { continue };
            for alt in p.target.ops {
                let same = alt.operands == desc.operands && alt.dest == desc.dest && alt.sizes == desc.sizes;
                if !same || alt.name == desc.name || alt.machine_only || alt.sem == Sem::Mov || alt.sem.is_outside_input() || desc.sem.is_outside_input() {
                    continue;
                }
                let mut q = p.clone();
                q.blocks[b].insts_mut()[i].opcode = SmolStr::new_static(alt.name);
                out.push(q);
            }
        }
    }
    out
}

/// The lowest-ranked defined name of `op`'s size, if it ranks below `op`.
fn earlier(scope: &Scope, defs: &BTreeSet<SmolStr>, op: &Operand) -> Option<Operand> {
    let v = op.virt()?;
    let (size, rank) = (scope.size(&v.name), scope.rank_of(&v.name));
    let best = defs.iter().filter(|n| scope.size(n) == size).min_by_key(|n| scope.rank_of(n))?;
    (scope.rank_of(best) < rank).then(|| Operand::Virt(VirtReg { name: best.clone(), size: v.size }))
}

/// The target's plain move: one value operand, free sizes.
pub fn plain_mov(t: &Target) -> Option<&'static schedra_ir::OpDesc> {
    t.ops.iter().find(|o| o.sem == Sem::Mov && o.operands == [OperandKind::Value] && o.sizes == Sizes::Uniform)
}

/// ALU ops that could become a `mov` of one of their sources: one
/// opportunity per op (the first register or immediate source is kept).
pub fn to_mov(p: &Program) -> Vec<Opp> {
    let Some(mov) = plain_mov(p.target) else { return Vec::new() };
    let mut out = Vec::new();
    for (b, block) in p.blocks.iter().enumerate() {
        for (i, inst) in block.insts().iter().enumerate() {
            let Some(desc) = p.target.op(&inst.opcode) else { continue };
            let alu = desc.dest == Dest::Explicit && desc.sizes == Sizes::Uniform && desc.sem != Sem::Mov && !desc.sem.is_outside_input();
            if !alu || inst.dest.is_none() || inst.opcode == mov.name {
                continue;
            }
            let keep = desc.operands.iter().position(|k| *k != OperandKind::Index).filter(|&k| k < inst.srcs.len());
            if let Some(src) = keep {
                out.push(Opp::ToMov { block: b, inst: i, src });
            }
        }
    }
    out
}

/// Turn instruction `inst` of block `block` into a `mov` of its source
/// `src` (no-op when either does not exist).
pub fn make_mov(p: &mut Program, block: usize, inst: usize, src: usize) {
    let Some(mov) = plain_mov(p.target) else { return };
    let Some(i) = p.blocks.get_mut(block).and_then(|b| b.insts_mut().get_mut(inst)) else { return };
    let Some(s) = i.srcs.get(src).cloned() else { return };
    *i = Inst { opcode: SmolStr::new_static(mov.name), dest: i.dest.take(), srcs: vec![s], span: i.span };
}

/// Put `to` at `site` (no-op when the site does not exist).
pub fn replace(p: &mut Program, site: &Site, to: &Operand) {
    let Some(block) = p.blocks.get_mut(site.block) else { return };
    match site.inst {
        Some(i) => {
            if let Some(s) = block.insts_mut().get_mut(i).and_then(|inst| inst.srcs.get_mut(site.src)) {
                *s = to.clone();
            }
        }
        None => {
            if let TermKind::Brnz { cond, .. } = &mut block.term.kind {
                *cond = to.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    #[test]
    fn earlier_picks_the_input_and_zero_respects_operand_kinds() {
        let p = parse(b"target gen8\ninput %x = $g2\nb0:\n %a = add %x, %x\n %b = math.rcp %a\n %c = add %b, %a\n end\n", None).expect("parses");
        let e = to_earlier(&p);
        // %a in rcp, %b and %a in the last add can all become %x.
        assert_eq!(e.len(), 3);
        let z = to_zero(&p);
        // gen8 takes an immediate only as the last source of an ALU op.
        let sites: Vec<_> = z.iter().map(|o| match o { Opp::Operand { site, .. } => (site.inst, site.src), _ => (None, 9) }).collect();
        assert_eq!(sites, vec![(Some(0), 1), (Some(2), 1)]);
        // add, math.rcp, add: every ALU op that is not already a mov.
        assert_eq!(to_mov(&p).len(), 3);
    }

    #[test]
    fn make_mov_keeps_the_destination() {
        let mut p = parse(b"target v3d71
input %w = $rf1
b0:
 %a = fmul %w, 2.0
 %b = ldunif 7
 tlbw %a
 end
", None).expect("parses");
        assert_eq!(to_mov(&p), vec![Opp::ToMov { block: 0, inst: 0, src: 0 }]);
        make_mov(&mut p, 0, 0, 0);
        let i = &p.blocks[0].insts()[0];
        assert_eq!((i.opcode.as_str(), i.srcs.len()), ("mov", 1));
        // The float 2.0 and the uniform index 7 can become 0.
        assert_eq!(to_zero(&p).len(), 2 + 1);
    }
}
