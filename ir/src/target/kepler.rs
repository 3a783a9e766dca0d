//! NVIDIA Kepler GK104: non-interlocked, waits encoded in the machine form,
//! dual issue, 63 registers `r0`–`r62` (`r63` reads as zero and is not a
//! register here). Facts from Mesa's nouveau codegen (`TargetNVC0::
//! getLatency`, `canDualIssue`, the SchedDataCalculator and
//! `insertTextureBarriers`) and envytools (see `shared/research/kepler.md`).
//!
//! - Slots `i0`, `i1`: a bundle is one instruction, or two issued together
//!   (Mesa's sched byte 0x04 on the first). `tex` and `texbar` issue only
//!   in `i0`, so they never pair.
//! - Each bundle may end with `wait N` (0..=31, [`MAX_WAIT`]): the next bundle
//!   issues N + 1 cycles later (the sched byte's stall count).
//! - `tex.2d` (an extension): the 2D sample of a texture at the coordinate
//!   pair `$rN:2`, four result registers `$rM:4`, landing like `tex`; only
//!   on physical registers (values are one register), so the front end's
//!   texture path ([`ABI`]) is its one source.
//! - Latencies (`getLatency` for chipsets >= 0xe4): 9 by default, 15 for
//!   `imul` and `ipa`, 24 for `ld.attr` and local loads, 9 for `ld.const`;
//!   `tex` lands at a time the program cannot know, 17 to 417 cycles after
//!   issue, and only a `texbar` makes its result safe to read or overwrite.
//! - Two SFU ops issue at least 4 cycles apart (the SchedDataCalculator's
//!   SFU timer).
//!
//! Extensions beyond the spec's minimum table: `st.local N, a` and
//! `d = ld.local N` (Kepler's local memory, `l[]`) are the spill path;
//! `mov` takes any 32-bit immediate (Kepler's `MOV32I`), the way source
//! programs and the compiler materialise constants that no ALU immediate
//! can hold.
//!
//! Fragment discard: `kil.nz a` is Kepler's `KIL` predicated on `a != 0`
//! (Mesa's `OP_DISCARD`, class `OPCLASS_FLOW`): the fragment is killed when
//! `a` is non-zero. As a flow op it is never the first of a dual-issued
//! pair ("not if the 2nd instruction isn't necessarily executed").

use super::abi::{Abi, Emit, Fetch, StageAbi, TexAbi, Texture};
use super::{Clock, Dest, OpClass, OpDesc, OperandKind as K, Overlap, ProgramEnd, RegFile, RegNaming, Rules, Sem, Sizes, Target, WaitClock};
use crate::ir::{Imm, Inst, Operand, PhysReg, Reg, Stage};

const V: K = K::Value;
const R: K = K::Reg;
const EITHER: &[&str] = &["i0", "i1"];
const FIRST: &[&str] = &["i0"];

/// The largest encoded wait: `wait` 0..=31 (the sched byte's 5-bit stall).
pub const MAX_WAIT: u8 = 31;

/// Kepler's wait timing beyond [`Clock::EncodedWaits`]: texture results
/// landing 17..=417 cycles after issue (Mesa's texture latency 17, plus a
/// window of 400 the program cannot know), and SFU ops 4 cycles apart.
pub static CLOCK: WaitClock = WaitClock { landing: (17, 417), sfu_spacing: 4 };

const fn op(name: &'static str, sem: Sem, operands: &'static [K], class: OpClass, latency: u32) -> OpDesc {
    OpDesc {
        name,
        sem,
        operands,
        dest: Dest::Explicit,
        sizes: Sizes::Uniform,
        slots: EITHER,
        latency,
        sfu: false,
        header_is_dest: false,
        machine_only: false,
        lifetime: None,
        overlap: Overlap::NoPartial,
        class,
        unknown_landing: false,
    }
}
const fn sfu(name: &'static str, sem: Sem) -> OpDesc {
    OpDesc { sfu: true, ..op(name, sem, &[R], OpClass::Sfu, 9) }
}
const fn store(name: &'static str, sem: Sem) -> OpDesc {
    OpDesc { dest: Dest::None, latency: 0, ..op(name, sem, &[K::Index, R], OpClass::Store, 0) }
}

const AB: &[K] = &[V, V];

