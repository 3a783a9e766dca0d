//! What the dataflow knows at one block entry, as sorted vectors.
//!
//! [`Facts`] says which machine locations hold which source variables on
//! every incoming path, and which locations and variables equal a closed
//! term on every path (see [`crate::dataflow`]). The fixpoint builds, meets,
//! compares and copies these states on every block visit, so they are flat
//! sorted vectors of `Copy` pairs rather than nested ordered maps: the meet
//! is a merge of two sorted lists and a copy is one allocation per list.
//!
//! Variables are numbers of [`crate::srccode::SrcCode::var`], which
//! order as the variables themselves do.
//!
//! Invariant: `held` is sorted by (location, variable) without duplicates,
//! so its pairs group by location in location order with each location's
//! variables in order (the iteration order of the map of sets it replaces);
//! `loc_closed` and `var_closed` are sorted by key with one entry per key.

use crate::symbolic::Loc;

/// A source variable, by number (see [`crate::srccode::SrcCode::var`]).
pub type VarNo = u32;
use crate::term::Term;

/// What is known at one block entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    held: Vec<(Loc, VarNo)>,
    loc_closed: Vec<(Loc, Term)>,
    var_closed: Vec<(VarNo, Term)>,
}

/// Sort by key and keep one entry per key: the one pushed last.
fn by_key_last<K: Ord + Copy>(mut v: Vec<(K, Term)>) -> Vec<(K, Term)> {
    // Already sorted with one entry per key (the usual case): nothing to do.
    if v.is_sorted_by(|a, b| a.0 < b.0) {
        return v;
    }
    // A stable sort keeps equal keys in push order; keep the last of each
    // (in place: `kept` entries are final).
    v.sort_by_key(|(k, _)| *k);
    let mut kept: usize = 0;
    for i in 0..v.len() {
        let Some(&(k, t)) = v.get(i) else { break };
        match kept.checked_sub(1).and_then(|j| v.get_mut(j)) {
            Some(last) if last.0 == k => last.1 = t,
            _ => {
                if let Some(slot) = v.get_mut(kept) {
                    *slot = (k, t);
                }
                kept += 1;
            }
        }
    }
    v.truncate(kept);
    v
}

