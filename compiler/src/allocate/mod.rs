//! Register allocation: the two modes and the spill loop around them.
//!
//! Each round: lower liveness over values and physical registers; if some gap
//! needs more registers than the target has, spill the cheapest values there
//! ([`spill::pressure_victims`]) and start again. Otherwise allocate:
//!
//! - [`Ra::Split`] (default, lima gpir's two levels): values live across a
//!   block boundary are coloured ([`color`]); then each block runs
//!   [`linear_scan`] over its local values with those registers and the
//!   preallocated/scratch registers fixed, splitting live ranges where a fixed
//!   range begins, round-robin register choice.
//! - [`Ra::Graph`]: Chaitin–Briggs colouring of every value, preallocated,
//!   implicit and scratch registers as precoloured interference.
//!
//! A value that finds no register is spilled (or one that is cheaper and
//! occupies the same place) and the round repeats. One attempt reports every
//! value that found none (colouring's uncoloured nodes; every gap where the
//! linear scan failed, the scan giving a failed web up and going on), so a
//! round spills for all of them at once rather than a value per round; every
//! round removes at least one value, so the loop ends. The faults of this half of the compiler are
//! decided in [`Env::new`] (one decision each): `v3d-rf0-across-implicit`,
//! `spill-no-reserve`, `gen8-r127-spill-fill` and `ra-split-preallocated`.
//!
//! Invariant of the result: every operand is physical; no register holds two
//! values at one gap; every run satisfies the target's register rules.

use interference::{Constraints, Graph};
use liveness::{Liveness, VarMap};
use ra_ir::{mov_desc, Func, Kind, Loc, RBlock, ROperand, RegSet, ValId};
use schedra_ir::cfg::BitSet;
use crate::source_ids::SourceIds;
use crate::{CompileError, Fault, Options, Ra};

pub mod color;
pub mod interference;
pub mod linear_scan;
pub mod liveness;
pub mod ra_ir;
pub mod spill;
use schedra_ir::{PhysReg, Program, Reg};

/// The allocated program and what allocation did.
#[derive(Clone, Debug)]
pub struct Allocated {
    /// The allocated program (source form, physical operands only).
    pub program: Program,
    /// Each instruction's op description, block by block, parallel to
    /// `program`'s instructions.
    pub descs: Vec<Vec<&'static schedra_ir::OpDesc>>,
    /// Scratch writes inserted.
    pub spills: usize,
    /// Scratch reads inserted.
    pub fills: usize,
    /// Values rematerialised instead of spilled.
    pub remats: usize,
    /// Most values live at once before spilling.
    pub max_live: usize,
}

/// The allocated function (every location physical: the form the bundler
/// lowers from, [`crate::bundle::bundle_allocated`]) and what allocation
/// did.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// The allocated function.
    pub(crate) func: Func,
    /// Scratch writes inserted.
    pub spills: usize,
    /// Scratch reads inserted.
    pub fills: usize,
    /// Values rematerialised instead of spilled.
    pub remats: usize,
    /// Most values live at once before spilling.
    pub max_live: usize,
}

impl Allocation {
    /// The allocated program and each instruction's op description
    /// ([`Func::into_program_resolved`]) with the same counts.
    pub fn into_allocated(self) -> Result<Allocated, CompileError> {
        let (program, descs) = self.func.into_program_resolved()?;
        Ok(Allocated {
            program,
            descs,
            spills: self.spills,
            fills: self.fills,
            remats: self.remats,
            max_live: self.max_live,
        })
    }
}

/// The allocator's settings, with every fault decision made here.
#[derive(Clone, Debug)]
pub struct Env {
    /// Registers to hand out, in preference order.
    pub allocatable: Vec<Reg>,
    /// Whether implicit writes count as writes.
    pub implicit_writes: bool,
    /// Whether scratch registers are reserved where spill code runs.
    pub track_scratch: bool,
    /// Whether fills skip the target's register rules.
    pub skip_fill_rule: bool,
    /// Whether linear scan ignores preallocated ranges that begin later.
    pub no_split_at_fixed: bool,
}