static OPS: [OpDesc; 29] = [
    op("fadd", Sem::FAdd, AB, OpClass::Arith, 9),
    op("fmul", Sem::FMul, AB, OpClass::Arith, 9),
    op("ffma", Sem::FMad, &[V, V, V], OpClass::Arith, 9),
    op("fmin", Sem::FMin, AB, OpClass::MinMax, 9),
    op("fmax", Sem::FMax, AB, OpClass::MinMax, 9),
    op("iadd", Sem::Add, AB, OpClass::Arith, 9),
    op("and", Sem::And, AB, OpClass::Logic, 9),
    op("or", Sem::Or, AB, OpClass::Logic, 9),
    op("xor", Sem::Xor, AB, OpClass::Logic, 9),
    op("shl", Sem::Shl, AB, OpClass::Logic, 9),
    op("shr", Sem::Shr, AB, OpClass::Logic, 9),
    op("imul", Sem::Mul, AB, OpClass::IMul, 15),
    op("mov", Sem::Mov, &[V], OpClass::Mov, 9),
    sfu("rcp", Sem::Recip),
    sfu("rsq", Sem::Rsqrt),
    sfu("ex2", Sem::Exp2),
    sfu("lg2", Sem::Log2),
    sfu("sin", Sem::Sin),
    sfu("cos", Sem::Cos),
    op("ld.const", Sem::Uniform, &[K::Index], OpClass::Load, 9),
    op("ld.attr", Sem::Varying, &[K::Index], OpClass::Load, 24),
    op("ipa", Sem::Varying, &[K::Index], OpClass::Interp, 15),
    OpDesc { slots: FIRST, unknown_landing: true, ..op("tex", Sem::Texture, &[R], OpClass::Tex, 17) },
    OpDesc { slots: FIRST, dest: Dest::None, machine_only: true, ..op("texbar", Sem::TexBarrier, &[K::Index], OpClass::TexBar, 0) },
    store("st.out", Sem::Output("out", true)),
    OpDesc { overlap: Overlap::Any, ..store("st.local", Sem::ScratchWrite) },
    OpDesc { overlap: Overlap::Any, ..op("ld.local", Sem::ScratchRead, &[K::Index], OpClass::Load, 24) },
    OpDesc { sizes: Sizes::Fixed { dest: 4, src: 2 }, slots: FIRST, unknown_landing: true, ..op("tex.2d", Sem::Texture, &[R], OpClass::Tex, 17) },
    OpDesc { dest: Dest::None, latency: 0, ..op("kil.nz", Sem::Discard, &[R], OpClass::Flow, 0) },
];

/// The Kepler GK104 description.
pub static KEPLER: Target = Target {
    network: None,
    name: "kepler",
    summary: "NVIDIA Kepler GK104: i0/i1 dual issue, r0-r62, non-interlocked with encoded waits (wait 0-31), tex landing 17-417 cycles after issue, texbar",
    regs: RegFile { naming: RegNaming::Numbered("r"), count: 63 },
    clock: Clock::EncodedWaits { max: MAX_WAIT },
    waits: Some(&CLOCK),
    slots: EITHER,
    default_stage: Stage::Fragment,
    ops: &OPS,
    op_index: super::OpIndex::new(),
    max_alu_size: 1,
    max_value_size: 1,
    reserved: &[],
    implicit_regs: &[],
    // Inputs arrive through `ipa` and `ld.attr`, never in registers.
    payload: &[],
    inputs: &[],
    end: ProgramEnd::Plain,
    rules: &KeplerRules,
    abi: Some(&ABI),
};

/// The shader ABI: uniforms through `ld.const N`, vertex attributes through
/// `ld.attr N`, fragment inputs through `ipa N`, every output component one
/// `st.out N, a` (vertex: position is slot 0, location L is slot L + 1;
/// fragment: location L is slot L). A 2D sample is `tex.2d` (Kepler's
/// `TEX` with a coordinate pair and a four-register result): the
/// coordinates moved into `$r60:2`, the result read from `$r56:4` (a
/// 4-aligned quad and an even pair, as the hardware wants them).
pub static ABI: Abi = Abi {
    vertex: Some(StageAbi { input: Fetch::Op("ld.attr"), output: Emit::Indexed { op: "st.out", position: 0, first_location: 1 }, ..FRAGMENT }),
    fragment: Some(FRAGMENT),
    texture: Some(Texture::Send(TexAbi { op: "tex.2d", coord: 60, result: 56 })),
};
const FRAGMENT: StageAbi = StageAbi {
    uniform: Fetch::Op("ld.const"),
    input: Fetch::Op("ipa"),
    first_reg: 0,
    last_reg: 0,
    align: 1,
    uniforms_first: false,
    output: Emit::Indexed { op: "st.out", position: 0, first_location: 0 },
};

