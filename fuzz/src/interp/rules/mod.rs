//! The hardware rules of `targets.md`, read by the interpreter itself: a
//! machine program that breaks one does not run; it stops with the rule
//! ([`RunError::Rule`]), named by its kind as the verifier names its
//! verdicts (`slot`, `register`, `hazard`).
//!
//! The generic part reads only the target description (slots, opcode
//! table, register file, reserved registers, clock, program end) and checks
//! what every target shares:
//!
//! - `slot`: a bundle holds at most one op per slot and no more ops than
//!   the target has slots; every op names a slot the target has and its
//!   opcode may use; two ops of one bundle do not write one register;
//!   immediates are ones the target can encode, and no more distinct ones
//!   per bundle than it allows; a `wait` only where the clock encodes
//!   waits, at most its maximum; SFU ops keep the clock's spacing.
//! - `register`: every register named exists, declared inputs included;
//!   no op writes a reserved register.
//! - `hazard`: the program's end ([`ProgramEnd`]): a thread-ending op is
//!   the only op of the last bundle of every final block and appears
//!   nowhere else; a thread-switch marker sits exactly `delay_slots`
//!   bundles before a final block's `end`, none elsewhere, and its delay
//!   slots touch none of the end's untouchable registers.
//!
//! What does not fit a table is a target's [`Family`] of rules (its own
//! small module beside this one: immediates, channel and read-port rules,
//! dual issue, send and payload registers, delay-slot contents, lima-gp's
//! shared units), found by the one match on the architecture in
//! [`family`]. On a target with a bypass network, [`network`] reads the
//! network's tables for its rules that are not about time: the program's
//! length (`slot`), what a bypass read may name (`register`) and whole
//! complex sequences (`hazard`).
//!
//! The checker does not use the verifier or the compiler: it is the
//! interpreter's own reading of the same description, so that each
//! `slot`, `register` and `hazard` verdict of the verifier is checked by
//! a second reading (`fuzz::oracle::rules_agree`).
//!
//! Invariant: [`check`] never panics; it reports the first broken rule in
//! program order (block, bundle; within a bundle its slot rules, then its
//! register rules, then its hazards), or `None`.

mod gen8;
mod kepler;
mod lima_gp;
mod network;
mod r600;
mod v3d71;

use super::{Place, RunError};
use schedra_ir::target::network::Network;
use schedra_ir::target::{Clock, Dest, OpDesc, OperandKind, ProgramEnd, Sem};
use schedra_ir::{Block, Bundle, Imm, Inst, Operand, PhysReg, Program, Reg, TermKind, Target};
use std::fmt;

/// The kind of a hardware rule, as `targets.md` and the verifier sort them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleKind {
    /// Where an op may issue and what one bundle may hold.
    Slot,
    /// Which registers exist and which an op may use.
    Register,
    /// What the end of a program (and a thread switch) demands.
    Hazard,
}

impl RuleKind {
    /// The name the verifier gives this kind of verdict.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Slot => "slot",
            RuleKind::Register => "register",
            RuleKind::Hazard => "hazard",
        }
    }
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A target's rules beyond its tables, read from `targets.md` by this
/// interpreter. Each answer is `Err(sentence)` when the rule is broken.
pub trait Family: Sync {
    /// Whether `imm` may be value operand `index` of `op`.
    fn imm_ok(&self, op: &OpDesc, index: usize, imm: Imm) -> bool;
    /// The most distinct immediate words one bundle may carry.
    fn max_bundle_imms(&self) -> usize;
    /// Kind `slot`: may `op` writing `dest` issue in `slot`?
    fn slot_ok(&self, _op: &OpDesc, _slot: &str, _dest: Option<PhysReg>) -> Result<(), String> {
        Ok(())
    }
    /// Kind `slot`: may these ops (in the target's slot order) share a
    /// bundle?
    fn bundle_ok(&self, _ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        Ok(())
    }
    /// Kind `register`: the target's register rules for one op.
    fn op_regs_ok(&self, _t: &Target, _op: &OpDesc, _inst: &Inst) -> Result<(), String> {
        Ok(())
    }
    /// Kind `hazard`: may `inst` sit in end delay slot `slot` (0-based), or
    /// in the marker's bundle when `slot` is `None`?
    fn end_slot_ok(&self, _op: &OpDesc, _inst: &Inst, _slot: Option<usize>) -> Result<(), String> {
        Ok(())
    }
    /// Kind `slot`: the rules of one bundle that need each op's slot
    /// (`ops` lists description, op and slot name), with the target's
    /// bypass network if it has one.
    fn placed_ok(&self, _net: Option<&Network>, _ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
        Ok(())
    }
}

