//! The allocated program → the machine-form program.
//!
//! Algorithm, per block: lower the ops (`lower`), build the post-RA
//! dependency graph and list-schedule it into bundles (`sched_post`); when
//! implicit results can be forwarded past their copies (the copied value
//! dies in the block, physical liveness from [`phys_live_out`]), schedule
//! that variant too and keep the shorter (it lengthens the fixed register's
//! life, which can delay the next implicit write); in a
//! block ending with `end` on a target with an end-of-program marker
//! (`ProgramEnd::Marker` in the description: v3d71 `thrsw` and its delay
//! slots), place the marker op in its slot as early as the rules allow
//! ([`place_end_marker`]); emit the bundles in the target's slot order. The
//! blocks, labels and terminators are the allocated program's; the inputs are
//! repeated without virtual registers. Statistics come from `stats`.
//!
//! Invariant: the machine program computes, block by block, what the
//! allocated program computes (same effects per channel, same registers at
//! every block end apart from the target's implicitly written registers),
//! and every bundle and end sequence satisfies the target's rules.

use lower::{forward_in_place, lower_allocated_into, lower_insts_resolved, would_forward, LoweredOp};
use crate::allocate::ra_ir::{phys_operand, Func};
use crate::depgraph::{DepGraph, GraphBuffers};
use phys_live::PhysLive;
use schedule::{build_graph_in, landing_end, schedule_alone, schedule_in, Schedule, BundleBuffers};
use crate::{CompileError, Fault, Options, Stats};

pub mod lower;
pub mod phys_live;
pub mod schedule;
pub mod stats;
use schedra_ir::SmolStr;
use schedra_ir::target::Clock;
use schedra_ir::{
    Block, Body, Bundle, Form, Input, Inst, OpDesc, Operand, Program, Reg, Target, TermKind, Terminator,
};

/// Extra knowledge about the source program that the bundler needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// Registers the source program preallocated (input registers and
    /// physical destinations it names). Only fault injection
    /// (`R600PinnedWar`) looks at them.
    pub pinned: Vec<Reg>,
}

impl Hints {
    /// The registers of `p`'s inputs: what an allocated program `p` is
    /// known to preallocate.
    pub fn of_inputs(p: &Program) -> Hints {
        Hints { pinned: p.inputs.iter().flat_map(|i| i.reg.regs()).collect() }
    }

    /// The registers `src` (a source-form program) preallocates: its input
    /// registers and every physical register it names as a destination.
    pub fn from_source(src: &Program) -> Hints {
        let mut pinned: Vec<Reg> = src.inputs.iter().flat_map(|i| i.reg.regs()).collect();
        for inst in src.blocks.iter().flat_map(|b| b.insts()) {
            if let Some(Operand::Phys(p)) = &inst.dest {
                pinned.extend(p.regs());
            }
        }
        pinned.sort_unstable();
        pinned.dedup();
        Hints { pinned }
    }
}

