//! Liveness of virtual *and* physical registers.
//!
//! Variables are the values `0..nv` of a [`Func`] followed by one variable per
//! physical register (`nv + reg`): a register named in the source
//! (preallocated), a register an op writes implicitly, a scratch register of
//! spill code. Liveness is the classic backward dataflow fixpoint over the
//! CFG (`in = use ∪ (out − def)`, `out = ∪ in(succ)`).
//!
//! From it, [`occupancy`] gives, for each *gap* of a block (gap `k` is just
//! before instruction `k`; gap `n` is the block end, where the terminator
//! reads), the variables that occupy a register there: those live at the gap
//! plus those written by the instruction just before it (a dead write still
//! destroys what its register held). Two variables may share a register
//! exactly when no gap holds both — the invariant that interference,
//! linear scan and spilling all rely on. An op whose multi-register
//! destination must not overlap its sources (gen8 ALU rule) keeps its value
//! sources occupied one gap longer.

use super::ra_ir::{Func, Loc, RInst, ROperand};
use schedra_ir::cfg::{solve_flat, BitSet};
use schedra_ir::target::{Dest, Overlap};
use std::borrow::Cow;

/// How operands map to variables; the allocator's fault switches live here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarMap {
    /// Number of values (variables `0..nv`).
    pub nv: usize,
    /// Number of physical registers.
    pub nregs: usize,
    /// Whether implicit writes (v3d71 rf0) are modelled as writes.
    pub implicit_writes: bool,
    /// Whether spill code's scratch registers are tracked (reserved).
    pub track_scratch: bool,
}

impl VarMap {
    /// The variable map for `f`.
    pub fn new(f: &Func, implicit_writes: bool, track_scratch: bool) -> VarMap {
        VarMap {
            nv: f.vals.len(),
            nregs: f.target.regs.count as usize,
            implicit_writes,
            track_scratch,
        }
    }
    /// A map that tracks physical registers only (values are invisible):
    /// enough to place spill code, and much smaller.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn phys_only(f: &Func) -> VarMap {
        VarMap {
            nv: 0,
            nregs: f.target.regs.count as usize,
            implicit_writes: true,
            track_scratch: true,
        }
    }
    /// Total number of variables.
    pub fn nvars(&self) -> usize {
        self.nv + self.nregs
    }
    /// The variable of physical register `r`.
    pub fn phys_var(&self, r: u16) -> usize {
        self.nv + r as usize
    }
    /// Whether variable `x` is a value, and which.
    pub fn as_val(&self, x: usize) -> Option<u32> {
        (x < self.nv).then_some(x as u32)
    }
    /// Call `f` with each variable of `l`, in order.
    pub fn each_loc_var(&self, l: Loc, mut f: impl FnMut(usize)) {
        match l {
            Loc::Val(v) => {
                if (v as usize) < self.nv {
                    f(v as usize)
                }
            }
            Loc::Phys(p) => self.each_reg_var(p, f),
            Loc::Scratch(p) => {
                if self.track_scratch {
                    self.each_reg_var(p, f);
                }
            }
        }
    }
    /// Call `f` with the variable of each register of `p` in the file, in
    /// order (a one-register run, the usual case, without a range walk).
    #[inline]
    fn each_reg_var(&self, p: schedra_ir::PhysReg, mut f: impl FnMut(usize)) {
        if p.size == 1 {
            if (p.base as usize) < self.nregs {
                f(self.phys_var(p.base));
            }
            return;
        }
        p.regs()
            .filter(|r| (*r as usize) < self.nregs)
            .for_each(|r| f(self.phys_var(r)));
    }
    /// Call `f` with each variable `i` reads, in the order of [`VarMap::uses`].
    pub fn each_use(&self, i: &RInst, mut f: impl FnMut(usize)) {
        for l in i.use_locs() {
            self.each_loc_var(l, &mut f);
        }
    }
    /// Call `f` with each variable `i` writes, in the order of [`VarMap::defs`].
    pub fn each_def(&self, i: &RInst, mut f: impl FnMut(usize)) {
        if let Some(d) = i.dest {
            self.each_loc_var(d, &mut f);
        }
        if let (Dest::Implicit(r), true) = (i.desc.dest, self.implicit_writes) {
            let dest_is_r =
                matches!(i.dest.and_then(Loc::phys), Some(p) if p.base == r && p.size == 1);
            if !dest_is_r && (r as usize) < self.nregs {
                f(self.phys_var(r));
            }
        }
    }
}

