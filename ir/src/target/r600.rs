//! AMD R600–Evergreen VLIW5 ALU groups: non-interlocked, slots `x y z w t`
//! plus `cf` for one export, 128 four-channel GPRs (`R0.x`…`R127.w`, each
//! channel its own register). All reads of a group see the registers as they
//! were before it; writes land at the group's end. Read ports follow
//! `r600_asm.c`'s bank swizzle: three read cycles × four channels, one GPR
//! index per (cycle, channel).
//!
//! Extension beyond the spec's minimum table: `scratch_write N, a` and
//! `d = scratch_read N` in the `cf` slot model the scratch (spill) path;
//! `scratch_read`'s result lands 2 cycles after issue.

use super::abi::{Abi, Emit, Fetch, StageAbi};
use super::{Clock, Dest, OpDesc, OperandKind as K, OpClass, Overlap, ProgramEnd, RegFile, RegNaming, Rules, Sem, Sizes, Target};
use crate::ir::{Imm, Inst, Operand, PhysReg, Reg, Stage};

const V: K = K::Value;
const VEC: &[&str] = &["x", "y", "z", "w", "t"];
const T: &[&str] = &["t"];
const CF: &[&str] = &["cf"];
/// The channel names, in register-index order.
pub const CHANNELS: &[&str] = &["x", "y", "z", "w"];

const fn op(name: &'static str, sem: Sem, operands: &'static [K], slots: &'static [&'static str]) -> OpDesc {
    OpDesc { name, sem, operands, dest: Dest::Explicit, sizes: Sizes::Uniform, slots, latency: 1, sfu: false, header_is_dest: false, machine_only: false, lifetime: None, overlap: Overlap::NoPartial, class: OpClass::Other, unknown_landing: false }
}
const fn trans(name: &'static str, sem: Sem) -> OpDesc {
    OpDesc { sfu: true, ..op(name, sem, &[V], T) }
}

static OPS: [OpDesc; 15] = [
    op("add", Sem::FAdd, &[V, V], VEC),
    op("mul", Sem::FMul, &[V, V], VEC),
    op("max", Sem::FMax, &[V, V], VEC),
    op("min", Sem::FMin, &[V, V], VEC),
    op("muladd", Sem::FMad, &[V, V, V], VEC),
    op("mov", Sem::Mov, &[V], VEC),
    trans("recip", Sem::Recip),
    trans("rsqrt", Sem::Rsqrt),
    trans("exp", Sem::Exp2),
    trans("log", Sem::Log2),
    trans("sin", Sem::Sin),
    trans("cos", Sem::Cos),
    OpDesc { dest: Dest::None, latency: 0, ..op("export", Sem::Output("export", true), &[K::Index, K::Reg], CF) },
    OpDesc { dest: Dest::None, latency: 0, overlap: Overlap::Any, ..op("scratch_write", Sem::ScratchWrite, &[K::Index, K::Reg], CF) },
    OpDesc { latency: 2, overlap: Overlap::Any, ..op("scratch_read", Sem::ScratchRead, &[K::Index], CF) },
];

/// The R600 VLIW5 description.
pub static R600: Target = Target {
    name: "r600",
    summary: "AMD R600-Evergreen VLIW5: x/y/z/w/t ALU slots + cf, R0.x-R127.w, parallel reads per group, bank-swizzle read ports, 4 literals",
    regs: RegFile { naming: RegNaming::Channels("R", CHANNELS), count: 512 },
    clock: Clock::Padded,
    waits: None,
    slots: &["x", "y", "z", "w", "t", "cf"],
    default_stage: Stage::Vertex,
    ops: &OPS,
    op_index: super::OpIndex::new(),
    network: None,
    max_alu_size: 1,
    max_value_size: 1,
    reserved: &[],
    implicit_regs: &[],
    payload: &[],
    // Vertex attributes arrive in R1.x..R2.w.
    inputs: &[PhysReg::one(4), PhysReg::one(5), PhysReg::one(6), PhysReg::one(7), PhysReg::one(8), PhysReg::one(9), PhysReg::one(10), PhysReg::one(11)],
    end: ProgramEnd::Plain,
    rules: &R600Rules,
    abi: Some(&ABI),
};

/// The shader ABI: vertex attributes arrive from R1.x on and fragment inputs
/// from R0.x on, each variable in its own GPR; uniforms (the constant
/// cache) follow in the next GPRs; every output component is one
/// `export N` (vertex: position is export 0, location L is export L + 1;
/// fragment: location L is export L). No texture fetch is modelled.
pub static ABI: Abi = Abi {
    vertex: Some(StageAbi { first_reg: 4, output: Emit::Indexed { op: "export", position: 0, first_location: 1 }, ..FRAGMENT }),
    fragment: Some(FRAGMENT),
    texture: None,
};
const FRAGMENT: StageAbi = StageAbi {
    uniform: Fetch::Registers,
    input: Fetch::Registers,
    first_reg: 0,
    last_reg: 511,
    align: 4,
    uniforms_first: false,
    output: Emit::Indexed { op: "export", position: 0, first_location: 0 },
};

/// The rules of R600 that do not fit the tables.
pub struct R600Rules;

