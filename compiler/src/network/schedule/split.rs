//! Live-range splitting where a preallocated range begins: a block's
//! register store of a cross-block component may be placed only when no
//! spilled value still needs that component.
//!
//! When one does, its range is split there: the value is given a network
//! copy (a move, unless its copy is still readable), its register copy is
//! forgotten (the pool lets the component go at the end of the
//! instruction, [`RegPool::release`]: the split may still be undone with
//! the placement that made it), and the register store is placed in the
//! same instruction; the value is spilled again elsewhere if its
//! network copy expires before its readers are placed (the scheduler's
//! ordinary rule for expiring values). A value whose spill store is in the
//! same instruction cannot be split there (two stores of one component in
//! one instruction).
//!
//! Invariant: a component's register store lands after every spill store
//! to it in the block, and no reader loads a spilled value from a
//! component after the block's store to it has been placed.

use super::State;
#[cfg(doc)]
use crate::network::regs::RegPool;

impl State<'_> {
    /// Place store node `n` at `j` storing its source, first splitting the
    /// range of a spilled value holding its component.
    pub(super) fn store_split(&mut self, j: usize, n: usize, may_move: bool) -> bool {
        let Some(&value) = self.node(n).and_then(|x| x.srcs.first()) else { return false };
        self.store_split_of(j, n, value, may_move)
    }

    /// [`Self::store_split`] for store node `n` storing the value of node
    /// `value` (the store's own source, or a value joined to it).
    pub(super) fn store_split_of(&mut self, j: usize, n: usize, value: usize, may_move: bool) -> bool {
        let Some(r) = self.node(n).and_then(|x| x.reg) else { return self.place_store_of(j, n, value, may_move) };
        let holder = self.pool.holder(r).filter(|v| self.pending.get(*v).copied().unwrap_or(0) > 0);
        let Some(v) = holder else { return self.place_store_of(j, n, value, may_move) };
        let Some(stored) = self.spill.get(v).copied().flatten().map(|sp| sp.stored) else { return false };
        if stored >= j {
            return false;
        }
        let snap = self.snapshot(j);
        let readable = self.loc.get(v).copied().flatten().is_some_and(|l| j + 1 >= l.at && l.window.contains((j + 1 - l.at) as u32));
        if !readable && self.mov(j, v).is_none() {
            self.restore(snap);
            return false;
        }
        if let Some(x) = self.spill.get_mut(v) {
            *x = None;
        }
        if self.place_store_of(j, n, value, may_move) {
            self.counts.splits += 1;
            return true;
        }
        self.restore(snap);
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::network::{cross, nodes, regs, schedule};
    use crate::Sched;

    /// The loop block of `corpus/lima-gp/split-range.ir` scheduled with the
    /// two levels of `--ra split`: its counts.
    fn loop_counts(choice: regs::Choice, preallocated: bool) -> Result<schedule::Counts, crate::CompileError> {
        let text = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/lima-gp/split-range.ir")).expect("corpus file");
        let p = schedra_ir::parse::parse(&text, None).expect("parses");
        let net = p.target.network.expect("a network target");
        let named: Vec<u16> = (0..59).collect();
        let free: Vec<u16> = (0..p.target.regs.count).filter(|r| !named.contains(r)).collect();
        let a = cross::Assignment::of(&p, &free, regs::Choice::Lowest).expect("colours");
        let q = a.rewrite(&p).expect("rewrites");
        let k = q.blocks.iter().position(|b| b.label == "loop").expect("a loop block");
        let b = &q.blocks[k];
        let g = nodes::Graph::of(&q, net, b).expect("graph");
        let pool_regs: Vec<u16> = if preallocated { free } else { free.into_iter().filter(|r| !a.colour.values().any(|c| c == r)).collect() };
        let mut pool = regs::RegPool::new(pool_regs, choice);
        if preallocated {
            pool.set_block(a.block_ranges(&p, k).into_iter().map(|(r, occ)| regs::Prealloc::in_graph(&g, net, r, occ)).collect());
        }
        let job = schedule::BlockJob { t: q.target, net, g: &g, block: b, sched: Sched::TopDown, inject: None };
        schedule::schedule_block(job, &mut pool).map(|(_, c)| c)
    }

    #[test]
    fn a_spill_in_a_preallocated_component_is_split_where_its_store_begins() {
        let c = loop_counts(regs::Choice::RoundRobin, true).expect("schedules");
        assert!(c.splits >= 1, "{c:?}");
        assert!(c.spills > 5, "more spills than the three components no cross-block value takes: {c:?}");
    }

    #[test]
    fn without_the_preallocated_components_nothing_is_split() {
        let c = loop_counts(regs::Choice::Lowest, false).expect("schedules");
        assert_eq!(c.splits, 0, "{c:?}");
    }
}
