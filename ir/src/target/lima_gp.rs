//! ARM Mali-400 geometry processor (lima gpir): vertex shaders only, no
//! register file for ALU results. Each instruction issues up to six ALU ops
//! (`mul0 mul1 add0 add1 complex pass`), loads in three vector units
//! (`reg0`: attributes or registers, `reg1`: registers, `uni`: uniforms and
//! constants; one index per unit per instruction, a component per sub-slot
//! `reg0.x`…) and stores in two (`st.x`/`st.y`, `st.z`/`st.w`; one kind and
//! one index each). ALU results are read through the bypass network
//! ([`super::network`]) as `^unit.distance`; the 64 register components
//! `r0.x`…`r15.w` are reached only by `ld_reg` and `st_reg`, a store seen by
//! loads 3 instructions later. Facts from Mesa's gpir
//! (`shared/research/lima-gp.md`).
//!
//! Complex functions (`rcp rsqrt exp2 log2`) are source-form ops that the
//! compiler lowers (the parts of the sequences are machine-form ops) to `complex1(impl(x), complex2(x), x)`, exp2 reading
//! `preexp2 x` and log2 ending with `postlog2`. The model of those parts
//! (the real split of the work is not public) is in [`complex`]: `complex1`
//! yields the function of x only when its first two operands were made from
//! its third by the matching `impl` and by `complex2`.
//!
//! Machine form: `{ reg0.x: ld_att 0 ; uni.y: ld_uni 1 ; add0: add
//! ^reg0.x.0, ^uni.y.0 ; st.x: st_var 0, ^add0.0 }`.

use super::abi::{Abi, Emit, Fetch, StageAbi};
use super::network::{ForbiddenRead, Network, ReadWindow, Sequence, Unit, UnitKind};
use super::{Clock, Cx, Dest, OpClass, OpDesc, OperandKind as K, Overlap, ProgramEnd, RegFile, RegNaming, Rules, Sem, Sizes, Target};
use crate::ir::{Imm, Inst, Operand, PhysReg, Reg, Stage};

const V: K = K::Value;
/// A lima-gp op: its read windows are the network's (per unit, see
/// [`NETWORK`]), so `lifetime` stays `None`.
const fn op(name: &'static str, sem: Sem, operands: &'static [K], slots: &'static [&'static str]) -> OpDesc {
    OpDesc { name, sem, operands, dest: Dest::Unit, sizes: Sizes::Uniform, slots, latency: 1, lifetime: None, overlap: Overlap::NoPartial, sfu: false, header_is_dest: false, machine_only: false, class: OpClass::Other, unknown_landing: false }
}
const fn machine(o: OpDesc) -> OpDesc {
    OpDesc { machine_only: true, ..o }
}

const ADD: &[&str] = &["add0", "add1"];
const MUL: &[&str] = &["mul1", "mul0"];
const MUL0: &[&str] = &["mul0"];
const COMPLEX: &[&str] = &["complex"];
const PASS: &[&str] = &["pass"];
const MOV: &[&str] = &["add0", "mul1", "add1", "mul0", "pass", "complex"];
const NEG: &[&str] = &["add0", "mul1", "add1", "mul0"];
/// The attribute-or-register load unit's sub-slots.
pub const REG0: &[&str] = &["reg0.x", "reg0.y", "reg0.z", "reg0.w"];
const REG01: &[&str] = &["reg1.x", "reg1.y", "reg1.z", "reg1.w", "reg0.x", "reg0.y", "reg0.z", "reg0.w"];
/// The uniform load unit's sub-slots.
pub const UNI: &[&str] = &["uni.x", "uni.y", "uni.z", "uni.w"];
/// The store sub-slots (x,y in one unit, z,w in the other).
pub const ST: &[&str] = &["st.x", "st.y", "st.z", "st.w"];
/// No slot: a source-form op the compiler lowers.
const LOWERED: &[&str] = &[];