/// The rules of the architecture `t` models: the one match on it. A
/// target made from another for a test (`gen8-variant`) has the rules of
/// the one it was made from: the architecture is the name before the first
/// `-` (`lima` for lima-gp).
pub fn family(t: &Target) -> Option<&'static dyn Family> {
    match t.name.split('-').next().unwrap_or_default() {
        "v3d71" => Some(&v3d71::V3d71),
        "gen8" => Some(&gen8::Gen8),
        "r600" => Some(&r600::R600),
        "kepler" => Some(&kepler::Kepler),
        "lima" => Some(&lima_gp::LimaGp),
        _ => None,
    }
}

/// The first rule of `targets.md` that machine program `p` breaks, as the
/// error its run stops with ([`RunError::Rule`]); `None` when it breaks
/// none or its target has no [`family`] here.
pub fn check(p: &Program) -> Option<RunError> {
    let fam = family(p.target)?;
    let t = p.target;
    let first = p.blocks.first().map_or("", |b| b.label.as_str());
    for input in &p.inputs {
        if !t.regs.contains(input.reg) {
            return Some(stop(RuleKind::Register, Place::new(first, 0, input.span.line), format!("input register {} does not exist on {}", input.reg.base, t.name)));
        }
    }
    if let Some(Err(m)) = t.network.map(|net| network::length(net, p.bundle_count())) {
        let (label, line) = p.blocks.last().map_or(("", 0), |b| (b.label.as_str(), b.span.line));
        return Some(stop(RuleKind::Slot, Place::new(label, 0, line), m));
    }
    for b in &p.blocks {
        if let Some(e) = block_rules(p, fam, b) {
            return Some(e);
        }
    }
    None
}

fn stop(kind: RuleKind, at: Place, message: String) -> RunError {
    RunError::Rule { kind, at, message }
}

/// An op's line, or its bundle's when the op has none.
fn line_of(inst: &Inst, bundle: &Bundle) -> u32 {
    if inst.span.line != 0 {
        inst.span.line
    } else {
        bundle.span.line
    }
}

/// The first broken rule of block `b`.
fn block_rules(p: &Program, fam: &dyn Family, b: &Block) -> Option<RunError> {
    let at = |bi: usize, line: u32| Place::new(&b.label, bi, line);
    for (bi, bundle) in b.bundles().iter().enumerate() {
        if let Err((kind, line, msg)) = bundle_rules(p, fam, bundle) {
            return Some(stop(kind, at(bi, line), msg));
        }
        if let Some(Err((kind, msg))) = p.target.network.map(|net| network::instruction(p.target, net, b, bi)) {
            return Some(stop(kind, at(bi, bundle.span.line), msg));
        }
    }
    if let Some(Err((kind, msg))) = p.target.network.map(|net| network::instruction(p.target, net, b, b.bundles().len())) {
        return Some(stop(kind, at(b.bundles().len(), b.term.span.line), msg));
    }
    if let Err((bi, line, msg)) = waits(p.target, b) {
        return Some(stop(RuleKind::Slot, at(bi, line), msg));
    }
    if let Err((bi, line, msg)) = end_rules(p, fam, b) {
        return Some(stop(RuleKind::Hazard, at(bi, line), msg));
    }
    None
}

/// A broken rule of one bundle: its kind, line and sentence.
type Broken = (RuleKind, u32, String);

/// The description of every op of `bundle` (`None`: not an opcode of `t`).
fn descs<'b>(t: &'b Target, bundle: &'b Bundle) -> impl Iterator<Item = (&'b Inst, &'b str, Option<&'static OpDesc>)> + 'b {
    bundle.ops.iter().map(move |op| (&op.inst, op.slot.as_str(), t.op(&op.inst.opcode)))
}