/// Whether `i`'s destination may not overlap its value sources: a
/// destination of more than one register whose op forbids partial overlap
/// ([`Overlap::NoPartial`], gen8 ALU ops) is kept apart from the sources.
pub fn dest_excludes_srcs(f: &Func, i: &RInst) -> bool {
    let wide = i.dest.is_some_and(|d| f.size(d) > 1);
    wide && i.desc.overlap == Overlap::NoPartial
}

/// Live-in and live-out sets per block.
#[derive(Clone, Debug)]
pub struct Liveness {
    /// Variables live at each block's entry.
    pub live_in: Vec<BitSet>,
    /// Variables live at each block's exit.
    pub live_out: Vec<BitSet>,
    /// The variable map the sets were solved for.
    vm: VarMap,
    /// Each block's gap occupancy under `vm`, computed on first use by
    /// [`occupancy`] (the allocator asks for it several times per round).
    occ: Vec<std::cell::OnceCell<Vec<BitSet>>>,
}

/// Solve liveness for `f`.
pub fn analyze(f: &Func, vm: &VarMap) -> Liveness {
    let n = vm.nvars();
    let nb = f.blocks.len();
    let w = n.div_ceil(64).max(1);
    // Each block's gen and kill sets, straight into the flat arrays the
    // fixpoint works on (block `b` at `b * w..`).
    let mut gen = vec![0u64; nb * w];
    let mut kill = vec![0u64; nb * w];
    let bit = |x: usize| (x / 64, 1u64 << (x % 64));
    for ((blk, g), k) in f
        .blocks
        .iter()
        .zip(gen.chunks_exact_mut(w))
        .zip(kill.chunks_exact_mut(w))
    {
        let add = |set: &mut [u64], x: usize| {
            let (i, m) = bit(x);
            if let Some(word) = set.get_mut(i) {
                *word |= m;
            }
        };
        if let Some(l) = blk.cond.as_ref().and_then(ROperand::loc) {
            vm.each_loc_var(l, |x| add(g, x));
        }
        for i in blk.insts.iter().rev() {
            vm.each_def(i, |x| {
                let (wi, m) = bit(x);
                if let Some(word) = g.get_mut(wi) {
                    *word &= !m;
                }
                add(k, x);
            });
            vm.each_use(i, |x| add(g, x));
        }
    }
    let (live_in, live_out) = solve_flat((w, nb), gen, &kill, |b| {
        f.blocks.get(b).map_or(&[][..], |blk| &blk.succs[..])
    });
    let sets = |v: &[u64]| -> Vec<BitSet> {
        (0..nb)
            .map(|b| BitSet::from_words(n, v.get(b * w..(b + 1) * w).unwrap_or(&[])))
            .collect()
    };
    Liveness {
        live_in: sets(&live_in),
        live_out: sets(&live_out),
        vm: *vm,
        occ: vec![std::cell::OnceCell::new(); nb],
    }
}

/// The variables occupying a register at each gap `0..=n` of block `b`.
///
/// The result for `lv`'s own variable map is computed once per block and
/// then borrowed from `lv` (so `f`'s block `b` must not change while `lv` is
/// in use, which holds because every change to `f` is followed by a new
/// [`analyze`]); another map is computed afresh.
pub fn occupancy<'a>(f: &Func, vm: &VarMap, lv: &'a Liveness, b: usize) -> Cow<'a, [BitSet]> {
    match lv.occ.get(b) {
        Some(cell) if lv.vm == *vm => {
            Cow::Borrowed(cell.get_or_init(|| compute_occupancy(f, vm, lv, b)))
        }
        _ => Cow::Owned(compute_occupancy(f, vm, lv, b)),
    }
}