static OPS: [OpDesc; 28] = [
    op("add", Sem::FAdd, &[V, V], ADD),
    op("mul", Sem::FMul, &[V, V], MUL),
    op("min", Sem::FMin, &[V, V], ADD),
    op("max", Sem::FMax, &[V, V], ADD),
    op("floor", Sem::Floor, &[V], ADD),
    op("sign", Sem::Sign, &[V], ADD),
    op("ge", Sem::Ge, &[V, V], ADD),
    op("lt", Sem::Lt, &[V, V], ADD),
    op("select", Sem::Select, &[V, V, V], MUL0),
    op("mov", Sem::Mov, &[V], MOV),
    op("neg", Sem::Neg, &[V], NEG),
    op("rcp", Sem::Recip, &[V], LOWERED),
    op("rsqrt", Sem::Rsqrt, &[V], LOWERED),
    op("exp2", Sem::Exp2, &[V], LOWERED),
    op("log2", Sem::Log2, &[V], LOWERED),
    machine(op("complex1", Sem::Complex1, &[V, V, V], MUL0)),
    machine(op("complex2", Sem::Complex2, &[V], MUL0)),
    machine(op("rcp_impl", Sem::ComplexImpl(Cx::Rcp), &[V], COMPLEX)),
    machine(op("rsqrt_impl", Sem::ComplexImpl(Cx::Rsqrt), &[V], COMPLEX)),
    machine(op("exp2_impl", Sem::ComplexImpl(Cx::Exp2), &[V], COMPLEX)),
    machine(op("log2_impl", Sem::ComplexImpl(Cx::Log2), &[V], COMPLEX)),
    machine(op("preexp2", Sem::PreExp2, &[V], PASS)),
    machine(op("postlog2", Sem::PostLog2, &[V], PASS)),
    op("ld_att", Sem::Varying, &[K::Index], REG0),
    op("ld_uni", Sem::Uniform, &[K::Index], UNI),
    op("ld_const", Sem::Const, &[K::Index], UNI),
    machine(op("ld_reg", Sem::Mov, &[K::Reg], REG01)),
    OpDesc { dest: Dest::None, latency: 0, ..op("st_var", Sem::Output("var", true), &[K::Index, V], ST) },
];

/// `st_reg $rK.c, ^unit.0`: the register store (machine form only; the
/// source form writes `$rK.c = mov %v`).
static ST_REG: OpDesc = OpDesc { dest: Dest::Explicit, latency: 3, ..machine(op("st_reg", Sem::Mov, &[V], ST)) };

/// The whole opcode table, `st_reg` last.
static ALL_OPS: [OpDesc; 29] = {
    let mut all = [ST_REG; 29];
    let mut i = 0;
    while i < OPS.len() {
        all[i] = OPS[i];
        i += 1;
    }
    all
};

const ALU12: ReadWindow = ReadWindow { min: 1, max: 2 };
const fn alu(name: &'static str, window: ReadWindow) -> Unit {
    Unit { name, kind: UnitKind::Alu, window, group: name, component: 0 }
}
const fn sub(name: &'static str, kind: UnitKind, max: u32, group: &'static str, component: u8) -> Unit {
    Unit { name, kind, window: ReadWindow { min: 0, max }, group, component }
}

static UNITS: [Unit; 22] = [
    alu("mul0", ALU12),
    alu("mul1", ALU12),
    alu("add0", ALU12),
    alu("add1", ALU12),
    alu("complex", ReadWindow { min: 1, max: 1 }),
    alu("pass", ALU12),
    sub("reg0.x", UnitKind::Load, 1, "reg0", 0),
    sub("reg0.y", UnitKind::Load, 1, "reg0", 1),
    sub("reg0.z", UnitKind::Load, 1, "reg0", 2),
    sub("reg0.w", UnitKind::Load, 1, "reg0", 3),
    sub("reg1.x", UnitKind::Load, 0, "reg1", 0),
    sub("reg1.y", UnitKind::Load, 0, "reg1", 1),
    sub("reg1.z", UnitKind::Load, 0, "reg1", 2),
    sub("reg1.w", UnitKind::Load, 0, "reg1", 3),
    sub("uni.x", UnitKind::Load, 0, "uni", 0),
    sub("uni.y", UnitKind::Load, 0, "uni", 1),
    sub("uni.z", UnitKind::Load, 0, "uni", 2),
    sub("uni.w", UnitKind::Load, 0, "uni", 3),
    sub("st.x", UnitKind::Store, 0, "st.xy", 0),
    sub("st.y", UnitKind::Store, 0, "st.xy", 1),
    sub("st.z", UnitKind::Store, 0, "st.zw", 2),
    sub("st.w", UnitKind::Store, 0, "st.zw", 3),
];

