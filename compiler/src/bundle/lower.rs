//! Lowering: ops of the allocated program (source form, every register
//! physical), or of the allocated function it is made from
//! ([`lower_allocated_into`]) → machine ops, each with the slots it may issue in and its
//! dependency summary (what it reads, what it writes with which latency,
//! which effects it has).
//!
//! Algorithm, per op:
//! - an op whose target entry has `Dest::Implicit(r)` carries in the
//!   allocated program the register its value must end up in. If that is `r`
//!   itself, the implicit op is emitted alone. Otherwise, if the target has an
//!   explicit twin (same semantics, same operands, `Dest::Explicit`: v3d71
//!   `ldunifrf` for `ldunif`) the twin writes the register directly; if not,
//!   the implicit op is followed by `mov dest, $r` (v3d71 `ldvary`,
//!   `ldconst`). The copy reads `r` through an ordinary RAW edge with the
//!   implicit write's latency, and later writers of `r` get WAR edges from
//!   the copy, so the dependency graph keeps the value alive exactly as long
//!   as needed.
//! - every other op is copied unchanged.
//! - slots: the entry's slots filtered by `rules.slot_ok` (r600: x/y/z/w
//!   write their own channel; t any; transcendentals t only; cf for exports
//!   and scratch).
//!
//! Invariant: executing the lowered ops one after another (sequentially)
//! leaves every register except the target's implicitly written ones exactly
//! as the allocated op did, with the same effects.

use crate::depgraph::{push_effects, Storage, OpDeps};
use crate::allocate::ra_ir::{emit_with, RInst};
use crate::{CompileError, Fault, Options};
use schedra_ir::target::{Dest, OpDesc, Sem};
use schedra_ir::SmolStr;
use schedra_ir::{Inst, Operand, PhysReg, Target};

/// One machine op before scheduling.
#[derive(Clone, Debug)]
pub struct LoweredOp {
    /// Its target description.
    pub desc: &'static OpDesc,
    /// The op in machine form (`dest == None` for an implicit destination).
    pub inst: Inst,
    /// The slots it may issue in (non-empty).
    pub slots: std::borrow::Cow<'static, [&'static str]>,
    /// What it reads, writes and does, with the scheduler's latencies.
    pub deps: OpDeps,
}

impl AsRef<OpDeps> for LoweredOp {
    fn as_ref(&self) -> &OpDeps {
        &self.deps
    }
}

/// The latency the scheduler assumes for a write of `desc` (`implicit`: the
/// write to the target's fixed register). This is the single decision point
/// of the faults `V3dSfuLatency` and `V3dLdvarySameCycle`.
pub fn write_latency(target: &Target, desc: &OpDesc, implicit: bool, opts: &Options) -> u32 {
    if desc.sfu && opts.has(Fault::V3dSfuLatency) {
        return 1;
    }
    if implicit && opts.has(Fault::V3dLdvarySameCycle) {
        // The shortest latency of any implicit writer of the same register
        // (ldunif's timing for ldvary).
        if let Dest::Implicit(r) = desc.dest {
            return target
                .ops
                .iter()
                .filter(|o| o.dest == Dest::Implicit(r))
                .map(|o| o.latency)
                .min()
                .unwrap_or(desc.latency);
        }
    }
    desc.latency
}

/// Lower the ops of one block of the allocated program.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn lower_block(
    target: &'static Target,
    insts: &[Inst],
    opts: &Options,
) -> Result<Vec<LoweredOp>, CompileError> {
    lower_insts(target, insts.to_vec(), opts)
}

/// [`lower_block`] taking the instructions by value (they move into the
/// lowered ops instead of being copied).
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn lower_insts(
    target: &'static Target,
    insts: Vec<Inst>,
    opts: &Options,
) -> Result<Vec<LoweredOp>, CompileError> {
    lower_insts_resolved(target, insts, &[], opts)
}

