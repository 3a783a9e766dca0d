//! Instruction removal: every instruction is one opportunity.
//!
//! Removing a set of instructions is well defined on the program the pass
//! started from: the chosen instructions are dropped all at once, and the
//! uses they leave undefined are repaired afterwards ([`super::repair`]) by
//! an earlier value, an immediate or a `mov 0`.
//!
//! Invariant: opportunities are listed in program order (block, then
//! instruction), so ddmin's chunks are runs of neighbouring instructions.

use super::passes::Opp;
use schedra_ir::Program;
use std::collections::BTreeSet;

/// One opportunity per instruction, in program order.
pub fn opportunities(p: &Program) -> Vec<Opp> {
    let mut out = Vec::new();
    for (b, block) in p.blocks.iter().enumerate() {
        for i in 0..block.insts().len() {
            out.push(Opp::Inst { block: b, inst: i });
        }
    }
    out
}

/// Drop the instructions `(block, index)` in `chosen` (indices that do not
/// exist are ignored).
pub fn remove(p: &mut Program, chosen: &BTreeSet<(usize, usize)>) {
    for (b, block) in p.blocks.iter_mut().enumerate() {
        let mut i = 0;
        if let Some(l) = block.inst_list() {
            l.retain(|_| {
                i += 1;
                !chosen.contains(&(b, i - 1))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    #[test]
    fn removes_exactly_the_chosen_instructions() {
        let p0 = parse(b"target v3d71\nb0:\n %a = ldunif 0\n %b = ldunif 1\n %c = ldunif 2\n end\n", None).expect("parses");
        assert_eq!(opportunities(&p0).len(), 3);
        let mut p = p0.clone();
        remove(&mut p, &[(0, 0), (0, 2), (5, 5)].into_iter().collect());
        assert_eq!(p.blocks[0].insts().len(), 1);
        assert_eq!(p.blocks[0].insts()[0], p0.blocks[0].insts()[1]);
    }
}
