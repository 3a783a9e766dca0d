//! The second level of register allocation on a bypass-network target: the
//! register components a block spills its values to, chosen by a linear
//! scan in placement order while the block is scheduled.
//!
//! Components the source names are never handed out. The components of
//! cross-block values ([`super::cross`]) are *preallocated* in each block
//! where those values live ([`RegPool::set_block`]); elsewhere in the block
//! they are free for spills:
//! - a component live through the block ([`Occupied::through`]) is never
//!   handed out;
//! - one live on entry is free once every reader of its entry value is
//!   placed;
//! - one the block writes is busy from its register store on; before it, a
//!   spill may hold it, and the scheduler splits that spill's range where
//!   the preallocated range begins (the value goes back to the network and
//!   is spilled elsewhere when it must be).
//!
//! Spilled values live within one block ([`RegPool::start_block`] frees
//! every component). `--ra split` hands components out round robin, so that
//! a component freed by one value is reused as late as possible (seed 000's
//! linear scan with round robin, fewer false dependencies), and components
//! with no preallocated range still to come first; `--ra graph` gives the
//! pool no preallocated components at all (every cross-block component is
//! taken program-wide, as one colouring of everything would have it) and
//! takes the lowest free component, the greedy colouring of the block's
//! spill intervals in placement order. A spill to a register component needs
//! no address register, so no register is reserved for spilling.
//!
//! Invariant: a component holds at most one value at a time; it is free
//! again only when its value has no unplaced reader; it is handed out only
//! outside its block's preallocated ranges.

use super::nodes::{Graph, Kind};
use schedra_ir::target::network::Network;
use schedra_ir::Reg;

/// How components are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Round robin from the last component handed out.
    RoundRobin,
    /// The lowest free component.
    Lowest,
}

/// How a block occupies the component of a cross-block value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occupied {
    /// Live on entry (read before the block writes it, or kept).
    pub on_entry: bool,
    /// Written by the block (its register store).
    pub written: bool,
    /// Live on exit without being written: occupied all through.
    pub through: bool,
}

/// A preallocated component of the block being scheduled, with the graph
/// nodes that bound its ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prealloc {
    /// The component.
    pub reg: Reg,
    /// How the block occupies it.
    pub occ: Occupied,
    /// The register load of its entry value, if the block reads it.
    pub entry_load: Option<usize>,
    /// The register store the block ends it with, if it writes it.
    pub store: Option<usize>,
}

impl Prealloc {
    /// Component `r`, occupied as `occ`, in block graph `g`: its entry
    /// value's register load and its register store are found among the
    /// nodes.
    pub fn in_graph(g: &Graph, net: &Network, r: Reg, occ: Occupied) -> Prealloc {
        let find = |kind: Kind, op: &str| g.nodes.iter().position(|n| n.kind == kind && n.reg == Some(r) && n.op.name == op);
        Prealloc { reg: r, occ, entry_load: find(Kind::Input, net.ld_reg), store: find(Kind::Store, net.st_reg) }
    }
    /// Whether a spill may take the component now: `readers_left(n)` says
    /// node `n` has unplaced readers, `placed(n)` that it is placed.
    fn free_now(&self, readers_left: &impl Fn(usize) -> bool, placed: &impl Fn(usize) -> bool) -> bool {
        let entry_done = !self.occ.on_entry || self.entry_load.is_none_or(|l| !readers_left(l));
        let exit_ahead = !self.occ.written || self.store.is_none_or(|s| !placed(s));
        !self.occ.through && entry_done && exit_ahead
    }
}

/// The spill components and who holds them.
#[derive(Clone, Debug)]
pub struct RegPool {
    free: Vec<Reg>,
    held: Vec<(Reg, usize)>,
    next: usize,
    choice: Choice,
    pre: Vec<Prealloc>,
}

impl RegPool {
    /// A pool of `regs` (in order), chosen by `choice`.
    pub fn new(regs: Vec<Reg>, choice: Choice) -> RegPool {
        RegPool { free: regs, held: Vec::new(), next: 0, choice, pre: Vec::new() }
    }
    /// The preallocated components of the next block to schedule.
    pub fn set_block(&mut self, pre: Vec<Prealloc>) {
        self.pre = pre;
    }
    /// The preallocated range of `r` in this block, if any.
    pub fn prealloc(&self, r: Reg) -> Option<&Prealloc> {
        self.pre.iter().find(|p| p.reg == r)
    }
    /// The value holding component `r`, if any.
    pub fn holder(&self, r: Reg) -> Option<usize> {
        self.held.iter().find(|(x, _)| *x == r).map(|(_, v)| *v)
    }