const SECOND: &str = "the second source of an add or mul unit reads 0 or 1 where it names the complex unit";
static FORBIDDEN: [ForbiddenRead; 5] = [
    ForbiddenRead { unit: "complex", op: None, in_units: &["add0", "add1", "mul0", "mul1"], operand: 1, why: SECOND },
    ForbiddenRead { unit: "complex", op: Some("complex2"), in_units: &[], operand: 0, why: "complex2 duplicates its source into both mul0 sources" },
    ForbiddenRead { unit: "complex", op: Some("complex1"), in_units: &[], operand: 1, why: "complex1's second source is mul0's second source" },
    ForbiddenRead { unit: "complex", op: Some("complex1"), in_units: &[], operand: 2, why: "complex1's third source is mul1's second source" },
    ForbiddenRead { unit: "complex", op: Some("select"), in_units: &[], operand: 0, why: "select's condition is mul1's second source" },
];

const fn seq(source: &'static str, pre: Option<&'static str>, imp: &'static str, post: Option<&'static str>) -> Sequence {
    Sequence { source, pre, imp, second: "complex2", join: "complex1", post }
}
static SEQUENCES: [Sequence; 4] = [
    seq("rcp", None, "rcp_impl", None),
    seq("rsqrt", None, "rsqrt_impl", None),
    seq("exp2", Some("preexp2"), "exp2_impl", None),
    seq("log2", None, "log2_impl", Some("postlog2")),
];

/// The lima-gp bypass network.
pub static NETWORK: Network = Network {
    units: &UNITS,
    op_windows: &[("complex1", ReadWindow { min: 2, max: 2 })],
    unstorable: &["complex1"],
    forbidden_reads: &FORBIDDEN,
    sequences: &SEQUENCES,
    schedule_first: &["rcp_impl", "rsqrt_impl", "exp2_impl", "log2_impl", "complex2", "preexp2"],
    store_load_latency: 3,
    max_instructions: 512,
    value_regs: 11,
    mov: "mov",
    ld_reg: "ld_reg",
    st_reg: "st_reg",
};

/// The channel names of a register, in component order.
pub const CHANNELS: &[&str] = &["x", "y", "z", "w"];

/// The Mali-400 GP description.
pub static LIMA_GP: Target = Target {
    waits: None,
    name: "lima-gp",
    summary: "ARM Mali-400 GP (lima gpir): mul0/mul1/add0/add1/complex/pass + reg0/reg1/uni loads + 2 store units, bypass network, r0.x-r15.w, 512 instructions, vertex only",
    regs: RegFile { naming: RegNaming::Channels("r", CHANNELS), count: 64 },
    clock: Clock::Padded,
    slots: &[
        "mul0", "mul1", "add0", "add1", "complex", "pass", "reg0.x", "reg0.y", "reg0.z", "reg0.w", "reg1.x", "reg1.y", "reg1.z", "reg1.w", "uni.x", "uni.y",
        "uni.z", "uni.w", "st.x", "st.y", "st.z", "st.w",
    ],
    default_stage: Stage::Vertex,
    ops: &ALL_OPS,
    op_index: super::OpIndex::new(),
    network: Some(&NETWORK),
    max_alu_size: 1,
    max_value_size: 1,
    reserved: &[],
    implicit_regs: &[],
    payload: &[],
    inputs: &[],
    end: ProgramEnd::Plain,
    rules: &LimaRules,
    abi: Some(&ABI),
};

/// The shader ABI (vertex only): uniforms through `ld_uni N`, attributes
/// through `ld_att N`, every output component one `st_var N, a`: the
/// position's components in slots 0-3, component k of location L in slot
/// 4 + 4 L + k. The GP has no ALU immediates; the front end loads constants
/// with the table's `Sem::Const` op (`ld_const`). No texture unit.
pub static ABI: Abi = Abi {
    vertex: Some(StageAbi {
        uniform: Fetch::Op("ld_uni"),
        input: Fetch::Op("ld_att"),
        first_reg: 0,
        last_reg: 0,
        align: 1,
        uniforms_first: false,
        output: Emit::Components { op: "st_var", position: 0, first_location: 4 },
    }),
    fragment: None,
    texture: None,
};