fn compute_occupancy(f: &Func, vm: &VarMap, lv: &Liveness, b: usize) -> Vec<BitSet> {
    let blk = &f.blocks[b];
    let n = blk.insts.len();
    let mut live = lv.live_out[b].clone();
    if let Some(l) = blk.cond.as_ref().and_then(ROperand::loc) {
        let words = live.words_mut();
        vm.each_loc_var(l, |x| set_bit(words, x));
    }
    // Filled from the last gap back: gap `k` once instruction `k` is
    // passed, the gap after it getting that instruction's writes.
    let mut occ = Vec::with_capacity(n + 1);
    occ.resize_with(n + 1, BitSet::default);
    if let Some(last) = occ.last_mut() {
        *last = live.clone();
    }
    for (k, i) in blk.insts.iter().enumerate().rev() {
        let (before, after) = occ.split_at_mut(k + 1);
        let (Some(here), Some(after)) = (before.last_mut(), after.first_mut()) else {
            break;
        };
        let after = after.words_mut();
        let words = live.words_mut();
        vm.each_def(i, |x| {
            set_bit(after, x);
            clear_bit(words, x);
        });
        // A destination that may not overlap its value sources keeps them
        // occupied in the gap after it.
        let exclude = dest_excludes_srcs(f, i);
        vm.each_use(i, |x| {
            if exclude && x < vm.nv {
                set_bit(after, x);
            }
            set_bit(words, x);
        });
        *here = live.clone();
    }
    occ
}

/// Add `x` to the set with words `words` (ignored when out of range).
#[inline]
fn set_bit(words: &mut [u64], x: usize) {
    if let Some(w) = words.get_mut(x / 64) {
        *w |= 1 << (x % 64);
    }
}

/// Remove `x` from the set with words `words`.
#[inline]
fn clear_bit(words: &mut [u64], x: usize) {
    if let Some(w) = words.get_mut(x / 64) {
        *w &= !(1 << (x % 64));
    }
}

/// The most values live at one gap anywhere in `f`.
pub fn max_live(f: &Func, vm: &VarMap, lv: &Liveness) -> usize {
    (0..f.blocks.len())
        .filter_map(|b| {
            occupancy(f, vm, lv, b)
                .iter()
                .map(|s| s.iter().take_while(|&x| x < vm.nv).count())
                .max()
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::allocate::ra_ir::test_func as func;

    #[test]
    fn loop_carried_value_is_live_around_the_loop() {
        let f = func("target v3d71\nb0:\n %i = ldunif 0\n jmp b1\nb1:\n %i = sub %i, 1\n brnz %i, b2, b3\nb2:\n jmp b1\nb3:\n tlbw %i\n end\n");
        let vm = VarMap::new(&f, true, true);
        let lv = analyze(&f, &vm);
        assert!(
            lv.live_in[1].contains(0) && lv.live_out[1].contains(0) && lv.live_in[2].contains(0)
        );
        assert!(!lv.live_in[0].contains(0));
    }

    #[test]
    fn occupancy_includes_dead_writes_and_implicit_rf0() {
        let f = func("target v3d71\nb0:\n %a = ldunif 0\n %b = ldunif 1\n tlbw %b\n end\n");
        let vm = VarMap::new(&f, true, true);
        let lv = analyze(&f, &vm);
        let occ = occupancy(&f, &vm, &lv, 0);
        assert!(
            occ[1].contains(0),
            "dead %a occupies the gap after its write"
        );
        assert!(!occ[2].contains(0));
        assert!(
            occ[2].contains(vm.phys_var(0)),
            "implicit rf0 write occupies"
        );
    }

    #[test]
    fn physical_register_read_is_live_back_to_its_write() {
        let f = func("target r600\nstage vertex\ninput %a = $R1.x\nb0:\n $R2.x = mov %a\n %c = add %a, %a\n export 0, $R2.x\n end\n");
        let vm = VarMap::new(&f, true, true);
        let lv = analyze(&f, &vm);
        let occ = occupancy(&f, &vm, &lv, 0);
        let r2x = vm.phys_var(8);
        assert!(
            !occ[1].contains(r2x)
                && occ[2].contains(r2x)
                && occ[3].contains(r2x)
                && !occ[4].contains(r2x)
        );
    }
}