/// The slot rules of one bundle, then its register rules.
fn bundle_rules(p: &Program, fam: &dyn Family, bundle: &Bundle) -> Result<(), Broken> {
    let t = p.target;
    let slot = |msg: String| (RuleKind::Slot, bundle.span.line, msg);
    if bundle.ops.len() > t.slots.len() {
        return Err(slot(format!("{} ops in one bundle; {} has {} slot(s), one op each", bundle.ops.len(), t.name, t.slots.len())));
    }
    let mut used: Vec<&str> = Vec::with_capacity(bundle.ops.len());
    let mut written: Vec<Reg> = Vec::new();
    let mut imms: Vec<u32> = Vec::new();
    let mut known: Vec<(usize, &OpDesc, &Inst)> = Vec::with_capacity(bundle.ops.len());
    let mut register: Option<Broken> = None;
    for (inst, name, desc) in descs(t, bundle) {
        let position = t.slots.iter().position(|s| *s == name);
        if position.is_none() {
            return Err(slot(format!("{} has no slot `{name}`", t.name)));
        }
        if used.contains(&name) {
            return Err(slot(format!("two ops in slot `{name}` of one bundle")));
        }
        used.push(name);
        let Some(desc) = desc else { continue };
        if !desc.slots.contains(&name) {
            return Err(slot(format!("`{}` cannot issue in slot `{name}`", desc.name)));
        }
        let dest = inst.dest.as_ref().and_then(Operand::phys);
        fam.slot_ok(desc, name, dest).map_err(&slot)?;
        let writes = written_by(desc, dest);
        if register.is_none() {
            register = register_rules(t, fam, desc, inst, writes).err().map(|m| (RuleKind::Register, line_of(inst, bundle), m));
        }
        for r in writes.into_iter().flat_map(PhysReg::regs) {
            if written.contains(&r) {
                return Err(slot(format!("two ops of one bundle write ${}", p.reg_name(r))));
            }
            written.push(r);
        }
        for (i, (kind, o)) in desc.operands.iter().zip(&inst.srcs).enumerate() {
            if let (OperandKind::Value, Operand::Imm(imm)) = (kind, o) {
                if !imms.contains(&imm.bits) {
                    imms.push(imm.bits);
                }
                if !fam.imm_ok(desc, i, *imm) {
                    return Err(slot(format!("`{}` cannot encode the immediate {:#x} as operand {}", desc.name, imm.bits, i + 1)));
                }
            }
        }
        known.push((position.unwrap_or(usize::MAX), desc, inst));
    }
    if imms.len() > fam.max_bundle_imms() {
        return Err(slot(format!("{} distinct immediates in one bundle; at most {}", imms.len(), fam.max_bundle_imms())));
    }
    // The bundle rule sees the ops in the target's slot order.
    known.sort_by_key(|(k, _, _)| *k);
    let ordered: Vec<(&OpDesc, &Inst)> = known.iter().map(|(_, d, i)| (*d, *i)).collect();
    fam.bundle_ok(&ordered).map_err(&slot)?;
    let placed: Vec<(&OpDesc, &Inst, &str)> = known.iter().filter_map(|(k, d, i)| Some((*d, *i, *t.slots.get(*k)?))).collect();
    fam.placed_ok(t.network, &placed).map_err(&slot)?;
    register.map_or(Ok(()), Err)
}

/// The registers an op writes: its explicit destination, or its implicit
/// one register.
fn written_by(desc: &OpDesc, dest: Option<PhysReg>) -> Option<PhysReg> {
    match desc.dest {
        Dest::Explicit => dest,
        Dest::Implicit(r) => Some(PhysReg::one(r)),
        Dest::None | Dest::Unit => None,
    }
}

/// The register rules of one op writing `writes`.
fn register_rules(t: &Target, fam: &dyn Family, desc: &OpDesc, inst: &Inst, writes: Option<PhysReg>) -> Result<(), String> {
    if let Some(r) = inst.dest.iter().chain(&inst.srcs).filter_map(Operand::phys).find(|r| !t.regs.contains(*r)) {
        return Err(format!("register {}:{} does not exist on {}", r.base, r.size, t.name));
    }
    if let Some(r) = writes.into_iter().flat_map(PhysReg::regs).find(|r| t.reserved.contains(r)) {
        return Err(format!("`{}` writes register {r}, which is reserved (read-only)", desc.name));
    }
    fam.op_regs_ok(t, desc, inst)
}

/// The clock's rules of one block: `wait N` only where waits are encoded,
/// at most the clock's maximum; SFU ops at least the spacing apart,
/// counting each bundle's issue cycle from the waits, the next block's
/// first bundle one cycle after the terminator. Errors carry the bundle
/// index and line.
fn waits(t: &Target, b: &Block) -> Result<(), (usize, u32, String)> {
    let spacing = u64::from(t.wait_timing().sfu_spacing);
    let encoded = matches!(t.clock, Clock::EncodedWaits { .. });
    let (mut cycle, mut last_sfu) = (0u64, None::<u64>);
    for (bi, bundle) in b.bundles().iter().enumerate() {
        match t.clock {
            Clock::EncodedWaits { max } if bundle.wait > max => return Err((bi, bundle.span.line, format!("`wait {}` is out of range: at most {max}", bundle.wait))),
            Clock::EncodedWaits { .. } => {}
            _ if bundle.wait > 0 => return Err((bi, bundle.span.line, format!("`wait {}`: the clock does not encode waits", bundle.wait))),
            _ => {}
        }
        if encoded {
            for (inst, _, desc) in descs(t, bundle) {
                if !desc.is_some_and(|d| d.sfu) {
                    continue;
                }
                if let Some(prev) = last_sfu.filter(|prev| cycle < prev + spacing) {
                    return Err((bi, line_of(inst, bundle), format!("an SFU op issues {} cycle(s) after the last; at least {spacing} apart", cycle - prev)));
                }
                last_sfu = Some(cycle);
            }
        }
        cycle += 1 + u64::from(bundle.wait);
    }
    match last_sfu {
        Some(prev) if encoded && cycle + 1 < prev + spacing => Err((b.bundles().len(), b.term.span.line, format!("the block's last SFU op is less than {spacing} cycles before the next block"))),
        _ => Ok(()),
    }
}

