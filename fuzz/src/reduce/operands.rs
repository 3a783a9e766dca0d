//! Operand simplification: a register read becomes the immediate 0 or an
//! earlier-defined value of the same size.
//!
//! - [`to_zero`]: every register source where the opcode and the target
//!   accept the immediate 0 (and every `brnz` condition);
//! - [`to_earlier`]: every virtual-register use for which a value of the
//!   same size with a strictly lower rank (inputs first, then definition
//!   order) is defined on every path to the use; the lowest-ranked one is
//!   chosen.
//!
//! Both cut dataflow edges so that the instruction removal pass finds more
//! dead code. Invariant: each accepted replacement strictly lowers the
//! number of register reads or the sum of the ranks read, so the passes
//! cannot undo each other forever.

use super::passes::Opp;
use super::repair::imm_ok_at;
use super::scope::{defined, Scope};
use schedra_ir::{Imm, Operand, Program, TermKind, VirtReg};
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
        for (i, inst) in block.insts.iter().enumerate() {
            let Some(desc) = p.target.op(&inst.opcode) else { continue };
            for (k, s) in inst.srcs.iter().enumerate() {
                if is_reg(s) && imm_ok_at(p.target, desc, k, zero) {
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
    for (b, block) in p.blocks.iter().enumerate() {
        let mut defs = scope.entry.get(b).cloned().unwrap_or_default();
        for (i, inst) in block.insts.iter().enumerate() {
            for (k, s) in inst.srcs.iter().enumerate() {
                if let Some(to) = earlier(&scope, &defs, s) {
                    out.push(Opp::Operand { site: Site { block: b, inst: Some(i), src: k }, to });
                }
            }
            if let Some((n, _)) = defined(inst.dest.as_ref()) {
                defs.insert(n.to_string());
            }
        }
        if let TermKind::Brnz { cond, .. } = &block.term.kind {
            if let Some(to) = earlier(&scope, &defs, cond) {
                out.push(Opp::Operand { site: Site { block: b, inst: None, src: 0 }, to });
            }
        }
    }
    out
}

/// The lowest-ranked defined name of `op`'s size, if it ranks below `op`.
fn earlier(scope: &Scope, defs: &BTreeSet<String>, op: &Operand) -> Option<Operand> {
    let v = op.virt()?;
    let (size, rank) = (scope.size(&v.name), scope.rank_of(&v.name));
    let best = defs.iter().filter(|n| scope.size(n) == size).min_by_key(|n| scope.rank_of(n))?;
    (scope.rank_of(best) < rank).then(|| Operand::Virt(VirtReg { name: best.clone(), size: v.size }))
}

/// Put `to` at `site` (no-op when the site does not exist).
pub fn replace(p: &mut Program, site: &Site, to: &Operand) {
    let Some(block) = p.blocks.get_mut(site.block) else { return };
    match site.inst {
        Some(i) => {
            if let Some(s) = block.insts.get_mut(i).and_then(|inst| inst.srcs.get_mut(site.src)) {
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
    }
}
