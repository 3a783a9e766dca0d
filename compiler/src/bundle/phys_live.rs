//! Physical-register liveness of the allocated program (or of the
//! allocated function it is made from, [`PhysLive::of_func`]), on demand.
//!
//! The bundler only asks whether a register is live out of a block for the
//! few copies it may forward (a handful per program), so instead of solving
//! the backward fixpoint for every register of every block it records, in
//! one scan, which registers each block reads before writing them (`uses`:
//! register sources of its ops and its `brnz` condition) and which it writes
//! (`defs`: destinations), and answers each question by a walk over the
//! control-flow graph.
//!
//! Invariant: `r` is live out of block `b` (see [`PhysLive::live_out`])
//! exactly when some path from a successor of `b` reaches a block that uses
//! `r` through blocks that do not define it: the least solution of
//! `out[b] = ∪ (uses[s] ∪ (out[s] − defs[s]))` over the successors `s`,
//! i.e. what `liveness::program_live_out` computes for every register.

use schedra_ir::cfg::Successors;
use crate::allocate::ra_ir::{Func, Loc, ROperand};
use schedra_ir::{Operand, PhysReg, Program, Reg, TermKind};

/// The physical uses and definitions of every block of an allocated
/// program, and its successors.
pub struct PhysLive {
    /// Words per block in `uses` and `defs` (block `b` at `b * words..`).
    words: usize,
    uses: Vec<u64>,
    defs: Vec<u64>,
    succs: Successors,
}

/// Whether bit `r` of block `b`'s row (rows of `words` words) is set.
fn has(rows: &[u64], words: usize, b: usize, r: Reg) -> bool {
    let i = r as usize;
    rows.get(b * words + i / 64)
        .is_some_and(|w| i / 64 < words && w & (1 << (i % 64)) != 0)
}

/// One block's rows while it is scanned, and the highest register that
/// did not fit so far.
struct Row<'a> {
    uses: &'a mut [u64],
    defs: &'a mut [u64],
    high: &'a mut Option<Reg>,
}

impl Row<'_> {
    /// The word and bit of `r`, if the rows hold it (else it is noted).
    fn at(&mut self, r: Reg) -> Option<(usize, u64)> {
        let w = r as usize / 64;
        if w < self.defs.len() {
            return Some((w, 1 << (r % 64)));
        }
        *self.high = Some(self.high.map_or(r, |h| h.max(r)));
        None
    }
    /// A read of every register of `p`: a use unless written earlier in
    /// the block.
    fn read(&mut self, p: PhysReg) {
        for r in p.regs() {
            if let Some((w, bit)) = self.at(r) {
                if self.defs.get(w).is_some_and(|d| d & bit == 0) {
                    if let Some(u) = self.uses.get_mut(w) {
                        *u |= bit;
                    }
                }
            }
        }
    }
    /// A write of every register of `p`.
    fn write(&mut self, p: PhysReg) {
        for r in p.regs() {
            if let Some((w, bit)) = self.at(r) {
                if let Some(d) = self.defs.get_mut(w) {
                    *d |= bit;
                }
            }
        }
    }
}

impl PhysLive {
    /// Scan `p` (a source-form program whose register operands are
    /// physical).
    pub fn new(p: &Program) -> PhysLive {
        let succs = Successors::new(p);
        PhysLive::scan(p.target.regs.count as usize, succs, |b, row| {
            let Some(block) = p.blocks.get(b) else { return };
            for inst in block.insts() {
                inst.srcs.iter().filter_map(Operand::phys).for_each(|p| row.read(p));
                if let Some(p) = inst.dest.as_ref().and_then(Operand::phys) {
                    row.write(p);
                }
            }
            if let TermKind::Brnz { cond: Operand::Phys(p), .. } = &block.term.kind {
                row.read(*p);
            }
        })
    }

    /// Scan the allocated function `f` (every location physical) as if it
    /// were its allocated program ([`Func::into_program_resolved`]): identity copies
    /// are left out (a copy split into chunks reads and writes the same
    /// registers, every source before it is overwritten). The successors
    /// are `f`'s.
    pub fn of_func(f: &Func) -> PhysLive {
        let succs = Successors::from_lists(f.blocks.iter().map(|b| &b.succs[..]));
        PhysLive::scan(f.target.regs.count as usize, succs, |b, row| {
            let Some(block) = f.blocks.get(b) else { return };
            for i in block.insts.iter().filter(|i| !i.is_identity_copy()) {
                i.use_locs().filter_map(Loc::phys).for_each(|p| row.read(p));
                if let Some(p) = i.dest.and_then(Loc::phys) {
                    row.write(p);
                }
            }
            let brnz = matches!(block.term.kind, TermKind::Brnz { .. });
            if let (true, Some(p)) = (brnz, block.cond.as_ref().and_then(ROperand::loc).and_then(Loc::phys)) {
                row.read(p);
            }
        })
    }

