//! Per-block linear scan with fixed registers and live-range splitting
//! (lima gpir's second level, seed 000).
//!
//! Input: one block's gap occupancy, the registers already fixed at each gap
//! (cross-block values coloured by [`super::color`], preallocated and scratch
//! registers), and the block-local values. A local value's *web* is a maximal
//! run of gaps it occupies. Webs are taken in order of their first gap; each
//! gets the first register run, in round-robin order after copy hints, that is
//! free over the whole web. When none is, the run free for longest is taken
//! and the web is *split* where that run stops being free (typically where a
//! preallocated register's range begins): a copy to another run is inserted
//! before the instruction at that gap, and the search repeats from there.
//!
//! Invariant: at every gap, the runs given to local segments overlap neither
//! each other nor any fixed register occupied at that gap; a split copy's two
//! runs are both held at the gap where it sits, so it never overwrites a live
//! register.

use super::interference::{Constraints, Hint};
use super::liveness::VarMap;
use schedra_ir::cfg::BitSet;
use super::ra_ir::{Kind, Loc, RBlock, RInst, ROperand, RegSet, ValId};
use rustc_hash::FxHashMap as HashMap;
use schedra_ir::target::OpDesc;
use schedra_ir::{PhysReg, Span};

/// A piece of a web held in one run: gaps `start..=end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First gap.
    pub start: usize,
    /// Last gap.
    pub end: usize,
    /// The run.
    pub run: PhysReg,
}

/// What the scan needs to know about the function.
pub struct Scan<'a> {
    /// Variable numbering.
    pub vm: &'a VarMap,
    /// Which values are cross-block (already coloured).
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub global: &'a [bool],
    /// The block-local values (below `vm.nv` and not `global`) as set
    /// words ([`local_words`]).
    pub local: &'a [u64],
    /// Runs of the cross-block values.
    pub assign: &'a [Option<PhysReg>],
    /// Rule constraints and hints.
    pub cons: &'a Constraints,
    /// Value sizes.
    pub sizes: &'a [u8],
    /// The target's `mov`, for split copies.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub mov: &'static OpDesc,
    /// Fault `ra-split-preallocated`: ignore preallocated ranges that begin
    /// after a segment's first gap (so never split for them).
    pub no_split_at_fixed: bool,
}

struct State<'a> {
    scan: &'a Scan<'a>,
    glob: Vec<RegSet>,
    phys: Vec<RegSet>,
    local: Vec<RegSet>,
    rr: HashMap<u8, usize>,
    last_run: HashMap<ValId, PhysReg>,
}

impl State<'_> {
    fn free(&self, run: PhysReg, g: usize, seg_start: usize) -> bool {
        let (Some(a), Some(b), Some(c)) = (self.glob.get(g), self.phys.get(g), self.local.get(g))
        else {
            return false;
        };
        if a.overlaps(run) || c.overlaps(run) {
            return false;
        }
        if b.overlaps(run) {
            return self.scan.no_split_at_fixed && g > seg_start;
        }
        true
    }
    /// Last gap `t >= from` with `run` free over `from..=t`.
    fn stretch(&self, run: PhysReg, from: usize, limit: usize) -> Option<usize> {
        if !self.free(run, from, from) {
            return None;
        }
        let mut t = from;
        while t < limit && self.free(run, t + 1, from) {
            t += 1;
        }
        Some(t)
    }
    fn hint_runs(&self, v: ValId) -> Vec<PhysReg> {
        let hints = self
            .scan
            .cons
            .hints
            .get(v as usize)
            .map_or(&[][..], |h| h.as_slice());
        hints
            .iter()
            .filter_map(|h| match *h {
                Hint::Phys(r) => Some(r),
                Hint::Val(o) => self
                    .scan
                    .assign
                    .get(o as usize)
                    .copied()
                    .flatten()
                    .or_else(|| self.last_run.get(&o).copied()),
            })
            .collect()
    }
    /// Pick a run for `v` from gap `from`: one covering `..=end` if possible,
    /// else the one free longest (must reach past `min_reach`).
    fn pick(
        &mut self,
        v: ValId,
        from: usize,
        end: usize,
        min_reach: Option<usize>,
    ) -> Option<(PhysReg, usize)> {
        let size = self.scan.sizes.get(v as usize).copied().unwrap_or(1);
        let cands = self.scan.cons.cands_for(size);
        let ok = |r: &PhysReg| r.size == size && self.scan.cons.allowed(v, *r);
        for r in self.hint_runs(v) {
            if ok(&r) && cands.contains(&r) && self.stretch(r, from, end) == Some(end) {
                return Some((r, end));
            }
        }
        let start = self.rr.get(&size).copied().unwrap_or(0);
        let mut best: Option<(PhysReg, usize, usize)> = None;
        for k in 0..cands.len() {
            let idx = (start + k) % cands.len();
            let r = cands[idx];
            if !ok(&r) {
                continue;
            }
            let Some(t) = self.stretch(r, from, end) else {
                continue;
            };
            if min_reach.is_some_and(|m| t <= m) {
                continue;
            }
            if t == end {
                self.rr.insert(size, idx + 1);
                return Some((r, end));
            }
            if best.is_none_or(|b| t > b.1) {
                best = Some((r, t, idx));
            }
        }
        best.map(|(r, t, idx)| {
            self.rr.insert(size, idx + 1);
            (r, t)
        })
    }
    fn hold(&mut self, seg: Segment) {
        for g in seg.start..=seg.end {
            if let Some(s) = self.local.get_mut(g) {
                s.insert_run(seg.run);
            }
        }
    }
}

