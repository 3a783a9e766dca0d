//! Spilling and rematerialisation.
//!
//! *Costs*: a value's cost is the sum over its definitions and uses of
//! `size × 10^loop depth`, divided by `ln(2 + gaps it occupies)` (Mesa i965's
//! formula: cheap to spill when used rarely and live long); uniforms and
//! constants that can be re-emitted cost a quarter.
//!
//! *Victims*: before allocating, [`pressure_victims`] makes sure no gap needs
//! more registers than the target has, spilling the cheapest values occupying
//! over-full gaps (never one read by the instruction right after the gap or
//! written right before it: its spill code would occupy the gap anyway).
//!
//! *Rewrite*: [`spill_value`] replaces a value by spill code. A value defined
//! once by a uniform or constant load is rematerialised: the load is removed
//! and re-emitted before each use. Otherwise each definition writes a scratch
//! register and is followed by a scratch write to the value's slot, and each
//! use is preceded by a scratch read (fill) into a scratch register.
//! Scratch registers are physical ([`Loc::Scratch`]), chosen here among the
//! registers free of every physical register occupied at that point, from the
//! top of the allocatable order down, and obeying the target's register
//! rules (gen8 r127 for fills, whose header is their destination). Values are
//! allocated afterwards and avoid them, so a scratch register is reserved
//! exactly in the regions where spill code runs. Spill code is never spilled.

use super::interference::Constraints;
use super::liveness::{self, Liveness, VarMap};
use schedra_ir::cfg::BitSet;
use super::ra_ir::{desc_by_sem, Func, Kind, Loc, RInst, ROperand, RegSet, ValId};
use crate::CompileError;
use schedra_ir::target::{OpDesc, Sem};
use schedra_ir::SmolStr;
use schedra_ir::{Imm, Inst, Operand, PhysReg, Reg, Span};

/// Loop nesting depth of every block (natural loops of retreating edges).
pub fn loop_depth(f: &Func) -> Vec<u32> {
    let nb = f.blocks.len();
    let mut preds = vec![Vec::new(); nb];
    for (b, blk) in f.blocks.iter().enumerate() {
        for &s in &blk.succs {
            if s < nb {
                preds[s].push(b);
            }
        }
    }
    // Iterative DFS to find retreating edges (to a block on the stack).
    let mut state = vec![0u8; nb];
    let mut back = Vec::new();
    let mut stack: Vec<(usize, usize)> = Vec::new();
    if nb > 0 {
        stack.push((0, 0));
        state[0] = 1;
    }
    while let Some(&mut (b, ref mut i)) = stack.last_mut() {
        if let Some(&s) = f.blocks[b].succs.get(*i) {
            *i += 1;
            if s >= nb {
                continue;
            }
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => back.push((b, s)),
                _ => {}
            }
        } else {
            state[b] = 2;
            stack.pop();
        }
    }
    let mut bodies: rustc_hash::FxHashMap<usize, BitSet> = rustc_hash::FxHashMap::default();
    for (u, h) in back {
        let body = bodies.entry(h).or_insert_with(|| BitSet::new(nb));
        body.insert(h);
        let mut work = vec![u];
        while let Some(x) = work.pop() {
            if body.contains(x) {
                continue;
            }
            body.insert(x);
            work.extend(preds[x].iter().copied());
        }
    }
    let mut depth = vec![0; nb];
    for body in bodies.values() {
        body.iter().for_each(|b| depth[b] += 1);
    }
    depth
}