/// The rules of lima-gp that do not fit the tables: shared opcodes, ops
/// that take both mul units, one index and kind per load and store unit,
/// and each load or store in the sub-slot of its component.
pub struct LimaRules;

/// The opcode field an op sets in the add units (`acc_op`) or the mul units
/// (`mul_op`): two ops may share the add (or mul) units of one instruction
/// only when they set the same field. `mov` and `neg` are encoded as `add`
/// on the add units and as `mul` on the mul units (an identity second
/// source).
pub const SHARED_OPCODES: &[(&str, &str)] = &[("mov", "="), ("neg", "=")];

/// Ops that occupy both mul units.
pub const BOTH_MUL_UNITS: &[&str] = &["complex1", "select"];

/// The opcode field of `op` in a shared group (`=` means "the group's
/// plain op": `add` or `mul`).
fn field<'a>(op: &'a str, plain: &'a str) -> &'a str {
    match SHARED_OPCODES.iter().find(|(o, _)| *o == op) {
        Some(_) => plain,
        None => op,
    }
}

/// The component and vector index a load or store addresses, and its kind
/// (`att`, `reg`, `uni`, `const`, `var`).
fn address(d: &OpDesc, inst: &Inst) -> Option<(u32, u32, &'static str)> {
    let kind = match d.sem {
        Sem::Varying => "att",
        Sem::Uniform => "uni",
        Sem::Const => return Some((u32::MAX, 0, "const")),
        Sem::Output(..) => "var",
        Sem::Mov if d.operands == [K::Reg] => {
            let r = inst.srcs.first().and_then(Operand::phys)?;
            return Some((u32::from(r.base) % 4, u32::from(r.base) / 4, "reg"));
        }
        Sem::Mov => {
            let r = inst.dest.as_ref().and_then(Operand::phys)?;
            return Some((u32::from(r.base) % 4, u32::from(r.base) / 4, "reg"));
        }
        _ => return None,
    };
    let n = inst.srcs.first().and_then(Operand::imm)?.bits;
    Some((n % 4, n / 4, kind))
}

impl LimaRules {
    fn shared_ok(&self, ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
        for (units, plain) in [(["add0", "add1"], "add"), (["mul0", "mul1"], "mul")] {
            let f: Vec<&str> = ops.iter().filter(|(_, _, s)| units.contains(s)).map(|(d, _, _)| field(d.name, plain)).collect();
            if let [a, b] = f.as_slice() {
                if a != b {
                    return Err(format!("the {plain} units share one opcode per instruction, but hold `{a}` and `{b}`"));
                }
            }
        }
        if let Some((d, _, _)) = ops.iter().find(|(d, _, s)| *s == "mul0" && BOTH_MUL_UNITS.contains(&d.name)) {
            if ops.iter().any(|(_, _, s)| *s == "mul1") {
                return Err(format!("`{}` takes both mul units, but mul1 holds another op", d.name));
            }
        }
        Ok(())
    }

    fn units_ok(&self, ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
        let mut groups: Vec<(&str, u32, &str)> = Vec::new();
        for (d, inst, slot) in ops {
            let Some(unit) = NETWORK.unit(slot).filter(|u| u.kind != UnitKind::Alu) else { continue };
            let Some((comp, index, kind)) = address(d, inst) else { continue };
            if kind != "const" && comp != u32::from(unit.component) {
                return Err(format!("`{}` of component {} sits in sub-slot {}", d.name, CHANNELS.get(comp as usize).unwrap_or(&"?"), slot));
            }
            if unit.group == "reg1" && kind != "reg" {
                return Err(format!("`{}` in {slot}: the reg1 unit loads registers only", d.name));
            }
            match groups.iter().find(|(g, _, _)| *g == unit.group) {
                Some((_, _, k)) if *k != kind => return Err(format!("unit {} holds both {k} and {kind} accesses", unit.group)),
                Some((_, i2, _)) if *i2 != index && kind != "const" => {
                    return Err(format!("unit {} addresses both index {i2} and index {index} (one index per unit)", unit.group));
                }
                Some(_) => {}
                None => groups.push((unit.group, index, kind)),
            }
        }
        Ok(())
    }
}

