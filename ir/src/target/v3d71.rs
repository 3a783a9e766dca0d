//! Broadcom V3D 7.1 (Raspberry Pi 5) QPU: non-interlocked, three slots per
//! instruction (`add`, `mul`, `sig`), 64 registers `rf0`–`rf63`, no
//! accumulators. `ldunif`/`ldconst` write rf0 one cycle after issue and
//! `ldvary` two; SFU results take two cycles. The program ends with `thrsw`
//! and two delay slots. Facts from Mesa's `broadcom/compiler` (see
//! `shared/research/hardware.md`).
//!
//! Extension beyond the spec's minimum table: `scratchw OFF, a` and
//! `d = scratchr OFF` (add slot) model the TMU spill path; `scratchr`'s result
//! lands after 4 cycles. Neither may sit in a thread-end delay slot (TMU
//! access), and neither may `tlbw` (TLB access) — a rule from the real chip
//! that is stricter than the spec's minimum.
//!
//! Texture unit (TMU): `tmut a` writes the T coordinate, `tmus a` writes S
//! and starts the lookup (Mesa's `V3D_QPU_WADDR_TMUT`/`TMUS`, moves to
//! magic write addresses from either ALU), and `d = ldtmu` (a signal) reads
//! the next word of the oldest lookup into a register; a lookup returns four
//! words, readable from [`TMU_LATENCY`] cycles after its `tmus`. The
//! sampler configuration Mesa passes in the uniform stream (`wrtmuc`) is
//! not modelled: every lookup samples one 2D texture. The chip stalls an
//! early `ldtmu`; the model, like every `Padded` clock, makes it an error
//! (the verifier's `latency`), so that a schedule must cover the latency as
//! Mesa's tries to. Each block reads all its lookups' words (Mesa flushes
//! outstanding TMU work at block ends), and no TMU access sits in a
//! thread-end delay slot.
//!
//! Fragment discard: `setmsf.ifnz a` (add slot) stands for Mesa's
//! `discard_if` sequence, a flag push of `a` and a conditional `SETMSF` of 0:
//! the sample mask is cleared when `a` is non-zero, so the fragment's later
//! TLB writes are dropped. It counts as a TLB access (not in a thread-end
//! delay slot).

use super::abi::{Abi, Emit, Fetch, StageAbi, TexUnit, Texture};
use super::{Clock, Dest, OpDesc, OperandKind as K, OpClass, Overlap, ProgramEnd, RegFile, RegNaming, Rules, Sem, Sizes, Target};
use crate::ir::{Imm, Inst, PhysReg, Reg, Stage};

const V: K = K::Value;
const ONE: Sizes = Sizes::Uniform;

const fn op(name: &'static str, sem: Sem, operands: &'static [K], dest: Dest, slots: &'static [&'static str], latency: u32) -> OpDesc {
    OpDesc { name, sem, operands, dest, sizes: ONE, slots, latency, sfu: false, header_is_dest: false, machine_only: false, lifetime: None, overlap: Overlap::NoPartial, class: OpClass::Other, unknown_landing: false }
}
const fn sfu(name: &'static str, sem: Sem) -> OpDesc {
    OpDesc { sfu: true, ..op(name, sem, &[V], Dest::Explicit, &["add"], 2) }
}

const ADD: &[&str] = &["add"];
const MUL: &[&str] = &["mul"];
const EITHER: &[&str] = &["add", "mul"];
const SIG: &[&str] = &["sig"];
const AB: &[K] = &[V, V];

/// Cycles from a `tmus` until its lookup's words are readable with `ldtmu`
/// (`hardware.md`: TMU results take about 100 cycles).
pub const TMU_LATENCY: u32 = 100;

