//! The rules of a bypass network that are not about time, read from the
//! target's [`Network`] tables (targets.md "lima-gp"; `semantics.md`,
//! "Bypass network"):
//!
//! - `slot`: a program has at most `max_instructions` instructions;
//! - `register`: a bypass read names a unit of the target; a read inside
//!   its window does not come from an operand position that cannot name the
//!   unit it reads (`forbidden_reads`); a store's read of its own
//!   instruction is of a result a store can take (an ALU result, and not
//!   one of `unstorable`);
//! - `hazard`: complex sequences are whole: a `join` reads an `impl` and
//!   the `second` part from the instruction right before it, a `post` op
//!   reads a `join` directly, and only the ops of a sequence read what a
//!   `schedule_first` op made.
//!
//! Reads outside their windows, before their block or of a unit that made
//! nothing are not rules but time: the run itself stops on them
//! ([`super::super::bypass`]). So a read is judged here only where time
//! allows it.

use super::RuleKind;
use schedra_ir::target::network::{Network, Unit, UnitKind};
use schedra_ir::target::OpDesc;
use schedra_ir::{Block, BypassRead, Inst, Operand, Target, TermKind};

/// A broken rule: its kind and sentence.
type Broken = (RuleKind, String);

/// The op issued in unit `unit` of instruction `k` of `b`.
fn made_at<'b>(b: &'b Block, k: usize, unit: &str) -> Option<&'b Inst> {
    b.bundles().get(k)?.ops.iter().find(|o| o.slot == unit).map(|o| &o.inst)
}

/// How a read is made: by operand `operand` of `op` issued in unit
/// `in_unit`, or by a store.
#[derive(Clone, Copy)]
enum Reader<'a> {
    Alu { op: &'a str, in_unit: &'a str, operand: usize },
    Store,
}

/// The register rules of bypass read `r` made at instruction `i` of `b`.
fn read(t: &Target, net: &Network, b: &Block, i: usize, r: &BypassRead, reader: Reader<'_>) -> Result<(), String> {
    let name = format!("^{}.{}", r.unit, r.dist);
    let Some(unit) = net.unit(&r.unit) else {
        return Err(format!("{name}: {} has no unit `{}`", t.name, r.unit));
    };
    let d = usize::from(r.dist);
    let Some(made) = i.checked_sub(d).and_then(|k| made_at(b, k, unit.name)) else { return Ok(()) };
    let op = made.opcode.as_str();
    match reader {
        Reader::Store if d == 0 && !net.storable(unit, op) => Err(format!("{name}: a store cannot take the result of `{op}` in {} directly", unit.name)),
        Reader::Store => Ok(()),
        Reader::Alu { op: reading, in_unit, operand } => {
            if !readable(net, unit, op, d) {
                return Ok(());
            }
            match net.forbidden(reading, in_unit, operand, unit.name) {
                Some(f) => Err(format!("{name}: operand {} of `{reading}` in {in_unit} cannot name the {} unit ({})", operand + 1, unit.name, f.why)),
                None => Ok(()),
            }
        }
    }
}

/// Whether an ALU op may read, `d` instructions later, what `op` made in
/// `unit`: in its window, and not a result of an ALU unit of its own
/// instruction.
fn readable(net: &Network, unit: &Unit, op: &str, d: usize) -> bool {
    !(d == 0 && unit.kind == UnitKind::Alu) && net.window(unit, op).contains(d as u32)
}

/// The register rules of every bypass read of instruction `i` of `b`, and
/// of the branch condition when `i` is the terminator's index.
fn reads(t: &Target, net: &Network, b: &Block, i: usize) -> Result<(), String> {
    let Some(x) = b.bundles().get(i) else {
        if let TermKind::Brnz { cond: Operand::Bypass(r), .. } = &b.term.kind {
            read(t, net, b, i, r, Reader::Alu { op: net.mov, in_unit: "", operand: 0 })?;
        }
        return Ok(());
    };
    for op in &x.ops {
        let kind = net.unit(&op.slot).map(|u| u.kind);
        if kind == Some(UnitKind::Store) {
            if let Some(Operand::Bypass(r)) = op.inst.srcs.last() {
                read(t, net, b, i, r, Reader::Store)?;
            }
            continue;
        }
        if kind != Some(UnitKind::Alu) || t.op(&op.inst.opcode).is_none() {
            continue;
        }
        for (k, s) in op.inst.srcs.iter().enumerate() {
            if let Operand::Bypass(r) = s {
                read(t, net, b, i, r, Reader::Alu { op: op.inst.opcode.as_str(), in_unit: op.slot.as_str(), operand: k })?;
            }
        }
    }
    Ok(())
}

/// The opcode that made what `o` reads at instruction `i` of `b`.
fn source_op<'b>(b: &'b Block, i: usize, o: Option<&Operand>) -> Option<(&'b str, u8)> {
    let Some(Operand::Bypass(r)) = o else { return None };
    let made = made_at(b, i.checked_sub(usize::from(r.dist))?, &r.unit)?;
    Some((made.opcode.as_str(), r.dist))
}

/// The sequence rules of one op of instruction `i` of `b`.
fn sequence(net: &Network, b: &Block, i: usize, d: &OpDesc, inst: &Inst) -> Result<(), String> {
    let part_of = |name: &str| net.sequences.iter().any(|s| [s.imp, s.second, s.join].contains(&name));
    if !part_of(d.name) {
        for s in &inst.srcs {
            if let Some((f, _)) = source_op(b, i, Some(s)).filter(|(f, _)| net.schedule_first.contains(f)) {
                return Err(format!("`{}` reads what `{f}` made; only its complex sequence reads it", d.name));
            }
        }
    }
    if let Some(seq) = net.sequences.iter().find(|s| s.join == d.name) {
        let impl_before = source_op(b, i, inst.srcs.first()).is_some_and(|(f, dist)| dist == 1 && net.sequences.iter().any(|s| s.imp == f));
        let second_before = source_op(b, i, inst.srcs.get(1)) == Some((seq.second, 1));
        if !(impl_before && second_before) {
            return Err(format!("`{}` reads its impl and `{}` from the instruction right before it", seq.join, seq.second));
        }
    }
    if let Some(seq) = net.sequences.iter().find(|s| s.post == Some(d.name)) {
        if source_op(b, i, inst.srcs.first()).map(|(f, _)| f) != Some(seq.join) {
            return Err(format!("`{}` reads `{}` directly; nothing stands between them", d.name, seq.join));
        }
    }
    Ok(())
}

/// The first broken network rule of instruction `i` of `b` (its reads,
/// then its sequences); `i == b.bundles.len()` is the terminator.
pub(super) fn instruction(t: &Target, net: &Network, b: &Block, i: usize) -> Result<(), Broken> {
    reads(t, net, b, i).map_err(|m| (RuleKind::Register, m))?;
    let Some(x) = b.bundles().get(i) else { return Ok(()) };
    for op in &x.ops {
        if let Some(d) = t.op(&op.inst.opcode) {
            sequence(net, b, i, d, &op.inst).map_err(|m| (RuleKind::Hazard, m))?;
        }
    }
    Ok(())
}

/// Kind `slot`: the program's length.
pub(super) fn length(net: &Network, instructions: usize) -> Result<(), String> {
    if instructions > net.max_instructions {
        return Err(format!("{instructions} instructions; the target runs at most {}", net.max_instructions));
    }
    Ok(())
}
