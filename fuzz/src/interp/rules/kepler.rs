//! kepler's rules beyond its tables (targets.md "kepler"): 20-bit
//! immediates as the last source of arithmetic ops, two distinct
//! immediates per bundle, and dual issue (Mesa's `canDualIssue` for GK104;
//! a flow op such as `kil.nz` is never first of a pair).

use super::Family;
use schedra_ir::target::{OpClass, OpDesc, Sem};
use schedra_ir::{Imm, Inst, Operand, PhysReg};

/// The GK104 rules.
pub(super) struct Kepler;

/// A 20-bit immediate: an integer -524288..524287, or a float whose low 12
/// bits are zero.
fn imm20(bits: u32) -> bool {
    (-(1 << 19)..(1 << 19)).contains(&(bits as i32)) || bits & 0xfff == 0
}

fn writes(inst: &Inst) -> Option<PhysReg> {
    inst.dest.as_ref().and_then(Operand::phys)
}

/// Whether `b` in `i1` may issue with `a` in `i0`.
fn pair((da, a): (&OpDesc, &Inst), (db, b): (&OpDesc, &Inst)) -> Result<(), String> {
    let texture = |d: &OpDesc| matches!(d.class, OpClass::Tex | OpClass::TexBar);
    let wide = |i: &Inst| i.dest.iter().chain(&i.srcs).filter_map(Operand::phys).any(|p| p.size > 1);
    let local = |d: &OpDesc| matches!(d.sem, Sem::ScratchRead | Sem::ScratchWrite);
    let (na, nb) = (da.name, db.name);
    if texture(da) || texture(db) {
        return Err(format!("`{na}` and `{nb}`: a texture op or barrier never dual-issues"));
    }
    if da.class == OpClass::Flow {
        return Err(format!("`{nb}` might not execute after the flow op `{na}`, so they do not pair"));
    }
    if let Some(wa) = writes(a) {
        if writes(b).is_some_and(|wb| wb.overlaps(wa)) {
            return Err(format!("`{na}` and `{nb}` write the same register"));
        }
        if b.srcs.iter().filter_map(Operand::phys).any(|s| s.overlaps(wa)) {
            return Err(format!("`{nb}` reads what `{na}` writes"));
        }
    }
    if wide(a) || wide(b) {
        return Err(format!("`{na}` and `{nb}`: an operand wider than one register"));
    }
    if da.class == OpClass::Mov || db.class == OpClass::Mov {
        return Ok(());
    }
    if da.class == db.class {
        let arith_ok = da.sem.is_float() || db.sem.is_float() || da.sem == Sem::Add || db.sem == Sem::Add;
        return match da.class {
            OpClass::MinMax => Ok(()),
            OpClass::Arith if arith_ok => Ok(()),
            _ => Err(format!("`{na}` and `{nb}` are of one class that does not pair")),
        };
    }
    if local(da) && local(db) {
        return Err(format!("`{na}` and `{nb}` both access local memory"));
    }
    Ok(())
}

impl Family for Kepler {
    fn imm_ok(&self, op: &OpDesc, index: usize, imm: Imm) -> bool {
        match op.class {
            OpClass::Mov => true,
            OpClass::Arith | OpClass::MinMax | OpClass::Logic | OpClass::IMul => index + 1 == op.operands.len() && imm20(imm.bits),
            _ => false,
        }
    }
    fn max_bundle_imms(&self) -> usize {
        2
    }
    fn bundle_ok(&self, ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        match ops {
            [] | [_] => Ok(()),
            [a, b] => pair(*a, *b),
            _ => Err(format!("{} ops in one bundle; at most two dual-issue", ops.len())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_bit_immediates() {
        for ok in [0u32, 524_287, (-524_288i32) as u32, 1.0f32.to_bits(), 0x3f80_1000] {
            assert!(imm20(ok), "{ok:#x}");
        }
        for bad in [524_289u32, (-524_289i32) as u32, 0x3f80_0001, 0x3dcc_cccd] {
            assert!(!imm20(bad), "{bad:#x}");
        }
    }
}