/// Bundle the allocated program `alloc` (see the module doc) into the
/// machine form, with its statistics (instructions, cycles, nops,
/// sfu-stalls, spills and fills as scratch writes and reads), given each
/// instruction's op description (`descs[b][k]` for instruction `k` of
/// block `b`, as [`crate::allocate::Allocated::descs`]); missing ones are
/// looked up. Its instructions move into the machine program.
pub(crate) fn bundle_program_resolved(
    alloc: Program,
    descs: &[Vec<&'static OpDesc>],
    opts: &Options,
    hints: &Hints,
) -> Result<(Program, Stats), CompileError> {
    if alloc.form != schedra_ir::Form::Source {
        return Err(CompileError::NotSource);
    }
    let target = alloc.target;
    let mut alloc = alloc;
    let live = PhysLive::new(&alloc);
    let insts: Vec<Vec<Inst>> = alloc.blocks.iter_mut().map(|b| b.take_insts()).collect();
    let mut bundles = Vec::with_capacity(alloc.blocks.len());
    let mut tally = stats::Tally::default();
    let ws = &mut Workspace::default();
    for (i, (b, insts)) in alloc.blocks.iter().zip(insts).enumerate() {
        let block_descs = descs.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let live_out = |r: Reg| live.live_out(i, r);
        let mut ops = lower_insts_resolved(target, insts, block_descs, opts)?;
        bundles.push(bundle_block((target, ws, &mut tally), (&b.term, &mut ops), &live_out, opts, hints)?);
    }
    let blocks = alloc
        .blocks
        .into_iter()
        .zip(bundles)
        .map(|(b, bundles)| Block {
            label: b.label,
            body: Body::Machine(bundles),
            term: b.term,
            span: b.span,
        })
        .collect();
    let program = Program {
        name: alloc.name,
        target,
        stage: alloc.stage,
        form: Form::Machine,
        inputs: machine_inputs(&alloc.inputs),
        blocks,
    };
    Ok((program, tally.finish()))
}

/// Bundle the allocated function `f` (every location physical, as
/// [`crate::allocate::allocate_func`] returns it) into the machine form,
/// with its statistics: the same result as `bundle_program_resolved` of
/// its allocated program ([`Func::into_program_resolved`]), without
/// building that program — each machine op's instruction is built once,
/// by [`lower::lower_allocated_into`]. The buffers of `ws` are reused.
pub(crate) fn bundle_allocated(
    ws: &mut Workspace,
    f: Func,
    opts: &Options,
    hints: &Hints,
) -> Result<(Program, Stats), CompileError> {
    let target = f.target;
    // Only a block with a copy to forward asks (about half the programs
    // never do): the scan waits for the first question.
    let live = std::cell::OnceCell::new();
    let mut done = Vec::with_capacity(f.blocks.len());
    let mut tally = stats::Tally::default();
    // Taken out so that `ws` can be lent to the bundler; an error
    // leaves the workspace without this buffer, which costs only capacity.
    let mut ops = std::mem::take(&mut ws.ops);
    for (i, b) in f.blocks.iter().enumerate() {
        let mut term = b.term.clone();
        if let (TermKind::Brnz { cond, .. }, Some(c)) = (&mut term.kind, &b.cond) {
            *cond = phys_operand(c)?;
        }
        ops.clear();
        lower_allocated_into(target, &b.insts, opts, &mut ops)?;
        let live_out = |r: Reg| live.get_or_init(|| PhysLive::of_func(&f)).live_out(i, r);
        let bundles = bundle_block((target, ws, &mut tally), (&term, &mut ops), &live_out, opts, hints)?;
        done.push((bundles, term));
    }
    ops.clear();
    ws.ops = ops;
    let blocks = f
        .blocks
        .into_iter()
        .zip(done)
        .map(|(b, (bundles, term))| Block {
            label: b.label,
            body: Body::Machine(bundles),
            term,
            span: b.span,
        })
        .collect();
    let program = Program {
        name: f.name,
        target,
        stage: f.stage,
        form: Form::Machine,
        inputs: f.inputs,
        blocks,
    };
    Ok((program, tally.finish()))
}

/// The machine program's inputs: `inputs` without virtual registers.
fn machine_inputs(inputs: &[Input]) -> Vec<Input> {
    inputs
        .iter()
        .map(|i| Input {
            vreg: None,
            reg: i.reg,
            span: i.span,
        })
        .collect()
}

/// Scratch space reused from block to block: the dependency graph, its
/// bookkeeping and the scheduler's, the slot order of a bundle's members,
/// and the lowered ops of the block at hand (between blocks and between
/// compiles every list is empty: only its capacity is kept).
#[derive(Default)]
pub(crate) struct Workspace {
    graph: DepGraph,
    graph_buffers: GraphBuffers,
    sched: BundleBuffers,
    order: Vec<(usize, &'static str)>,
    ops: Vec<LoweredOp>,
}

/// The bundles of a block of the allocated program ending with `term`,
/// from its lowered ops `ops` (whose instructions move into the bundles).
fn bundle_block(
    (target, ws, tally): (&'static Target, &mut Workspace, &mut stats::Tally),
    (term, ops): (&Terminator, &mut Vec<LoweredOp>),
    live_out: &dyn Fn(Reg) -> bool,
    opts: &Options,
    hints: &Hints,
) -> Result<Vec<Bundle>, CompileError> {
    let reads = term_reads(term);
    let plain_len = ops.len();
    let mut best = schedule_block((target, ws), term, ops, opts, hints)?;
    if would_forward(ops, live_out, &reads) {
        // Forwarded in place; put back unless its schedule is shorter.
        let change = forward_in_place(target, ops, live_out, &reads, opts);
        let mut kept = false;
        if !ops.is_empty() && ops.len() < plain_len {
            let other = schedule_block((target, ws), term, ops, opts, hints)?;
            if other.0.len() < best.0.len() {
                best = other;
                kept = true;
            }
        }
        if !kept {
            change.undo(target, ops, opts);
        }
    }
    let marker = end_marker_of(target, term)?;
    let Clock::EncodedWaits { .. } = target.clock else {
        let bundles = emit((target, tally, &mut ws.order), (ops, best.0, best.1), marker);
        tally.end_block(target.clock, term);
        return Ok(bundles);
    };
    // Encoded waits: the schedule's order becomes bundles with barriers
    // and waits, which are what the statistics count.
    let timing = target.wait_timing();
    let mut unused = stats::Tally::default();
    let bundles = emit((target, &mut unused, &mut ws.order), (ops, best.0, best.1), marker);
    let bundles = crate::waits::encode(target, timing, bundles, opts);
    tally.encoded();
    tally.block();
    for b in &bundles {
        let ops = b.ops.iter().map(|o| (target.op(&o.inst.opcode), &o.inst));
        tally.timed_bundle(timing, ops, b.wait);
    }
    tally.end_block(target.clock, term);
    Ok(bundles)
}

/// The machine bundles of a scheduled block (`ops`, their schedule `s`
/// and the bundle `at` that carries the end marker `marker`), each tallied
/// into the statistics (`order` is scratch space).
fn emit(
    (target, tally, order): (&'static Target, &mut stats::Tally, &mut Vec<(usize, &'static str)>),
    (ops, s, at): (&mut [LoweredOp], Schedule, Option<usize>),
    marker: Option<Marker>,
) -> Vec<Bundle> {
    let mut bundles: Vec<Bundle> = Vec::with_capacity(s.len());
    let marker_inst = marker.map(|m| marker_op(m).inst);
    tally.block();
    for (i, bundle) in s.bundles().enumerate() {
        let marker_here = match (at, marker, &marker_inst) {
            (Some(p), Some(m), Some(mi)) if p == i => Some((m, mi)),
            _ => None,
        };
        // Statistics from the ops' own descriptions (no look-up by name).
        let members = bundle.iter().filter_map(|&(j, _)| ops.get(j)).map(|o| (Some(o.desc), &o.inst));
        let with_marker = marker_here.map(|(m, mi)| (Some(m.desc), mi));
        tally.bundle(target.clock, members.chain(with_marker));
        let mut ops_here = take_bundle_ops(target, ops, bundle, order);
        if let Some((m, _)) = marker_here {
            ops_here.push(marker_op(m));
            schedule::sort_by_slot(target, &mut ops_here);
        }
        bundles.push(Bundle {
            ops: ops_here,
            span: Default::default(),
            wait: 0,
        });
    }
    bundles
}

/// [`schedule::bundle_ops`] moving each op's instruction out of
/// `ops` (every op sits in exactly one bundle) instead of copying it: the
/// members are put in the target's slot order first (`order` is scratch
/// space), then their ops built.
fn take_bundle_ops(
    target: &Target,
    ops: &mut [LoweredOp],
    bundle: &[(usize, &'static str)],
    order: &mut Vec<(usize, &'static str)>,
) -> Vec<schedra_ir::Op> {
    order.clear();
    order.extend_from_slice(bundle);
    order.sort_by_key(|&(_, slot)| schedule::slot_rank(target, slot));
    let mut v = Vec::with_capacity(order.len() + 1);
    for &(i, slot) in order.iter() {
        if let Some(o) = ops.get_mut(i) {
            v.push(schedra_ir::Op {
                slot: SmolStr::new_static(slot),
                inst: std::mem::replace(&mut o.inst, taken()),
            });
        }
    }
    v
}

/// What is left of a lowered op whose instruction moved into its bundle.
fn taken() -> Inst {
    Inst {
        opcode: SmolStr::default(),
        dest: None,
        srcs: Vec::new(),
        span: Default::default(),
    }
}

/// A target's end-of-program marker as the bundler places it.
#[derive(Clone, Copy, Debug)]
pub struct Marker {
    /// The marker op.
    pub desc: &'static OpDesc,
    /// The slot it issues in (its first slot in the table).
    pub slot: &'static str,
    /// Bundles that must follow the marker's bundle.
    pub delay_slots: usize,
}

/// The end marker if a block ending with `term` ends the program on a
/// target with one; an error when the description names a marker its
/// table lacks or gives no slot.
fn end_marker_of(target: &'static Target, term: &Terminator) -> Result<Option<Marker>, CompileError> {
    if term.kind != TermKind::End || target.end_delay_slots().is_none() {
        return Ok(None);
    }
    let found = target.end_marker().and_then(|(desc, delay_slots)| {
        desc.slots.first().map(|&slot| Marker { desc, slot, delay_slots })
    });
    found.map(Some).ok_or_else(|| {
        CompileError::Unsupported(format!("{} names an end marker that its opcode table lacks or gives no slot", target.name))
    })
}

/// Schedule the lowered ops of a block ending with `term` and place the
/// end marker: the schedule and the marker's bundle if any.
fn schedule_block(
    (target, ws): (&'static Target, &mut Workspace),
    term: &Terminator,
    ops: &[LoweredOp],
    opts: &Options,
    hints: &Hints,
) -> Result<(Schedule, Option<usize>), CompileError> {
    let mut s = match schedule_alone(&mut ws.sched, target, ops) {
        Some(s) => s?,
        None if matches!(target.clock, Clock::EncodedWaits { .. }) && opts.post == crate::Post::Peephole => in_order(ops)?,
        None => {
            build_graph_in(&mut ws.graph, &mut ws.graph_buffers, (target, ops), &hints.pinned, opts);
            ws.sched.inject(opts);
            schedule_in(&mut ws.sched, target, ops, &ws.graph)?
        }
    };
    let at = end_marker_of(target, term)?.map(|m| place_end_marker(target, ops, &mut s, m, opts));
    Ok((s, at))
}

/// The ops in their order, each alone in its first slot (the peephole
/// mode's starting point: no list scheduling).
fn in_order(ops: &[LoweredOp]) -> Result<Schedule, CompileError> {
    let mut s = Schedule::default();
    for (i, o) in ops.iter().enumerate() {
        let slot = o.slots.first().copied().ok_or_else(|| CompileError::Unsupported(format!("`{}` has no slot", o.inst.opcode)))?;
        s.push([(i, slot)]);
        s.cycle_of.push(i);
    }
    Ok(s)
}

/// The registers a block's terminator reads (a `brnz` condition).
fn term_reads(term: &Terminator) -> Vec<Reg> {
    match &term.kind {
        TermKind::Brnz {
            cond: Operand::Phys(p),
            ..
        } => p.regs().collect(),
        _ => Vec::new(),
    }
}

/// The marker op in its slot.
fn marker_op(m: Marker) -> schedra_ir::Op {
    schedra_ir::Op {
        slot: SmolStr::new_static(m.slot),
        inst: Inst {
            opcode: SmolStr::new_static(m.desc.name),
            dest: None,
            srcs: Vec::new(),
            span: Default::default(),
        },
    }
}

/// Choose the bundle that carries the end marker `m`, followed by exactly
/// `k = m.delay_slots` bundles, and pad the schedule to that length. Two ways, the shorter
/// wins (merging on ties):
/// - *merge*: the earliest position `p` such that the schedule fits in
///   `p + 1 + k` bundles, every write has landed by then, bundle `p` has the
///   marker's slot free and its ops pass `rules.end_slot_ok(.., None)`, and
///   the ops of the bundles after it pass `end_slot_ok(.., Some(j))`; a fresh
///   empty tail always qualifies;
/// - *insert*: a bundle holding only the marker, inserted before the last
///   `k` bundles when those pass the delay-slot rules and no write is in
///   flight at the insertion point (so the extra cycle changes no timing).
///
/// Returns the marker's bundle index. The `None` check is the single
/// decision point of the fault `V3dThrswRfWrite` (which skips it).
pub fn place_end_marker(
    target: &Target,
    ops: &[LoweredOp],
    s: &mut Schedule,
    m: Marker,
    opts: &Options,
) -> usize {
    let k = m.delay_slots;
    let used = (0..s.len())
        .rposition(|i| !s.bundle(i).is_empty())
        .map_or(0, |i| i + 1);
    let land = landing_end(ops, s);
    let first = used.saturating_sub(k + 1).max(land.saturating_sub(k + 1));
    let slot = m.slot;
    let op_ok = |j: usize, p: usize, sl: &str, marker_here: bool| -> bool {
        let Some(op) = ops.get(j) else { return false };
        if marker_here {
            sl != slot
                && (opts.has(Fault::V3dThrswRfWrite)
                    || target.rules.end_slot_ok(op.desc, &op.inst, None).is_ok())
        } else {
            target.rules.end_slot_ok(op.desc, &op.inst, Some(p)).is_ok()
        }
    };
    let bundle = |i: usize| s.bundle(i);
    let merge_ok = |p: usize| {
        (p..used).all(|i| {
            bundle(i)
                .iter()
                .all(|&(j, sl)| op_ok(j, i.saturating_sub(p + 1), sl, i == p))
        })
    };
    let p = (first..used.max(first))
        .find(|&p| merge_ok(p))
        .unwrap_or(used.max(first));
    if let Some(q) = insert_point(ops, s, used, k) {
        let tail_ok =
            (q..used).all(|i| bundle(i).iter().all(|&(j, sl)| op_ok(j, i - q, sl, false)));
        if tail_ok && used + 1 < p + 1 + k {
            s.truncate(used);
            s.insert_empty(q);
            for c in s.cycle_of.iter_mut().filter(|c| **c >= q) {
                *c += 1;
            }
            return q;
        }
    }
    s.truncate(used.max(land));
    while s.len() < p + 1 + k {
        s.push([]);
    }
    p
}

/// The bundle index `used - k` if no write issued before it is still in
/// flight there, and every write still lands within `used + 1` cycles once
/// the bundles from there on move one cycle later.
fn insert_point(ops: &[LoweredOp], s: &Schedule, used: usize, k: usize) -> Option<usize> {
    let q = used.checked_sub(k)?;
    let mut writes = ops
        .iter()
        .zip(&s.cycle_of)
        .flat_map(|(o, &c)| o.deps.writes.iter().map(move |w| (c, c + w.1 as usize)));
    writes
        .all(|(c, l)| if c < q { l <= q } else { l < used + 1 })
        .then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::bundle_program;
    use schedra_ir::target::v3d71::V3D71;
    use schedra_ir::{Imm, PhysReg, Span, Stage, Terminator};

    fn reg(r: u16) -> Operand {
        Operand::Phys(PhysReg::one(r))
    }
    fn inst(op: &str, dest: Option<u16>, srcs: Vec<Operand>) -> Inst {
        Inst {
            opcode: op.into(),
            dest: dest.map(reg),
            srcs,
            span: Span::default(),
        }
    }
    fn prog(t: &'static Target, insts: Vec<Inst>, inputs: &[u16]) -> Program {
        let term = Terminator {
            kind: TermKind::End,
            span: Span::default(),
        };
        let block = Block {
            label: "b0".into(),
            body: Body::Source(insts),
            term,
            span: Span::default(),
        };
        let inputs = inputs
            .iter()
            .map(|&r| Input {
                vreg: None,
                reg: PhysReg::one(r),
                span: Span::default(),
            })
            .collect();
        Program {
            name: Some("t".into()),
            target: t,
            stage: Stage::Fragment,
            form: Form::Source,
            inputs,
            blocks: vec![block],
        }
    }

    fn mul_example() -> Program {
        prog(
            &V3D71,
            vec![
                inst("ldunif", Some(4), vec![Operand::Imm(Imm::int(0))]),
                inst("ldvary", Some(5), vec![Operand::Imm(Imm::int(0))]),
                inst("fmul", Some(5), vec![reg(4), reg(5)]),
                inst("fmul", Some(5), vec![reg(5), reg(1)]),
                inst("tlbw", None, vec![reg(5)]),
            ],
            &[1],
        )
    }

    #[test]
    fn mul_example_ends_with_thrsw_and_two_delay_slots() {
        let p = mul_example();
        let (m, st) = bundle_program(&p, &Options::default(), &Hints::of_inputs(&p)).unwrap();
        let b = m.blocks[0].bundles();
        let n = b.len();
        assert!(n >= 3);
        assert!(b[n - 3]
            .ops
            .iter()
            .any(|o| o.inst.opcode == "thrsw" && o.slot == "sig"));
        assert_eq!(
            b.iter()
                .flat_map(|x| &x.ops)
                .filter(|o| o.inst.opcode == "thrsw")
                .count(),
            1
        );
        assert_eq!(st.instructions, n);
        assert_eq!(m.form, Form::Machine);
        assert_eq!(m.inputs[0].vreg, None);
    }

    #[test]
    fn thrsw_bundle_holds_no_register_write_unless_faulted() {
        // The last op writes a register: thrsw cannot share its bundle.
        let p = prog(
            &V3D71,
            vec![
                inst("fadd", Some(4), vec![reg(1), reg(1)]),
                inst("tlbw", None, vec![reg(4)]),
                inst("fadd", Some(6), vec![reg(1), reg(1)]),
            ],
            &[1],
        );
        let writes_with_thrsw = |m: &Program| {
            m.blocks[0].bundles().iter().any(|b| {
                b.ops.iter().any(|o| o.inst.opcode == "thrsw")
                    && b.ops.iter().any(|o| o.inst.dest.is_some())
            })
        };
        let (m, _) = bundle_program(&p, &Options::default(), &Hints::of_inputs(&p)).unwrap();
        assert!(!writes_with_thrsw(&m));
        let (m, _) = bundle_program(
            &p,
            &Options {
                inject: Some(Fault::V3dThrswRfWrite),
                ..Default::default()
            },
            &Hints::of_inputs(&p),
        )
        .unwrap();
        assert!(writes_with_thrsw(&m));
    }

    #[test]
    fn bundling_the_allocated_function_equals_bundling_its_program() {
        let mut checked = 0;
        for (path, src) in crate::test_corpus::programs() {
            let ids = crate::source_ids::SourceIds::new(&src);
            let hints = Hints::from_source(&src);
            for stress in [None, Some(2)] {
                let opts = Options { stress_regalloc: stress, ..Options::default() };
                let Ok(a) = crate::allocate::allocate_func(&src, &ids, None, &opts) else { continue };
                let Ok(p) = a.clone().into_allocated() else { continue };
                let via_program = bundle_program_resolved(p.program, &p.descs, &opts, &hints);
                let direct = bundle_allocated(&mut Workspace::default(), a.func, &opts, &hints);
                assert_eq!(direct.ok(), via_program.ok(), "{}", path.display());
                checked += 1;
            }
        }
        assert!(checked > 20, "{checked}");
    }

    #[test]
    fn a_reused_context_compiles_as_a_fresh_one_does() {
        let progs: Vec<_> = crate::test_corpus::programs().into_iter().map(|(_, p)| p).collect();
        assert!(progs.len() > 10, "{}", progs.len());
        let opts = Options::default();
        let shown = |c: Result<crate::Compiled, CompileError>| c.map(|c| (schedra_ir::print::print(&c.program), c.stats));
        // One context's buffers (the bundler's, the pre-RA scheduler's)
        // are reused across targets and sizes; each result equals a compile
        // with a new context.
        let mut ctx = crate::Context::default();
        for p in &progs {
            let kept = shown(crate::compile_with(&mut ctx, p, &opts));
            let fresh = shown(crate::compile(p, &opts));
            assert_eq!(kept, fresh);
        }
    }

    #[test]
    fn pinned_hints_come_from_inputs_and_physical_destinations() {
        let mut p = mul_example();
        p.blocks[0].inst_list().expect("source").push(inst("mov", Some(9), vec![reg(1)]));
        assert_eq!(Hints::from_source(&p).pinned, vec![1, 4, 5, 9]);
    }
}
