//! Small integer ids for the source's virtual registers.
//!
//! The dataflow keys its sets and maps by source variables ([`Var`]); with
//! the register's name inside, every copy of a variable was a `String`
//! allocation. [`Vregs`] numbers the names once per verification instead,
//! so that a variable is a `Copy` pair of integers.
//!
//! Invariant: ids are handed out in the names' byte order, so comparing two
//! [`VregId`]s gives the same answer as comparing their names. Every
//! ordered structure over variables (which variable of a class names its
//! symbol, which is reported first) therefore orders exactly as it would
//! over the names themselves.
//!
//! [`Var`]: crate::symbolic::Var

/// The hash of a register name in [`Vregs`]'s table.
fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    name.hash(&mut h);
    h.finish()
}
use schedra_ir::{Operand, Program, TermKind};

/// A virtual register of the source program (an index into [`Vregs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VregId(pub u32);

/// The virtual registers a source program names, with their sizes.
#[derive(Clone, Default)]
pub struct Vregs {
    names: Vec<String>,
    sizes: Vec<Option<u8>>,
    /// The ids, found by the hash of their name.
    by_name: hashbrown::HashTable<VregId>,
    /// Whether some name contains a `.` (so `%a.1` may name two things).
    dotted: bool,
}

impl std::fmt::Debug for Vregs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vregs").field("names", &self.names).field("sizes", &self.sizes).finish_non_exhaustive()
    }
}

impl Vregs {
    /// Every virtual register `p` names (inputs, destinations, operands,
    /// branch conditions), numbered in name order. A register's size is the
    /// one its input or its definitions give (a definition without a size
    /// suffix counts as one word); `None` for a register never defined.
    pub fn of(p: &Program) -> Vregs {
        // Distinct names first (a name is named many times), then sorted.
        // At most a name per destination and per input (a register is
        // defined or an input before it is read, in a valid program).
        let cap = p.inputs.len() + p.blocks.iter().map(|b| b.insts.len() + 1).sum::<usize>();
        let mut names: Vec<&str> = Vec::with_capacity(cap);
        let mut seen: hashbrown::HashTable<u32> = hashbrown::HashTable::with_capacity(cap);
        fn add<'p>(n: &'p str, names: &mut Vec<&'p str>, seen: &mut hashbrown::HashTable<u32>) {
            let h = name_hash(n);
            if seen.find(h, |i| names.get(*i as usize) == Some(&n)).is_none() {
                seen.insert_unique(h, names.len() as u32, |i| names.get(*i as usize).map(|m| name_hash(m)).unwrap_or(0));
                names.push(n);
            }
        }
        for i in &p.inputs {
            if let Some(v) = &i.vreg {
                add(&v.name, &mut names, &mut seen);
            }
        }
        for b in &p.blocks {
            for inst in &b.insts {
                for v in inst.dest.iter().chain(&inst.srcs).filter_map(Operand::virt) {
                    add(&v.name, &mut names, &mut seen);
                }
            }
            if let TermKind::Brnz { cond, .. } = &b.term.kind {
                if let Some(v) = cond.virt() {
                    add(&v.name, &mut names, &mut seen);
                }
            }
        }
        names.sort_unstable();
        let mut by_name = hashbrown::HashTable::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            by_name.insert_unique(name_hash(n), VregId(i as u32), |id: &VregId| names.get(id.0 as usize).map(|n| name_hash(n)).unwrap_or(0));
        }
        let dotted = names.iter().any(|n| n.contains('.'));
        let mut vregs = Vregs { names: names.iter().map(|n| n.to_string()).collect(), sizes: vec![None; names.len()], by_name, dotted };
        vregs.read_sizes(p);
        vregs
    }

    /// Sizes from the inputs, then from the definitions in program order.
    fn read_sizes(&mut self, p: &Program) {
        for i in &p.inputs {
            if let Some(v) = &i.vreg {
                self.set_size(&v.name, |_| Some(v.size.unwrap_or(i.reg.size)));
            }
        }
        for inst in p.blocks.iter().flat_map(|b| &b.insts) {
            if let Some(Operand::Virt(v)) = &inst.dest {
                self.set_size(&v.name, |old| v.size.or(old).or(Some(1)));
            }
        }
    }

    fn set_size(&mut self, name: &str, f: impl FnOnce(Option<u8>) -> Option<u8>) {
        if let Some(slot) = self.id(name).and_then(|id| self.sizes.get_mut(id.0 as usize)) {
            *slot = f(*slot);
        }
    }

    /// The id of a register named by the program (`None` for other names).
    pub fn id(&self, name: &str) -> Option<VregId> {
        self.by_name.find(name_hash(name), |id| self.names.get(id.0 as usize).is_some_and(|n| n == name)).copied()
    }

    /// The name of a register (without `%`; `?` for a foreign id).
    pub fn name(&self, id: VregId) -> &str {
        self.names.get(id.0 as usize).map(String::as_str).unwrap_or("?")
    }

    /// The register whose word 0 is spelled like word `w` of `id`
    /// (`%a.1` is both word 1 of `%a` and register `%a.1`), if there is one
    /// and `w > 0`.
    pub fn spelled_like(&self, id: VregId, w: u8) -> Option<VregId> {
        if !self.dotted || w == 0 {
            return None;
        }
        self.id(&format!("{}.{w}", self.name(id)))
    }

    /// The register's size in words, when the program defines it.
    pub fn size(&self, id: VregId) -> Option<u8> {
        self.sizes.get(id.0 as usize).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_name_order_and_sizes_follow_definitions() {
        let text = "target v3d71\ninput %z = $rf0\nb0:\n    %b:2 = ldvary 0\n    %a = fadd %b, %u\n    tlbw %a\n    end\n";
        let p = schedra_ir::parse::parse(text.as_bytes(), None).expect("parses");
        let v = Vregs::of(&p);
        let ids: Vec<VregId> = ["a", "b", "u", "z"].iter().filter_map(|n| v.id(n)).collect();
        assert_eq!(ids.len(), 4);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert_eq!(ids.iter().map(|i| v.name(*i)).collect::<Vec<_>>(), ["a", "b", "u", "z"]);
        assert_eq!(ids.iter().map(|i| v.size(*i)).collect::<Vec<_>>(), [Some(1), Some(2), None, Some(1)]);
        assert_eq!(v.id("nope"), None);
    }
}