impl Env {
    /// Settings for `f` under `opts`.
    pub fn new(f: &Func, opts: &Options) -> Env {
        let mut allocatable = f.target.rules.allocatable(f.stage);
        if let Some(n) = opts.stress_regalloc {
            // `--stress-regalloc N`: the N highest-numbered registers, in
            // the target's order (high ones hold gen8's end-of-thread range).
            let mut by_number = allocatable.clone();
            by_number.sort_unstable();
            let keep = &by_number[by_number.len().saturating_sub(n.max(1) as usize)..];
            allocatable.retain(|r| keep.contains(r));
        }
        let rf0_fault = opts.has(Fault::V3dRf0AcrossImplicit) && !f.target.implicit_regs.is_empty();
        if rf0_fault {
            // The bug: the implicitly written register is handed out (first,
            // as if to save the copy out of it) and implicit writes are not
            // seen as writes.
            let mut a = f.target.implicit_regs.to_vec();
            a.extend(
                allocatable
                    .iter()
                    .copied()
                    .filter(|r| !f.target.implicit_regs.contains(r)),
            );
            allocatable = a;
        }
        Env {
            allocatable,
            implicit_writes: !rf0_fault,
            track_scratch: !opts.has(Fault::SpillNoReserve),
            skip_fill_rule: opts.has(Fault::Gen8R127SpillFill),
            no_split_at_fixed: opts.has(Fault::RaSplitPreallocated),
        }
    }
}

/// Upper bound on spill rounds beyond one per value.
const EXTRA_ROUNDS: usize = 16;

/// Allocate registers for the source-form program `p` (opcodes and names
/// resolved in `ids`, `SourceIds::new(p)`) with each block's instructions in
/// the order `orders[b]` (see [`Func::from_resolved`]): the allocated
/// function, checked to be all physical.
pub fn allocate_func(
    p: &Program,
    ids: &SourceIds,
    orders: Option<&[Vec<usize>]>,
    opts: &Options,
) -> Result<Allocation, CompileError> {
    let mut f = Func::from_resolved(p, ids, orders)?;
    let env = Env::new(&f, opts);
    if env.allocatable.is_empty() {
        return Err(CompileError::Unsupported(
            "the target has no allocatable registers".into(),
        ));
    }
    let mut alloc_set = RegSet::default();
    env.allocatable.iter().for_each(|&r| alloc_set.insert(r));
    // The liveness behind max-live is the first round's full liveness
    // whenever both maps agree (no fault injected): solved once, used twice.
    let vm0 = VarMap::new(&f, env.implicit_writes, true);
    let lv0 = liveness::analyze(&f, &vm0);
    let max_live = liveness::max_live(&f, &vm0, &lv0);
    let mut first = Some((vm0, lv0));
    let mut remats = 0;
    let depth = spill::loop_depth(&f);
    let cands = interference::candidate_runs(&f, &env.allocatable);
    for _ in 0..f.vals.len() + EXTRA_ROUNDS {
        let cons = interference::constraints_with(&f, cands.clone())?;
        let full = VarMap::new(&f, true, true);
        let lv_full = match first.take() {
            Some((vm0, lv0)) if vm0 == full => lv0,
            _ => liveness::analyze(&f, &full),
        };
        let costs = spill::LazyCosts::new(&f, &full, &lv_full, &depth);
        let mut victims = spill::pressure_victims(
            &f,
            &full,
            &lv_full,
            &alloc_set,
            env.allocatable.len(),
            &costs,
        );
        if victims.is_empty() {
            match attempt(&f, opts, &env, (&full, &lv_full), &cons, &costs) {
                Ok(placement) => return finish(f, placement, remats, max_live),
                Err(vs) => victims = vs,
            }
        }
        let sp_env = spill::SpillEnv {
            cons: &cons,
            skip_fill_rule: env.skip_fill_rule,
        };
        // The round's full liveness places the spill code (its registers'
        // occupancy is what a physical-only liveness would give).
        let sites = costs.into_remat_sites();
        remats += spill::spill_values_in(&mut f, &victims, &sp_env, (&full, &lv_full), sites)?;
    }
    Err(CompileError::Allocation("spilling did not converge".into()))
}

