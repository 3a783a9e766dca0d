//! AMD R600–Evergreen VLIW5 ALU groups: non-interlocked, slots `x y z w t`
//! plus `cf` for one export, 128 four-channel GPRs (`R0.x`…`R127.w`, each
//! channel its own register). All reads of a group see the registers as they
//! were before it; writes land at the group's end. Read ports follow
//! `r600_asm.c`'s bank swizzle: three read cycles × four channels, one GPR
//! index per (cycle, channel).
//!
//! Extension beyond the spec's minimum table: `scratch_write N, a` and
//! `d = scratch_read N` in the `cf` slot model the scratch (spill) path;
//! `scratch_read`'s result lands 2 cycles after issue; both move a whole
//! value (one to four channels), as a GPR's scratch access does.
//!
//! Texture fetch: `$d:4 = tex $c:2` in the `cf` slot stands for one SAMPLE
//! of a TEX clause: it reads its (u, v) from two channels of one GPR and
//! writes the four texel components to one whole GPR (`R_n.x`..`R_n.w`);
//! the result is readable [`TEX_LATENCY`] cycles after issue. The real
//! chip runs the fetch in a separate TEX clause, and the CF program's
//! barrier makes the next ALU clause wait for it; the model instead asks
//! the program to keep the result's readers that far away (as on every
//! `Padded` target, an early read sees the old contents), which a real
//! clause schedule also guarantees. The latency is the model's number, not
//! a measured one.
//!
//! Fragment discard: `killne_int a` (a vector slot, no result) is the ALU
//! kill `KILLNE_INT a, 0`: the pixel is killed when `a`'s word is non-zero.

use super::abi::{Abi, Emit, Fetch, StageAbi, TexAbi, Texture};
use super::{Clock, Dest, OpDesc, OperandKind as K, OpClass, Overlap, ProgramEnd, RegFile, RegNaming, Rules, Sem, Sizes, Target};
use crate::ir::{Imm, Inst, Operand, PhysReg, Reg, Stage};

const V: K = K::Value;
const VEC: &[&str] = &["x", "y", "z", "w", "t"];
const T: &[&str] = &["t"];
const XYZW: &[&str] = &["x", "y", "z", "w"];
const CF: &[&str] = &["cf"];
/// The channel names, in register-index order.
pub const CHANNELS: &[&str] = &["x", "y", "z", "w"];

const fn op(name: &'static str, sem: Sem, operands: &'static [K], slots: &'static [&'static str]) -> OpDesc {
    OpDesc { name, sem, operands, dest: Dest::Explicit, sizes: Sizes::Uniform, slots, latency: 1, sfu: false, header_is_dest: false, machine_only: false, lifetime: None, overlap: Overlap::NoPartial, class: OpClass::Other, unknown_landing: false }
}
const fn trans(name: &'static str, sem: Sem) -> OpDesc {
    OpDesc { sfu: true, ..op(name, sem, &[V], T) }
}

/// Cycles from a `tex` fetch's issue until its result is readable (the
/// model's stand-in for the TEX clause round trip; see the module doc).
pub const TEX_LATENCY: u32 = 40;

static OPS: [OpDesc; 17] = [
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
    OpDesc { dest: Dest::None, latency: 0, sizes: Sizes::Any, overlap: Overlap::Any, ..op("scratch_write", Sem::ScratchWrite, &[K::Index, K::Reg], CF) },
    OpDesc { latency: 2, sizes: Sizes::Any, overlap: Overlap::Any, ..op("scratch_read", Sem::ScratchRead, &[K::Index], CF) },
    OpDesc { latency: TEX_LATENCY, sizes: Sizes::Fixed { dest: 4, src: 2 }, overlap: Overlap::Any, class: OpClass::Tex, ..op("tex", Sem::Texture, &[K::Reg], CF) },
    OpDesc { dest: Dest::None, latency: 0, ..op("killne_int", Sem::Discard, &[V], XYZW) },
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
    max_value_size: 4,
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
/// fragment: location L is export L). A texture sample moves (u, v) to
/// R126.x-R126.y and fetches the texel into R127.x-R127.w, so stage inputs
/// and uniforms stop at R125.w.
pub static ABI: Abi = Abi {
    vertex: Some(StageAbi { first_reg: 4, output: Emit::Indexed { op: "export", position: 0, first_location: 1 }, ..FRAGMENT }),
    fragment: Some(FRAGMENT),
    texture: Some(Texture::Send(TexAbi { op: "tex", coord: TEX_COORD, result: TEX_RESULT })),
};
/// The ABI's texture coordinate registers: R126.x, R126.y.
const TEX_COORD: Reg = 126 * 4;
/// The ABI's texture result registers: R127.x..R127.w.
const TEX_RESULT: Reg = 127 * 4;
const FRAGMENT: StageAbi = StageAbi {
    uniform: Fetch::Registers,
    input: Fetch::Registers,
    first_reg: 0,
    last_reg: TEX_COORD - 1,
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
    fn op_regs_ok(&self, op: &OpDesc, inst: &Inst) -> Result<(), String> {
        if op.sem != Sem::Texture {
            return Ok(());
        }
        // A TEX instruction reads one source GPR and writes one destination
        // GPR: every register operand lies inside one GPR.
        let runs = inst.dest.iter().chain(inst.srcs.iter()).filter_map(Operand::phys);
        match runs.into_iter().find(|p| !within_one_gpr(*p)) {
            Some(p) => Err(format!("`{}` operand {} does not lie inside one GPR", op.name, R600.regs.name(p.base))),
            None => Ok(()),
        }
    }
    fn end_slot_ok(&self, _op: &OpDesc, _inst: &Inst, _slot_index: Option<usize>) -> Result<(), String> {
        Ok(())
    }
}

/// Whether the run `p` lies inside one four-channel GPR.
pub fn within_one_gpr(p: PhysReg) -> bool {
    (p.base % 4) as usize + p.size as usize <= CHANNELS.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tex_operands_lie_inside_one_gpr() {
        let tex = R600.op("tex").expect("tex");
        let inst = |d: PhysReg, s: PhysReg| Inst { opcode: "tex".into(), dest: Some(Operand::Phys(d)), srcs: vec![Operand::Phys(s)], span: Default::default() };
        let run = |base, size| PhysReg { base, size };
        assert!(R600Rules.op_regs_ok(tex, &inst(run(8, 4), run(4, 2))).is_ok());
        assert!(R600Rules.op_regs_ok(tex, &inst(run(8, 4), run(6, 2))).is_ok(), "R1.z, R1.w");
        let err = R600Rules.op_regs_ok(tex, &inst(run(9, 4), run(4, 2))).expect_err("R2.y:4 spans two GPRs");
        assert!(err.contains("R2.y"), "{err}");
        assert!(R600Rules.op_regs_ok(tex, &inst(run(8, 4), run(7, 2))).is_err(), "R1.w:2 spans two GPRs");
        // Single-register probes (the allocator's per-register question) pass.
        assert!((0..512).all(|r| R600Rules.op_regs_ok(tex, &inst(PhysReg::one(r), PhysReg::one(r))).is_ok()));
    }

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