/// The entries of two key-sorted lists that both have, with the same term.
fn same_in_both<K: Ord + Copy>(a: &[(K, Term)], b: &[(K, Term)]) -> Vec<(K, Term)> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.0.cmp(&y.0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if x.1 == y.1 {
                    out.push(*x);
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// The pairs two sorted, duplicate-free lists have in common.
fn common<T: Ord + Copy>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(*x);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Keep the entries of `a` whose key (`cmp`) `b` also has, with `same`
/// entries; both sorted by key without duplicates (a merge, in place).
fn retain_common<T: Copy>(a: &mut Vec<T>, b: &[T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering, same: impl Fn(&T, &T) -> bool) {
    let (mut i, mut j, mut kept) = (0, 0, 0);
    while let (Some(&x), Some(y)) = (a.get(i), b.get(j)) {
        match cmp(&x, y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if same(&x, y) {
                    if let Some(slot) = a.get_mut(kept) {
                        *slot = x;
                    }
                    kept += 1;
                }
                i += 1;
                j += 1;
            }
        }
    }
    a.truncate(kept);
}

impl Facts {
    /// Facts from unordered parts: `held` pairs (duplicates allowed), and
    /// closed terms per location and per variable (for a key given twice,
    /// the later entry counts, as a map insertion would). Parts already
    /// sorted without duplicates are taken as they are.
    pub fn from_parts(mut held: Vec<(Loc, VarNo)>, loc_closed: Vec<(Loc, Term)>, var_closed: Vec<(VarNo, Term)>) -> Facts {
        if !held.is_sorted_by(|a, b| a < b) {
            held.sort_unstable();
            held.dedup();
        }
        Facts { held, loc_closed: by_key_last(loc_closed), var_closed: by_key_last(var_closed) }
    }

    /// Facts from parts already in order: `held` strictly increasing,
    /// `loc_closed` and `var_closed` strictly increasing by key (one entry
    /// per key), as [`Facts::from_parts`] would leave them. For callers
    /// that build the parts in order (checked in debug builds); skips
    /// `from_parts`' three order checks.
    pub fn from_sorted(held: Vec<(Loc, VarNo)>, loc_closed: Vec<(Loc, Term)>, var_closed: Vec<(VarNo, Term)>) -> Facts {
        debug_assert!(held.is_sorted_by(|a, b| a < b));
        debug_assert!(loc_closed.is_sorted_by(|a, b| a.0 < b.0));
        debug_assert!(var_closed.is_sorted_by(|a, b| a.0 < b.0));
        Facts { held, loc_closed, var_closed }
    }

    /// The facts true on both sides (intersection).
    pub fn meet(&self, o: &Facts) -> Facts {
        Facts {
            held: common(&self.held, &o.held),
            loc_closed: same_in_both(&self.loc_closed, &o.loc_closed),
            var_closed: same_in_both(&self.var_closed, &o.var_closed),
        }
    }

    /// Replace `self` by the facts true on both sides ([`Facts::meet`],
    /// in place); whether anything was dropped.
    pub fn meet_with(&mut self, o: &Facts) -> bool {
        let before = (self.held.len(), self.loc_closed.len(), self.var_closed.len());
        retain_common(&mut self.held, &o.held, |x, y| x.cmp(y), |_, _| true);
        retain_common(&mut self.loc_closed, &o.loc_closed, |x, y| x.0.cmp(&y.0), |x, y| x.1 == y.1);
        retain_common(&mut self.var_closed, &o.var_closed, |x, y| x.0.cmp(&y.0), |x, y| x.1 == y.1);
        before != (self.held.len(), self.loc_closed.len(), self.var_closed.len())
    }

    /// Whether the variable is available at this entry (held somewhere or
    /// known to be a closed term the machine can recompute).
    pub fn has(&self, v: VarNo) -> bool {
        self.var_closed(v).is_some() || self.held.iter().any(|(_, w)| *w == v)
    }

    /// Every (location, variable) pair, sorted by location then variable.
    pub fn held(&self) -> &[(Loc, VarNo)] {
        &self.held
    }

    /// The locations holding `v`, in location order.
    pub fn holders(&self, v: VarNo) -> impl Iterator<Item = Loc> + '_ {
        self.held.iter().filter(move |(_, w)| *w == v).map(|(l, _)| *l)
    }

    /// Locations with a closed term, in location order.
    pub fn closed_locs(&self) -> &[(Loc, Term)] {
        &self.loc_closed
    }

    /// Variables with a closed term, in variable order.
    pub fn closed_vars(&self) -> &[(VarNo, Term)] {
        &self.var_closed
    }

    /// The closed term a location holds, if any.
    pub fn loc_closed(&self, l: &Loc) -> Option<Term> {
        self.loc_closed.binary_search_by_key(l, |(k, _)| *k).ok().and_then(|i| self.loc_closed.get(i)).map(|(_, t)| *t)
    }

    /// The closed term a variable equals, if any.
    pub fn var_closed(&self, v: VarNo) -> Option<Term> {
        self.var_closed.binary_search_by_key(&v, |(k, _)| *k).ok().and_then(|i| self.var_closed.get(i)).map(|(_, t)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn v(i: u32) -> VarNo {
        i
    }

    #[test]
    fn meet_keeps_what_both_sides_know() {
        let a = Facts::from_parts(vec![(Loc::reg(2), v(1)), (Loc::reg(1), v(0)), (Loc::reg(1), v(1))], vec![(Loc::reg(1), Term(5))], vec![(v(0), Term(5)), (v(1), Term(6))]);
        let b = Facts::from_parts(vec![(Loc::reg(1), v(1)), (Loc::reg(2), v(1)), (Loc::slot(0), v(0))], vec![(Loc::reg(1), Term(7))], vec![(v(1), Term(6))]);
        let m = a.meet(&b);
        assert_eq!(m.held(), &[(Loc::reg(1), v(1)), (Loc::reg(2), v(1))]);
        assert_eq!(m.loc_closed(&Loc::reg(1)), None, "different closed terms do not survive");
        assert_eq!((m.var_closed(v(1)), m.var_closed(v(0))), (Some(Term(6)), None));
        assert!(m.has(v(1)) && !m.has(v(0)));
        assert_eq!(m.holders(v(1)).collect::<Vec<_>>(), [Loc::reg(1), Loc::reg(2)]);
        assert_eq!(m, b.meet(&a), "the meet is symmetric");
        let mut c = a.clone();
        assert!(c.meet_with(&b), "the meet drops facts");
        assert_eq!(c, m, "in place as out of place");
        assert!(!c.meet_with(&m), "nothing more to drop");
    }

    #[test]
    fn sorted_parts_make_the_same_facts() {
        let held = vec![(Loc::reg(1), v(0)), (Loc::reg(1), v(1)), (Loc::slot(0), v(0))];
        let (locs, vars) = (vec![(Loc::reg(1), Term(5)), (Loc::slot(2), Term(6))], vec![(v(0), Term(5))]);
        assert_eq!(Facts::from_sorted(held.clone(), locs.clone(), vars.clone()), Facts::from_parts(held, locs, vars));
    }

    #[test]
    fn a_key_given_twice_keeps_its_later_term() {
        let f = Facts::from_parts(Vec::new(), vec![(Loc::reg(3), Term(1)), (Loc::reg(3), Term(2))], Vec::new());
        assert_eq!(f.closed_locs(), &[(Loc::reg(3), Term(2))]);
    }
}