/// One assignment attempt on `f` once no pressure victims remain, under
/// the allocator's own variable map (reusing `full`'s liveness when the
/// maps agree): where every value goes, or the values to spill before the
/// next round (colouring's failures made into real victims, or for a
/// linear-scan failure at a gap the best victim occupying that gap).
fn attempt(
    f: &Func,
    opts: &Options,
    env: &Env,
    (full, lv_full): (&VarMap, &Liveness),
    cons: &Constraints,
    costs: &spill::LazyCosts,
) -> Result<Placement, Vec<ValId>> {
    let vm = VarMap::new(f, env.implicit_writes, env.track_scratch);
    let lv_own;
    let lv = if vm == *full {
        lv_full
    } else {
        lv_own = liveness::analyze(f, &vm);
        &lv_own
    };
    // The edges' order is asked for only when a failed value is short
    // lived (see `choose_victims`): the graph is built again for it then.
    let graph = interference::build_in(f, &vm, lv, false);
    match assign(f, opts, env, &vm, lv, &graph, cons, costs) {
        Ok(placement) => Ok(placement),
        Err(Failure::Values(vs)) => {
            let costs = costs.get();
            let graph = match vs.iter().any(|&v| costs.span[v as usize] <= 2) {
                true => interference::build(f, &vm, lv),
                false => graph,
            };
            Err(choose_victims(&graph, costs, vs))
        }
        Err(Failure::AtGaps(fails)) => Err(gap_victims(f, &vm, lv, costs.get(), &fails)),
    }
}

/// The values to spill for linear-scan failures `fails` (`(value, block,
/// gap)`, in block and scan order): per failure, the cheapest long-lived
/// occupant of its gap ([`spill::victim_at`]), else the failed value. A
/// failure at a gap that an earlier choice occupies is passed over, as that
/// spill already frees a register there. The first failure always gives a
/// victim, so every round spills something.
fn gap_victims(f: &Func, vm: &VarMap, lv: &Liveness, costs: &spill::Costs, fails: &[(ValId, usize, usize)]) -> Vec<ValId> {
    let short: Vec<bool> = costs.span.iter().map(|&s| s <= 2).collect();
    let mut out: Vec<ValId> = Vec::new();
    let mut occ: Option<(usize, std::borrow::Cow<[BitSet]>)> = None;
    for &(v, b, g) in fails {
        if occ.as_ref().is_none_or(|(ob, _)| *ob != b) {
            occ = Some((b, liveness::occupancy(f, vm, lv, b)));
        }
        let set = occ.as_ref().and_then(|(_, o)| o.get(g));
        if set.is_some_and(|s| out.iter().any(|&x| s.contains(x as usize))) {
            continue;
        }
        let pick = set.and_then(|s| spill::victim_at(f, vm, s, b, g, costs, &short)).unwrap_or(v);
        if !out.contains(&pick) {
            out.push(pick);
        }
    }
    out
}

/// Where a successful attempt put every value; [`Placement::apply`]
/// rewrites the function accordingly.
enum Placement {
    /// Every value coloured ([`Ra::Graph`]).
    Colored(Vec<Option<PhysReg>>),
    /// Cross-block values coloured, each block's local values scanned
    /// ([`Ra::Split`]).
    Split {
        assignment: Vec<Option<PhysReg>>,
        global: Vec<bool>,
        mov: &'static schedra_ir::OpDesc,
        blocks: Vec<linear_scan::BlockSegs>,
    },
}

impl Placement {
    /// Rewrite `f`'s blocks in place with physical operands (and split
    /// copies).
    fn apply(self, f: &mut Func) {
        match self {
            Placement::Colored(assignment) => {
                f.blocks.iter_mut().for_each(|b| rewrite_all(b, &assignment));
            }
            Placement::Split {
                assignment,
                global,
                mov,
                blocks,
            } => {
                let placed = linear_scan::Placed {
                    global: &global,
                    assign: &assignment,
                    mov,
                };
                for (b, segs) in f.blocks.iter_mut().zip(&blocks) {
                    segs.apply(b, &placed);
                }
            }
        }
    }
}