impl Rules for LimaRules {
    fn imm_ok(&self, _op: &OpDesc, _index: usize, _imm: Imm) -> bool {
        false // the GP has no ALU immediates: constants come from the uniform stream
    }
    fn max_bundle_imms(&self) -> usize {
        0
    }
    fn allocatable(&self, _stage: Stage) -> Vec<Reg> {
        (0..64).collect()
    }
    fn slot_ok(&self, _op: &OpDesc, _slot: &str, _dest: Option<PhysReg>) -> Result<(), String> {
        Ok(())
    }
    fn bundle_ok(&self, _ops: &[(&OpDesc, &Inst)]) -> Result<(), String> {
        // These rules need each op's slot: see [`instruction_ok`].
        Ok(())
    }
    fn op_regs_ok(&self, _op: &OpDesc, _inst: &Inst) -> Result<(), String> {
        Ok(())
    }
    fn placed_ok(&self, ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
        instruction_ok(ops)
    }
    fn stage_ok(&self, stage: Stage) -> Result<(), String> {
        match stage {
            Stage::Vertex => Ok(()),
            _ => Err(format!("the Mali-400 GP runs vertex shaders only; a {} program is not a lima-gp program", stage.as_str())),
        }
    }
    fn end_slot_ok(&self, _op: &OpDesc, _inst: &Inst, _slot_index: Option<usize>) -> Result<(), String> {
        Ok(())
    }
}

/// Kind `slot`: the rules of one instruction that need each op's slot —
/// shared add and mul opcodes, ops taking both mul units, and one index and
/// kind per load and store unit with each access in its component's
/// sub-slot. `ops` lists (description, op, slot).
pub fn instruction_ok(ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
    LimaRules.shared_ok(ops)?;
    LimaRules.units_ok(ops)
}

/// The model of the complex sequences, on words: `impl` and `complex2`
/// results are tagged hashes of their operand, and `complex1` yields the
/// function only when its first two operands are those tags of its third.
/// `preexp2` and `postlog2` are invertible scrambles, so exp2 without its
/// `preexp2` and log2 without its `postlog2` give other words. Both
/// interpreters use these functions; the verifier has its own term rules
/// for the same model.
pub mod complex {
    use super::Cx;

