//! What is defined at the current point of a program being generated.
//!
//! A [`Scope`] lists the locations (virtual registers by id, preallocated
//! physical register runs) that hold a value on *every* path from the entry
//! to the current point, newest definition last. At a join the generator
//! takes the [`Scope::meet`] of the arms (the locations defined on both), so
//! the invariant "every use is reached by a definition on every path" holds
//! by construction. Loop bodies run at least once, so what a body defines
//! stays defined after the loop.

use schedra_ir::PhysReg;

/// A location that can hold a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// A virtual register, by the generator's id (`%N`).
    Virt(u32),
    /// A preallocated physical register run.
    Phys(PhysReg),
}

/// One defined location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Def {
    /// Where the value is.
    pub loc: Loc,
    /// Its size in registers.
    pub size: u8,
    /// How often it has been read since it was defined.
    pub uses: u32,
}

/// The locations defined on every path to the current point, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    defs: Vec<Def>,
}

impl Scope {
    /// Record a (re)definition of `loc`: it becomes the newest, unused.
    pub fn define(&mut self, loc: Loc, size: u8) {
        self.defs.retain(|d| d.loc != loc);
        self.defs.push(Def { loc, size, uses: 0 });
    }
    /// Record a read of `loc`.
    pub fn used(&mut self, loc: Loc) {
        if let Some(d) = self.defs.iter_mut().find(|d| d.loc == loc) {
            d.uses += 1;
        }
    }
    /// The locations defined in both `self` and `other` (order and use
    /// counts of `self`, the larger use count kept).
    pub fn meet(&self, other: &Scope) -> Scope {
        let defs = self
            .defs
            .iter()
            .filter_map(|d| other.get(d.loc).map(|o| Def { uses: d.uses.max(o.uses), ..*d }))
            .collect();
        Scope { defs }
    }
    /// The definition of `loc`, if it is defined.
    pub fn get(&self, loc: Loc) -> Option<Def> {
        self.defs.iter().find(|d| d.loc == loc).copied()
    }
    /// Every definition, oldest first.
    pub fn defs(&self) -> &[Def] {
        &self.defs
    }
    /// How many definitions of `size` registers satisfy `keep`.
    pub fn count(&self, size: u8, keep: impl Fn(&Def) -> bool) -> usize {
        self.defs.iter().filter(|d| d.size == size && keep(d)).count()
    }
    /// The `k`-th (oldest first) definition of `size` registers satisfying
    /// `keep`.
    pub fn nth(&self, size: u8, k: usize, keep: impl Fn(&Def) -> bool) -> Option<Def> {
        self.defs.iter().filter(|d| d.size == size && keep(d)).nth(k).copied()
    }
    /// Definitions of `size` registers for which `keep` holds, oldest first.
    pub fn of_size(&self, size: u8, keep: impl Fn(&Def) -> bool) -> Vec<Def> {
        self.defs.iter().filter(|d| d.size == size && keep(d)).copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meet_keeps_only_common_locations() {
        let mut a = Scope::default();
        a.define(Loc::Virt(1), 1);
        let mut b = a.clone();
        a.define(Loc::Virt(2), 1);
        b.define(Loc::Phys(PhysReg::one(5)), 1);
        b.used(Loc::Virt(1));
        let m = a.meet(&b);
        assert_eq!(m.defs().len(), 1);
        assert_eq!(m.defs()[0].loc, Loc::Virt(1));
        assert_eq!(m.defs()[0].uses, 1);
    }

    #[test]
    fn redefinition_moves_to_newest() {
        let mut s = Scope::default();
        s.define(Loc::Virt(1), 1);
        s.define(Loc::Virt(2), 2);
        s.used(Loc::Virt(1));
        s.define(Loc::Virt(1), 1);
        assert_eq!(s.defs().last().map(|d| (d.loc, d.uses)), Some((Loc::Virt(1), 0)));
        assert_eq!(s.of_size(2, |_| true).len(), 1);
    }
}
