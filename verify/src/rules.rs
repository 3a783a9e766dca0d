//! Rules read from the target description: structure, slots, registers and
//! target sequence hazards. Everything here is generic over targets: it reads
//! `Target` (register file, slots, opcode table, reserved registers) and
//! calls its `Rules` predicates; no rule names a target.
//!
//! - [`structure`]: the two programs can be compared at all — same target,
//!   machine form, same inputs, same blocks and edges, known opcodes, operand
//!   shapes and sizes per the opcode's `OpDesc`. The symbolic comparison
//!   runs only when this finds nothing.
//! - [`bundles`]: per bundle, kind `slot` (slot exists and the op may use it,
//!   one op per slot, `slot_ok`, `bundle_ok`, immediates, two ops writing one
//!   register) and kind `register` (registers exist, reserved registers not
//!   written, `op_regs_ok`).
//! - [`hazards`]: kind `hazard` for the end-of-program sequence
//!   (`end_delay_slots`, `end_slot_ok`, markers elsewhere) and thread-ending
//!   ops that are not last (`ends_thread`).

use crate::report::{Kind, Violation};
use crate::ids::same_name;
use crate::labels::Labels;
use crate::machcode::MachCode;
use schedra_ir::target::{Clock, Dest, OpDesc, OperandKind, Sem, Sizes};
use schedra_ir::{Block, Bundle, Form, Inst, Op, Operand, PhysReg, Program, Reg, TermKind};
use std::collections::BTreeSet;

fn op_line(op: &Op, b: &Bundle) -> u32 {
    if op.inst.span.line != 0 {
        op.inst.span.line
    } else {
        b.span.line
    }
}

fn input_regs(p: &Program) -> BTreeSet<Reg> {
    p.inputs.iter().flat_map(|i| i.reg.regs()).collect()
}

/// The description of op `oi` of bundle `bi` of block `b`, from the
/// decoded program (looked up by name only if the indices are foreign).
fn desc_of(code: &MachCode, p: &Program, (b, bi, oi): (usize, usize, usize), inst: &Inst) -> Option<&'static OpDesc> {
    match code.bundle_descs(b, bi).get(oi) {
        Some(d) => *d,
        None => p.target.op(&inst.opcode),
    }
}