/// The set words of the block-local values among `nv` values: those not
/// marked in `global` (a value beyond `global` counts as global).
pub fn local_words(nv: usize, global: &[bool]) -> Vec<u64> {
    let mut w = vec![0u64; nv.div_ceil(64)];
    for v in (0..nv).filter(|&v| !global.get(v).copied().unwrap_or(true)) {
        w[v / 64] |= 1 << (v % 64);
    }
    w
}

/// The webs of the block-local values: `(value, first gap, last gap)`,
/// ordered by first gap, then longest first, then value. Found a word at a
/// time: at each gap the local occupants are compared with the previous
/// gap's, closing the webs that stopped and opening those that began.
fn webs(occ: &[BitSet], scan: &Scan) -> Vec<(ValId, usize, usize)> {
    let local = scan.local;
    let mut prev = vec![0u64; local.len()];
    let mut start = vec![0usize; local.len() * 64];
    let mut out = Vec::new();
    for (g, set) in occ.iter().enumerate() {
        let words = set.words();
        for (wi, (p, &m)) in prev.iter_mut().zip(local).enumerate() {
            let here = words.get(wi).copied().unwrap_or(0) & m;
            let mut ended = *p & !here;
            while ended != 0 {
                let v = wi * 64 + ended.trailing_zeros() as usize;
                ended &= ended - 1;
                let s = start.get(v).copied().unwrap_or(0);
                out.push((v as ValId, s, g.saturating_sub(1)));
            }
            let mut begun = here & !*p;
            while begun != 0 {
                let v = wi * 64 + begun.trailing_zeros() as usize;
                begun &= begun - 1;
                if let Some(s) = start.get_mut(v) {
                    *s = g;
                }
            }
            *p = here;
        }
    }
    let last = occ.len().saturating_sub(1);
    for (wi, &p) in prev.iter().enumerate() {
        let mut open = p;
        while open != 0 {
            let v = wi * 64 + open.trailing_zeros() as usize;
            open &= open - 1;
            out.push((v as ValId, start.get(v).copied().unwrap_or(0), last));
        }
    }
    out.sort_by_key(|&(v, s, e)| (s, std::cmp::Reverse(e), v));
    out
}

/// Allocate the local values of `blk` and rewrite it with physical operands
/// and split copies. `Err` names, as [`scan_block`] does, the values that
/// found no register and the gaps where (the caller spills).
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn allocate_block(blk: &RBlock, occ: &[BitSet], scan: &Scan) -> Result<RBlock, Vec<(ValId, usize)>> {
    let segs = scan_block(occ, scan)?;
    let mut out = blk.clone();
    segs.apply(&mut out, &scan.placed());
    Ok(out)
}

/// Where one block's local values live: each web's segments, by value.
/// Found by [`scan_block`]; [`BlockSegs::apply`] rewrites the block.
pub struct BlockSegs(HashMap<ValId, Vec<Vec<Segment>>>);

/// What rewriting a block needs besides its segments: the cross-block
/// values and their runs, and the op split copies are made with.
pub struct Placed<'a> {
    /// Which values are cross-block.
    pub global: &'a [bool],
    /// Runs of the cross-block values.
    pub assign: &'a [Option<PhysReg>],
    /// The target's `mov`.
    pub mov: &'static OpDesc,
}

