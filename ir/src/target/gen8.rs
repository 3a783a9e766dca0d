//! Intel Broadwell (Gen8) fragment shader EU: interlocked, single issue,
//! 128 GRFs `g0`–`g127` with `g0`–`g1` the reserved thread payload. Values
//! span 1–4 registers (a SIMD16 float is `:2`). Latencies from the Gen7
//! scheduler table in Mesa's `intel/compiler`; register rules from
//! `brw_eu_validate.c` (r127 on overlapping sends, EOT payload in g112–g127).
//!
//! Fragment discard: `halt.nz a` stands for brw's `discard_if`, a
//! `cmp.nz.f0.1 null, a, 0` and the `(+f0.1) halt` that drops the channels
//! whose word of `a` is non-zero from the mask the end-of-thread
//! framebuffer write uses; `a` is a register value of one or two registers
//! (SIMD8/SIMD16), no result.

use super::abi::{Abi, Emit, Fetch, StageAbi, TexAbi, Texture};
use super::{Clock, Dest, OpDesc, OperandKind as K, OpClass, Overlap, ProgramEnd, RegFile, RegNaming, Rules, Sem, Sizes, Target};
use crate::ir::{Imm, Inst, Operand, PhysReg, Reg, Stage};

const V: K = K::Value;
const R: K = K::Reg;
const ALU: &[&str] = &["alu"];

const fn op(name: &'static str, sem: Sem, operands: &'static [K], latency: u32) -> OpDesc {
    OpDesc { name, sem, operands, dest: Dest::Explicit, sizes: Sizes::Uniform, slots: ALU, latency, sfu: false, header_is_dest: false, machine_only: false, lifetime: None, overlap: Overlap::NoPartial, class: OpClass::Other, unknown_landing: false }
}
/// A message send: its payload may overlap its destination in any way.
const fn send(name: &'static str, sem: Sem, operands: &'static [K], latency: u32) -> OpDesc {
    OpDesc { overlap: Overlap::Any, ..op(name, sem, operands, latency) }
}
const fn math(name: &'static str, sem: Sem) -> OpDesc {
    OpDesc { sfu: true, ..op(name, sem, &[R], 22) }
}

static OPS: [OpDesc; 18] = [
    op("add", Sem::FAdd, &[V, V], 14),
    op("mul", Sem::FMul, &[V, V], 14),
    op("min", Sem::FMin, &[V, V], 14),
    op("max", Sem::FMax, &[V, V], 14),
    op("and", Sem::And, &[V, V], 14),
    op("or", Sem::Or, &[V, V], 14),
    op("xor", Sem::Xor, &[V, V], 14),
    op("mov", Sem::Mov, &[V], 14),
    op("mad", Sem::FMad, &[R, R, R], 16),
    math("math.rcp", Sem::Recip),
    math("math.rsq", Sem::Rsqrt),
    math("math.exp", Sem::Exp2),
    math("math.log", Sem::Log2),
    OpDesc { sizes: Sizes::Fixed { dest: 4, src: 2 }, ..send("send.tex", Sem::Texture, &[R], 200) },
    OpDesc { sizes: Sizes::Any, header_is_dest: true, ..send("send.scratch_read", Sem::ScratchRead, &[K::Index], 50) },
    OpDesc { sizes: Sizes::Any, dest: Dest::None, ..send("send.scratch_write", Sem::ScratchWrite, &[K::Index, R], 0) },
    OpDesc { sizes: Sizes::Any, dest: Dest::None, ..send("send.eot", Sem::Output("rt", false), &[R], 0) },
    OpDesc { dest: Dest::None, ..op("halt.nz", Sem::Discard, &[R], 0) },
];

