//! gen8's rules beyond its tables (targets.md "gen8"): an immediate only as
//! the last source, the r127 rule of overlapping sends, the end-of-thread
//! payload range, and partial overlap of wide ALU destinations.

use super::Family;
use schedra_ir::target::{OpDesc, Overlap, ProgramEnd, Sem};
use schedra_ir::{Imm, Inst, Operand, PhysReg, Reg, Target};

/// The Broadwell EU rules.
pub(super) struct Gen8;

/// The register a send with overlapping source and destination may not
/// return into (Broadwell PRM: r127).
const R127: Reg = 127;

/// The first register of the end-of-thread payload (g112-g127).
const EOT_FIRST: Reg = 112;

/// A message to a shared function (`send.*`): the ops whose meaning is a
/// texture sample, a scratch access or an output.
fn is_send(op: &OpDesc) -> bool {
    matches!(op.sem, Sem::Texture | Sem::ScratchRead | Sem::ScratchWrite | Sem::Output(..))
}

fn sources(inst: &Inst) -> impl Iterator<Item = PhysReg> + '_ {
    inst.srcs.iter().filter_map(Operand::phys)
}

impl Family for Gen8 {
    fn imm_ok(&self, op: &OpDesc, index: usize, _imm: Imm) -> bool {
        index + 1 == op.operands.len()
    }
    fn max_bundle_imms(&self) -> usize {
        1
    }
    fn op_regs_ok(&self, t: &Target, op: &OpDesc, inst: &Inst) -> Result<(), String> {
        let dest = inst.dest.as_ref().and_then(Operand::phys);
        if let (true, Some(d)) = (is_send(op), dest) {
            let overlap = op.header_is_dest || sources(inst).any(|s| s.overlaps(d));
            if overlap && d.regs().any(|r| r == R127) {
                return Err(format!("`{}` returns into g127 while its source and destination overlap", op.name));
            }
        }
        if matches!(t.end, ProgramEnd::LastOp(name) if name == op.name) {
            if let Some(s) = sources(inst).find(|s| s.base < EOT_FIRST) {
                return Err(format!("end-of-thread payload g{} lies outside g112-g127", s.base));
            }
        }
        if let (Some(d), Overlap::NoPartial) = (dest, op.overlap) {
            if d.size > 1 && sources(inst).any(|s| s.overlaps(d) && s != d) {
                return Err(format!("`{}` destination g{}:{} partly overlaps a source", op.name, d.base, d.size));
            }
        }
        Ok(())
    }
}