/// [`remat_defs`] as the (block, instruction index) of each value's
/// rematerialisable definition: nothing is cloned.
fn remat_sites(f: &Func) -> RematSites {
    #[derive(Clone, Copy)]
    enum St {
        Unseen,
        Def(usize, usize),
        No,
    }
    let mut st = vec![St::Unseen; f.vals.len()];
    let mut visit = |v: ValId, bi: usize, def: Option<usize>, also_used: bool| {
        let Some(slot) = st.get_mut(v as usize) else {
            return;
        };
        *slot = match (*slot, def) {
            (St::Unseen, Some(k)) if !also_used => St::Def(bi, k),
            (St::Def(h, k), None) if h == bi => St::Def(h, k),
            _ => St::No,
        };
    };
    for (bi, b) in f.blocks.iter().enumerate() {
        for (k, i) in b.insts.iter().enumerate() {
            let dest = match i.dest {
                Some(Loc::Val(v)) => Some(v),
                _ => None,
            };
            let also_used = dest.is_some_and(|d| i.use_locs().any(|l| l == Loc::Val(d)));
            for l in i.use_locs() {
                if let Loc::Val(v) = l {
                    if Some(v) != dest {
                        visit(v, bi, None, false);
                    }
                }
            }
            if let Some(d) = dest {
                visit(d, bi, Some(k), also_used);
            }
        }
        if let Some(Loc::Val(v)) = b.cond.as_ref().and_then(ROperand::loc) {
            visit(v, bi, None, false);
        }
    }
    let remat = |b: usize, k: usize| {
        f.blocks.get(b).and_then(|blk| blk.insts.get(k)).is_some_and(|i| {
            matches!(i.desc.sem, Sem::Uniform | Sem::Const)
                && i.kind == Kind::Source
                && i.srcs.iter().all(|s| matches!(s, ROperand::Imm(_)))
        })
    };
    st.into_iter()
        .map(|s| match s {
            St::Def(b, k) if remat(b, k) => Some((b, k)),
            _ => None,
        })
        .collect()
}

/// Spill costs and occupied-gap counts of every value.
pub struct Costs {
    /// Spill cost per value (lower = better victim).
    pub cost: Vec<f64>,
    /// Gaps each value occupies, over the whole function.
    pub span: Vec<usize>,
}

/// Spill costs computed on first use: most allocation rounds never need
/// them (no gap over-full, colouring never has to pick optimistically, no
/// failure), and then they are never computed.
pub struct LazyCosts<'a> {
    /// What the costs are computed from: the function, its full variable
    /// map and liveness, and its blocks' loop depths.
    src: Option<(&'a Func, &'a VarMap, &'a Liveness, &'a [u32])>,
    cell: std::cell::OnceCell<Costs>,
    /// The rematerialisable definitions found for the costs, kept for the
    /// spill code of the same round ([`LazyCosts::into_remat_sites`]).
    sites: std::cell::OnceCell<RematSites>,
}

/// Each value's rematerialisable definition as (block, instruction index)
/// ([`remat_defs`] without the copies).
pub type RematSites = Vec<Option<(usize, usize)>>;

impl<'a> LazyCosts<'a> {
    /// The costs [`costs_at_depth`] would give for `f`, computed when first
    /// asked for.
    pub fn new(f: &'a Func, vm: &'a VarMap, lv: &'a Liveness, depth: &'a [u32]) -> Self {
        LazyCosts {
            src: Some((f, vm, lv, depth)),
            cell: std::cell::OnceCell::new(),
            sites: std::cell::OnceCell::new(),
        }
    }
    /// Costs already known.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn known(c: Costs) -> LazyCosts<'static> {
        LazyCosts {
            src: None,
            cell: std::cell::OnceCell::from(c),
            sites: std::cell::OnceCell::new(),
        }
    }
    /// The costs (computed now if this is the first request).
    pub fn get(&self) -> &Costs {
        self.cell.get_or_init(|| match self.src {
            Some((f, vm, lv, depth)) => {
                let sites = self.sites.get_or_init(|| remat_sites(f));
                costs_with_sites(f, vm, lv, depth, sites)
            }
            None => Costs {
                cost: Vec::new(),
                span: Vec::new(),
            },
        })
    }
    /// The rematerialisable definitions of the function as it is, if the
    /// costs needed them (the function must not have changed since).
    pub fn into_remat_sites(self) -> Option<RematSites> {
        self.sites.into_inner()
    }
}

/// [`costs_at_depth`] given `remat`, the [`RematSites`] of `f`.
fn costs_with_sites(
    f: &Func,
    vm: &VarMap,
    lv: &Liveness,
    depth: &[u32],
    remat: &[Option<(usize, usize)>],
) -> Costs {
    let nv = vm.nv;
    let mut weight = vec![0f64; nv];
    let mut span = vec![0usize; nv];
    for (b, blk) in f.blocks.iter().enumerate() {
        let scale = 10f64.powi(depth.get(b).copied().unwrap_or(0).min(4) as i32);
        for i in &blk.insts {
            let locs = i.dest.into_iter().chain(i.use_locs());
            for l in locs {
                if let Loc::Val(v) = l {
                    weight[v as usize] += scale * f.size(l) as f64;
                }
            }
        }
        if let Some(Loc::Val(v)) = blk.cond.as_ref().and_then(ROperand::loc) {
            weight[v as usize] += scale;
        }
        for set in liveness::occupancy(f, vm, lv, b).iter() {
            set.iter()
                .take_while(|&x| x < nv)
                .for_each(|x| span[x] += 1);
        }
    }
    let cost = (0..nv)
        .map(|v| {
            let c = weight[v] / (2.0 + span[v] as f64).ln();
            if remat.get(v).is_some_and(Option::is_some) {
                c * 0.25
            } else {
                c
            }
        })
        .collect();
    Costs { cost, span }
}