/// The description of op `oi` of a bundle whose decoded descriptions are
/// `descs` (looked up by name if `descs` is foreign, as [`desc_of`]).
fn op_desc(descs: &[Option<&'static OpDesc>], p: &Program, oi: usize, inst: &Inst) -> Option<&'static OpDesc> {
    match descs.get(oi) {
        Some(d) => *d,
        None => p.target.op(&inst.opcode),
    }
}

/// Problems that make the programs incomparable (kind `structure`).
pub fn structure(src: &Program, mach: &Program) -> Vec<Violation> {
    structure_in(src, mach, &MachCode::of(mach), (&Labels::of(src), &Labels::of(mach)))
}

/// [`structure`], with `mach` decoded as `code` and the labels of `src`
/// and `mach` given.
pub fn structure_in(src: &Program, mach: &Program, code: &MachCode, labels: (&Labels, &Labels)) -> Vec<Violation> {
    let mut out = Vec::new();
    let entry = mach.blocks.first().map(|b| (b.label.clone(), b.span.line)).unwrap_or_default();
    let at_entry = |msg: String| Violation::new(Kind::Structure, &entry.0, 0, entry.1, msg);
    if src.target.name != mach.target.name {
        out.push(at_entry(format!("the machine program is for {} but the source is for {}", mach.target.name, src.target.name)));
        return out;
    }
    if src.form != Form::Source {
        out.push(at_entry("the first program is not in the source form".to_string()));
        return out;
    }
    if mach.form != Form::Machine {
        out.push(at_entry("the second program is not in the machine form (`form machine`)".to_string()));
        return out;
    }
    let (si, mi) = (input_regs(src), input_regs(mach));
    for r in si.difference(&mi) {
        out.push(at_entry(format!("input ${} of the source is missing from the machine program's inputs", mach.reg_name(*r))));
    }
    for r in mi.difference(&si) {
        out.push(at_entry(format!("the machine program declares input ${} that the source does not have", mach.reg_name(*r))));
    }
    blocks_and_edges(src, mach, labels, &mut out);
    for (bn, b) in mach.blocks.iter().enumerate() {
        for (bi, bundle) in b.bundles().iter().enumerate() {
            for (oi, op) in bundle.ops.iter().enumerate() {
                if let Err(msg) = shape_ok(mach, &op.inst, desc_of(code, mach, (bn, bi, oi), &op.inst)) {
                    out.push(Violation::new(Kind::Structure, &b.label, bi, op_line(op, bundle), msg));
                }
            }
        }
    }
    out
}

fn blocks_and_edges(src: &Program, mach: &Program, (src_labels, mach_labels): (&Labels, &Labels), out: &mut Vec<Violation>) {
    if let (Some(s), Some(m)) = (src.blocks.first(), mach.blocks.first()) {
        if s.label != m.label {
            out.push(Violation::new(Kind::Structure, &m.label, 0, m.span.line, format!("the machine program starts at block {} but the source at {}", m.label, s.label)));
        }
    }
    for (i, sb) in src.blocks.iter().enumerate() {
        let Some(mb) = mach_labels.index_near(&sb.label, i).and_then(|i| mach.blocks.get(i)) else {
            let (label, line) = mach.blocks.first().map(|b| (b.label.as_str(), b.span.line)).unwrap_or(("", 0));
            let mut v = Violation::new(Kind::Structure, label, 0, line, format!("block {} of the source is missing from the machine program", sb.label));
            v.src_line = Some(sb.span.line);
            out.push(v);
            continue;
        };
        if !same_edges(&sb.term.kind, &mb.term.kind) {
            let mut v = Violation::new(
                Kind::Structure,
                &mb.label,
                mb.bundles().len(),
                mb.term.span.line,
                format!("block {} ends differently from the source's (successors {:?} vs {:?})", mb.label, mb.term.successors(), sb.term.successors()),
            );
            v.src_line = Some(sb.term.span.line);
            out.push(v);
        }
    }
    for (i, mb) in mach.blocks.iter().enumerate() {
        if src_labels.index_near(&mb.label, i).is_none() {
            out.push(Violation::new(Kind::Structure, &mb.label, 0, mb.span.line, format!("block {} does not exist in the source", mb.label)));
        }
    }
}

fn same_edges(a: &TermKind, b: &TermKind) -> bool {
    match (a, b) {
        (TermKind::Jmp(x), TermKind::Jmp(y)) => x == y,
        (TermKind::Brnz { nonzero: a1, zero: a2, .. }, TermKind::Brnz { nonzero: b1, zero: b2, .. }) => a1 == b1 && a2 == b2,
        (TermKind::End, TermKind::End) => true,
        _ => false,
    }
}

/// Whether a machine op is a known opcode with the operand shape its
/// description requires; `Err` says what is wrong.
pub fn op_shape(p: &Program, inst: &Inst) -> Result<(), String> {
    shape_ok(p, inst, p.target.op(&inst.opcode))
}

/// [`op_shape`], given the opcode's description.
fn shape_ok(p: &Program, inst: &Inst, desc: Option<&OpDesc>) -> Result<(), String> {
    let t = p.target;
    let desc = desc.ok_or_else(|| format!("`{}` is not an opcode of {}", inst.opcode, t.name))?;
    let name = desc.name;
    match (desc.dest, &inst.dest) {
        (Dest::Explicit, Some(Operand::Phys(_))) | (Dest::None | Dest::Implicit(_) | Dest::Unit, None) => {}
        (Dest::Explicit, _) => return Err(format!("`{name}` needs a register destination")),
        (_, Some(_)) => return Err(format!("`{name}` takes no destination operand in the machine form")),
    }
    if inst.srcs.len() != desc.operands.len() {
        return Err(format!("`{name}` takes {} operand(s), found {}", desc.operands.len(), inst.srcs.len()));
    }
    let net = t.network.is_some();
    for (i, (k, o)) in desc.operands.iter().zip(&inst.srcs).enumerate() {
        let ok = match (k, o) {
            (OperandKind::Index, Operand::Imm(_)) | (OperandKind::Reg, Operand::Phys(_)) => true,
            (OperandKind::Value, Operand::Phys(_) | Operand::Imm(_)) => !net,
            (OperandKind::Value, Operand::Bypass(_)) => net,
            _ => false,
        };
        if !ok {
            let want = match k {
                OperandKind::Index => "an integer constant",
                OperandKind::Reg => "a register",
                OperandKind::Value if net => "a bypass read (`^unit.distance`)",
                OperandKind::Value => "a register or an immediate",
            };
            return Err(format!("operand {} of `{name}` must be {want}", i + 1));
        }
    }
    sizes_ok(p, desc, inst)
}

fn sizes_ok(p: &Program, desc: &OpDesc, inst: &Inst) -> Result<(), String> {
    let t = p.target;
    let dest = inst.dest.as_ref().and_then(Operand::phys).map(|d| d.size);
    let srcs = || inst.srcs.iter().filter_map(Operand::phys).map(|s| s.size);
    let name = desc.name;
    match desc.sizes {
        Sizes::Uniform => {
            let n = dest.or(srcs().next()).unwrap_or(1);
            if n > t.max_alu_size {
                return Err(format!("`{name}` operands span {n} registers; at most {} allowed", t.max_alu_size));
            }
            if srcs().any(|s| s != n) {
                return Err(format!("all register operands of `{name}` must have the size of its destination ({n})"));
            }
        }
        Sizes::Fixed { dest: d, src } => {
            if let Some(n) = dest.filter(|n| d > 0 && *n != d) {
                return Err(format!("the destination of `{name}` must span {d} registers, not {n}"));
            }
            if let Some(n) = srcs().find(|s| *s != src) {
                return Err(format!("the register operands of `{name}` must span {src} registers, not {n}"));
            }
        }
        Sizes::Any => {
            if let Some(n) = dest.into_iter().chain(srcs()).find(|n| *n > t.max_value_size) {
                return Err(format!("`{name}` operand spans {n} registers; at most {} allowed", t.max_value_size));
            }
        }
    }
    Ok(())
}

/// Kind `slot` and kind `register` problems of every bundle.
pub fn bundles(mach: &Program) -> Vec<Violation> {
    bundles_in(mach, &MachCode::of(mach))
}

/// [`bundles`], with `mach` decoded as `code`.
pub fn bundles_in(mach: &Program, code: &MachCode) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut bufs = SlotBuffers::default();
    for (bn, b) in mach.blocks.iter().enumerate() {
        for (bi, bundle) in b.bundles().iter().enumerate() {
            if let Some(v) = too_many_ops(mach, b, bi, bundle) {
                // One violation for the bundle: its per-op checks would be
                // quadratic and their reports as many as its ops.
                out.push(v);
                continue;
            }
            let descs = code.bundle_descs(bn, bi);
            slot_rules(mach, descs, (b, bi), bundle, &mut bufs, &mut out);
            // The bundle's `register` problems follow its `slot` problems.
            out.append(&mut bufs.registers);
        }
    }
    waits(mach, code, &mut out);
    for i in &mach.inputs {
        if !mach.target.regs.contains(i.reg) {
            let label = mach.blocks.first().map(|b| b.label.as_str()).unwrap_or("");
            out.push(Violation::new(Kind::Register, label, 0, i.span.line, format!("input register {} does not exist on {}", i.reg.base, mach.target.name)));
        }
    }
    out
}

/// Kind `slot` problems of the encoded waits: a `wait` on a target that
/// has none, or past the clock's `max_wait`; and two SFU ops closer than
/// the target's `sfu_spacing`, counting each bundle's issue cycle from the
/// waits (a barrier's stall only adds cycles, so the count is the closest
/// the ops can come). The first bundle after a block's terminator issues
/// one cycle after it, so a block's last SFU op must be `sfu_spacing`
/// cycles before that.
fn waits(mach: &Program, code: &MachCode, out: &mut Vec<Violation>) {
    let t = mach.target;
    for (bn, b) in mach.blocks.iter().enumerate() {
        let mut cycle = 0u64;
        let mut last_sfu: Option<(u64, usize)> = None;
        for (bi, bundle) in b.bundles().iter().enumerate() {
            match t.clock {
                Clock::EncodedWaits { max } if bundle.wait > max => out.push(Violation::new(Kind::Slot, &b.label, bi, bundle.span.line, format!("`wait {}` is out of range: at most {max} on {}", bundle.wait, t.name))),
                Clock::EncodedWaits { .. } => {}
                _ if bundle.wait > 0 => out.push(Violation::new(Kind::Slot, &b.label, bi, bundle.span.line, format!("`wait {}`: {} does not encode waits", bundle.wait, t.name))),
                _ => {}
            }
            let Clock::EncodedWaits { .. } = t.clock else { continue };
            let clock = t.wait_timing();
            let spacing = u64::from(clock.sfu_spacing);
            for (op, d) in with_descs(mach, code, (bn, bi), bundle) {
                if !d.is_some_and(|d| d.sfu) {
                    continue;
                }
                if let Some((prev, pb)) = last_sfu.filter(|(prev, _)| cycle < prev + spacing) {
                    let msg = format!("SFU op `{}` issues {} cycle(s) after the SFU op of bundle {} (cycle {prev}); SFU ops issue at least {spacing} cycles apart", op.inst.opcode, cycle - prev, pb);
                    out.push(Violation::new(Kind::Slot, &b.label, bi, op_line(op, bundle), msg));
                }
                last_sfu = Some((cycle, bi));
            }
            cycle += 1 + u64::from(bundle.wait);
        }
        if let (Clock::EncodedWaits { .. }, Some((prev, pb))) = (t.clock, last_sfu) {
            let spacing = u64::from(t.wait_timing().sfu_spacing);
            if cycle + 1 < prev + spacing {
                let msg = format!("the SFU op of bundle {pb} (cycle {prev}) is less than {spacing} cycles before the next block's first bundle (cycle {})", cycle + 1);
                out.push(Violation::new(Kind::Slot, &b.label, b.bundles().len(), b.term.span.line, msg));
            }
        }
    }
}

/// A bundle with more ops than the target has slots (one op per slot) is
/// one `slot` violation, whatever else is wrong with its ops.
fn too_many_ops(mach: &Program, b: &Block, bi: usize, bundle: &Bundle) -> Option<Violation> {
    let (n, slots) = (bundle.ops.len(), mach.target.slots.len());
    (n > slots).then(|| {
        let msg = format!("{n} ops in one bundle; {} has {slots} slot(s), one op each", mach.target.name);
        Violation::new(Kind::Slot, &b.label, bi, bundle.span.line, msg)
    })
}

/// The lists [`slot_rules`] fills per bundle, kept from bundle to bundle.
#[derive(Default)]
struct SlotBuffers<'p> {
    written: Vec<Reg>,
    /// Distinct immediates.
    imms: Vec<u32>,
    known: Vec<(&'static OpDesc, &'p Inst)>,
    /// The bundle's kind `register` problems, in op order (the caller
    /// appends them after its `slot` problems).
    registers: Vec<Violation>,
}

