//! The register components a bypass-network block spills values to.
//!
//! Only components the source program never names are handed out, so a
//! spill never touches a register the program's cross-block values live in.
//! Spilled values live within one block ([`RegPool::start_block`] frees
//! every component). `--ra split` hands components out round robin, so that
//! a component freed by one value is reused as late as possible (seed 000's
//! linear scan with round robin, fewer false dependencies); `--ra graph`
//! takes the lowest free component, the greedy colouring of the block's
//! spill intervals in placement order.
//!
//! Invariant: a component holds at most one value at a time; it is free
//! again only when its value has no unplaced reader.

use schedra_ir::Reg;

/// How components are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Round robin from the last component handed out.
    RoundRobin,
    /// The lowest free component.
    Lowest,
}

/// The spill components and who holds them.
#[derive(Clone, Debug)]
pub struct RegPool {
    free: Vec<Reg>,
    held: Vec<(Reg, usize)>,
    next: usize,
    choice: Choice,
}

impl RegPool {
    /// A pool of `regs` (in order), chosen by `choice`.
    pub fn new(regs: Vec<Reg>, choice: Choice) -> RegPool {
        RegPool { free: regs, held: Vec::new(), next: 0, choice }
    }
    /// Free every component (a new block).
    pub fn start_block(&mut self) {
        let held: Vec<Reg> = self.held.drain(..).map(|(r, _)| r).collect();
        self.free.extend(held);
        self.free.sort();
    }
    /// Free components, in the order they should be tried.
    pub fn candidates(&self) -> Vec<Reg> {
        match self.choice {
            Choice::Lowest => self.free.clone(),
            Choice::RoundRobin => {
                let mut v: Vec<Reg> = self.free.iter().copied().filter(|r| usize::from(*r) >= self.next).collect();
                v.extend(self.free.iter().copied().filter(|r| usize::from(*r) < self.next));
                v
            }
        }
    }
    /// Give component `r` to value `v`.
    pub fn take(&mut self, r: Reg, v: usize) {
        self.free.retain(|x| *x != r);
        self.held.push((r, v));
        self.next = usize::from(r) + 1;
    }
    /// Free the components whose values are `done`.
    pub fn release(&mut self, done: impl Fn(usize) -> bool) {
        let (gone, kept): (Vec<(Reg, usize)>, Vec<(Reg, usize)>) = self.held.drain(..).partition(|(_, v)| done(*v));
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
        rr.release(|v| v == 7);
        assert_eq!(rr.candidates().first(), Some(&1));
        let mut lo = RegPool::new(vec![0, 1, 2, 3], Choice::Lowest);
        lo.take(0, 7);
        lo.release(|v| v == 7);
        assert_eq!(lo.candidates().first(), Some(&0));
        lo.take(0, 8);
        assert!(!lo.candidates().contains(&0), "a held component is not handed out");
    }
}