/// Values read by instruction `g` or written by instruction `g - 1`: spilling
/// them frees nothing at gap `g`.
fn adjacent(f: &Func, b: usize, g: usize) -> Vec<ValId> {
    let blk = &f.blocks[b];
    let mut out = Vec::new();
    if let Some(i) = blk.insts.get(g) {
        out.extend(
            i.use_locs()
                .filter_map(|l| if let Loc::Val(v) = l { Some(v) } else { None }),
        );
    }
    if g == blk.insts.len() {
        if let Some(Loc::Val(v)) = blk.cond.as_ref().and_then(ROperand::loc) {
            out.push(v);
        }
    }
    if let Some(i) = g.checked_sub(1).and_then(|k| blk.insts.get(k)) {
        if let Some(Loc::Val(v)) = i.dest {
            out.push(v);
        }
    }
    out
}

/// The cheapest value occupying gap `g` of block `b` whose spilling frees a
/// register there, not marked in `exclude` (indexed by value).
pub fn victim_at(
    f: &Func,
    vm: &VarMap,
    occ: &BitSet,
    b: usize,
    g: usize,
    c: &Costs,
    exclude: &[bool],
) -> Option<ValId> {
    let adj = adjacent(f, b, g);
    occ.iter()
        .take_while(|&x| x < vm.nv)
        .map(|x| x as ValId)
        .filter(|v| !adj.contains(v) && !exclude.get(*v as usize).copied().unwrap_or(false))
        .min_by(|a, b| c.cost[*a as usize].total_cmp(&c.cost[*b as usize]))
}

/// When every value of `f` is one register wide: the variables that need a
/// register of their own at a gap (every value not yet chosen for
/// spilling, every allocatable register), so that a gap's demand is the
/// size of its intersection with this set. `None` when some value is wider.
fn unit_demand(f: &Func, vm: &VarMap, alloc: &RegSet) -> Option<BitSet> {
    if vm.nv != f.vals.len() || f.vals.iter().any(|v| v.size != 1) {
        return None;
    }
    let mut words = vec![0u64; vm.nvars().div_ceil(64)];
    for (wi, w) in words.iter_mut().enumerate() {
        let lo = wi * 64;
        *w = if vm.nv >= lo + 64 {
            u64::MAX
        } else if vm.nv <= lo {
            0
        } else {
            (1u64 << (vm.nv - lo)) - 1
        };
    }
    let mut mask = BitSet::from_words(vm.nvars(), &words);
    alloc
        .iter()
        .filter(|&r| (r as usize) < vm.nregs)
        .for_each(|r| mask.insert(vm.nv + r as usize));
    Some(mask)
}

/// Values to spill so that no gap needs more registers than `k` (sizes of
/// occupying values plus allocatable physical registers occupied).
pub fn pressure_victims(
    f: &Func,
    vm: &VarMap,
    lv: &Liveness,
    alloc: &RegSet,
    k: usize,
    c: &LazyCosts,
) -> Vec<ValId> {
    let mut chosen: Vec<ValId> = Vec::new();
    let mut is_chosen = vec![false; vm.nv];
    let mut counted = unit_demand(f, vm, alloc);
    for b in 0..f.blocks.len() {
        let occ = liveness::occupancy(f, vm, lv, b);
        for (g, set) in occ.iter().enumerate() {
            let mut p: usize = match &counted {
                Some(mask) => set.count_common(mask),
                None => set
                    .iter()
                    .map(|x| match vm.as_val(x) {
                        Some(v) if is_chosen[v as usize] => 0,
                        Some(v) => f.size(Loc::Val(v)) as usize,
                        None => alloc.contains((x - vm.nv) as Reg) as usize,
                    })
                    .sum(),
            };
            while p > k {
                let Some(v) = victim_at(f, vm, set, b, g, c.get(), &is_chosen) else {
                    break;
                };
                p = p.saturating_sub(f.size(Loc::Val(v)) as usize);
                is_chosen[v as usize] = true;
                if let Some(mask) = &mut counted {
                    mask.remove(v as usize);
                }
                chosen.push(v);
            }
        }
    }
    chosen
}