impl Scan<'_> {
    /// The part of the scan's input that rewriting needs.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn placed(&self) -> Placed<'_> {
        Placed {
            global: self.global,
            assign: self.assign,
            mov: self.mov,
        }
    }
}

impl BlockSegs {
    /// Rewrite `blk` (the block these segments were found for) in place
    /// with physical operands and split copies, exactly as
    /// [`allocate_block`] returns it: instructions and operands are moved
    /// and updated, nothing else of the block is copied.
    pub fn apply(&self, blk: &mut RBlock, placed: &Placed) {
        rewrite(blk, &self.0, placed);
    }
}

/// Allocate the local values of one block (whose gap occupancy is `occ`):
/// the segments of every web, or `Err` with each `(v, g)` where a value
/// found no register at gap `g`, in scan order (the caller spills). A web
/// that fails holds what it had placed and is given up from `g` on, and the
/// scan goes on with the next web, so one scan names every gap that fails
/// even without the webs that failed before it.
pub fn scan_block(occ: &[BitSet], scan: &Scan) -> Result<BlockSegs, Vec<(ValId, usize)>> {
    let webs = webs(occ, scan);
    let mut segs: HashMap<ValId, Vec<Vec<Segment>>> = HashMap::default();
    if webs.is_empty() {
        // No local value: nothing to place, no register map to build.
        return Ok(BlockSegs(segs));
    }
    let ngaps = occ.len();
    // Sized once: a web has at least one segment, a value one web.
    segs.reserve(webs.len());
    let mut last_run = HashMap::default();
    last_run.reserve(webs.len());
    let mut st = State {
        scan,
        glob: vec![RegSet::default(); ngaps],
        phys: vec![RegSet::default(); ngaps],
        local: vec![RegSet::default(); ngaps],
        rr: HashMap::default(),
        last_run,
    };
    let nv = scan.vm.nv;
    for ((set, glob), phys) in occ.iter().zip(&mut st.glob).zip(&mut st.phys) {
        for (wi, &w) in set.words().iter().enumerate() {
            // Cross-block values (values not local) hold their runs; the
            // variables from `nv` on are registers.
            let lo = wi * 64;
            let vals = if nv >= lo + 64 {
                u64::MAX
            } else if nv <= lo {
                0
            } else {
                (1u64 << (nv - lo)) - 1
            };
            let mut g = w & vals & !scan.local.get(wi).copied().unwrap_or(0);
            while g != 0 {
                let v = lo + g.trailing_zeros() as usize;
                g &= g - 1;
                if let Some(r) = scan.assign.get(v).copied().flatten() {
                    glob.insert_run(r);
                }
            }
            let mut r = w & !vals;
            while r != 0 {
                let x = lo + r.trailing_zeros() as usize;
                r &= r - 1;
                phys.insert((x - nv) as u16);
            }
        }
    }
    let mut failed = Vec::new();
    for (v, s, e) in webs {
        let mut web = Vec::new();
        let mut cur = s;
        let mut min_reach = None;
        loop {
            let Some((run, t)) = st.pick(v, cur, e, min_reach) else {
                failed.push((v, cur));
                break;
            };
            let seg = Segment {
                start: cur,
                end: t,
                run,
            };
            st.hold(seg);
            st.last_run.insert(v, run);
            web.push(seg);
            if t >= e {
                break;
            }
            cur = t;
            min_reach = Some(t);
        }
        segs.entry(v).or_default().push(web);
    }
    if failed.is_empty() { Ok(BlockSegs(segs)) } else { Err(failed) }
}

/// The run of local `v` read at gap `g` (after any split copy there).
fn use_run(segs: &HashMap<ValId, Vec<Vec<Segment>>>, v: ValId, g: usize) -> Option<PhysReg> {
    segs.get(&v)?
        .iter()
        .flatten()
        .rfind(|s| s.start <= g && g <= s.end)
        .map(|s| s.run)
}

/// The run of local `v` written just before gap `g` (before any split copy).
fn def_run(segs: &HashMap<ValId, Vec<Vec<Segment>>>, v: ValId, g: usize) -> Option<PhysReg> {
    segs.get(&v)?
        .iter()
        .flatten()
        .find(|s| s.start <= g && g <= s.end)
        .map(|s| s.run)
}