/// The Broadwell description.
pub static GEN8: Target = Target {
    name: "gen8",
    summary: "Intel Broadwell fragment EU: one alu slot, g0-g127 (g0-g1 reserved), interlocked, multi-register values, r127 and EOT rules",
    regs: RegFile { naming: RegNaming::Numbered("g"), count: 128 },
    clock: Clock::Interlocked,
    waits: None,
    slots: ALU,
    default_stage: Stage::Fragment,
    ops: &OPS,
    op_index: super::OpIndex::new(),
    network: None,
    max_alu_size: 2,
    max_value_size: 4,
    reserved: &[0, 1],
    implicit_regs: &[],
    payload: &[(Stage::Fragment, &[0, 1]), (Stage::Vertex, &[0, 1]), (Stage::Compute, &[0, 1])],
    // Payload g0-g1, then SIMD16 attributes in g2.. (as in the examples).
    inputs: &[PhysReg::one(0), PhysReg::one(1), PhysReg { base: 2, size: 2 }, PhysReg { base: 4, size: 2 }, PhysReg::one(6)],
    end: ProgramEnd::LastOp("send.eot"),
    rules: &Gen8Rules,
    abi: Some(&ABI),
};

/// First register of the end-of-thread payload range.
pub const EOT_FIRST: Reg = 112;
/// The register that an overlapping send may not return into.
pub const R127: Reg = 127;

/// The shader ABI (fragment only): push constants and then varyings arrive
/// one component per register from g2 up to g103; a texture sample takes its
/// (u, v) in g104-g105 and returns four components in g106-g109; the colour
/// outputs go out as one `send.eot` of g112 onwards.
pub static ABI: Abi = Abi {
    vertex: None,
    fragment: Some(StageAbi {
        uniform: Fetch::Registers,
        input: Fetch::Registers,
        first_reg: 2,
        last_reg: 103,
        align: 1,
        uniforms_first: true,
        output: Emit::Payload { op: "send.eot", first: EOT_FIRST, max: 16 },
    }),
    texture: Some(Texture::Send(TexAbi { op: "send.tex", coord: 104, result: 106 })),
};

/// The rules of Broadwell that do not fit the tables.
pub struct Gen8Rules;

fn reg_operands(inst: &Inst) -> impl Iterator<Item = PhysReg> + '_ {
    inst.srcs.iter().filter_map(Operand::phys)
}

impl Rules for Gen8Rules {
    fn imm_ok(&self, op: &OpDesc, index: usize, _imm: Imm) -> bool {
        // The EU takes an immediate only as the last source.
        index + 1 == op.operands.len()
    }
    fn max_bundle_imms(&self) -> usize {
        1
    }
    fn allocatable(&self, _stage: Stage) -> Vec<Reg> {
        (2..128).collect()
    }
    fn slot_ok(&self, _op: &OpDesc, _slot: &str, _dest: Option<PhysReg>) -> Result<(), String> {
        Ok(())
    }
    fn bundle_ok(&self, _ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        Ok(())
    }
    fn op_regs_ok(&self, op: &OpDesc, inst: &Inst) -> Result<(), String> {
        let dest = inst.dest.as_ref().and_then(Operand::phys);
        if op.name.starts_with("send.") {
            if let Some(d) = dest {
                let overlap = op.header_is_dest || reg_operands(inst).any(|s| s.overlaps(d));
                if overlap && d.regs().any(|r| r == R127) {
                    return Err(format!("`{}` returns into g127 while its source and destination overlap (r127 must not be used for return address)", op.name));
                }
            }
        }
        if op.sem == Sem::Output("rt", false) {
            if let Some(p) = reg_operands(inst).find(|p| p.base < EOT_FIRST) {
                return Err(format!("end-of-thread payload g{} is outside g112-g127", p.base));
            }
        }
        if let (Some(d), Overlap::NoPartial) = (dest, op.overlap) {
            if d.size > 1 && reg_operands(inst).any(|s| s.overlaps(d) && s != d) {
                return Err(format!("`{}` destination g{}:{} partly overlaps a source", op.name, d.base, d.size));
            }
        }
        Ok(())
    }
    fn end_slot_ok(&self, _op: &OpDesc, _inst: &Inst, _slot_index: Option<usize>) -> Result<(), String> {
        Ok(())
    }
}
