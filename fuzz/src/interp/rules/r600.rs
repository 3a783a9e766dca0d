//! r600's rules beyond its tables (targets.md "r600"): an op in slot
//! `x`/`y`/`z`/`w` writes that channel, at most four distinct immediates
//! per group, a texture fetch's operands each inside one GPR, and the read
//! ports: some bank swizzle per ALU op must let every register source be
//! fetched, each channel fetching one GPR index per read cycle.

use super::Family;
use schedra_ir::target::{OpDesc, Sem};
use schedra_ir::{Imm, Inst, Operand, PhysReg, Reg, Target};

/// The VLIW5 rules.
pub(super) struct R600;

/// The vector slots, in channel order: slot i writes channel i.
const VECTOR: [&str; 4] = ["x", "y", "z", "w"];

/// The control-flow slot: its ops do not read through the ALU ports.
const CF: &str = "cf";

/// Channels per GPR.
const CHANNELS: Reg = 4;

/// The most ALU ops of one group (x, y, z, w, t).
const MAX_ALU: usize = 5;

/// Every order in which an op's three sources can take the read cycles
/// (source k is read in cycle `perm[k]`).
const PERMUTATIONS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];

/// Whether choosing permutation `choice[i]` for op i fits the ports:
/// every register read in cycle c on channel ch names the same GPR, two
/// sources of one op naming one register taking one read.
fn fits(reads: &[Vec<Reg>], choice: &[usize]) -> bool {
    let mut port: [[Option<Reg>; CHANNELS as usize]; 3] = [[None; CHANNELS as usize]; 3];
    for (srcs, &c) in reads.iter().zip(choice) {
        let Some(perm) = PERMUTATIONS.get(c) else { return false };
        for (k, &r) in srcs.iter().enumerate() {
            if srcs.iter().take(k).any(|&q| q == r) {
                continue;
            }
            let (gpr, ch) = (r / CHANNELS, (r % CHANNELS) as usize);
            let Some(cell) = perm.get(k).and_then(|&cycle| port.get_mut(cycle)).and_then(|row| row.get_mut(ch)) else { return false };
            match cell {
                Some(g) if *g != gpr => return false,
                _ => *cell = Some(gpr),
            }
        }
    }
    true
}

/// Whether some permutation per op fits the ports: every choice is tried
/// (at most 6^5).
fn ports_fit(reads: &[Vec<Reg>]) -> bool {
    if reads.len() > MAX_ALU || reads.iter().any(|r| r.len() > 3) {
        return false;
    }
    let total = PERMUTATIONS.len().pow(reads.len() as u32);
    (0..total).any(|mut n| {
        let choice: Vec<usize> = reads
            .iter()
            .map(|_| {
                let c = n % PERMUTATIONS.len();
                n /= PERMUTATIONS.len();
                c
            })
            .collect();
        fits(reads, &choice)
    })
}

/// Whether run `p` lies inside one GPR.
fn inside_one_gpr(p: PhysReg) -> bool {
    Reg::from(p.size) + p.base % CHANNELS <= CHANNELS
}

impl Family for R600 {
    fn imm_ok(&self, _op: &OpDesc, _index: usize, _imm: Imm) -> bool {
        true
    }
    fn max_bundle_imms(&self) -> usize {
        4
    }
    fn slot_ok(&self, op: &OpDesc, slot: &str, dest: Option<PhysReg>) -> Result<(), String> {
        match (VECTOR.iter().position(|c| *c == slot), dest) {
            (Some(ch), Some(d)) if op.slots.contains(&slot) && (d.base % CHANNELS) as usize != ch => Err(format!("`{}` in slot {slot} must write channel .{slot}", op.name)),
            _ => Ok(()),
        }
    }
    fn bundle_ok(&self, ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        let reads: Vec<Vec<Reg>> = ops.iter().filter(|(d, _)| !d.slots.iter().all(|s| *s == CF)).map(|(_, i)| i.srcs.iter().filter_map(Operand::phys).map(|p| p.base).collect()).collect();
        if ports_fit(&reads) {
            Ok(())
        } else {
            Err("no bank swizzle lets every op of the group read its sources through the read ports".to_string())
        }
    }
    fn op_regs_ok(&self, _t: &Target, op: &OpDesc, inst: &Inst) -> Result<(), String> {
        if op.sem != Sem::Texture {
            return Ok(());
        }
        match inst.dest.iter().chain(&inst.srcs).filter_map(Operand::phys).find(|p| !inside_one_gpr(*p)) {
            Some(p) => Err(format!("`{}` operand {}:{} does not lie inside one GPR", op.name, p.base, p.size)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ports() {
        // Two ops reading R1.x and R2.x: different GPRs on channel x need
        // different cycles, which a swizzle gives.
        assert!(ports_fit(&[vec![4], vec![8]]));
        // Four GPRs on channel x through three cycles: no.
        assert!(!ports_fit(&[vec![4, 8], vec![12, 16]]));
        // The same register twice in one op takes one read.
        assert!(ports_fit(&[vec![4, 4, 8], vec![12]]));
        assert!(!ports_fit(&[vec![0], vec![0], vec![0], vec![0], vec![0], vec![0]]));
        assert!(!ports_fit(&[vec![0, 1, 2, 3]]));
    }
}
