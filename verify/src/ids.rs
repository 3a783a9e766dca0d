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

/// Whether two names are equal, compared byte by byte in place: register,
/// slot and block names are a few bytes, for which this is cheaper than
/// the `memcmp` call of `==` on strings.
pub(crate) fn same_name(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The hash of a register name in [`Vregs`]'s table.
fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    name.hash(&mut h);
    h.finish()
}
use schedra_ir::{Operand, Program, TermKind, VirtReg};

/// What an occurrence of a register name is (see [`virt_occurrences`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An input's name; the input register's size.
    Input(u8),
    /// An instruction's destination.
    Dest,
    /// An operand or a branch condition.
    Read,
}

/// Every occurrence of a virtual register name in `p`, in this order: the
/// inputs, then per block each instruction's operands then its
/// destination, then the block's branch condition. [`Vregs::id_at`]
/// counts occurrences in this order.
pub fn virt_occurrences<'p>(p: &'p Program, mut f: impl FnMut(&'p VirtReg, Role)) {
    for i in &p.inputs {
        if let Some(v) = &i.vreg {
            f(v, Role::Input(i.reg.size));
        }
    }
    for b in &p.blocks {
        for inst in b.insts() {
            for v in inst.srcs.iter().filter_map(Operand::virt) {
                f(v, Role::Read);
            }
            if let Some(v) = inst.dest.as_ref().and_then(Operand::virt) {
                f(v, Role::Dest);
            }
        }
        if let TermKind::Brnz { cond, .. } = &b.term.kind {
            if let Some(v) = cond.virt() {
                f(v, Role::Read);
            }
        }
    }
}

/// The first eight bytes of `name`, big-endian, zero-padded: if two
/// names' prefixes differ, they order as the names do (byte order).
fn prefix_key(name: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = name.len().min(8);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), name.as_bytes().get(..n)) {
        dst.copy_from_slice(src);
    }
    u64::from_be_bytes(b)
}

/// The indices of `names` (distinct names) in the names' byte order:
/// sorted by [`prefix_key`] with integer compares, the names themselves
/// compared only when two prefixes are equal.
fn name_order(names: &[&str]) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = names.iter().enumerate().map(|(i, n)| (prefix_key(n), i as u32)).collect();
    let name = |i: u32| names.get(i as usize).copied().unwrap_or("");
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| name(a.1).cmp(name(b.1))));
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// A virtual register of the source program (an index into [`Vregs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VregId(pub u32);

/// The virtual registers a source program names, with their sizes.
#[derive(Clone, Default)]
pub struct Vregs {
    /// Every name, in id order, one after another (one allocation).
    text: String,
    /// Where each id's name is in `text`.
    spans: Vec<(u32, u32)>,
    sizes: Vec<Option<u8>>,
    /// The ids (their numbers), found by the hash of their name.
    by_name: hashbrown::HashTable<u32>,
    /// Whether some name contains a `.` (so `%a.1` may name two things).
    dotted: bool,
    /// The id of each occurrence of a name (see [`Vregs::id_at`]).
    occ: Vec<VregId>,
}

impl std::fmt::Debug for Vregs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = (0..self.spans.len()).map(|i| self.name(VregId(i as u32))).collect();
        f.debug_struct("Vregs").field("names", &names).field("sizes", &self.sizes).finish_non_exhaustive()
    }
}