/// Kind `slot` problems of one bundle (`descs`: its ops' descriptions)
/// into `out`, and, from the same walk over its ops, its kind `register`
/// problems into `scratch.registers`.
fn slot_rules<'p>(mach: &Program, descs: &[Option<&'static OpDesc>], (b, bi): (&Block, usize), bundle: &'p Bundle, bufs: &mut SlotBuffers<'p>, out: &mut Vec<Violation>) {
    let t = mach.target;
    let mut push = |msg: String| out.push(Violation::new(Kind::Slot, &b.label, bi, bundle.span.line, msg));
    let SlotBuffers { written, imms, known, registers } = bufs;
    registers.clear();
    written.clear();
    imms.clear();
    known.clear();
    // The target's slots used so far, by index (an op in a slot the target
    // lacks is reported as such, never as a second op in its slot).
    let mut used: u128 = 0;
    for (oi, op) in bundle.ops.iter().enumerate() {
        let slot = op.slot.as_str();
        match t.slots.iter().position(|s| same_name(s.as_bytes(), slot.as_bytes())) {
            None => push(format!("{} has no slot `{slot}`", t.name)),
            Some(k) => {
                // Past 128 slots (no target has them) by the earlier ops' names.
                let bit = 1u128.checked_shl(k as u32).unwrap_or(0);
                let earlier = || bundle.ops.iter().take(oi).any(|o| same_name(o.slot.as_bytes(), slot.as_bytes()));
                if used & bit != 0 || (bit == 0 && earlier()) {
                    push(format!("two ops in slot `{slot}` of one bundle"));
                }
                used |= bit;
            }
        }
        let Some(desc) = op_desc(descs, mach, oi, &op.inst) else { continue };
        if !desc.slots.iter().any(|s| same_name(s.as_bytes(), slot.as_bytes())) {
            push(format!("`{}` cannot issue in slot `{slot}` (allowed: {})", desc.name, desc.slots.join(", ")));
        }
        let dest = op.inst.dest.as_ref().and_then(Operand::phys);
        if let Err(msg) = t.rules.slot_ok(desc, slot, dest) {
            push(msg);
        }
        let run = written_by(desc, dest);
        if let Err(msg) = register_rules(mach, desc, &op.inst, run) {
            registers.push(Violation::new(Kind::Register, &b.label, bi, op_line(op, bundle), msg));
        }
        for r in run.into_iter().flat_map(|p| p.regs()) {
            if written.contains(&r) {
                push(format!("two ops of one bundle write ${}", mach.reg_name(r)));
            }
            written.push(r);
        }
        for (i, (k, o)) in desc.operands.iter().zip(&op.inst.srcs).enumerate() {
            if let (OperandKind::Value, Operand::Imm(imm)) = (k, o) {
                if !imms.contains(&imm.bits) {
                    imms.push(imm.bits);
                }
                if !t.rules.imm_ok(desc, i, *imm) {
                    push(format!("`{}` cannot encode the immediate {:#x} as operand {}", desc.name, imm.bits, i + 1));
                }
            }
        }
        known.push((desc, &op.inst));
    }
    if imms.len() > t.rules.max_bundle_imms() {
        push(format!("{} distinct immediates in one bundle; at most {}", imms.len(), t.rules.max_bundle_imms()));
    }
    // The bundle rule sees the ops in the target's slot order (kepler's
    // dual-issue rule is about the op in `i0` and the op in `i1`).
    if bundle.ops.windows(2).any(|w| slot_index(t, &w[0].slot) > slot_index(t, &w[1].slot)) && known.len() == bundle.ops.len() {
        let order: Vec<usize> = bundle.ops.iter().map(|o| slot_index(t, &o.slot)).collect();
        let mut sorted: Vec<(usize, (&'static OpDesc, &'p Inst))> = order.into_iter().zip(known.iter().copied()).collect();
        sorted.sort_by_key(|(k, _)| *k);
        known.clear();
        known.extend(sorted.into_iter().map(|(_, x)| x));
    }
    if let Err(msg) = t.rules.bundle_ok(known) {
        push(msg);
    }
}