/// Choices that shape spill code.
pub struct SpillEnv<'a> {
    /// Rule constraints of the values.
    pub cons: &'a Constraints,
    /// Fault `gen8-r127-spill-fill`: do not check a fill's destination
    /// against the target's register rules.
    pub skip_fill_rule: bool,
}

/// Registers occupied (or operands) around instruction `k` that a scratch
/// register for it must avoid.
fn busy_around(vm: &VarMap, occ: &[BitSet], i: &RInst, k: usize, after: bool) -> RegSet {
    let mut s = RegSet::default();
    for g in [k, k + 1] {
        if g == k + 1 && !after {
            continue;
        }
        if let Some(set) = occ.get(g) {
            s.insert_shifted(set.words(), vm.nv);
        }
    }
    for l in i.dest.into_iter().chain(i.use_locs()) {
        if let Some(p) = l.phys() {
            s.insert_run(p);
        }
    }
    s
}

fn pick_scratch(
    f: &Func,
    env: &SpillEnv,
    v: ValId,
    busy: &RegSet,
    check: Option<&'static OpDesc>,
) -> Result<PhysReg, CompileError> {
    let size = f.size(Loc::Val(v));
    let cands = env.cons.cands_for(size);
    cands
        .iter()
        .rev()
        .copied()
        .find(|r| {
            // The rule probe builds an instruction: asked last, only of a
            // register that is free and allowed.
            let rule_ok = || {
                check.is_none_or(|d| {
                    let inst = Inst {
                        opcode: SmolStr::new_static(d.name),
                        dest: Some(Operand::Phys(*r)),
                        srcs: vec![Operand::Imm(Imm::int(0))],
                        span: Span::default(),
                    };
                    f.target.rules.op_regs_ok(d, &inst).is_ok()
                })
            };
            !busy.overlaps(*r) && env.cons.allowed(v, *r) && rule_ok()
        })
        .ok_or_else(|| {
            CompileError::Allocation(format!(
                "no scratch register for spilled %{}",
                f.val_name(v).unwrap_or("?")
            ))
        })
}

fn replace_uses(i: &mut RInst, v: ValId, by: Loc) {
    for s in &mut i.srcs {
        if *s == ROperand::Loc(Loc::Val(v)) {
            *s = ROperand::Loc(by);
        }
    }
}

/// Replace value `v` by spill code (or rematerialise it). Returns whether it
/// was rematerialised.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn spill_value(f: &mut Func, v: ValId, env: &SpillEnv) -> Result<bool, CompileError> {
    spill_values(f, &[v], env).map(|n| n == 1)
}

/// How one victim is replaced.
struct Plan {
    v: ValId,
    remat: Option<RInst>,
    slot: ROperand,
}

/// Replace every value in `vs` by spill code (or rematerialise it), in one
/// pass. Scratch registers of one instruction avoid each other and every
/// physical register occupied around it; those of different instructions
/// never live at once. Returns how many values were rematerialised.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn spill_values(f: &mut Func, vs: &[ValId], env: &SpillEnv) -> Result<usize, CompileError> {
    let vm = VarMap::phys_only(f);
    let lv = liveness::analyze(f, &vm);
    spill_values_in(f, vs, env, (&vm, &lv), None)
}

