//! Per-register tables for the machine simulator.
//!
//! [`RegMap`] (a [`SortedMap`]) is a small map from registers to terms
//! kept as a list sorted by register: the block-entry and block-end
//! register contents of a machine run; [`SlotMap`] is the same for
//! scratch-slot offsets. They are built in register order (the dataflow facts list
//! locations in order), read by binary search, merged in one pass and
//! iterated in order, with no hashing.
//!
//! [`RegTable`] is a dense table:
//!
//! Register numbers are small (a target's register file has at most a few
//! hundred registers), so a table indexed by register number is cheaper than
//! a hash map for the per-visit state of `symbolic::run_machine` (a
//! register's current contents, the cycle its last write lands). The table
//! grows on demand to the highest register written, so a register outside
//! the target's file (possible in a malformed or mutated program) costs at
//! most a table of `Reg::MAX + 1` entries and never a panic.

use crate::term::Term;
use schedra_ir::Reg;

/// A table from register numbers to values of `T`; unset registers read as
/// `None`. Every access is bounds-checked.
#[derive(Clone, Debug)]
pub struct RegTable<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for RegTable<T> {
    /// An empty table.
    fn default() -> RegTable<T> {
        RegTable { slots: Vec::new() }
    }
}

impl<T: Copy> RegTable<T> {
    /// An empty table with room for registers `0..n` without growing.
    pub fn with_capacity(n: usize) -> RegTable<T> {
        RegTable { slots: Vec::with_capacity(n) }
    }

    /// Unset every register (keeping the room).
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// The value of register `r`, if one was set.
    pub fn get(&self, r: Reg) -> Option<T> {
        self.slots.get(usize::from(r)).copied().flatten()
    }

    /// Set register `r` to `v` (growing the table up to `r` if needed).
    pub fn set(&mut self, r: Reg, v: T) {
        let i = usize::from(r);
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = Some(v);
        }
    }

    /// Every set register with its value, in register order.
    pub fn iter(&self) -> impl Iterator<Item = (Reg, T)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, v)| Some((Reg::try_from(i).ok()?, (*v)?)))
    }
}

/// A small map kept as a list of `(key, value)` pairs sorted by key:
/// built in key order (appending is the fast path), read by binary search,
/// iterated in order, with no hashing. [`RegMap`] and [`SlotMap`] are its
/// two uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortedMap<K, V> {
    pairs: Vec<(K, V)>,
}

/// A map from registers to terms (block-entry and block-end register
/// contents of a machine run).
pub type RegMap = SortedMap<Reg, Term>;

/// A map from scratch-slot offsets to values: a block touches a few slots
/// at most, so a short sorted list costs less than a hash map made and
/// filled on every block visit.
pub type SlotMap<V> = SortedMap<u32, V>;

impl<K, V> Default for SortedMap<K, V> {
    /// An empty map.
    fn default() -> SortedMap<K, V> {
        SortedMap { pairs: Vec::new() }
    }
}

impl<K: Copy + Ord, V: Copy> SortedMap<K, V> {
    /// An empty map with room for `n` keys.
    pub fn with_capacity(n: usize) -> SortedMap<K, V> {
        SortedMap { pairs: Vec::with_capacity(n) }
    }

    /// The map of `pairs`, which should be sorted by key without
    /// duplicates (they are then taken as they are; otherwise they are
    /// sorted, and of a key given twice the first is kept).
    pub fn from_sorted(mut pairs: Vec<(K, V)>) -> SortedMap<K, V> {
        if !pairs.windows(2).all(|w| matches!(w, [a, b] if a.0 < b.0)) {
            pairs.sort_by_key(|(k, _)| *k);
            pairs.dedup_by_key(|(k, _)| *k);
        }
        SortedMap { pairs }
    }

    /// The map of `pairs`, which are sorted by key without duplicates
    /// (for callers that build them in order; checked in debug builds).
    pub fn in_order(pairs: Vec<(K, V)>) -> SortedMap<K, V> {
        debug_assert!(pairs.is_sorted_by(|a, b| a.0 < b.0));
        SortedMap { pairs }
    }

    /// The value of key `k`, if set.
    pub fn get(&self, k: K) -> Option<V> {
        self.pairs.binary_search_by_key(&k, |(key, _)| *key).ok().and_then(|i| self.pairs.get(i)).map(|(_, v)| *v)
    }

