//! Physical-register liveness of the allocated program, on demand.
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

use crate::liveness::Successors;
use schedra_ir::{Operand, Program, Reg, TermKind};
use std::cell::OnceCell;

/// The physical uses and definitions of every block of an allocated
/// program, and its successor lists once a question needs them. The
/// program itself is not kept: each question is given it again (its blocks,
/// labels and terminators unchanged; its instructions may have moved out).
pub struct PhysLive {
    /// Words per block in `uses` and `defs` (block `b` at `b * words..`).
    words: usize,
    uses: Vec<u64>,
    defs: Vec<u64>,
    succs: OnceCell<Successors>,
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
    /// A read: a use unless written earlier in the block.
    fn read(&mut self, r: Reg) {
        if let Some((w, bit)) = self.at(r) {
            if self.defs.get(w).is_some_and(|d| d & bit == 0) {
                if let Some(u) = self.uses.get_mut(w) {
                    *u |= bit;
                }
            }
        }
    }
    /// A write.
    fn write(&mut self, r: Reg) {
        if let Some((w, bit)) = self.at(r) {
            if let Some(d) = self.defs.get_mut(w) {
                *d |= bit;
            }
        }
    }
}

impl PhysLive {
    /// Scan `p` (a source-form program whose register operands are
    /// physical). The rows are as wide as the register file, or as the
    /// highest register named if that is higher (then scanned again).
    pub fn new(p: &Program) -> PhysLive {
        let mut words = (p.target.regs.count as usize).div_ceil(64).max(1);
        loop {
            let mut live = PhysLive {
                words,
                uses: vec![0; p.blocks.len() * words],
                defs: vec![0; p.blocks.len() * words],
                succs: OnceCell::new(),
            };
            match live.scan(p) {
                None => return live,
                Some(high) => words = (high as usize + 1).div_ceil(64),
            }
        }
    }

    /// Fill `uses` and `defs`; the highest register that did not fit, if
    /// any.
    fn scan(&mut self, p: &Program) -> Option<Reg> {
        let words = self.words;
        let mut high: Option<Reg> = None;
        for (b, block) in p.blocks.iter().enumerate() {
            let row = b * words..(b + 1) * words;
            let (Some(uses), Some(defs)) = (self.uses.get_mut(row.clone()), self.defs.get_mut(row)) else {
                continue;
            };
            let mut row = Row { uses, defs, high: &mut high };
            for inst in &block.insts {
                for p in inst.srcs.iter().filter_map(Operand::phys) {
                    p.regs().for_each(|r| row.read(r));
                }
                if let Some(p) = inst.dest.as_ref().and_then(Operand::phys) {
                    p.regs().for_each(|r| row.write(r));
                }
            }
            if let TermKind::Brnz { cond: Operand::Phys(p), .. } = &block.term.kind {
                p.regs().for_each(|r| row.read(r));
            }
        }
        high
    }

    /// The successors of block `b` of `p` (labels naming no block are
    /// skipped).
    fn succs(&self, p: &Program, b: usize) -> impl Iterator<Item = usize> + '_ {
        self.succs.get_or_init(|| Successors::new(p)).of(b).iter().copied()
    }

    /// Whether register `r` is live out of block `b` of `p` (the program
    /// given to [`PhysLive::new`]; see the module doc).
    pub fn live_out(&self, p: &Program, b: usize, r: Reg) -> bool {
        let mut seen = vec![false; p.blocks.len()];
        let mut stack: Vec<usize> = self.succs(p, b).collect();
        while let Some(s) = stack.pop() {
            match seen.get_mut(s) {
                Some(v) if !*v => *v = true,
                _ => continue,
            }
            if has(&self.uses, self.words, s, r) {
                return true;
            }
            if !has(&self.defs, self.words, s, r) {
                stack.extend(self.succs(p, s));
            }
        }
        false
    }

    /// Every register live out of block `b`, in increasing order.
    pub fn live_out_all(&self, p: &Program, b: usize) -> Vec<Reg> {
        let top = (self.words * 64).min(Reg::MAX as usize + 1);
        (0..top).map(|r| r as Reg).filter(|&r| self.live_out(p, b, r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::{program_live_out, UseDef};
    use crate::source_ids::SourceIds;

    /// The backward fixpoint over every register (the definition).
    fn fixpoint(p: &Program) -> Vec<Vec<Reg>> {
        let width = 1 << 16;
        let ud: Vec<UseDef> = p
            .blocks
            .iter()
            .map(|b| {
                let mut ud = UseDef::new(width);
                for i in &b.insts {
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
    fn walks_agree_with_the_fixpoint_on_every_allocated_corpus_program() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let mut checked = 0;
        for dir in ["v3d71", "gen8", "r600"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
            for e in entries.flatten() {
                let Ok(text) = std::fs::read(e.path()) else { continue };
                let Ok(src) = schedra_ir::parse::parse(&text, None) else { continue };
                let ids = SourceIds::new(&src);
                let Ok(a) = crate::regalloc::allocate_resolved(&src, &ids, None, &Default::default()) else {
                    continue;
                };
                let live = PhysLive::new(&a.program);
                let walked: Vec<Vec<Reg>> =
                    (0..a.program.blocks.len()).map(|b| live.live_out_all(&a.program, b)).collect();
                assert_eq!(walked, fixpoint(&a.program), "{}", e.path().display());
                checked += 1;
            }
        }
        assert!(checked > 10, "{checked}");
    }
}
