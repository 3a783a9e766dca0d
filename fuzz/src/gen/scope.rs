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

/// Sizes below this have their definitions counted as they change.
const COUNTED: usize = 8;

/// No index: the virtual register is not defined here.
const ABSENT: u32 = u32::MAX;

/// The locations defined on every path to the current point, oldest first.
/// Invariant: each location appears at most once in `defs`; `virt_at[id]`
/// is the index in `defs` of virtual register `id` ([`ABSENT`] if it is
/// not there); `counts[s]` is the number of definitions of size `s` (for
/// `s < COUNTED`) and `virt_counts[s]` the number of those that are
/// virtual registers.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    defs: Vec<Def>,
    virt_at: Vec<u32>,
    counts: [u32; COUNTED],
    virt_counts: [u32; COUNTED],
}

impl Scope {
    /// An empty scope with room for `n` definitions.
    pub fn with_capacity(n: usize) -> Scope {
        Scope { defs: Vec::with_capacity(n), virt_at: vec![ABSENT; 2 * n], counts: [0; COUNTED], virt_counts: [0; COUNTED] }
    }
    /// A copy with room to grow (the generator keeps defining in it).
    pub fn snapshot(&self) -> Scope {
        let mut defs = Vec::with_capacity(self.defs.len() + 32);
        defs.extend_from_slice(&self.defs);
        let mut virt_at = Vec::with_capacity(self.virt_at.len() + 64);
        virt_at.extend_from_slice(&self.virt_at);
        virt_at.resize(self.virt_at.len() + 64, ABSENT);
        Scope { defs, virt_at, counts: self.counts, virt_counts: self.virt_counts }
    }
    /// A scope of `defs` (each location at most once).
    fn of(defs: Vec<Def>) -> Scope {
        let top = defs.iter().filter_map(|d| if let Loc::Virt(id) = d.loc { Some(id as usize + 1) } else { None }).max().unwrap_or(0);
        let mut s = Scope { defs, virt_at: vec![ABSENT; top + 64], counts: [0; COUNTED], virt_counts: [0; COUNTED] };
        for i in 0..s.defs.len() {
            if let Some(&d) = s.defs.get(i) {
                s.note(d, i);
            }
        }
        s
    }
    /// Count `d`, found at index `i` of `defs`, in the side tables.
    fn note(&mut self, d: Def, i: usize) {
        if let Some(c) = self.counts.get_mut(d.size as usize) {
            *c += 1;
        }
        if let Loc::Virt(id) = d.loc {
            if let Some(c) = self.virt_counts.get_mut(d.size as usize) {
                *c += 1;
            }
            let id = id as usize;
            if self.virt_at.len() <= id {
                self.virt_at.resize(id + 1, ABSENT);
            }
            if let Some(x) = self.virt_at.get_mut(id) {
                *x = i as u32;
            }
        }
    }
    /// The index of `loc` in `defs`.
    fn index(&self, loc: Loc) -> Option<usize> {
        match loc {
            Loc::Virt(id) => self.virt_at.get(id as usize).filter(|&&i| i != ABSENT).map(|&i| i as usize),
            Loc::Phys(_) => self.defs.iter().position(|d| d.loc == loc),
        }
    }
    /// Take the definition at index `i` out of `defs` and the side tables.
    fn remove(&mut self, i: usize) {
        if i >= self.defs.len() {
            return;
        }
        let old = self.defs.remove(i);
        if let Some(c) = self.counts.get_mut(old.size as usize) {
            *c -= 1;
        }
        if let Loc::Virt(id) = old.loc {
            if let Some(c) = self.virt_counts.get_mut(old.size as usize) {
                *c -= 1;
            }
            if let Some(x) = self.virt_at.get_mut(id as usize) {
                *x = ABSENT;
            }
        }
        for d in self.defs.get(i..).unwrap_or(&[]) {
            if let Loc::Virt(id) = d.loc {
                if let Some(x) = self.virt_at.get_mut(id as usize) {
                    *x -= 1;
                }
            }
        }
    }
    /// Record a (re)definition of `loc`: it becomes the newest, unused.
    pub fn define(&mut self, loc: Loc, size: u8) {
        if let Some(i) = self.index(loc) {
            self.remove(i);
        }
        let d = Def { loc, size, uses: 0 };
        self.defs.push(d);
        self.note(d, self.defs.len() - 1);
    }
    /// Forget `loc`: later code does not read it.
    pub fn forget(&mut self, loc: Loc) {
        if let Some(i) = self.index(loc) {
            self.remove(i);
        }
    }
    /// Record a read of `loc`.
    pub fn used(&mut self, loc: Loc) {
        if let Some(d) = self.index(loc).and_then(|i| self.defs.get_mut(i)) {
            d.uses += 1;
        }
    }
    /// The locations defined in both `self` and `other` (order and use
    /// counts of `self`, the larger use count kept).
    pub fn meet(&self, other: &Scope) -> Scope {
        let mut defs = Vec::with_capacity(self.defs.len() + 32);
        defs.extend(self.defs.iter().filter_map(|d| other.get(d.loc).map(|o| Def { uses: d.uses.max(o.uses), ..*d })));
        Scope::of(defs)
    }
    /// Forget every virtual register: only physical registers stay
    /// defined (the start of a block on a target whose values do not cross
    /// blocks).
    pub fn keep_registers(&mut self) {
        let defs: Vec<Def> = self.defs.iter().filter(|d| matches!(d.loc, Loc::Phys(_))).copied().collect();
        *self = Scope::of(defs);
    }
    /// The definition of `loc`, if it is defined.
    pub fn get(&self, loc: Loc) -> Option<Def> {
        self.index(loc).and_then(|i| self.defs.get(i)).copied()
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
    /// How many definitions of `size` registers there are: `count(size,
    /// |_| true)` without the walk.
    pub fn count_all(&self, size: u8) -> usize {
        match self.counts.get(size as usize) {
            Some(&c) => c as usize,
            None => self.count(size, |_| true),
        }
    }
    /// How many virtual registers of `size` registers are defined whose id
    /// is not in `except`: `count(size, |d| matches!(d.loc, Loc::Virt(id)
    /// if !except.contains(&id)))` without the walk.
    pub fn count_virt_except(&self, size: u8, except: &[u32]) -> usize {
        let Some(&all) = self.virt_counts.get(size as usize) else {
            return self.count(size, |d| matches!(d.loc, Loc::Virt(id) if !except.contains(&id)));
        };
        let defined = |(i, id): (usize, &u32)| !except.get(..i).unwrap_or(&[]).contains(id) && self.get(Loc::Virt(*id)).is_some_and(|d| d.size == size);
        all as usize - except.iter().enumerate().filter(|&x| defined(x)).count()
    }
    /// `nth(size, k, |_| true)`, walking from the newer end when `k` is
    /// in the newer half.
    pub fn nth_any(&self, size: u8, k: usize) -> Option<Def> {
        let n = self.count_all(size);
        if k >= n {
            return None;
        }
        if 2 * k < n {
            return self.nth(size, k, |_| true);
        }
        self.defs.iter().rev().filter(|d| d.size == size).nth(n - 1 - k).copied()
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
    fn keep_registers_forgets_virtual_registers() {
        let mut s = Scope::default();
        s.define(Loc::Virt(1), 1);
        s.define(Loc::Phys(PhysReg::one(5)), 1);
        s.define(Loc::Virt(2), 1);
        s.keep_registers();
        assert_eq!(s.defs().len(), 1);
        assert_eq!(s.get(Loc::Virt(1)), None);
        assert_eq!(s.count_all(1), 1);
        assert!(s.get(Loc::Phys(PhysReg::one(5))).is_some());
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

    #[test]
    fn counted_lookups_agree_with_the_walks() {
        let mut s = Scope::default();
        for i in 0..40u32 {
            s.define(Loc::Virt(i % 13), (i % 3) as u8 + 1);
            s.define(Loc::Phys(PhysReg::one((i % 5) as u16)), 1);
            s.used(Loc::Virt(i % 7));
            for d in s.defs() {
                assert_eq!(s.get(d.loc), Some(*d));
            }
            assert_eq!(s.get(Loc::Virt(99)), None);
            let m = s.meet(&s.clone());
            for size in 0..10u8 {
                let n = s.count(size, |_| true);
                assert_eq!((s.count_all(size), m.count_all(size)), (n, n));
                for k in 0..=n {
                    assert_eq!(s.nth_any(size, k), s.nth(size, k, |_| true));
                }
                for except in [&[][..], &[1, 2], &[3, 3, 40], &[0, 1, 2, 3, 4, 5, 6]] {
                    let walk = s.count(size, |d| matches!(d.loc, Loc::Virt(id) if !except.contains(&id)));
                    assert_eq!(s.count_virt_except(size, except), walk);
                }
            }
        }
    }
}
