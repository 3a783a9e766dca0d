//! Which virtual registers are defined at each point of a source program.
//!
//! Algorithm: a forward "definitely defined" dataflow over the CFG. The
//! entry block starts with the `input` registers; every other block starts
//! with the intersection of its predecessors' exit sets; a block's exit set
//! is its entry set plus the names its instructions define. Non-entry blocks
//! start at "everything" (the top of the lattice) and the sets only shrink,
//! so the iteration reaches its greatest fixpoint in at most
//! `blocks × names` steps.
//!
//! Invariant: a name in [`Scope::entry`]`[b]` is defined on every path from
//! the entry to block `b` (for blocks reachable from the entry). The reducer
//! uses it to find the uses that a removal left undefined and the values a
//! use may be replaced by.

use schedra_ir::{Operand, Program};
use schedra_ir::SmolStr;
use std::collections::{BTreeMap, BTreeSet};

/// The names defined on entry to each block, plus each name's size and its
/// position in definition order.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Per block (by index): names defined on every path to its start.
    pub entry: Vec<BTreeSet<SmolStr>>,
    /// Each name's size (from its first definition or `input`).
    pub sizes: BTreeMap<SmolStr, u8>,
    /// Each name's rank: inputs first, then first definitions in text order.
    pub rank: BTreeMap<SmolStr, usize>,
}

/// The name a destination operand defines, with its size.
pub fn defined(dest: Option<&Operand>) -> Option<(&str, u8)> {
    let v = dest?.virt()?;
    Some((v.name.as_str(), v.size.unwrap_or(1)))
}

impl Scope {
    /// Compute the scope of `p` (source form). Never panics.
    pub fn of(p: &Program) -> Scope {
        let (sizes, rank) = names(p);
        let all: BTreeSet<SmolStr> = sizes.keys().cloned().collect();
        let n = p.blocks.len();
        let inputs: BTreeSet<SmolStr> = p.inputs.iter().filter_map(|i| i.vreg.as_ref()).map(|v| v.name.clone()).collect();
        let mut entry: Vec<BTreeSet<SmolStr>> = vec![all; n];
        if let Some(first) = entry.first_mut() {
            first.clone_from(&inputs);
        }
        let preds = predecessors(p);
        let mut changed = true;
        while changed {
            changed = false;
            for b in 0..n {
                let mut set = if b == 0 { inputs.clone() } else { entry[b].clone() };
                let mut first_pred = b != 0;
                for &q in preds.get(b).map(Vec::as_slice).unwrap_or(&[]) {
                    let out = exit_set(p, q, &entry[q]);
                    set = if first_pred { out } else { set.intersection(&out).cloned().collect() };
                    first_pred = false;
                }
                if set != entry[b] {
                    entry[b] = set;
                    changed = true;
                }
            }
        }
        Scope { entry, sizes, rank }
    }

    /// The size of `name` (1 when unknown).
    pub fn size(&self, name: &str) -> u8 {
        self.sizes.get(name).copied().unwrap_or(1)
    }

    /// The rank of `name` (past every known name when unknown).
    pub fn rank_of(&self, name: &str) -> usize {
        self.rank.get(name).copied().unwrap_or(usize::MAX)
    }
}

/// The entry set of block `b` plus the names its instructions define.
fn exit_set(p: &Program, b: usize, entry: &BTreeSet<SmolStr>) -> BTreeSet<SmolStr> {
    let mut out = entry.clone();
    if let Some(block) = p.blocks.get(b) {
        for i in block.insts() {
            if let Some((name, _)) = defined(i.dest.as_ref()) {
                out.insert(SmolStr::new(name));
            }
        }
    }
    out
}

/// The size of every name that is an input or a destination (cheaper than
/// [`Scope::of`] when only sizes are needed).
pub fn sizes(p: &Program) -> BTreeMap<SmolStr, u8> {
    names(p).0
}

/// Sizes and ranks of every name that is an input or a destination.
fn names(p: &Program) -> (BTreeMap<SmolStr, u8>, BTreeMap<SmolStr, usize>) {
    let mut sizes = BTreeMap::new();
    let mut rank = BTreeMap::new();
    let mut add = |name: &str, size: u8| {
        if !sizes.contains_key(name) {
            rank.insert(SmolStr::new(name), sizes.len());
            sizes.insert(SmolStr::new(name), size);
        }
    };
    for i in &p.inputs {
        if let Some(v) = &i.vreg {
            add(&v.name, v.size.unwrap_or(i.reg.size));
        }
    }
    for b in &p.blocks {
        for i in b.insts() {
            if let Some((name, size)) = defined(i.dest.as_ref()) {
                add(name, size);
            }
        }
    }
    (sizes, rank)
}

/// Predecessor block indices of every block (targets that name no block are
/// ignored).
pub fn predecessors(p: &Program) -> Vec<Vec<usize>> {
    let succs = schedra_ir::cfg::Successors::new(p);
    let preds = schedra_ir::cfg::Predecessors::new(succs.len(), |b| succs.of(b));
    (0..succs.len())
        .map(|b| {
            let mut list = preds.of(b).to_vec();
            // Two edges from one block are listed one after the other.
            list.dedup();
            list
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    #[test]
    fn join_keeps_only_names_defined_on_both_paths() {
        let text = "target v3d71\ninput %w = $rf1\nb0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n %x = mov %c\n %y = mov %c\n jmp b3\nb2:\n %x = mov %w\n jmp b3\nb3:\n tlbw %x\n end\n";
        let p = parse(text.as_bytes(), None).expect("parses");
        let s = Scope::of(&p);
        let b3: Vec<_> = s.entry[3].iter().map(SmolStr::as_str).collect();
        assert_eq!(b3, vec!["c", "w", "x"]);
        assert_eq!(s.rank_of("w"), 0);
        assert!(s.rank_of("c") < s.rank_of("x"));
    }
}