/// Why one allocation attempt failed.
enum Failure {
    /// Graph colouring left these values without a register.
    Values(Vec<ValId>),
    /// Linear scan found no register for each `(value, block, gap)`.
    AtGaps(Vec<(ValId, usize, usize)>),
}

/// Values that actually free registers when spilled: a failed value that
/// lives long, else its cheapest long-lived neighbour.
fn choose_victims(graph: &Graph, costs: &spill::Costs, failed: Vec<ValId>) -> Vec<ValId> {
    let mut out: Vec<ValId> = Vec::new();
    for v in failed {
        let pick = if costs.span[v as usize] > 2 {
            v
        } else {
            graph.adj(v)
                .iter()
                .copied()
                .filter(|m| costs.span[*m as usize] > 2 && !out.contains(m))
                .min_by(|a, b| costs.cost[*a as usize].total_cmp(&costs.cost[*b as usize]))
                .unwrap_or(v)
        };
        if !out.contains(&pick) {
            out.push(pick);
        }
    }
    out
}

/// Values that still occur in `f`: those occupying some gap (a value
/// occupies the gap after each of its definitions and is live at the gap
/// before each use, while only a value read somewhere is ever live). Within
/// a block a variable occupies a gap only if it occupies the one before or
/// the instruction between writes it, so these are the occupants of each
/// block's first gap ([`liveness::occupancy`] of `lv`, solved for `vm`) and
/// the values written.
fn present(f: &Func, vm: &VarMap, lv: &Liveness) -> Vec<bool> {
    let nv = f.vals.len();
    let mut p = vec![false; nv];
    for (b, blk) in f.blocks.iter().enumerate() {
        if let Some(first) = liveness::occupancy(f, vm, lv, b).first() {
            for x in first.iter().take_while(|&x| x < nv) {
                p[x] = true;
            }
        }
        for i in &blk.insts {
            if let Some(Loc::Val(v)) = i.dest {
                if let Some(here) = p.get_mut(v as usize) {
                    *here = true;
                }
            }
        }
    }
    p
}

#[allow(clippy::too_many_arguments)]
fn assign(
    f: &Func,
    opts: &Options,
    env: &Env,
    vm: &VarMap,
    lv: &Liveness,
    graph: &Graph,
    cons: &Constraints,
    costs: &spill::LazyCosts,
) -> Result<Placement, Failure> {
    let sizes: Vec<u8> = f.vals.iter().map(|v| v.size).collect();
    let here = present(f, vm, lv);
    let nodes: Vec<ValId> = (0..f.vals.len() as ValId)
        .filter(|&v| here[v as usize] && (opts.ra == Ra::Graph || graph.global[v as usize]))
        .collect();
    let problem = color::Problem {
        nodes: &nodes,
        graph,
        cons,
        sizes: &sizes,
        cost: costs,
    };
    let assignment = color::color(&problem).map_err(Failure::Values)?;
    match opts.ra {
        Ra::Graph => Ok(Placement::Colored(assignment)),
        Ra::Split => {
            let global: Vec<bool> = (0..f.vals.len())
                .map(|v| graph.global[v] || !here[v])
                .collect();
            let mov = mov_desc(f.target).map_err(|_| Failure::Values(Vec::new()))?;
            let local = linear_scan::local_words(vm.nv, &global);
            let scan = linear_scan::Scan {
                vm,
                global: &global,
                local: &local,
                assign: &assignment,
                cons,
                sizes: &sizes,
                mov,
                no_split_at_fixed: env.no_split_at_fixed,
            };
            let mut blocks = Vec::with_capacity(f.blocks.len());
            let mut fails = Vec::new();
            for b in 0..f.blocks.len() {
                let occ = liveness::occupancy(f, vm, lv, b);
                match linear_scan::scan_block(&occ, &scan) {
                    Ok(segs) => blocks.push(segs),
                    Err(at) => fails.extend(at.into_iter().map(|(v, g)| (v, b, g))),
                }
            }
            if !fails.is_empty() {
                return Err(Failure::AtGaps(fails));
            }
            Ok(Placement::Split {
                assignment,
                global,
                mov,
                blocks,
            })
        }
    }
}