    /// The rows filled by `fill` (called once per block of `succs` and
    /// row): as wide as the register file of `count` registers, or as the
    /// highest register named if that is higher (then filled again).
    fn scan(count: usize, succs: Successors, fill: impl Fn(usize, &mut Row)) -> PhysLive {
        let nb = succs.len();
        let mut words = count.div_ceil(64).max(1);
        loop {
            let mut uses = vec![0; nb * words];
            let mut defs = vec![0; nb * words];
            let mut high: Option<Reg> = None;
            for (b, (uses, defs)) in uses.chunks_mut(words).zip(defs.chunks_mut(words)).enumerate() {
                fill(b, &mut Row { uses, defs, high: &mut high });
            }
            match high {
                None => return PhysLive { words, uses, defs, succs },
                Some(high) => words = (high as usize + 1).div_ceil(64),
            }
        }
    }

    /// Whether register `r` is live out of block `b` (see the module doc).
    pub fn live_out(&self, b: usize, r: Reg) -> bool {
        let mut seen = vec![false; self.succs.len()];
        let mut stack: Vec<usize> = self.succs.of(b).to_vec();
        while let Some(s) = stack.pop() {
            match seen.get_mut(s) {
                Some(v) if !*v => *v = true,
                _ => continue,
            }
            if has(&self.uses, self.words, s, r) {
                return true;
            }
            if !has(&self.defs, self.words, s, r) {
                stack.extend_from_slice(self.succs.of(s));
            }
        }
        false
    }

    /// Every register live out of block `b`, in increasing order.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn live_out_all(&self, b: usize) -> Vec<Reg> {
        let top = (self.words * 64).min(Reg::MAX as usize + 1);
        (0..top).map(|r| r as Reg).filter(|&r| self.live_out(b, r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::cfg::{program_live_out, UseDef};
    use crate::source_ids::SourceIds;

    /// The backward fixpoint over every register (the definition).
    fn fixpoint(p: &Program) -> Vec<Vec<Reg>> {
        let width = 1 << 16;
        let ud: Vec<UseDef> = p
            .blocks
            .iter()
            .map(|b| {
                let mut ud = UseDef::new(width);
                for i in b.insts() {
                    i.srcs.iter().filter_map(Operand::phys).flat_map(|x| x.regs()).for_each(|r| ud.read(r as usize));
                    i.dest.iter().filter_map(Operand::phys).flat_map(|x| x.regs()).for_each(|r| ud.write(r as usize));
                }
                if let TermKind::Brnz { cond: Operand::Phys(x), .. } = &b.term.kind {
                    x.regs().for_each(|r| ud.read(r as usize));
                }
                ud
            })
            .collect();
        program_live_out(p, &ud, width)
            .iter()
            .map(|s| s.iter().map(|r| r as Reg).collect())
            .collect()
    }

    #[test]
    fn walks_agree_with_the_fixpoint_on_every_allocated_corpus_program_and_function() {
        let mut checked = 0;
        for (path, src) in crate::test_corpus::programs() {
            let ids = SourceIds::new(&src);
            let Ok(a) = crate::allocate::allocate_func(&src, &ids, None, &Default::default()).and_then(|a| a.into_allocated()) else {
                continue;
            };
            let Ok(f) = crate::allocate::allocate_func(&src, &ids, None, &Default::default()) else {
                continue;
            };
            let live = PhysLive::new(&a.program);
            let of_func = PhysLive::of_func(&f.func);
            let walked: Vec<Vec<Reg>> = (0..a.program.blocks.len()).map(|b| live.live_out_all(b)).collect();
            let from_func: Vec<Vec<Reg>> = (0..a.program.blocks.len()).map(|b| of_func.live_out_all(b)).collect();
            assert_eq!(walked, fixpoint(&a.program), "{}", path.display());
            assert_eq!(from_func, walked, "{}", path.display());
            checked += 1;
        }
        assert!(checked > 10, "{checked}");
    }
}