    /// Whether key `k` is set.
    pub fn contains(&self, k: K) -> bool {
        self.get(k).is_some()
    }

    /// Set key `k` to `v` (cheapest when keys come in order).
    pub fn insert(&mut self, k: K, v: V) {
        match self.pairs.last() {
            Some((last, _)) if *last < k => self.pairs.push((k, v)),
            None => self.pairs.push((k, v)),
            _ => match self.pairs.binary_search_by_key(&k, |(key, _)| *key) {
                Ok(i) => {
                    if let Some(p) = self.pairs.get_mut(i) {
                        p.1 = v;
                    }
                }
                Err(i) => self.pairs.insert(i, (k, v)),
            },
        }
    }

    /// Set key `k` to `v` unless it is set.
    pub fn insert_if_absent(&mut self, k: K, v: V) {
        if !self.contains(k) {
            self.insert(k, v);
        }
    }

    /// Every set key with its value, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (K, V)> + '_ {
        self.pairs.iter().copied()
    }

    /// The set keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.pairs.iter().map(|(k, _)| *k)
    }

    /// The same keys with each value mapped by `f`.
    pub fn map<W>(&self, f: impl Fn(V) -> W) -> SortedMap<K, W> {
        SortedMap { pairs: self.pairs.iter().map(|(k, v)| (*k, f(*v))).collect() }
    }

    /// Number of set keys.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl RegMap {
    /// This map with the registers `over` sets replaced by its terms (every
    /// register `over` sets must be in this map).
    pub fn overlaid<T: Copy>(&self, over: &RegTable<(Term, T)>) -> RegMap {
        // The same keys as `self`, so in order.
        RegMap::in_order(self.pairs.iter().map(|(r, t)| (*r, over.get(*r).map(|(u, _)| u).unwrap_or(*t))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_and_iterate_in_register_order() {
        let mut t: RegTable<u64> = RegTable::with_capacity(4);
        assert_eq!(t.get(3), None);
        t.set(9, 5);
        t.set(2, 7);
        t.set(9, 6);
        t.set(4, 11);
        assert_eq!((t.get(9), t.get(2), t.get(3)), (Some(6), Some(7), None));
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(2, 7), (4, 11), (9, 6)]);
    }

    #[test]
    fn reg_maps_stay_sorted() {
        let mut m = RegMap::with_capacity(2);
        m.insert(5, Term(1));
        m.insert(9, Term(2));
        m.insert(2, Term(3));
        m.insert(5, Term(4));
        m.insert_if_absent(9, Term(7));
        m.insert_if_absent(7, Term(8));
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![(2, Term(3)), (5, Term(4)), (7, Term(8)), (9, Term(2))]);
        assert_eq!((m.get(7), m.get(8), m.len()), (Some(Term(8)), None, 4));
        let mut cur: RegTable<(Term, ())> = RegTable::default();
        cur.set(7, (Term(11), ()));
        assert_eq!(m.overlaid(&cur).get(7), Some(Term(11)));
        assert_eq!(m.overlaid(&cur).get(9), Some(Term(2)));
        let unsorted = RegMap::from_sorted(vec![(4, Term(1)), (2, Term(2)), (4, Term(3))]);
        assert_eq!(unsorted.iter().collect::<Vec<_>>(), vec![(2, Term(2)), (4, Term(1))]);
    }

    #[test]
    fn slot_maps_stay_sorted() {
        let mut m: SlotMap<u8> = SlotMap::default();
        m.insert(5, 1);
        m.insert(9, 2);
        m.insert(2, 3);
        m.insert(5, 4);
        m.insert_if_absent(9, 7);
        m.insert_if_absent(7, 8);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![(2, 3), (5, 4), (7, 8), (9, 2)]);
        assert_eq!((m.get(7), m.get(8), m.len()), (Some(8), None, 4));
        assert_eq!(m.map(|v| u32::from(v) * 2).get(9), Some(4));
    }

    #[test]
    fn the_highest_register_is_a_valid_index() {
        let mut t: RegTable<u8> = RegTable::with_capacity(0);
        t.set(Reg::MAX, 1);
        assert_eq!(t.get(Reg::MAX), Some(1));
        assert_eq!(t.iter().count(), 1);
    }
}
