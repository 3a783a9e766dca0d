//! v3d71's rules beyond its tables (targets.md "v3d71"): small immediates,
//! one distinct immediate per bundle, and what the thread-end bundle and
//! its delay slots may hold.

use super::Family;
use schedra_ir::target::{Dest, OpDesc, Sem};
use schedra_ir::{Imm, Inst};

/// The V3D 7.1 rules.
pub(super) struct V3d71;

/// The ALU slots: an op there that writes a register writes the register
/// file.
const ALU: [&str; 2] = ["add", "mul"];

/// A small immediate: an integer -16..15, or ±2^k for k in -8..7, or 0.0.
fn small(bits: u32) -> bool {
    let int = bits as i32;
    let x = f32::from_bits(bits);
    (-16..=15).contains(&int) || x == 0.0 || (-8..=7).any(|k| x.abs() == (k as f32).exp2())
}

impl Family for V3d71 {
    fn imm_ok(&self, _op: &OpDesc, _index: usize, imm: Imm) -> bool {
        small(imm.bits)
    }
    fn max_bundle_imms(&self) -> usize {
        1
    }
    fn end_slot_ok(&self, op: &OpDesc, inst: &Inst, slot: Option<usize>) -> Result<(), String> {
        let Some(k) = slot else {
            let writes_rf = op.dest == Dest::Explicit && inst.dest.is_some() && op.slots.iter().any(|s| ALU.contains(s));
            return if writes_rf { Err(format!("`{}` writes the register file in the thread-switch bundle", op.name)) } else { Ok(()) };
        };
        let n = k + 1;
        if op.sfu {
            return Err(format!("SFU op `{}` in delay slot {n} of the thread end", op.name));
        }
        match op.sem {
            Sem::ScratchRead | Sem::ScratchWrite | Sem::TexCoord | Sem::TexLookup | Sem::TexResult => Err(format!("TMU access `{}` in delay slot {n} of the thread end", op.name)),
            Sem::Output(..) | Sem::Discard => Err(format!("TLB access `{}` in delay slot {n} of the thread end", op.name)),
            Sem::Varying if k == 1 => Err(format!("`{}` in the second delay slot of the thread end", op.name)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_immediates() {
        for ok in [0u32, 15, (-16i32) as u32, 1.0f32.to_bits(), (-0.5f32).to_bits(), 128.0f32.to_bits(), (1.0f32 / 256.0).to_bits(), (-0.0f32).to_bits()] {
            assert!(small(ok), "{ok:#x}");
        }
        for bad in [16u32, (-17i32) as u32, 3.0f32.to_bits(), 256.0f32.to_bits(), (1.0f32 / 512.0).to_bits()] {
            assert!(!small(bad), "{bad:#x}");
        }
    }
}