/// Where `slot` comes in the target's slot list (past the end if absent).
fn slot_index(t: &schedra_ir::Target, slot: &str) -> usize {
    t.slots.iter().position(|s| same_name(s.as_bytes(), slot.as_bytes())).unwrap_or(usize::MAX)
}

/// The registers an op with description `desc` and explicit register
/// destination `dest` writes, as one run (the run [`dest_regs`](crate::symbolic::dest_regs) walks).
fn written_by(desc: &OpDesc, dest: Option<PhysReg>) -> Option<PhysReg> {
    match desc.dest {
        Dest::Explicit => dest,
        Dest::Implicit(r) => Some(PhysReg::one(r)),
        Dest::None | Dest::Unit => None,
    }
}

/// Kind `register` problems of one op (the first found), `run` being the
/// registers it writes ([`written_by`]).
fn register_rules(mach: &Program, desc: &OpDesc, inst: &Inst, run: Option<PhysReg>) -> Result<(), String> {
    let t = mach.target;
    for p in inst.dest.iter().chain(&inst.srcs).filter_map(Operand::phys) {
        if !t.regs.contains(p) {
            return Err(format!("register {} does not exist on {}", describe(mach, p), t.name));
        }
    }
    for r in run.into_iter().flat_map(|p| p.regs()) {
        if t.reserved.contains(&r) {
            return Err(format!("`{}` writes ${}, which is reserved (read-only)", desc.name, mach.reg_name(r)));
        }
    }
    t.rules.op_regs_ok(desc, inst)
}