/// Rewrite block `blk` in place: every value replaced by its register at
/// each point (a global value's single assignment, a local value's segment
/// run: the run written just before the gap after a definition, the run
/// live at the gap before a use), and the split copies inserted at their
/// gaps.
fn rewrite(blk: &mut RBlock, segs: &HashMap<ValId, Vec<Vec<Segment>>>, placed: &Placed) {
    let copies = split_copies(segs);
    let map_op = |o: &mut ROperand, g: usize| {
        if let ROperand::Loc(l) = o {
            *l = map_loc(segs, placed, *l, g, false);
        }
    };
    let old = std::mem::take(&mut blk.insts);
    let n = old.len();
    let mut insts = Vec::with_capacity(n + copies.len());
    for (k, mut i) in old.into_iter().enumerate() {
        push_copies(&mut insts, placed.mov, copies.get(&k));
        i.dest = i.dest.map(|d| map_loc(segs, placed, d, k + 1, true));
        i.srcs.iter_mut().for_each(|o| map_op(o, k));
        insts.push(i);
    }
    push_copies(&mut insts, placed.mov, copies.get(&n));
    if let Some(c) = &mut blk.cond {
        map_op(c, n);
    }
    blk.insts = insts;
}

/// The copies `(to, from)` between consecutive segments of each web, keyed
/// by the gap where the later segment starts; values in increasing order,
/// so that copies at one gap come out in a fixed order whatever the map's
/// hasher.
fn split_copies(
    segs: &HashMap<ValId, Vec<Vec<Segment>>>,
) -> HashMap<usize, Vec<(PhysReg, PhysReg)>> {
    let mut copies: HashMap<usize, Vec<(PhysReg, PhysReg)>> = HashMap::default();
    let mut vals: Vec<ValId> = segs.keys().copied().collect();
    vals.sort_unstable();
    for web in vals.iter().filter_map(|v| segs.get(v)).flatten() {
        for w in web.windows(2) {
            copies
                .entry(w[1].start)
                .or_default()
                .push((w[1].run, w[0].run));
        }
    }
    copies
}

/// The register location `l` stands for at gap `g` (`def`: as the
/// destination written just before `g`); non-values and unassigned values
/// unchanged.
fn map_loc(
    segs: &HashMap<ValId, Vec<Vec<Segment>>>,
    scan: &Placed,
    l: Loc,
    g: usize,
    def: bool,
) -> Loc {
    let Loc::Val(v) = l else { return l };
    let global = scan.global.get(v as usize).copied().unwrap_or(false);
    let r = if global {
        scan.assign.get(v as usize).copied().flatten()
    } else if def {
        def_run(segs, v, g)
    } else {
        use_run(segs, v, g)
    };
    r.map_or(l, Loc::Phys)
}