/// Most ALU ops in one group: one per slot `x`, `y`, `z`, `w`, `t`.
pub const MAX_ALU_OPS: usize = 5;

/// The six bank swizzles: for each, the read cycle of source 0, 1, 2.
pub const SWIZZLES: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 2, 0], [1, 0, 2], [2, 0, 1], [2, 1, 0]];

/// Whether one bank swizzle per op makes the group's register reads fit the
/// ports: in each read cycle each channel fetches one GPR index. `reads[i]`
/// lists op i's register sources in source order. Returns the chosen swizzle
/// index per op, or `None`. A group of more than [`MAX_ALU_OPS`] ops, or an
/// op with more than three register sources, never fits (`None`): this also
/// bounds the backtracking search to 6^5 choices and its recursion to five
/// levels, whatever the input.
pub fn find_bank_swizzle(reads: &[Vec<Reg>]) -> Option<Vec<usize>> {
    if reads.len() > MAX_ALU_OPS || reads.iter().any(|r| r.len() > 3) {
        return None;
    }
    // ports[cycle][chan] = (gpr, users)
    let mut ports = [[(0u16, 0u32); 4]; 3];
    let mut choice = vec![0; reads.len()];
    fn place(reads: &[Vec<Reg>], i: usize, ports: &mut [[(u16, u32); 4]; 3], choice: &mut [usize]) -> bool {
        if i == reads.len() {
            return true;
        }
        for (si, sw) in SWIZZLES.iter().enumerate() {
            let mut taken: Vec<(usize, usize)> = Vec::new();
            let mut seen: Vec<Reg> = Vec::new();
            let mut ok = true;
            for (k, &r) in reads[i].iter().enumerate() {
                if seen.contains(&r) {
                    continue; // two sources naming one register share one read
                }
                seen.push(r);
                let (gpr, ch) = (r / 4, (r % 4) as usize);
                // cannot fail: k < 3 (guarded above), ch = r % 4 < 4.
                let slot = &mut ports[sw[k]][ch];
                if slot.1 > 0 && slot.0 != gpr {
                    ok = false;
                    break;
                }
                *slot = (gpr, slot.1 + 1);
                taken.push((sw[k], ch));
            }
            if ok && place(reads, i + 1, ports, choice) {
                choice[i] = si;
                return true;
            }
            for (c, ch) in taken {
                ports[c][ch].1 -= 1;
            }
        }
        false
    }
    place(reads, 0, &mut ports, &mut choice).then_some(choice)
}

impl Rules for R600Rules {
    fn imm_ok(&self, _op: &OpDesc, _index: usize, _imm: Imm) -> bool {
        true
    }
    fn max_bundle_imms(&self) -> usize {
        4
    }
    fn allocatable(&self, _stage: Stage) -> Vec<Reg> {
        (0..512).collect()
    }
    fn slot_ok(&self, op: &OpDesc, slot: &str, dest: Option<PhysReg>) -> Result<(), String> {
        if let (Some(ch), Some(d)) = (CHANNELS.iter().position(|c| *c == slot), dest) {
            if op.slots.contains(&slot) && (d.base % 4) as usize != ch {
                return Err(format!("`{}` in slot {} must write channel .{}", op.name, slot, slot));
            }
        }
        Ok(())
    }
    fn bundle_ok(&self, ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        let reads: Vec<Vec<Reg>> = ops
            .iter()
            .filter(|(d, _)| d.slots != CF)
            .map(|(_, i)| i.srcs.iter().filter_map(Operand::phys).map(|p| p.base).collect())
            .collect();
        match find_bank_swizzle(&reads) {
            Some(_) => Ok(()),
            None => Err("no bank swizzle lets every op of the group read its sources through the read ports".to_string()),
        }
    }
    fn op_regs_ok(&self, _op: &OpDesc, _inst: &Inst) -> Result<(), String> {
        Ok(())
    }
    fn end_slot_ok(&self, _op: &OpDesc, _inst: &Inst, _slot_index: Option<usize>) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_search_is_bounded() {
        // Ops with more than three register sources, or more ops than slots,
        // never fit (and neither panics nor recurses deeply).
        assert_eq!(find_bank_swizzle(&[vec![4, 5, 6, 7]]), None);
        assert_eq!(find_bank_swizzle(&vec![vec![4]; 100_000]), None);
        assert_eq!(find_bank_swizzle(&vec![vec![4]; MAX_ALU_OPS + 1]), None);
        // Five ops all reading R1.x share one port: they fit.
        assert!(find_bank_swizzle(&vec![vec![4]; MAX_ALU_OPS]).is_some());
    }

    #[test]
    fn swizzle_conflict_is_found() {
        // R1.x and R2.x both read in cycle 0 on channel x by two ops with one
        // source each: every swizzle puts source 0 in some cycle; three ops
        // reading R1.x, R2.x, R3.x fit only in three distinct cycles.
        let fits = find_bank_swizzle(&[vec![4], vec![8], vec![12]]);
        assert!(fits.is_some());
        let four = find_bank_swizzle(&[vec![4], vec![8], vec![12], vec![16]]);
        assert_eq!(four, None, "four GPRs on channel x need four read cycles");
    }
}