fn describe(p: &Program, r: PhysReg) -> String {
    if r.size > 1 {
        format!("${}:{}", p.reg_name(r.base), r.size)
    } else {
        format!("${}", p.reg_name(r.base))
    }
}

/// Kind `hazard`: the end-of-program sequence and thread-ending ops.
pub fn hazards(mach: &Program) -> Vec<Violation> {
    hazards_in(mach, &MachCode::of(mach))
}

/// [`hazards`], with `mach` decoded as `code`.
pub fn hazards_in(mach: &Program, code: &MachCode) -> Vec<Violation> {
    let mut out = Vec::new();
    let t = mach.target;
    let has_thread_end_op = t.thread_end_op().is_some();
    let is_marker = |d: Option<&OpDesc>| d.is_some_and(|d| d.sem == Sem::ThreadSwitch);
    // Every description comes from `t.ops`, so on a target none of whose
    // ops ends the thread no op needs asking.
    let ends_thread = |d: Option<&OpDesc>| has_thread_end_op && d.is_some_and(|d| t.ends_thread(d));
    for (bn, b) in mach.blocks.iter().enumerate() {
        let is_final = matches!(b.term.kind, TermKind::End);
        let n = b.bundles().len();
        let marker_at = t.end_delay_slots().filter(|_| is_final).and_then(|k| n.checked_sub(k + 1));
        if let (Some(k), true) = (t.end_delay_slots(), is_final) {
            end_sequence(mach, code, (bn, b), k, marker_at, &mut out);
        }
        // The last marker of a final block is judged by `end_sequence`.
        let last_marker = if is_final { b.bundles().iter().enumerate().rposition(|(bi, x)| with_descs(mach, code, (bn, bi), x).any(|(_, d)| is_marker(d))) } else { None };
        for (bi, bundle) in b.bundles().iter().enumerate() {
            for (op, d) in with_descs(mach, code, (bn, bi), bundle) {
                if is_marker(d) && Some(bi) != marker_at && Some(bi) != last_marker {
                    out.push(Violation::new(Kind::Hazard, &b.label, bi, op_line(op, bundle), format!("`{}` is only allowed {} bundle(s) before the end of the program", op.inst.opcode, t.end_delay_slots().unwrap_or(0) + 1)));
                }
                if ends_thread(d) && !(is_final && bi + 1 == n && bundle.ops.len() == 1) {
                    out.push(Violation::new(Kind::Hazard, &b.label, bi, op_line(op, bundle), format!("`{}` ends the thread and must be the last op of the program", op.inst.opcode)));
                }
            }
        }
        let last = n.checked_sub(1).and_then(|bi| Some((bi, b.bundles().get(bi)?)));
        if is_final && has_thread_end_op && !last.is_some_and(|(bi, x)| with_descs(mach, code, (bn, bi), x).any(|(_, d)| ends_thread(d))) {
            out.push(Violation::new(Kind::Hazard, &b.label, n, b.term.span.line, "the program ends without a thread-ending op".to_string()));
        }
    }
    out
}

