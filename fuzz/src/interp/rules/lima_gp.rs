//! lima-gp's rules beyond its tables (targets.md "lima-gp"): no ALU
//! immediates, the add units and the mul units each share one opcode per
//! instruction (`mov` and `neg` are the plain `add` or `mul` there), ops
//! that take both mul units, and the load and store units: one kind of
//! access and one vector index per unit, each access in the sub-slot of its
//! component.
//!
//! The units' groups and components, and the register load and store
//! opcodes, come from the target's network tables; which ops share and
//! which take both mul units from the description's lists.

use super::Family;
use schedra_ir::target::lima_gp::{BOTH_MUL_UNITS, SHARED_OPCODES};
use schedra_ir::target::network::{Network, UnitKind};
use schedra_ir::target::{OpDesc, Sem};
use schedra_ir::{Imm, Inst, Operand};

/// The Mali-400 GP rules.
pub(super) struct LimaGp;

/// What one load or store addresses: the kind of access, and the component
/// and vector index of its word (`None` for a constant, which has neither).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Access {
    kind: &'static str,
    word: Option<(u32, u32)>,
}

/// The component and vector index of component number `n`.
fn split(n: u32) -> (u32, u32) {
    (n % 4, n / 4)
}

/// The access op `d` makes, or `None` when it is not a load or store the
/// rule knows.
fn access(net: &Network, d: &OpDesc, inst: &Inst) -> Option<Access> {
    let numbered = |kind| Some(Access { kind, word: Some(split(inst.srcs.first()?.imm()?.bits)) });
    if d.name == net.ld_reg {
        let r = inst.srcs.first().and_then(Operand::phys)?;
        return Some(Access { kind: "reg", word: Some(split(u32::from(r.base))) });
    }
    if d.name == net.st_reg {
        let r = inst.dest.as_ref().and_then(Operand::phys)?;
        return Some(Access { kind: "reg", word: Some(split(u32::from(r.base))) });
    }
    match d.sem {
        Sem::Const => Some(Access { kind: "const", word: None }),
        Sem::Varying => numbered("att"),
        Sem::Uniform => numbered("uni"),
        Sem::Output(..) => numbered("var"),
        _ => None,
    }
}

/// The opcode an op sets in a shared pair of units whose plain op is
/// `plain`.
fn field<'a>(name: &'a str, plain: &'a str) -> &'a str {
    if SHARED_OPCODES.iter().any(|(o, _)| *o == name) {
        plain
    } else {
        name
    }
}

fn shared_units(ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
    for (pair, plain) in [(["add0", "add1"], "add"), (["mul0", "mul1"], "mul")] {
        let mut set = ops.iter().filter(|(_, _, s)| pair.contains(s)).map(|(d, _, _)| field(d.name, plain));
        if let (Some(a), Some(b)) = (set.next(), set.next()) {
            if a != b {
                return Err(format!("the {plain} units hold `{a}` and `{b}` in one instruction; they share one opcode"));
            }
        }
    }
    let both = ops.iter().find(|(d, _, _)| BOTH_MUL_UNITS.contains(&d.name));
    if let Some((d, _, _)) = both.filter(|_| ops.iter().filter(|(_, _, s)| s.starts_with("mul")).count() > 1) {
        return Err(format!("`{}` takes both mul units, and another op is in one of them", d.name));
    }
    Ok(())
}

fn access_units(net: &Network, ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
    let mut seen: Vec<(&str, Access)> = Vec::new();
    for (d, inst, slot) in ops {
        let Some(unit) = net.unit(slot).filter(|u| u.kind != UnitKind::Alu) else { continue };
        let Some(a) = access(net, d, inst) else { continue };
        if let Some((comp, _)) = a.word.filter(|(c, _)| *c != u32::from(unit.component)) {
            return Err(format!("`{}` reads or writes component {comp} from sub-slot {slot}", d.name));
        }
        if unit.group == "reg1" && a.kind != "reg" {
            return Err(format!("`{}` in {slot}: the second load unit loads registers only", d.name));
        }
        match seen.iter().find(|(g, _)| *g == unit.group) {
            None => seen.push((unit.group, a)),
            Some((_, b)) if b.kind != a.kind => return Err(format!("unit {} makes `{}` and `{}` accesses in one instruction", unit.group, b.kind, a.kind)),
            Some((_, b)) => {
                let index = |x: &Access| x.word.map(|(_, i)| i);
                if a.kind != "const" && index(b) != index(&a) {
                    return Err(format!("unit {} addresses two vector indices in one instruction", unit.group));
                }
            }
        }
    }
    Ok(())
}

impl Family for LimaGp {
    fn imm_ok(&self, _op: &OpDesc, _index: usize, _imm: Imm) -> bool {
        false
    }
    fn max_bundle_imms(&self) -> usize {
        0
    }
    fn placed_ok(&self, net: Option<&Network>, ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
        shared_units(ops)?;
        net.map_or(Ok(()), |net| access_units(net, ops))
    }
}