/// Append a split copy (`mov`) for each `(to, from)` of `copies`.
fn push_copies(
    insts: &mut Vec<RInst>,
    mov: &'static OpDesc,
    copies: Option<&Vec<(PhysReg, PhysReg)>>,
) {
    for &(to, from) in copies.into_iter().flatten() {
        insts.push(RInst {
            desc: mov,
            dest: Some(Loc::Phys(to)),
            srcs: ROperand::Loc(Loc::Phys(from)).into(),
            span: Span::default(),
            kind: Kind::SplitCopy,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::interference;
    use crate::allocate::liveness::{self, VarMap};
    use crate::allocate::ra_ir::{mov_desc, Func};

    /// `%c` lives while R0.y, R0.z and then R0.x are written by the source:
    /// with only R0.x–R0.z allocatable, no register is free for its whole
    /// range, so it must be split where R0.x's preallocated range begins.
    const SRC: &str = "target r600\nstage vertex\nb0:\n %c = mov 1.0\n $R0.y = mov 2.0\n $R0.z = mov 3.0\n %g = add $R0.y, $R0.z\n $R0.x = mov %g\n %f = add %c, $R0.x\n export 0, %f\n end\n";

    fn scan_block(no_split: bool) -> RBlock {
        let p = schedra_ir::parse::parse(SRC.as_bytes(), None).expect("parse");
        let f = Func::from_program(&p).expect("lower");
        let vm = VarMap::new(&f, true, true);
        let lv = liveness::analyze(&f, &vm);
        let cons = interference::constraints(&f, &[0, 1, 2]).expect("constraints");
        let sizes: Vec<u8> = f.vals.iter().map(|v| v.size).collect();
        let global = vec![false; f.vals.len()];
        let local = local_words(f.vals.len(), &global);
        let assign = vec![None; f.vals.len()];
        let mov = mov_desc(f.target).expect("mov");
        let scan = Scan {
            vm: &vm,
            global: &global,
            local: &local,
            assign: &assign,
            cons: &cons,
            sizes: &sizes,
            mov,
            no_split_at_fixed: no_split,
        };
        let occ = liveness::occupancy(&f, &vm, &lv, 0);
        allocate_block(&f.blocks[0], &occ, &scan).expect("allocates")
    }

    fn phys(i: &RInst) -> (Option<PhysReg>, Vec<PhysReg>) {
        (
            i.dest.and_then(Loc::phys),
            i.use_locs().filter_map(Loc::phys).collect(),
        )
    }

    #[test]
    fn splits_where_a_preallocated_range_begins() {
        let b = scan_block(false);
        let copies: Vec<&RInst> = b
            .insts
            .iter()
            .filter(|i| i.kind == Kind::SplitCopy)
            .collect();
        assert_eq!(copies.len(), 1, "{:#?}", b.insts);
        let pos = b
            .insts
            .iter()
            .position(|i| i.kind == Kind::SplitCopy)
            .unwrap_or(0);
        let (to, from) = phys(copies[0]);
        assert_eq!(from, vec![PhysReg::one(0)], "the value leaves R0.x");
        let next = &b.insts[pos + 1];
        assert_eq!(
            next.dest.and_then(Loc::phys),
            Some(PhysReg::one(0)),
            "right before R0.x is written"
        );
        let last_add = b
            .insts
            .iter()
            .rev()
            .find(|i| i.desc.name == "add")
            .map(phys)
            .unwrap_or_default();
        assert!(
            last_add.1.contains(&to.unwrap_or(PhysReg::one(0))),
            "the last add reads the moved value"
        );
        assert!(every_operand_physical(&b));
    }

    #[test]
    fn fault_keeps_the_value_in_the_overwritten_register() {
        let b = scan_block(true);
        assert!(b.insts.iter().all(|i| i.kind != Kind::SplitCopy));
        let last_add = b
            .insts
            .iter()
            .rev()
            .find(|i| i.desc.name == "add")
            .map(phys)
            .unwrap_or_default();
        assert_eq!(
            last_add.1.iter().filter(|r| r.base == 0).count(),
            2,
            "both operands read R0.x: %c was clobbered"
        );
    }

    /// With one register and two places apart where two values live at
    /// once, one scan names a failure at each place, not just the first.
    #[test]
    fn one_scan_names_every_gap_that_fails() {
        const TWO: &str = "target r600\nstage vertex\nb0:\n %a = mov 1.0\n %b = mov 2.0\n %c = add %a, %b\n export 0, %c\n %d = mov 3.0\n %e = mov 4.0\n %f = add %d, %e\n export 1, %f\n end\n";
        let p = schedra_ir::parse::parse(TWO.as_bytes(), None).expect("parse");
        let f = Func::from_program(&p).expect("lower");
        let vm = VarMap::new(&f, true, true);
        let lv = liveness::analyze(&f, &vm);
        let cons = interference::constraints(&f, &[0]).expect("constraints");
        let sizes: Vec<u8> = f.vals.iter().map(|v| v.size).collect();
        let global = vec![false; f.vals.len()];
        let local = local_words(f.vals.len(), &global);
        let assign = vec![None; f.vals.len()];
        let mov = mov_desc(f.target).expect("mov");
        let scan = Scan { vm: &vm, global: &global, local: &local, assign: &assign, cons: &cons, sizes: &sizes, mov, no_split_at_fixed: false };
        let occ = liveness::occupancy(&f, &vm, &lv, 0);
        let fails = super::scan_block(&occ, &scan).err().expect("one register is too few");
        assert_eq!(fails.len(), 2, "{fails:?}");
        assert!(fails[0].1 < 4 && fails[1].1 >= 4, "one failure before the first export, one after: {fails:?}");
    }

    fn every_operand_physical(b: &RBlock) -> bool {
        b.insts.iter().all(|i| {
            i.dest
                .into_iter()
                .chain(i.use_locs())
                .all(|l| l.phys().is_some())
        })
    }
}