/// [`spill_values`] given a liveness of `f` as it is now whose variable map
/// models implicit writes and scratch registers (such as the allocator's
/// full map: the liveness of a physical register does not depend on the
/// values, so its registers' occupancy is exactly that of
/// [`VarMap::phys_only`], whose own liveness then need not be solved; the
/// occupancy the round has already computed is reused). `sites`, when
/// given, must be the [`RematSites`] of `f` as it is (found for the
/// round's costs); otherwise they are found here.
pub fn spill_values_in(
    f: &mut Func,
    vs: &[ValId],
    env: &SpillEnv,
    (vm, lv): (&VarMap, &Liveness),
    sites: Option<RematSites>,
) -> Result<usize, CompileError> {
    let vm = *vm;
    let sites = sites.unwrap_or_else(|| remat_sites(f));
    let plans = plan_spills(f, vs, &sites);
    let read = desc_by_sem(f.target, Sem::ScratchRead)?;
    let cx = Ctx {
        read,
        write: desc_by_sem(f.target, Sem::ScratchWrite)?,
        fill_check: if env.skip_fill_rule { None } else { Some(read) },
        env,
    };
    for b in 0..f.blocks.len() {
        if !f.blocks.get(b).is_some_and(|blk| mentions_any(blk, &plans)) {
            // Nothing to rewrite: the block stays as it is.
            continue;
        }
        let occ = liveness::occupancy(f, &vm, lv, b);
        let old = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(old.len() + 4);
        for (k, i) in old.into_iter().enumerate() {
            cx.rewrite_inst(f, &plans, (&vm, &occ, k), i, &mut out)?;
        }
        let cond = f.blocks[b].cond.as_ref().and_then(ROperand::loc);
        if let Some(p) = plans.iter().find(|p| cond == Some(Loc::Val(p.v))) {
            let mut busy = RegSet::default();
            if let Some(set) = occ.last() {
                busy.insert_shifted(set.words(), vm.nv);
            }
            let s = cx.reload(f, p, &mut busy, &mut out)?;
            f.blocks[b].cond = Some(ROperand::Loc(Loc::Scratch(s)));
        }
        f.blocks[b].insts = out;
    }
    Ok(plans.iter().filter(|p| p.remat.is_some()).count())
}

/// Whether block `b` reads or writes any value of `plans` (its terminator
/// included).
fn mentions_any(b: &super::ra_ir::RBlock, plans: &[Plan]) -> bool {
    let victim = |l: Loc| plans.iter().any(|p| l == Loc::Val(p.v));
    let cond = b.cond.as_ref().and_then(ROperand::loc);
    cond.is_some_and(victim)
        || b.insts
            .iter()
            .any(|i| i.dest.into_iter().chain(i.use_locs()).any(victim))
}

/// How each value of `vs` is replaced: rematerialised when [`remat_defs`]
/// allows it, else given the next free stack slot (advancing
/// `f.next_slot` by the value's size).
fn plan_spills(f: &mut Func, vs: &[ValId], sites: &[Option<(usize, usize)>]) -> Vec<Plan> {
    let mut plans = Vec::with_capacity(vs.len());
    for &v in vs {
        let remat = sites
            .get(v as usize)
            .copied()
            .flatten()
            .and_then(|(b, k)| f.blocks.get(b)?.insts.get(k).cloned());
        let slot = ROperand::Imm(Imm::int(f.next_slot as i64));
        if remat.is_none() {
            f.next_slot += f.size(Loc::Val(v)) as u32;
        }
        plans.push(Plan { v, remat, slot });
    }
    plans
}

/// The ops and rules spill code is made with.
struct Ctx<'a> {
    read: &'static OpDesc,
    /// The scratch-write op spill stores use.
    write: &'static OpDesc,
    fill_check: Option<&'static OpDesc>,
    env: &'a SpillEnv<'a>,
}