/// The rules of Kepler that do not fit the tables.
pub struct KeplerRules;

/// Smallest and largest integer of a 20-bit signed ALU immediate.
pub const IMM20: (i32, i32) = (-524_288, 524_287);

/// Whether `bits` is a Kepler ALU immediate: a 20-bit signed integer, or a
/// float whose low 12 bits are zero (the 20 bits the encoding keeps).
pub fn imm20(bits: u32) -> bool {
    let i = bits as i32;
    (IMM20.0..=IMM20.1).contains(&i) || bits & 0xfff == 0
}

/// The registers an op writes.
fn writes(inst: &Inst) -> Option<PhysReg> {
    inst.dest.as_ref().and_then(Operand::phys)
}

/// Whether `b` may issue in `i1` with `a` in `i0` (Mesa's `canDualIssue`
/// for GK104); `Err` says why not.
pub fn can_dual_issue((da, a): (&OpDesc, &Inst), (db, b): (&OpDesc, &Inst)) -> Result<(), String> {
    let (na, nb) = (da.name, db.name);
    if matches!(da.class, OpClass::Tex | OpClass::TexBar | OpClass::Flow) {
        return Err(format!("no op may dual-issue after `{na}` in i0"));
    }
    if let (Some(wa), Some(wb)) = (writes(a), writes(b)) {
        if wa.overlaps(wb) {
            return Err(format!("`{na}` and `{nb}` write the same register and cannot dual-issue"));
        }
    }
    if let Some(wa) = writes(a) {
        if b.srcs.iter().filter_map(Operand::phys).any(|s| s.overlaps(wa)) {
            return Err(format!("`{nb}` reads what `{na}` writes and cannot dual-issue with it"));
        }
    }
    let wide = |i: &Inst| i.dest.iter().chain(&i.srcs).filter_map(Operand::phys).any(|p| p.size > 1);
    if wide(a) || wide(b) {
        return Err(format!("`{na}` and `{nb}`: an operand wider than 32 bits cannot dual-issue"));
    }
    if matches!(db.class, OpClass::Tex | OpClass::TexBar) {
        return Err(format!("`{nb}` cannot dual-issue"));
    }
    if da.class == OpClass::Mov || db.class == OpClass::Mov {
        return Ok(());
    }
    if da.class == db.class {
        return match da.class {
            OpClass::MinMax => Ok(()),
            OpClass::Arith if da.sem.is_float() || db.sem.is_float() || da.sem == Sem::Add || db.sem == Sem::Add => Ok(()),
            OpClass::Arith => Err(format!("an arith pair needs an F32 op or an integer add (`{na}`, `{nb}`)")),
            _ => Err(format!("two {:?} ops (`{na}`, `{nb}`) cannot dual-issue", da.class)),
        };
    }
    let local = |d: &OpDesc| matches!(d.sem, Sem::ScratchRead | Sem::ScratchWrite);
    if local(da) && local(db) {
        return Err(format!("a load and a store to local memory (`{na}`, `{nb}`) cannot dual-issue"));
    }
    Ok(())
}

impl Rules for KeplerRules {
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
    fn allocatable(&self, _stage: Stage) -> Vec<Reg> {
        (0..63).collect()
    }
    fn slot_ok(&self, _op: &OpDesc, _slot: &str, _dest: Option<PhysReg>) -> Result<(), String> {
        Ok(())
    }
    fn bundle_ok(&self, ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        match ops {
            [] | [_] => Ok(()),
            [a, b] => can_dual_issue(*a, *b),
            _ => Err(format!("{} ops in one bundle; at most two dual-issue", ops.len())),
        }
    }
    fn op_regs_ok(&self, _op: &OpDesc, _inst: &Inst) -> Result<(), String> {
        Ok(())
    }
    fn end_slot_ok(&self, _op: &OpDesc, _inst: &Inst, _slot_index: Option<usize>) -> Result<(), String> {
        Ok(())
    }
    fn edge_imms(&self) -> &'static [u32] {
        // ±2^19 at and past the 20-bit range; 1.0 and its neighbours with
        // the low 12 bits set; the smallest float step the encoding keeps.
        &[524_287, -524_288i32 as u32, 524_288, -524_289i32 as u32, 0x3f80_0000, 0x3f80_0001, 0x3f80_1000, 0x3f7f_f000, 0x3dcc_cccd, 0x0000_1000]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Span;