    fn mix(tag: u32, x: u32) -> u32 {
        let mut h = x ^ tag.wrapping_mul(0x9e37_79b9);
        h = (h ^ (h >> 16)).wrapping_mul(0x85eb_ca6b);
        h = (h ^ (h >> 13)).wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    }
    fn tag(f: Cx) -> u32 {
        match f {
            Cx::Rcp => 1,
            Cx::Rsqrt => 2,
            Cx::Exp2 => 3,
            Cx::Log2 => 4,
        }
    }
    /// `f_impl(x)`.
    pub fn imp(f: Cx, x: u32) -> u32 {
        mix(tag(f), x)
    }
    /// `complex2(x)`.
    pub fn second(x: u32) -> u32 {
        mix(5, x)
    }
    /// `preexp2(x)`: a bijection on words.
    pub fn pre(x: u32) -> u32 {
        x.rotate_left(7) ^ 0x5bd1_e995
    }
    /// The inverse of [`pre`].
    pub fn unpre(p: u32) -> u32 {
        (p ^ 0x5bd1_e995).rotate_right(7)
    }
    /// The word `complex1` leaves for `postlog2`: a bijection of log2(x).
    pub fn log_raw(l: u32) -> u32 {
        l.rotate_left(11) ^ 0x2545_f491
    }
    /// `postlog2(v)`: the inverse of [`log_raw`].
    pub fn post(v: u32) -> u32 {
        (v ^ 0x2545_f491).rotate_right(11)
    }
    /// Which function `complex1 a, b, c` completes: `Some(f)` when `a` is
    /// `f_impl(c)` and `b` is `complex2(c)`.
    pub fn joined(a: u32, b: u32, c: u32) -> Option<Cx> {
        if b != second(c) {
            return None;
        }
        Cx::ALL.into_iter().find(|f| imp(*f, c) == a)
    }
    /// The word of `complex1 a, b, c` when it completes nothing.
    pub fn garbage(a: u32, b: u32, c: u32) -> u32 {
        mix(6, a ^ mix(7, b ^ mix(8, c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_slots_that_exist() {
        for o in LIMA_GP.ops {
            for s in o.slots {
                assert!(LIMA_GP.slots.contains(s), "{} names slot {s}", o.name);
            }
        }
        for u in NETWORK.units {
            assert!(LIMA_GP.slots.contains(&u.name), "unit {}", u.name);
        }
        assert_eq!(NETWORK.units.len(), LIMA_GP.slots.len());
        assert!(LIMA_GP.op("st_reg").is_some_and(|d| d.dest == Dest::Explicit));
    }

    #[test]
    fn windows_follow_the_contract() {
        let w = |u: &str, op: &str| NETWORK.unit(u).map(|u| NETWORK.window(u, op));
        assert_eq!(w("add0", "add"), Some(ReadWindow { min: 1, max: 2 }));
        assert_eq!(w("complex", "rcp_impl"), Some(ReadWindow { min: 1, max: 1 }));
        assert_eq!(w("mul0", "complex1"), Some(ReadWindow { min: 2, max: 2 }));
        assert_eq!(w("uni.x", "ld_uni"), Some(ReadWindow { min: 0, max: 0 }));
        assert_eq!(w("reg0.y", "ld_att"), Some(ReadWindow { min: 0, max: 1 }));
        assert_eq!(w("reg1.y", "ld_reg"), Some(ReadWindow { min: 0, max: 0 }));
        assert!(NETWORK.forbidden("add", "add1", 1, "complex").is_some());
        assert!(NETWORK.forbidden("add", "add1", 0, "complex").is_none());
        assert!(NETWORK.forbidden("complex1", "mul0", 2, "complex").is_some());
    }

    fn inst(op: &str, dest: Option<Operand>, srcs: Vec<Operand>) -> Inst {
        Inst { opcode: op.into(), dest, srcs, span: Default::default() }
    }

    #[test]
    fn shared_opcodes_and_units() {
        let d = |n: &str| LIMA_GP.op(n).unwrap();
        let (a, b) = (inst("add", None, vec![]), inst("min", None, vec![]));
        assert!(instruction_ok(&[(d("add"), &a, "add0"), (d("min"), &b, "add1")]).is_err());
        let m = inst("mov", None, vec![]);
        assert!(instruction_ok(&[(d("add"), &a, "add0"), (d("mov"), &m, "add1")]).is_ok());
        let c1 = inst("complex1", None, vec![]);
        assert!(instruction_ok(&[(d("complex1"), &c1, "mul0"), (d("mov"), &m, "mul1")]).is_err());
        let l0 = inst("ld_att", None, vec![Operand::Imm(Imm::int(4))]);
        let l1 = inst("ld_att", None, vec![Operand::Imm(Imm::int(9))]);
        assert!(instruction_ok(&[(d("ld_att"), &l0, "reg0.x"), (d("ld_att"), &l1, "reg0.y")]).is_err(), "two indices");
        assert!(instruction_ok(&[(d("ld_att"), &l1, "reg0.x")]).is_err(), "component y in x");
        let l2 = inst("ld_att", None, vec![Operand::Imm(Imm::int(5))]);
        assert!(instruction_ok(&[(d("ld_att"), &l0, "reg0.x"), (d("ld_att"), &l2, "reg0.y")]).is_ok());
    }

    #[test]
    fn complex_model_joins_only_matching_parts() {
        let x = 2.0f32.to_bits();
        assert_eq!(complex::joined(complex::imp(Cx::Rcp, x), complex::second(x), x), Some(Cx::Rcp));
        assert_eq!(complex::joined(complex::imp(Cx::Rcp, x), complex::second(x + 1), x), None);
        assert_eq!(complex::unpre(complex::pre(x)), x);
        assert_eq!(complex::post(complex::log_raw(x)), x);
    }
}