/// The ops of bundle `bi` of block `bn` with their descriptions.
fn with_descs<'d>(mach: &'d Program, code: &'d MachCode, (bn, bi): (usize, usize), bundle: &'d Bundle) -> impl Iterator<Item = (&'d Op, Option<&'static OpDesc>)> + 'd {
    let descs = code.bundle_descs(bn, bi);
    bundle.ops.iter().enumerate().map(move |(oi, op)| (op, op_desc(descs, mach, oi, &op.inst)))
}

fn end_sequence(mach: &Program, code: &MachCode, (bn, b): (usize, &Block), k: usize, marker_at: Option<usize>, out: &mut Vec<Violation>) {
    let t = mach.target;
    let marker = |bi: usize, x: &Bundle| with_descs(mach, code, (bn, bi), x).any(|(_, d)| d.is_some_and(|d| d.sem == Sem::ThreadSwitch));
    let Some(m) = marker_at.filter(|m| b.bundles().get(*m).is_some_and(|x| marker(*m, x))) else {
        let last = b.bundles().iter().enumerate().rposition(|(bi, x)| marker(bi, x));
        let (bi, line) = match last {
            Some(i) => (i, b.bundles().get(i).map(|x| x.span.line).unwrap_or(0)),
            None => (b.bundles().len(), b.term.span.line),
        };
        out.push(Violation::new(Kind::Hazard, &b.label, bi, line, format!("the program must end with a thread-switch bundle followed by exactly {k} bundle(s)")));
        return;
    };
    for (i, bundle) in b.bundles().iter().enumerate().skip(m) {
        let slot = if i == m { None } else { Some(i - m - 1) };
        for (op, desc) in with_descs(mach, code, (bn, i), bundle) {
            let Some(desc) = desc else { continue };
            if let Err(msg) = t.rules.end_slot_ok(desc, &op.inst, slot) {
                out.push(Violation::new(Kind::Hazard, &b.label, i, op_line(op, bundle), msg));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(target: &str, body: &str) -> Program {
        let text = format!("target {target}\nform machine\n{body}");
        schedra_ir::parse::parse(text.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn kinds(p: &Program) -> Vec<(Kind, usize)> {
        bundles(p).into_iter().chain(hazards(p)).map(|v| (v.kind, v.bundle)).collect()
    }

    const END: &str = "    { sig: thrsw }\n    { }\n    { }\n    end\n";

    #[test]
    fn v3d71_slots_and_immediates() {
        let ok = machine("v3d71", &format!("b0:\n    {{ add: add $rf4, $rf5, 1 ; mul: sub $rf6, $rf5, 1 }}\n{END}"));
        assert_eq!(kinds(&ok), vec![]);
        let two_imms = machine("v3d71", &format!("b0:\n    {{ add: add $rf4, $rf5, 1 ; mul: sub $rf6, $rf5, 2 }}\n{END}"));
        assert_eq!(kinds(&two_imms), vec![(Kind::Slot, 0)]);
        let big = machine("v3d71", &format!("b0:\n    {{ add: add $rf4, $rf5, 100 }}\n{END}"));
        assert_eq!(kinds(&big), vec![(Kind::Slot, 0)]);
        let wrong_slot = machine("v3d71", &format!("b0:\n    {{ mul: fadd $rf4, $rf5, $rf6 }}\n{END}"));
        assert_eq!(kinds(&wrong_slot), vec![(Kind::Slot, 0)]);
        let same_dest = machine("v3d71", &format!("b0:\n    {{ add: mov $rf4, $rf5 ; mul: mov $rf4, $rf6 }}\n{END}"));
        assert_eq!(kinds(&same_dest), vec![(Kind::Slot, 0)]);
    }

    #[test]
    fn oversized_bundle_is_one_violation() {
        let ops = vec!["add: mov $rf4, 1"; 20_000].join(" ; ");
        let p = machine("v3d71", &format!("b0:\n    {{ {ops} }}\n{END}"));
        assert_eq!(bundles(&p).iter().map(|v| (v.kind, v.bundle)).collect::<Vec<_>>(), vec![(Kind::Slot, 0)]);
    }

    #[test]
    fn v3d71_thread_end() {
        let missing = machine("v3d71", "b0:\n    { add: mov $rf4, $rf5 }\n    end\n");
        assert_eq!(kinds(&missing), vec![(Kind::Hazard, 1)]);
        let short = machine("v3d71", "b0:\n    { sig: thrsw }\n    { }\n    end\n");
        assert_eq!(kinds(&short), vec![(Kind::Hazard, 0)]);
        let sfu_in_slot = machine("v3d71", "b0:\n    { sig: thrsw }\n    { add: recip $rf4, $rf5 }\n    { }\n    end\n");
        assert_eq!(kinds(&sfu_in_slot), vec![(Kind::Hazard, 1)]);
    }

    #[test]
    fn r600_read_ports_and_channels() {
        let ports = machine("r600", "b0:\n    { x: add $R0.x, $R1.x, $R2.x ; y: add $R0.y, $R3.x, $R4.x ; z: add $R0.z, $R5.x, $R6.x ; w: add $R0.w, $R7.x, $R8.x }\n    end\n");
        assert!(kinds(&ports).contains(&(Kind::Slot, 0)));
        let chan = machine("r600", "b0:\n    { x: mov $R0.y, $R1.x }\n    end\n");
        assert_eq!(kinds(&chan), vec![(Kind::Slot, 0)]);
    }

    #[test]
    fn gen8_registers_and_end_of_thread() {
        let reserved = machine("gen8", "b0:\n    mov $g0, $g2\n    send.eot $g120:4\n    end\n");
        assert_eq!(kinds(&reserved), vec![(Kind::Register, 0)]);
        let eot_first = machine("gen8", "b0:\n    send.eot $g120:4\n    mov $g3, $g2\n    end\n");
        let k = kinds(&eot_first);
        assert!(k.contains(&(Kind::Hazard, 0)) && k.contains(&(Kind::Hazard, 2)), "{k:?}");
        let low_payload = machine("gen8", "b0:\n    send.eot $g20:4\n    end\n");
        assert_eq!(kinds(&low_payload), vec![(Kind::Register, 0)]);
    }

    #[test]
    fn shapes_are_structure() {
        let p = machine("v3d71", "b0:\n    { add: fadd $rf4, $rf5 }\n    end\n");
        let op = &p.blocks[0].bundles()[0].ops[0].inst;
        assert!(op_shape(&p, op).is_err());
        let p = machine("v3d71", "b0:\n    { add: fadd $rf4, $rf5, $rf6 }\n    end\n");
        assert!(op_shape(&p, &p.blocks[0].bundles()[0].ops[0].inst).is_ok());
    }
}
