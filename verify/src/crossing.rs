//! Source values that cross blocks on a target whose blocks are verified
//! one at a time (a bypass network, lima-gp), with the verifier's own
//! liveness and block order.
//!
//! A virtual register is live on entry to a block when some path from the
//! block's start reads it before writing it (`in = use ∪ (out − def)`,
//! `out = ∪ in(succ)`, iterated to the fixpoint). Blocks are visited in
//! reverse postorder from the first block, so every reachable block but
//! the first has a visited predecessor when it is visited; the component
//! holding each live-in value is chosen at the first edge into the block
//! and checked on every other edge (the back edges of loops included),
//! which makes the per-block proofs one induction over the CFG. A block
//! whose predecessors are all visited before it (no back edge enters it)
//! also knows, from those edges, which components hold equal terms.
//!
//! Invariant: [`Crossing::live_in`] is a superset of what any execution
//! reads before writing; [`Crossing::order`] lists each reachable block
//! exactly once, the first block first.

use schedra_ir::{Block, Operand, Program, TermKind};
use std::collections::BTreeSet;

/// Liveness and visiting order of a source program's blocks.
#[derive(Clone, Debug, Default)]
pub struct Crossing {
    /// Per block (source order): the virtual registers live on entry.
    pub live_in: Vec<BTreeSet<String>>,
    /// Per block: successor block indices, in terminator order.
    pub succs: Vec<Vec<usize>>,
    /// Reachable blocks in reverse postorder from block 0.
    pub order: Vec<usize>,
}

fn virt(o: &Operand) -> Option<&str> {
    match o {
        Operand::Virt(v) => Some(v.name.as_str()),
        _ => None,
    }
}

/// What a block reads before writing, and what it writes.
fn use_def(b: &Block) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut uses, mut defs) = (BTreeSet::new(), BTreeSet::new());
    let term = match &b.term.kind {
        TermKind::Brnz { cond, .. } => virt(cond),
        _ => None,
    };
    for i in b.insts() {
        for s in i.srcs.iter().filter_map(virt).filter(|s| !defs.contains(*s)) {
            uses.insert(s.to_string());
        }
        if let Some(d) = i.dest.as_ref().and_then(virt) {
            defs.insert(d.to_string());
        }
    }
    if let Some(c) = term.filter(|c| !defs.contains(*c)) {
        uses.insert(c.to_string());
    }
    (uses, defs)
}

impl Crossing {
    /// The liveness and order of `p`'s blocks.
    pub fn of(p: &Program) -> Crossing {
        let table = schedra_ir::cfg::Successors::new(p);
        let succs: Vec<Vec<usize>> = (0..p.blocks.len()).map(|b| table.of(b).to_vec()).collect();
        let ud: Vec<_> = p.blocks.iter().map(use_def).collect();
        let n = p.blocks.len();
        let mut live_in = vec![BTreeSet::new(); n];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                let out: BTreeSet<String> = succs.get(b).into_iter().flatten().filter_map(|s| live_in.get(*s)).flatten().cloned().collect();
                let Some((uses, defs)) = ud.get(b) else { continue };
                let inn: BTreeSet<String> = uses.iter().cloned().chain(out.into_iter().filter(|v| !defs.contains(v))).collect();
                if let Some(x) = live_in.get_mut(b).filter(|x| **x != inn) {
                    *x = inn;
                    changed = true;
                }
            }
        }
        let order = schedra_ir::cfg::reverse_postorder(succs.len(), |b| succs[b].as_slice());
        Crossing { live_in, succs, order }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_values_are_live_around_the_back_edge() {
        let p = schedra_ir::parse::parse(b"target lima-gp\nb0:\n    %i = ld_const 0\n    %k = ld_uni 3\n    jmp h\nh:\n    %i = add %i, %k\n    %m = lt %i, %k\n    brnz %m, h, x\nx:\n    st_var 0, %i\n    end\n", None).expect("parse");
        let c = Crossing::of(&p);
        assert_eq!(c.order, vec![0, 1, 2]);
        let names = |b: usize| c.live_in[b].iter().cloned().collect::<Vec<_>>();
        assert_eq!(names(0), Vec::<String>::new());
        assert_eq!(names(1), ["i", "k"]);
        assert_eq!(names(2), ["i"]);
    }

    #[test]
    fn unreachable_blocks_are_not_visited() {
        let p = schedra_ir::parse::parse(b"target lima-gp\nb0:\n    end\ndead:\n    jmp b0\n", None).expect("parse");
        assert_eq!(Crossing::of(&p).order, vec![0]);
    }
}