/// Replace every value of `b` by its run in `assignment` (values without
/// one stay).
fn rewrite_all(b: &mut RBlock, assignment: &[Option<PhysReg>]) {
    let map = |l: Loc| match l {
        Loc::Val(v) => assignment
            .get(v as usize)
            .copied()
            .flatten()
            .map_or(l, Loc::Phys),
        other => other,
    };
    let map_op = |o: &mut ROperand| {
        if let ROperand::Loc(l) = o {
            *l = map(*l);
        }
    };
    for i in &mut b.insts {
        i.dest = i.dest.map(map);
        i.srcs.iter_mut().for_each(map_op);
    }
    if let Some(c) = &mut b.cond {
        map_op(c);
    }
}

fn finish(
    mut f: Func,
    placement: Placement,
    remats: usize,
    max_live: usize,
) -> Result<Allocation, CompileError> {
    placement.apply(&mut f);
    let (mut spills, mut fills) = (0, 0);
    for i in f.blocks.iter().flat_map(|b| &b.insts) {
        match i.kind {
            Kind::SpillStore => spills += 1,
            Kind::Fill => fills += 1,
            _ => {}
        }
    }
    f.check_physical()?;
    Ok(Allocation {
        func: f,
        spills,
        fills,
        remats,
        max_live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use ra_ir::test_func as func;

    #[test]
    fn each_fault_flips_exactly_its_own_decision() {
        let f = func("target v3d71\nb0:\n %a = ldunif 0\n tlbw %a\n end\n");
        let base = Env::new(&f, &Options::default());
        assert!(
            !base.allocatable.contains(&0)
                && base.implicit_writes
                && base.track_scratch
                && !base.skip_fill_rule
                && !base.no_split_at_fixed
        );
        let with = |fault| {
            Env::new(
                &f,
                &Options {
                    inject: Some(fault),
                    ..Options::default()
                },
            )
        };
        let e = with(Fault::V3dRf0AcrossImplicit);
        assert!(e.allocatable.first() == Some(&0) && !e.implicit_writes && e.track_scratch);
        assert!(!with(Fault::SpillNoReserve).track_scratch);
        assert!(with(Fault::Gen8R127SpillFill).skip_fill_rule);
        assert!(with(Fault::RaSplitPreallocated).no_split_at_fixed);
        assert_eq!(
            with(Fault::SchedIgnoreWar).allocatable,
            base.allocatable,
            "scheduler faults do not touch allocation"
        );
    }

    #[test]
    fn every_operand_of_the_allocated_program_is_physical() {
        let src = "target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = mul %x, %x\n %z:2 = add %y, %x\n %t:4 = send.tex %z\n send.eot %t\n end\n";
        let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parse");
        for ra in [Ra::Split, Ra::Graph] {
            let a = allocate_func(
                &p,
                &SourceIds::new(&p),
                None,
                &Options {
                    ra,
                    ..Options::default()
                },
            )
            .and_then(Allocation::into_allocated)
            .expect("allocates");
            let ops = a.program.blocks.iter().flat_map(|b| b.insts());
            for i in ops {
                assert!(
                    i.dest
                        .iter()
                        .chain(&i.srcs)
                        .all(|o| !matches!(o, schedra_ir::Operand::Virt(_))),
                    "{i:?}"
                );
                let d = f_desc(&a.program, &i.opcode);
                assert!(a.program.target.rules.op_regs_ok(d, i).is_ok(), "{i:?}");
            }
            assert!(a.program.inputs.iter().all(|i| i.vreg.is_none()));
        }
    }

    fn f_desc(p: &Program, name: &str) -> &'static schedra_ir::OpDesc {
        p.target.op(name).unwrap_or(&p.target.ops[0])
    }
}