    /// Free every component (a new block).
    pub fn start_block(&mut self) {
        let held: Vec<Reg> = self.held.drain(..).map(|(r, _)| r).collect();
        self.free.extend(held);
        self.free.sort();
    }
    /// Free components outside their preallocated ranges, in the order
    /// they should be tried (see the module docs); `readers_left` and
    /// `placed` describe the block's graph nodes.
    pub fn candidates(&self, readers_left: impl Fn(usize) -> bool, placed: impl Fn(usize) -> bool) -> Vec<Reg> {
        let ordered: Vec<Reg> = match self.choice {
            Choice::Lowest => self.free.clone(),
            Choice::RoundRobin => {
                let mut v: Vec<Reg> = self.free.iter().copied().filter(|r| usize::from(*r) >= self.next).collect();
                v.extend(self.free.iter().copied().filter(|r| usize::from(*r) < self.next));
                v
            }
        };
        let ok: Vec<Reg> = ordered.into_iter().filter(|r| self.prealloc(*r).is_none_or(|p| p.free_now(&readers_left, &placed))).collect();
        let later = |r: &Reg| self.prealloc(*r).is_some_and(|p| p.occ.written);
        let (mut first, rest): (Vec<Reg>, Vec<Reg>) = ok.into_iter().partition(|r| !later(r));
        first.extend(rest);
        first
    }
    /// Give component `r` to value `v`.
    pub fn take(&mut self, r: Reg, v: usize) {
        self.free.retain(|x| *x != r);
        self.held.push((r, v));
        self.next = usize::from(r) + 1;
    }
    /// Free the components whose values are `done(value, component)`: no
    /// reader left, or no longer kept there (a split range).
    pub fn release(&mut self, done: impl Fn(usize, Reg) -> bool) {
        let (gone, kept): (Vec<(Reg, usize)>, Vec<(Reg, usize)>) = self.held.drain(..).partition(|(r, v)| done(*v, *r));
        self.held = kept;
        self.free.extend(gone.into_iter().map(|(r, _)| r));
        self.free.sort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_reuses_late_and_lowest_reuses_early() {
        let mut rr = RegPool::new(vec![0, 1, 2, 3], Choice::RoundRobin);
        rr.take(0, 7);
        rr.release(|v, _| v == 7);
        assert_eq!(rr.candidates(|_| false, |_| false).first(), Some(&1));
        let mut lo = RegPool::new(vec![0, 1, 2, 3], Choice::Lowest);
        lo.take(0, 7);
        lo.release(|v, _| v == 7);
        assert_eq!(lo.candidates(|_| false, |_| false).first(), Some(&0));
        lo.take(0, 8);
        assert!(!lo.candidates(|_| false, |_| false).contains(&0), "a held component is not handed out");
    }

    fn pre(reg: Reg, on_entry: bool, written: bool, through: bool) -> Prealloc {
        Prealloc { reg, occ: Occupied { on_entry, written, through }, entry_load: on_entry.then_some(10), store: written.then_some(20) }
    }

    #[test]
    fn preallocated_components_are_free_only_outside_their_ranges() {
        let mut p = RegPool::new(vec![0, 1, 2, 3], Choice::RoundRobin);
        // 0: live through; 1: read on entry by node 10; 2: written by store node 20.
        p.set_block(vec![pre(0, true, false, true), pre(1, true, false, false), pre(2, false, true, false)]);
        let reading = |n: usize| n == 10;
        assert_eq!(p.candidates(reading, |_| false), vec![3, 2], "1 is still read; 2 comes last, its range is ahead");
        assert_eq!(p.candidates(|_| false, |_| false), vec![1, 3, 2], "1 is free once its readers are placed");
        assert_eq!(p.candidates(|_| false, |n| n == 20), vec![1, 3], "2 is busy once its store is placed");
        p.take(2, 5);
        assert_eq!(p.holder(2), Some(5));
        p.release(|v, r| v == 5 && r == 2);
        assert_eq!(p.holder(2), None, "a split range frees the component");
    }

    #[test]
    fn a_component_read_on_entry_and_written_is_free_between() {
        let p = {
            let mut p = RegPool::new(vec![7], Choice::Lowest);
            p.set_block(vec![pre(7, true, true, false)]);
            p
        };
        assert!(p.candidates(|n| n == 10, |_| false).is_empty(), "entry value still read");
        assert_eq!(p.candidates(|_| false, |_| false), vec![7], "between the last read and the store");
        assert!(p.candidates(|_| false, |n| n == 20).is_empty(), "after the store");
    }
}