/// [`lower_insts`] given the op description of each instruction (`descs[k]`
/// for `insts[k]`, as the allocator resolved them); an instruction without
/// one, or whose opcode is not its description's, is looked up by name.
pub fn lower_insts_resolved(
    target: &'static Target,
    insts: Vec<Inst>,
    descs: &[&'static OpDesc],
    opts: &Options,
) -> Result<Vec<LoweredOp>, CompileError> {
    // An implicit op may take a copy after it: room for those too.
    let implicit = descs.iter().filter(|d| matches!(d.dest, Dest::Implicit(_))).count();
    let mut out = Vec::with_capacity(insts.len() + implicit);
    for (k, inst) in insts.into_iter().enumerate() {
        let known = descs.get(k).copied().filter(|d| d.name == inst.opcode);
        lower_inst(target, known, inst, opts, &mut out)?;
    }
    Ok(out)
}

/// Lower the instructions of one block of the allocated function (every
/// location physical, as [`crate::allocate::allocate_func`] returns it):
/// the same ops as [`lower_insts_resolved`] of the block's allocated
/// program ([`crate::allocate::ra_ir::emit_with`]), each machine instruction built
/// once, straight from the allocator's form; appended to `out` (a list
/// reused from block to block).
pub fn lower_allocated_into(
    target: &'static Target,
    insts: &[RInst],
    opts: &Options,
    out: &mut Vec<LoweredOp>,
) -> Result<(), CompileError> {
    // An implicit op may take a copy after it: room for those too.
    let implicit = insts.iter().filter(|i| matches!(i.desc.dest, Dest::Implicit(_))).count();
    out.reserve(insts.len() + implicit);
    for i in insts {
        // Emitted instructions are physical and spell `i.desc`'s opcode.
        emit_with(target, i, &mut |inst| lower_known(target, i.desc, inst, opts, out))?;
    }
    Ok(())
}

fn lower_inst(
    target: &'static Target,
    known: Option<&'static OpDesc>,
    inst: Inst,
    opts: &Options,
    out: &mut Vec<LoweredOp>,
) -> Result<(), CompileError> {
    let desc = known.or_else(|| target.op(&inst.opcode)).ok_or_else(|| {
        CompileError::Unsupported(format!(
            "unknown opcode `{}` for {}",
            inst.opcode, target.name
        ))
    })?;
    check_physical(&inst)?;
    lower_known(target, desc, inst, opts, out)
}

/// Lower `inst` (physical operands only), an instance of `desc`.
fn lower_known(
    target: &'static Target,
    desc: &'static OpDesc,
    inst: Inst,
    opts: &Options,
    out: &mut Vec<LoweredOp>,
) -> Result<(), CompileError> {
    let Dest::Implicit(fixed) = desc.dest else {
        push_machine_op(target, desc, inst, opts, out)?;
        return Ok(());
    };
    let dest = match &inst.dest {
        None => None,
        Some(Operand::Phys(p)) => Some(*p),
        Some(_) => {
            return Err(CompileError::Unsupported(format!(
                "`{}` has a non-register destination",
                inst.opcode
            )))
        }
    };
    match dest {
        Some(d) if d != PhysReg::one(fixed) => {
            if let Some(twin) = explicit_twin(target, desc) {
                let i = Inst {
                    opcode: SmolStr::new_static(twin.name),
                    dest: Some(Operand::Phys(d)),
                    ..inst
                };
                push_machine_op(target, twin, i, opts, out)?;
            } else {
                let mov = target_mov(target)?;
                let span = inst.span;
                let bare = Inst { dest: None, ..inst };
                push_machine_op(target, desc, bare, opts, out)?;
                let copy = Inst {
                    opcode: SmolStr::new_static(mov.name),
                    dest: Some(Operand::Phys(d)),
                    srcs: vec![Operand::Phys(PhysReg::one(fixed))],
                    span,
                };
                push_machine_op(target, mov, copy, opts, out)?;
            }
        }
        _ => push_machine_op(target, desc, Inst { dest: None, ..inst }, opts, out)?,
    }
    Ok(())
}

fn check_physical(inst: &Inst) -> Result<(), CompileError> {
    let virt = inst
        .dest
        .iter()
        .chain(&inst.srcs)
        .any(|o| matches!(o, Operand::Virt(_)));
    if virt {
        return Err(CompileError::Unsupported(format!(
            "`{}` still names a virtual register after allocation",
            inst.opcode
        )));
    }
    Ok(())
}

/// The op with the same meaning and operands as `desc` whose destination is
/// explicit (v3d71 `ldunifrf` for `ldunif`), if the target has one.
pub fn explicit_twin(target: &'static Target, desc: &OpDesc) -> Option<&'static OpDesc> {
    target.ops.iter().find(|o| {
        o.sem == desc.sem
            && o.dest == Dest::Explicit
            && !o.machine_only
            && o.operands == desc.operands
            && o.slots == desc.slots
    })
}

/// The target's register copy: its first op that copies a value into an
/// explicit destination (`Sem::Mov`).
pub fn target_mov(target: &'static Target) -> Result<&'static OpDesc, CompileError> {
    target
        .ops
        .iter()
        .find(|o| o.sem == Sem::Mov && o.dest == Dest::Explicit)
        .ok_or_else(|| CompileError::Unsupported(format!("{} has no register copy", target.name)))
}

/// Append the machine op for `inst` (already in machine form) to `out`
/// (built in place, not moved through a `Result`).
fn push_machine_op(
    target: &'static Target,
    desc: &'static OpDesc,
    inst: Inst,
    opts: &Options,
    out: &mut Vec<LoweredOp>,
) -> Result<(), CompileError> {
    let dest = inst.dest.as_ref().and_then(Operand::phys);
    let ok = |s: &&str| target.rules.slot_ok(desc, s, dest).is_ok();
    // Usually every slot of the op is allowed: borrow the table then.
    let slots: std::borrow::Cow<'static, [&'static str]> = if desc.slots.iter().all(ok) {
        std::borrow::Cow::Borrowed(desc.slots)
    } else {
        desc.slots.iter().copied().filter(ok).collect::<Vec<_>>().into()
    };
    if slots.is_empty() {
        return Err(CompileError::Unsupported(format!(
            "`{}` fits no slot with its destination",
            inst.opcode
        )));
    }
    out.push(LoweredOp {
        desc,
        inst,
        slots,
        deps: OpDeps::default(),
    });
    // The summary is built in place (it is a few hundred bytes).
    if let Some(op) = out.last_mut() {
        fill_machine_deps(&mut op.deps, target, desc, &op.inst, opts);
    }
    Ok(())
}

/// The dependency summary of a machine op with the scheduler's latencies.
pub fn machine_deps(target: &Target, desc: &OpDesc, inst: &Inst, opts: &Options) -> OpDeps {
    let mut deps = OpDeps::default();
    fill_machine_deps(&mut deps, target, desc, inst, opts);
    deps
}

/// [`machine_deps`] into `deps` (empty).
fn fill_machine_deps(deps: &mut OpDeps, target: &Target, desc: &OpDesc, inst: &Inst, opts: &Options) {
    for p in inst.srcs.iter().filter_map(Operand::phys) {
        deps.reads.extend(p.regs().map(Storage::Phys));
    }
    if let Some(p) = inst.dest.as_ref().and_then(Operand::phys) {
        let l = write_latency(target, desc, false, opts).max(1);
        deps.writes.extend(p.regs().map(|r| (Storage::Phys(r), l)));
    } else if let Dest::Implicit(r) = desc.dest {
        deps.writes
            .push((Storage::Phys(r), write_latency(target, desc, true, opts).max(1)));
    }
    push_effects(&mut deps.effects, target, desc, inst);
    push_unit_deps(deps, desc);
}

/// The location that stands for a texture unit's queue (v3d71's TMU) in
/// dependency summaries; no register file reaches this index.
pub const TEX_UNIT: Storage = Storage::Phys(schedra_ir::Reg::MAX);

/// A texture-unit op (`Sem::TexCoord`, `TexLookup`, `TexResult`) reads and
/// writes [`TEX_UNIT`], so that the unit's ops keep their program order and
/// a result read issues at least a lookup's latency (its landing) after the
/// lookup before it: the write of a lookup has the op's latency, the others
/// one cycle.
pub fn push_unit_deps(deps: &mut OpDeps, desc: &OpDesc) {
    if matches!(desc.sem, Sem::TexCoord | Sem::TexLookup | Sem::TexResult) {
        let lat = if desc.sem == Sem::TexLookup { desc.latency.max(1) } else { 1 };
        deps.reads.push(TEX_UNIT);
        deps.writes.push((TEX_UNIT, lat));
    }
}

/// Readers of one copied value that may be redirected to the fixed register.
const MAX_FORWARDED_READERS: usize = 3;
/// How far (in lowered ops) after the copy those readers may sit.
const MAX_FORWARD_SPAN: usize = 8;

/// Copy forwarding of implicit results: where an implicit op (v3d71
/// `ldvary`, `ldconst`) is followed by `mov $k, $r` and the few ops reading
/// that value of `$k` sit shortly after it with no other write of `$r` in
/// between, those ops read `$r` directly and the copy goes. Only when `$k`'s
/// new value dies inside the block: it is redefined later in the block, or
/// it is neither read by the terminator (`term_reads`) nor live out of the
/// block (`live_out`, asked last: it may walk the program).
/// The dependency graph then keeps `$r` unchanged until the last redirected
/// read, exactly as it kept it for the copy.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn forward_implicit_copies(
    target: &Target,
    mut ops: Vec<LoweredOp>,
    live_out: &dyn Fn(schedra_ir::Reg) -> bool,
    term_reads: &[schedra_ir::Reg],
    opts: &Options,
) -> Vec<LoweredOp> {
    forward_in_place(target, &mut ops, live_out, term_reads, opts);
    ops
}

/// One change of a copy forwarding.
enum Change {
    /// Source `src` of op `op` read `$was`.
    Src {
        op: usize,
        src: usize,
        was: schedra_ir::Reg,
    },
    /// `op` was removed from position `at`.
    Removed { at: usize, op: Box<LoweredOp> },
}

/// The changes [`forward_in_place`] made, in order, so that they can be
/// put back ([`Forwarding::undo`]) instead of forwarding a copy of the ops.
pub struct Forwarding(Vec<Change>);

impl Forwarding {
    /// Put `ops` back exactly as they were before the forwarding (the
    /// rewritten ops' summaries computed again from their instructions, as
    /// lowering computed them).
    pub fn undo(self, target: &Target, ops: &mut Vec<LoweredOp>, opts: &Options) {
        for c in self.0.into_iter().rev() {
            match c {
                Change::Removed { at, op } => ops.insert(at.min(ops.len()), *op),
                Change::Src { op, src, was } => {
                    if let Some(o) = ops.get_mut(op) {
                        if let Some(x) = o.inst.srcs.get_mut(src) {
                            *x = Operand::Phys(PhysReg::one(was));
                        }
                        o.deps = machine_deps(target, o.desc, &o.inst, opts);
                    }
                }
            }
        }
    }
}

/// [`forward_implicit_copies`] on `ops` in place; what it changed.
pub fn forward_in_place(
    target: &Target,
    ops: &mut Vec<LoweredOp>,
    live_out: &dyn Fn(schedra_ir::Reg) -> bool,
    term_reads: &[schedra_ir::Reg],
    opts: &Options,
) -> Forwarding {
    let mut log = Vec::new();
    let mut i = 0;
    while i + 1 < ops.len() {
        let pair = copy_pair(ops, i);
        if let Some((fixed, k)) = pair {
            if let Some(readers) = forward_readers(ops, i + 1, fixed, k, live_out, term_reads) {
                for j in readers {
                    if let Some(op) = ops.get_mut(j) {
                        for (s, o) in op.inst.srcs.iter_mut().enumerate() {
                            if o.phys() == Some(PhysReg::one(k)) {
                                *o = Operand::Phys(PhysReg::one(fixed));
                                log.push(Change::Src { op: j, src: s, was: k });
                            }
                        }
                        op.deps = machine_deps(target, op.desc, &op.inst, opts);
                    }
                }
                if i + 1 < ops.len() {
                    log.push(Change::Removed { at: i + 1, op: Box::new(ops.remove(i + 1)) });
                }
            }
        }
        i += 1;
    }
    Forwarding(log)
}

/// The ops reading the value the copy at `m` puts in `k`, if all of them can
/// read `fixed` instead (see [`forward_implicit_copies`]).
/// Whether [`forward_implicit_copies`] would change `ops` at all: some
/// implicit op and its copy have readers that can be redirected. Lets the
/// bundler skip copying and rescheduling a block that has nothing to forward.
pub fn would_forward(
    ops: &[LoweredOp],
    live_out: &dyn Fn(schedra_ir::Reg) -> bool,
    term_reads: &[schedra_ir::Reg],
) -> bool {
    (0..ops.len().saturating_sub(1)).any(|i| {
        copy_pair(ops, i).is_some_and(|(fixed, k)| {
            forward_readers(ops, i + 1, fixed, k, live_out, term_reads).is_some()
        })
    })
}

/// `(r, k)` when op `i` writes `$r` implicitly and op `i + 1` is `mov $k, $r`
/// with `k != r`.
fn copy_pair(ops: &[LoweredOp], i: usize) -> Option<(schedra_ir::Reg, schedra_ir::Reg)> {
    match (ops.get(i).map(|o| o.desc.dest), ops.get(i + 1)) {
        (Some(Dest::Implicit(r)), Some(m)) if m.desc.sem == Sem::Mov => {
            let src = m.inst.srcs.first().and_then(Operand::phys);
            let dst = m.inst.dest.as_ref().and_then(Operand::phys);
            match (src, dst) {
                (Some(sp), Some(dp))
                    if sp == PhysReg::one(r)
                        && dp.size == 1
                        && dp.base != r
                        && m.inst.srcs.len() == 1 =>
                {
                    Some((r, dp.base))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn forward_readers(
    ops: &[LoweredOp],
    m: usize,
    fixed: schedra_ir::Reg,
    k: schedra_ir::Reg,
    live_out: &dyn Fn(schedra_ir::Reg) -> bool,
    term_reads: &[schedra_ir::Reg],
) -> Option<Vec<usize>> {
    let mut readers = Vec::new();
    let mut fixed_written = false;
    for (j, op) in ops.iter().enumerate().skip(m + 1) {
        let reads_k = op.deps.reads.contains(&Storage::Phys(k));
        if reads_k {
            let whole = op
                .inst
                .srcs
                .iter()
                .filter_map(Operand::phys)
                .all(|p| p == PhysReg::one(k) || !p.regs().any(|x| x == k));
            if fixed_written
                || !whole
                || j - m > MAX_FORWARD_SPAN
                || readers.len() == MAX_FORWARDED_READERS
            {
                return None;
            }
            readers.push(j);
        }
        if op.deps.writes.iter().any(|(l, _)| *l == Storage::Phys(k)) {
            return (!readers.is_empty()).then_some(readers);
        }
        fixed_written |= op.deps.writes.iter().any(|(l, _)| *l == Storage::Phys(fixed));
    }
    (!readers.is_empty() && !term_reads.contains(&k) && !live_out(k)).then_some(readers)
}

/// Whether the op ends the thread and must stay the block's last op (gen8
/// `send.eot`: "last op of the program"), per the description's
/// `ProgramEnd::LastOp`.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn ends_thread(target: &Target, desc: &OpDesc) -> bool {
    target.ends_thread(desc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::depgraph::{effects, Effect};
    use schedra_ir::target::{gen8::GEN8, r600::R600, v3d71::V3D71};
    use schedra_ir::{Imm, Span};

    #[test]
    fn each_target_copies_with_its_mov() {
        for t in [&V3D71, &GEN8, &R600] {
            assert_eq!(target_mov(t).map(|d| d.name).ok(), Some("mov"), "{}", t.name);
        }
    }

    fn inst(op: &str, dest: Option<u16>, srcs: Vec<Operand>) -> Inst {
        Inst {
            opcode: op.into(),
            dest: dest.map(|d| Operand::Phys(PhysReg::one(d))),
            srcs,
            span: Span::default(),
        }
    }
    fn imm(v: i64) -> Operand {
        Operand::Imm(Imm::int(v))
    }
    fn reg(r: u16) -> Operand {
        Operand::Phys(PhysReg::one(r))
    }

    #[test]
    fn ldunif_becomes_ldunifrf_and_ldvary_gets_a_copy() {
        let o = Options::default();
        let l = lower_block(&V3D71, &[inst("ldunif", Some(5), vec![imm(3)])], &o).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].inst.opcode, "ldunifrf");
        let l = lower_block(&V3D71, &[inst("ldvary", Some(5), vec![imm(0)])], &o).unwrap();
        assert_eq!(
            l.iter().map(|x| x.inst.opcode.as_str()).collect::<Vec<_>>(),
            ["ldvary", "mov"]
        );
        assert_eq!(l[0].inst.dest, None);
        assert_eq!(l[0].deps.writes[..], [(Storage::Phys(0), 2)]);
        assert_eq!(l[1].deps.reads[..], [Storage::Phys(0)]);
    }

    #[test]
    fn faults_change_latencies() {
        let ldvary = V3D71.op("ldvary").unwrap();
        let recip = V3D71.op("recip").unwrap();
        let o = Options::default();
        assert_eq!(write_latency(&V3D71, ldvary, true, &o), 2);
        assert_eq!(write_latency(&V3D71, recip, false, &o), 2);
        let f = Options {
            inject: Some(Fault::V3dLdvarySameCycle),
            ..o
        };
        assert_eq!(write_latency(&V3D71, ldvary, true, &f), 1);
        let f = Options {
            inject: Some(Fault::V3dSfuLatency),
            ..o
        };
        assert_eq!(write_latency(&V3D71, recip, false, &f), 1);
    }

    #[test]
    fn r600_slots_follow_the_channel_rule() {
        let o = Options::default();
        let l = lower_block(
            &R600,
            &[
                inst("mov", Some(4 * 2 + 1), vec![imm(1)]),
                inst("recip", Some(3), vec![imm(2)]),
            ],
            &o,
        )
        .unwrap();
        assert_eq!(l[0].slots[..], ["y", "t"]);
        assert_eq!(l[1].slots[..], ["t"]);
    }

    #[test]
    fn gen8_eot_is_a_barrier_and_scratch_has_ranges() {
        let eot = GEN8.op("send.eot").unwrap();
        let i = Inst {
            opcode: "send.eot".into(),
            dest: None,
            srcs: vec![Operand::Phys(PhysReg { base: 120, size: 4 })],
            span: Span::default(),
        };
        assert!(effects(&GEN8, eot, &i).contains(&Effect::Barrier));
        let sw = GEN8.op("send.scratch_write").unwrap();
        let i = Inst {
            opcode: "send.scratch_write".into(),
            dest: None,
            srcs: vec![imm(4), Operand::Phys(PhysReg { base: 10, size: 2 })],
            span: Span::default(),
        };
        assert_eq!(
            effects(&GEN8, sw, &i)[..],
            [Effect::Scratch {
                write: true,
                lo: 4,
                hi: 6
            }]
        );
        assert!(!ends_thread(&GEN8, GEN8.op("send.tex").unwrap()));
    }

    #[test]
    fn forwarding_in_place_is_undone_exactly() {
        let o = Options::default();
        let insts = [
            inst("ldvary", Some(5), vec![imm(0)]),
            inst("ldvary", Some(6), vec![imm(1)]),
            inst("fmul", Some(7), vec![reg(6), reg(1)]),
            inst("fadd", Some(5), vec![reg(5), reg(6)]),
            inst("tlbw", None, vec![reg(5)]),
        ];
        let plain = lower_block(&V3D71, &insts, &o).unwrap();
        let mut ops = plain.clone();
        let change = forward_in_place(&V3D71, &mut ops, &|_| false, &[], &o);
        assert!(ops.len() < plain.len());
        change.undo(&V3D71, &mut ops, &o);
        assert_eq!(ops.len(), plain.len());
        for (a, b) in ops.iter().zip(&plain) {
            assert_eq!((&a.inst, &a.deps, a.desc.name), (&b.inst, &b.deps, b.desc.name));
        }
    }

    #[test]
    fn ldvary_copy_is_forwarded_only_when_the_value_dies_in_the_block() {
        let o = Options::default();
        let insts = [
            inst("ldvary", Some(5), vec![imm(0)]),
            inst("fmul", Some(5), vec![reg(5), reg(1)]),
            inst("tlbw", None, vec![reg(5)]),
        ];
        let l = lower_block(&V3D71, &insts, &o).unwrap();
        let f = forward_implicit_copies(&V3D71, l.clone(), &|_| false, &[], &o);
        assert_eq!(
            f.iter().map(|x| x.inst.opcode.as_str()).collect::<Vec<_>>(),
            ["ldvary", "fmul", "tlbw"]
        );
        assert_eq!(f[1].inst.srcs[0], reg(0));
        assert_eq!(f[1].deps.reads[..], [Storage::Phys(0), Storage::Phys(1)]);
        // Live out without a redefinition: the copy stays.
        let insts = [
            inst("ldvary", Some(5), vec![imm(0)]),
            inst("tlbw", None, vec![reg(5)]),
        ];
        let l = lower_block(&V3D71, &insts, &o).unwrap();
        assert_eq!(
            forward_implicit_copies(&V3D71, l.clone(), &|r| r == 5, &[], &o).len(),
            3
        );
        assert_eq!(
            forward_implicit_copies(&V3D71, l.clone(), &|_| false, &[5], &o).len(),
            3
        );
        assert_eq!(forward_implicit_copies(&V3D71, l, &|_| false, &[], &o).len(), 2);
        // Another rf0 write before the read: the copy stays.
        let insts = [
            inst("ldvary", Some(5), vec![imm(0)]),
            inst("ldvary", Some(6), vec![imm(1)]),
            inst("fadd", Some(7), vec![reg(5), reg(6)]),
            inst("tlbw", None, vec![reg(7)]),
        ];
        let l = lower_block(&V3D71, &insts, &o).unwrap();
        let f = forward_implicit_copies(&V3D71, l, &|_| false, &[], &o);
        assert_eq!(f.iter().filter(|x| x.inst.opcode == "mov").count(), 1);
    }

    #[test]
    fn virtual_registers_are_refused() {
        let i = Inst {
            opcode: "mov".into(),
            dest: Some(Operand::Phys(PhysReg::one(4))),
            srcs: vec![Operand::Virt(schedra_ir::VirtReg {
                name: "a".into(),
                size: None,
            })],
            span: Span::default(),
        };
        assert!(lower_block(&V3D71, &[i], &Options::default()).is_err());
    }
}