static OPS: [OpDesc; 31] = [
    op("fadd", Sem::FAdd, AB, Dest::Explicit, ADD, 1),
    op("fsub", Sem::FSub, AB, Dest::Explicit, ADD, 1),
    op("fmin", Sem::FMin, AB, Dest::Explicit, ADD, 1),
    op("fmax", Sem::FMax, AB, Dest::Explicit, ADD, 1),
    op("add", Sem::Add, AB, Dest::Explicit, EITHER, 1),
    op("sub", Sem::Sub, AB, Dest::Explicit, EITHER, 1),
    op("and", Sem::And, AB, Dest::Explicit, ADD, 1),
    op("or", Sem::Or, AB, Dest::Explicit, ADD, 1),
    op("xor", Sem::Xor, AB, Dest::Explicit, ADD, 1),
    op("shl", Sem::Shl, AB, Dest::Explicit, ADD, 1),
    op("shr", Sem::Shr, AB, Dest::Explicit, ADD, 1),
    op("fmul", Sem::FMul, AB, Dest::Explicit, MUL, 1),
    op("umul24", Sem::UMul24, AB, Dest::Explicit, MUL, 1),
    op("mov", Sem::Mov, &[V], Dest::Explicit, EITHER, 1),
    op("fmov", Sem::Mov, &[V], Dest::Explicit, EITHER, 1),
    sfu("recip", Sem::Recip),
    sfu("rsqrt", Sem::Rsqrt),
    sfu("exp2", Sem::Exp2),
    sfu("log2", Sem::Log2),
    op("tlbw", Sem::Output("tlb", false), &[V], Dest::None, EITHER, 0),
    op("ldunif", Sem::Uniform, &[K::Index], Dest::Implicit(0), SIG, 1),
    op("ldconst", Sem::Const, &[K::Index], Dest::Implicit(0), SIG, 1),
    op("ldunifrf", Sem::Uniform, &[K::Index], Dest::Explicit, SIG, 1),
    op("ldvary", Sem::Varying, &[K::Index], Dest::Implicit(0), SIG, 2),
    OpDesc { machine_only: true, ..op("thrsw", Sem::ThreadSwitch, &[], Dest::None, SIG, 0) },
    OpDesc { overlap: Overlap::Any, ..op("scratchw", Sem::ScratchWrite, &[K::Index, K::Reg], Dest::None, ADD, 0) },
    OpDesc { overlap: Overlap::Any, ..op("scratchr", Sem::ScratchRead, &[K::Index], Dest::Explicit, ADD, 4) },
    op("tmut", Sem::TexCoord, &[V], Dest::None, EITHER, 0),
    op("tmus", Sem::TexLookup, &[V], Dest::None, EITHER, TMU_LATENCY),
    op("ldtmu", Sem::TexResult, &[], Dest::Explicit, SIG, 1),
    op("setmsf.ifnz", Sem::Discard, &[V], Dest::None, ADD, 0),
];

/// The V3D 7.1 description.
pub static V3D71: Target = Target {
    name: "v3d71",
    summary: "Broadcom V3D 7.1 (Raspberry Pi 5): add/mul/sig slots, rf0-rf63, non-interlocked, thrsw + 2 delay slots",
    regs: RegFile { naming: RegNaming::Numbered("rf"), count: 64 },
    clock: Clock::Padded,
    waits: None,
    slots: &["add", "mul", "sig"],
    default_stage: Stage::Fragment,
    ops: &OPS,
    op_index: super::OpIndex::new(),
    network: None,
    max_alu_size: 1,
    max_value_size: 1,
    reserved: &[],
    implicit_regs: &[0],
    payload: &[(Stage::Fragment, &[1, 2, 3]), (Stage::Compute, &[2, 3])],
    inputs: &[PhysReg::one(1), PhysReg::one(2), PhysReg::one(3)],
    end: ProgramEnd::Marker { marker: "thrsw", delay_slots: 2, untouchable: END_UNTOUCHABLE },
    rules: &V3d71Rules,
    abi: Some(&ABI),
};

/// The shader ABI: uniforms from the uniform stream (`ldunif N`),
/// attributes and varyings through `ldvary N` (the corpus's vertex shaders
/// read attributes the same way), every output component through `tlbw` in
/// order; a texture sample writes T with `tmut`, S with `tmus` and reads
/// the texel with four `ldtmu`.
pub static ABI: Abi = Abi {
    vertex: Some(STAGE),
    fragment: Some(STAGE),
    texture: Some(Texture::Unit(TexUnit { coord: "tmut", lookup: "tmus", result: "ldtmu" })),
};
const STAGE: StageAbi = StageAbi {
    uniform: Fetch::Op("ldunif"),
    input: Fetch::Op("ldvary"),
    first_reg: 0,
    last_reg: 0,
    align: 1,
    uniforms_first: true,
    output: Emit::PerScalar("tlbw"),
};