impl Vregs {
    /// Every virtual register `p` names (inputs, destinations, operands,
    /// branch conditions), numbered in name order. A register's size is the
    /// one its input or its definitions give (a definition without a size
    /// suffix counts as one word); `None` for a register never defined.
    /// The id of every occurrence of a name is kept, in the order of
    /// [`virt_occurrences`], for [`Vregs::id_at`].
    pub fn of(p: &Program) -> Vregs {
        // Distinct names first, in order of first occurrence (a name is
        // named many times), with each occurrence's first-occurrence index
        // and the sizes in that numbering; then the names are sorted and
        // both renumbered. At most a name per destination and per input (a
        // register is defined or an input before it is read).
        let cap = p.inputs.len() + p.blocks.iter().map(|b| b.insts().len() + 1).sum::<usize>();
        let mut names: Vec<&str> = Vec::with_capacity(cap);
        let mut sizes: Vec<Option<u8>> = Vec::with_capacity(cap);
        let mut first: Vec<u32> = Vec::with_capacity(3 * cap);
        let mut seen: hashbrown::HashTable<u32> = hashbrown::HashTable::with_capacity(cap);
        virt_occurrences(p, |v, role| {
            let n = v.name.as_str();
            let h = name_hash(n);
            let i = match seen.find(h, |i| names.get(*i as usize).is_some_and(|m| same_name(m.as_bytes(), n.as_bytes()))) {
                Some(i) => *i,
                None => {
                    let i = names.len() as u32;
                    seen.insert_unique(h, i, |i| names.get(*i as usize).map(|m| name_hash(m)).unwrap_or(0));
                    names.push(n);
                    sizes.push(None);
                    i
                }
            };
            first.push(i);
            if let Some(slot) = sizes.get_mut(i as usize) {
                *slot = match role {
                    Role::Input(reg_size) => Some(v.size.unwrap_or(reg_size)),
                    Role::Dest => v.size.or(*slot).or(Some(1)),
                    Role::Read => *slot,
                };
            }
        });
        let order = name_order(&names);
        let mut rank = vec![0u32; names.len()];
        for (k, &i) in order.iter().enumerate() {
            if let Some(r) = rank.get_mut(i as usize) {
                *r = k as u32;
            }
        }
        let sorted: Vec<&str> = order.iter().filter_map(|&i| names.get(i as usize).copied()).collect();
        let mut text = String::with_capacity(sorted.iter().map(|n| n.len()).sum());
        let mut spans = Vec::with_capacity(sorted.len());
        for n in &sorted {
            let start = text.len() as u32;
            text.push_str(n);
            spans.push((start, text.len() as u32));
        }
        // The table of first occurrences becomes the table of ids: same
        // names, same hashes, numbers renamed to ranks.
        let mut by_name = seen;
        for i in by_name.iter_mut() {
            *i = rank.get(*i as usize).copied().unwrap_or(0);
        }
        Vregs {
            text,
            spans,
            sizes: order.iter().map(|&i| sizes.get(i as usize).copied().flatten()).collect(),
            by_name,
            dotted: sorted.iter().any(|n| n.contains('.')),
            occ: first.iter().map(|&i| VregId(rank.get(i as usize).copied().unwrap_or(0))).collect(),
        }
    }

    /// The id of the `k`-th occurrence of a register name in the order of
    /// [`virt_occurrences`], given its name: from the table kept by
    /// [`Vregs::of`] when that occurrence has this name (no hashing), else
    /// by name as [`Vregs::id`].
    pub fn id_at(&self, k: usize, name: &str) -> Option<VregId> {
        match self.occ.get(k) {
            Some(&id) if self.is_named(id, name) => Some(id),
            _ => self.id(name),
        }
    }

    /// The number of registers (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the program names no register.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The id of a register named by the program (`None` for other names).
    pub fn id(&self, name: &str) -> Option<VregId> {
        self.by_name.find(name_hash(name), |&i| self.is_named(VregId(i), name)).map(|&i| VregId(i))
    }

    /// The name of a register (without `%`; `?` for a foreign id).
    pub fn name(&self, id: VregId) -> &str {
        self.name_of(id).unwrap_or("?")
    }

    /// Whether register `id` is named `name` (a byte compare).
    fn is_named(&self, id: VregId, name: &str) -> bool {
        let Some(&(start, end)) = self.spans.get(id.0 as usize) else { return false };
        self.text.as_bytes().get(start as usize..end as usize).is_some_and(|t| same_name(t, name.as_bytes()))
    }

    /// The name of a register (`None` for a foreign id).
    fn name_of(&self, id: VregId) -> Option<&str> {
        let &(start, end) = self.spans.get(id.0 as usize)?;
        self.text.get(start as usize..end as usize)
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
    fn name_order_is_byte_order() {
        let names = ["v12", "v1", "v1\0", "", "abcdefgh", "abcdefgh1", "abcdefgh0", "abcdefg", "abcdefgi", "\u{e9}", "v2", "x.1", "x", "abcdefghabcdefgh"];
        let mut want: Vec<&str> = names.to_vec();
        want.sort_unstable();
        let got: Vec<&str> = name_order(&names).iter().map(|&i| names[i as usize]).collect();
        assert_eq!(got, want);
    }

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
        // Occurrences: input z, dest b, reads b and u, dest a, read a.
        let mut occ = Vec::new();
        virt_occurrences(&p, |r, _| occ.push(r.name.as_str()));
        assert_eq!(occ, ["z", "b", "b", "u", "a", "a"]);
        assert!(occ.iter().enumerate().all(|(k, n)| v.id_at(k, n) == v.id(n)));
        assert_eq!(v.id_at(0, "a"), v.id("a"), "a name that is not the occurrence's is looked up");
    }
}
