//! Dense per-register tables for the machine simulator.
//!
//! Register numbers are small (a target's register file has at most a few
//! hundred registers), so a table indexed by register number is cheaper than
//! a hash map for the per-visit state of `symbolic::run_machine` (a
//! register's current contents, the cycle its last write lands). The table
//! grows on demand to the highest register written, so a register outside
//! the target's file (possible in a malformed or mutated program) costs at
//! most a table of `Reg::MAX + 1` entries and never a panic.

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
    fn the_highest_register_is_a_valid_index() {
        let mut t: RegTable<u8> = RegTable::with_capacity(0);
        t.set(Reg::MAX, 1);
        assert_eq!(t.get(Reg::MAX), Some(1));
        assert_eq!(t.iter().count(), 1);
    }
}