/// The registers the thread-end delay slots may not touch: the fragment
/// payload rf2-rf3 (`hardware.md`).
const END_UNTOUCHABLE: &[Reg] = &[2, 3];

/// The rules of V3D 7.1 that do not fit the tables.
pub struct V3d71Rules;

/// Whether `bits` is a V3D small immediate: an integer in -16..=15, or a
/// float ±2^k for k in -8..=7, or 0.0.
pub fn small_imm(bits: u32) -> bool {
    let i = bits as i32;
    if (-16..=15).contains(&i) {
        return true;
    }
    let f = f32::from_bits(bits);
    (-8..=7).any(|k| f.abs() == 2f32.powi(k)) || f == 0.0
}

impl Rules for V3d71Rules {
    fn imm_ok(&self, _op: &OpDesc, _index: usize, imm: Imm) -> bool {
        small_imm(imm.bits)
    }
    fn max_bundle_imms(&self) -> usize {
        1
    }
    fn allocatable(&self, _stage: Stage) -> Vec<Reg> {
        // Mesa's RA starts at rf4 and keeps rf0 for implicit writes; the
        // payload registers come last so that they stay free near the end.
        (4..64).chain(1..4).collect()
    }
    fn slot_ok(&self, _op: &OpDesc, _slot: &str, _dest: Option<PhysReg>) -> Result<(), String> {
        Ok(())
    }
    fn bundle_ok(&self, _ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        Ok(())
    }
    fn op_regs_ok(&self, _op: &OpDesc, _inst: &Inst) -> Result<(), String> {
        Ok(())
    }
    fn end_slot_ok(&self, op: &OpDesc, inst: &Inst, slot_index: Option<usize>) -> Result<(), String> {
        let writes_reg = matches!(op.dest, Dest::Explicit) && inst.dest.is_some();
        let Some(k) = slot_index else {
            if writes_reg && op.slots.iter().any(|s| *s == "add" || *s == "mul") {
                return Err(format!("`{}` writes the register file in the thread-end bundle", op.name));
            }
            return Ok(());
        };
        if op.sfu {
            return Err(format!("SFU op `{}` in thread-end delay slot {}", op.name, k + 1));
        }
        if matches!(op.sem, Sem::ScratchRead | Sem::ScratchWrite | Sem::TexCoord | Sem::TexLookup | Sem::TexResult) {
            return Err(format!("TMU access `{}` in thread-end delay slot {}", op.name, k + 1));
        }
        if matches!(op.sem, Sem::Output(..) | Sem::Discard) {
            // hardware.md: no TMU/TLB access in the thread-end delay slots;
            // the sample mask a discard clears gates the TLB writes, so it
            // counts as one.
            return Err(format!("TLB access `{}` in thread-end delay slot {}", op.name, k + 1));
        }
        if k == 1 && op.sem == Sem::Varying {
            return Err("`ldvary` in the second thread-end delay slot".to_string());
        }
        let touches = inst.dest.iter().chain(inst.srcs.iter()).filter_map(|o| o.phys()).any(|p| p.regs().any(|r| END_UNTOUCHABLE.contains(&r)));
        if touches {
            return Err(format!("`{}` touches rf2/rf3 (fragment payload) in thread-end delay slot {}", op.name, k + 1));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Operand, Span};

    #[test]
    fn a_discard_is_no_thread_end_delay_slot_op() {
        let d = V3D71.op("setmsf.ifnz").expect("setmsf.ifnz");
        assert_eq!(d.sem, Sem::Discard);
        let i = Inst { opcode: "setmsf.ifnz".into(), dest: None, srcs: vec![Operand::Phys(PhysReg::one(4))], span: Span::default() };
        let e = V3d71Rules.end_slot_ok(d, &i, Some(0)).unwrap_err();
        assert!(e.contains("TLB access `setmsf.ifnz`"), "{e}");
        assert!(V3d71Rules.end_slot_ok(d, &i, None).is_ok(), "it writes no register, so it may share the thrsw bundle");
    }
}