impl Ctx<'_> {
    /// Append to `out` instruction `i` (the `k`th of its block, whose
    /// occupancy under `vm` is `occ`) with its spilled operands reloaded
    /// into scratch registers and a spilled destination written to a
    /// scratch register and stored; a definition of a rematerialised value
    /// is dropped.
    fn rewrite_inst(
        &self,
        f: &Func,
        plans: &[Plan],
        (vm, occ, k): (&VarMap, &[BitSet], usize),
        mut i: RInst,
        out: &mut Vec<RInst>,
    ) -> Result<(), CompileError> {
        let used: Vec<&Plan> = plans
            .iter()
            .filter(|p| i.use_locs().any(|l| l == Loc::Val(p.v)))
            .collect();
        let def = plans.iter().find(|p| i.dest == Some(Loc::Val(p.v)));
        if def.is_some_and(|p| p.remat.is_some()) {
            return Ok(());
        }
        let mut busy = busy_around(vm, occ, &i, k, def.is_some());
        for p in used {
            let s = self.reload(f, p, &mut busy, out)?;
            replace_uses(&mut i, p.v, Loc::Scratch(s));
        }
        let Some(p) = def else {
            out.push(i);
            return Ok(());
        };
        let s = pick_scratch(f, self.env, p.v, &busy, None)?;
        i.dest = Some(Loc::Scratch(s));
        out.push(i);
        out.push(RInst {
            desc: self.write,
            dest: None,
            srcs: [p.slot, ROperand::Loc(Loc::Scratch(s))].into(),
            span: Span::default(),
            kind: Kind::SpillStore,
        });
        Ok(())
    }

    /// Emit a fill (or the rematerialised load) of `p` into a fresh scratch
    /// register outside `busy`, which then holds it.
    fn reload(
        &self,
        f: &Func,
        p: &Plan,
        busy: &mut RegSet,
        out: &mut Vec<RInst>,
    ) -> Result<PhysReg, CompileError> {
        let s = pick_scratch(
            f,
            self.env,
            p.v,
            busy,
            if p.remat.is_some() {
                None
            } else {
                self.fill_check
            },
        )?;
        busy.insert_run(s);
        out.push(match &p.remat {
            Some(d) => RInst {
                dest: Some(Loc::Scratch(s)),
                span: Span::default(),
                kind: Kind::Remat,
                ..d.clone()
            },
            None => RInst {
                desc: self.read,
                dest: Some(Loc::Scratch(s)),
                srcs: p.slot.into(),
                span: Span::default(),
                kind: Kind::Fill,
            },
        });
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::interference::constraints;

    use crate::allocate::ra_ir::test_func as func;

    #[test]
    fn loop_depth_counts_natural_loops() {
        let f = func("target v3d71\nb0:\n %i = ldunif 0\n jmp b1\nb1:\n %i = sub %i, 1\n brnz %i, b2, b3\nb2:\n jmp b1\nb3:\n tlbw %i\n end\n");
        assert_eq!(loop_depth(&f), vec![0, 1, 1, 0]);
    }

    #[test]
    fn uniforms_are_rematerialised_and_others_spilled_with_reserved_scratch() {
        let mut f = func("target v3d71\nb0:\n %u = ldunif 3\n %a = ldvary 0\n %b = fadd %a, %u\n %c = fadd %b, %a\n tlbw %c\n end\n");
        let alloc = f.target.rules.allocatable(f.stage);
        let k = constraints(&f, &alloc).expect("constraints");
        let env = SpillEnv {
            cons: &k,
            skip_fill_rule: false,
        };
        assert!(spill_value(&mut f, 0, &env).expect("remat"));
        assert!(!spill_value(&mut f, 1, &env).expect("spill"));
        let kinds: Vec<Kind> = f.blocks[0].insts.iter().map(|i| i.kind).collect();
        assert_eq!(kinds.iter().filter(|k| **k == Kind::Remat).count(), 1);
        assert_eq!(kinds.iter().filter(|k| **k == Kind::SpillStore).count(), 1);
        assert_eq!(kinds.iter().filter(|k| **k == Kind::Fill).count(), 2);
        assert!(f.blocks[0]
            .insts
            .iter()
            .all(|i| i.dest != Some(Loc::Val(0)) && i.dest != Some(Loc::Val(1))));
    }

    #[test]
    fn gen8_fills_avoid_g127_unless_the_fault_is_on() {
        let src = "target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = mul %x, %x\n %z:2 = add %y, %x\n %t:4 = send.tex %z\n send.eot %t\n end\n";
        for skip in [false, true] {
            let mut f = func(src);
            let alloc = f.target.rules.allocatable(f.stage);
            let k = constraints(&f, &alloc).expect("constraints");
            let env = SpillEnv {
                cons: &k,
                skip_fill_rule: skip,
            };
            let y = (0..f.vals.len() as ValId).find(|&v| f.val_name(v) == Some("y")).unwrap_or(0);
            spill_value(&mut f, y, &env).expect("spill");
            let fill = f.blocks[0]
                .insts
                .iter()
                .find(|i| i.kind == Kind::Fill)
                .and_then(|i| i.dest)
                .and_then(Loc::phys)
                .expect("a fill");
            assert_eq!(fill.regs().any(|r| r == 127), skip, "fill into {fill:?}");
        }
    }
}