    fn inst(op: &str, dest: Option<u16>, srcs: &[u16]) -> (&'static OpDesc, Inst) {
        let d = KEPLER.op(op).expect("kepler op");
        let i = Inst { opcode: op.into(), dest: dest.map(|r| Operand::Phys(PhysReg::one(r))), srcs: srcs.iter().map(|&r| Operand::Phys(PhysReg::one(r))).collect(), span: Span::default() };
        (d, i)
    }

    fn pair(a: &(&'static OpDesc, Inst), b: &(&'static OpDesc, Inst)) -> bool {
        can_dual_issue((a.0, &a.1), (b.0, &b.1)).is_ok()
    }

    #[test]
    fn dual_issue_follows_can_dual_issue() {
        let fadd = inst("fadd", Some(1), &[2, 3]);
        let fmul = inst("fmul", Some(4), &[2, 3]);
        let reads1 = inst("fmul", Some(4), &[1, 3]);
        let same = inst("fmul", Some(1), &[2, 3]);
        assert!(pair(&fadd, &fmul));
        assert!(!pair(&fadd, &reads1), "second reads what the first writes");
        assert!(pair(&reads1, &fadd), "a = b, b = c is allowed");
        assert!(!pair(&fadd, &same), "same destination");
        let tex = inst("tex", Some(5), &[6]);
        assert!(!pair(&tex, &fmul), "never after a tex");
        let mov = inst("mov", Some(7), &[8]);
        let shl = inst("shl", Some(9), &[8, 8]);
        let or = inst("or", Some(10), &[8, 8]);
        assert!(pair(&shl, &mov) && pair(&mov, &shl));
        assert!(!pair(&shl, &or), "two logic ops");
        let imul = inst("imul", Some(11), &[8, 8]);
        let imul2 = inst("imul", Some(12), &[8, 8]);
        assert!(!pair(&imul, &imul2));
        let iadd = inst("iadd", Some(13), &[8, 8]);
        assert!(pair(&iadd, &fadd));
        let fmin = inst("fmin", Some(14), &[2, 3]);
        let fmax = inst("fmax", Some(15), &[2, 3]);
        assert!(pair(&fmin, &fmax));
        let rcp = inst("rcp", Some(16), &[2]);
        let rsq = inst("rsq", Some(17), &[2]);
        assert!(!pair(&rcp, &rsq), "two SFU ops");
        assert!(pair(&rcp, &fadd));
        let kil = inst("kil.nz", None, &[2]);
        assert!(!pair(&kil, &fadd), "nothing pairs after a flow op in i0");
        assert!(pair(&fadd, &kil), "a kill may be second");
    }

    #[test]
    fn immediates_are_20_bit() {
        let fadd = KEPLER.op("fadd").expect("fadd");
        let iadd = KEPLER.op("iadd").expect("iadd");
        let r = &KEPLER.rules;
        assert!(r.imm_ok(fadd, 1, Imm::f32(0.5)));
        assert!(!r.imm_ok(fadd, 1, Imm::f32(0.1)));
        assert!(!r.imm_ok(fadd, 0, Imm::f32(0.5)), "only the last source");
        assert!(r.imm_ok(iadd, 1, Imm::int(524_287)) && r.imm_ok(iadd, 1, Imm::int(-524_288)));
        assert!(!r.imm_ok(iadd, 1, Imm::int(524_289)) && !r.imm_ok(iadd, 1, Imm::int(-524_289)));
        let rcp = KEPLER.op("rcp").expect("rcp");
        assert!(!r.imm_ok(rcp, 0, Imm::f32(1.0)));
        let mov = KEPLER.op("mov").expect("mov");
        assert!(r.imm_ok(mov, 0, Imm::f32(0.1)));
    }
}