/// The program-end rules of one block (kind `hazard`). Errors carry the
/// bundle index and line.
fn end_rules(p: &Program, fam: &dyn Family, b: &Block) -> Result<(), (usize, u32, String)> {
    let t = p.target;
    let is_final = matches!(b.term.kind, TermKind::End);
    let n = b.bundles().len();
    let is_marker = |d: Option<&OpDesc>| d.is_some_and(|d| d.sem == Sem::ThreadSwitch);
    let has_marker = |bundle: &Bundle| descs(t, bundle).any(|(_, _, d)| is_marker(d));
    let ends_thread = |d: Option<&OpDesc>| d.is_some_and(|d| matches!(t.end, ProgramEnd::LastOp(name) if name == d.name));
    let delay = match t.end {
        ProgramEnd::Marker { delay_slots, .. } if is_final => Some(delay_slots),
        _ => None,
    };
    let marker_at = delay.and_then(|k| n.checked_sub(k + 1));
    if let Some(k) = delay {
        delay_slots(p, fam, b, k, marker_at)?;
    }
    let last_marker = if is_final { b.bundles().iter().rposition(has_marker) } else { None };
    for (bi, bundle) in b.bundles().iter().enumerate() {
        for (inst, _, d) in descs(t, bundle) {
            let line = line_of(inst, bundle);
            if is_marker(d) && Some(bi) != marker_at && Some(bi) != last_marker {
                return Err((bi, line, "a thread switch is only allowed where the program ends".to_string()));
            }
            if ends_thread(d) && !(is_final && bi + 1 == n && bundle.ops.len() == 1) {
                return Err((bi, line, "a thread-ending op must be the last op of the program".to_string()));
            }
        }
    }
    let thread_end_op = match t.end {
        ProgramEnd::LastOp(name) => t.op(name).is_some(),
        _ => false,
    };
    let ends = b.bundles().last().is_some_and(|x| descs(t, x).any(|(_, _, d)| ends_thread(d)));
    if is_final && thread_end_op && !ends {
        return Err((n, b.term.span.line, "the program ends without a thread-ending op".to_string()));
    }
    Ok(())
}

/// A final block's marker bundle `marker_at` and its `k` delay slots: the
/// marker is there, and no op of a delay slot touches an untouchable
/// register or breaks the family's delay-slot rules.
fn delay_slots(p: &Program, fam: &dyn Family, b: &Block, k: usize, marker_at: Option<usize>) -> Result<(), (usize, u32, String)> {
    let t = p.target;
    let untouchable = match t.end {
        ProgramEnd::Marker { untouchable, .. } => untouchable,
        _ => &[],
    };
    let is_marker = |x: &Bundle| descs(t, x).any(|(_, _, d)| d.is_some_and(|d| d.sem == Sem::ThreadSwitch));
    let Some(m) = marker_at.filter(|&m| b.bundles().get(m).is_some_and(is_marker)) else {
        let (bi, line) = match b.bundles().iter().rposition(is_marker) {
            Some(i) => (i, b.bundles().get(i).map_or(0, |x| x.span.line)),
            None => (b.bundles().len(), b.term.span.line),
        };
        return Err((bi, line, format!("the program must end with a thread-switch bundle followed by exactly {k} bundle(s)")));
    };
    for (i, bundle) in b.bundles().iter().enumerate().skip(m) {
        let slot = i.checked_sub(m + 1);
        for (inst, _, desc) in descs(t, bundle) {
            let Some(desc) = desc else { continue };
            let line = line_of(inst, bundle);
            let touches = inst.dest.iter().chain(&inst.srcs).filter_map(Operand::phys).flat_map(PhysReg::regs).any(|r| untouchable.contains(&r));
            if let (Some(s), true) = (slot, touches) {
                return Err((i, line, format!("`{}` touches a register the thread end needs in delay slot {}", desc.name, s + 1)));
            }
            fam.end_slot_ok(desc, inst, slot).map_err(|m| (i, line, m))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
