//! Live-range splitting where a preallocated range begins: a block's
//! register store of a cross-block component may be placed only when no
//! spilled value still needs that component.
//!
//! When one does, its range is split there: the value is given a network
//! copy (a move, unless its copy is still readable), its register copy is
//! forgotten and the component freed, and the register store is placed in
//! the same instruction; the value is spilled again elsewhere if its
//! network copy expires before its readers are placed (the scheduler's
//! ordinary rule for expiring values). A value whose spill store is in the
//! same instruction cannot be split there (two stores of one component in
//! one instruction).
//!
//! Invariant: a component's register store lands after every spill store
//! to it in the block, and no reader loads a spilled value from a
//! component after the block's store to it has been placed.

use super::State;

impl State<'_> {
    /// Place store node `n` at `j` (as `place_store`), first splitting the
    /// range of a spilled value holding its component.
    pub(super) fn store_split(&mut self, j: usize, n: usize, may_move: bool) -> bool {
        let Some(r) = self.node(n).and_then(|x| x.reg) else { return self.place_store(j, n, may_move) };
        let holder = self.pool.holder(r).filter(|v| self.pending.get(*v).copied().unwrap_or(0) > 0);
        let Some(v) = holder else { return self.place_store(j, n, may_move) };
        let Some((_, stored)) = self.spill.get(v).copied().flatten() else { return false };
        if stored >= j {
            return false;
        }
        let snap = self.snapshot();
        let readable = self.loc.get(v).copied().flatten().is_some_and(|l| j + 1 >= l.at && l.window.contains((j + 1 - l.at) as u32));
        if !readable && self.mov(j, v).is_none() {
            self.restore(snap);
            return false;
        }
        if let Some(x) = self.spill.get_mut(v) {
            *x = None;
        }
        if self.place_store(j, n, may_move) {
            self.pool.drop_hold(r);
            return true;
        }
        self.restore(snap);
        false
    }
}
