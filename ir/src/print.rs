//! [`Program`] → canonical text.
//!
//! Algorithm: one pass over the program writing the header (`shader` when
//! named, then always `target` and `stage`, `form machine` for the machine
//! form, the `input` lines), a blank line, and each block (a blank line
//! between blocks) with its instructions or bundles indented by four spaces
//! and its terminator last.
//!
//! Invariant (tested in `tests/roundtrip.rs`): for every program `p` this
//! crate's parser accepts, `parse(print(p))` is `p` up to spans
//! ([`Program::same_as`]) and `print(parse(print(p))) == print(p)`.
//! Immediates print so that they parse back to the same word: float
//! immediates as the shortest decimal that rounds back to their bits (always
//! with a `.` or an exponent), non-finite floats and large integers as `0x`
//! hex, other integers in decimal. Machine ops print their destination as
//! the first operand; on a single-slot target a bundle of one op in that
//! slot prints without braces. A bundle's non-zero wait follows its `}` as
//! `wait N` (`wait 0` is left out).

use crate::ir::*;
use std::fmt::Write;

/// Print a program in canonical form (ends with a newline).
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    header(p, &mut out);
    for b in &p.blocks {
        out.push('\n');
        block(p, b, &mut out);
    }
    out
}

fn header(p: &Program, out: &mut String) {
    if let Some(n) = &p.name {
        let _ = writeln!(out, "shader {n}");
    }
    let _ = writeln!(out, "target {}", p.target.name);
    let _ = writeln!(out, "stage {}", p.stage.as_str());
    if p.form == Form::Machine {
        out.push_str("form machine\n");
    }
    for i in &p.inputs {
        out.push_str("input ");
        if let Some(v) = &i.vreg {
            let _ = write!(out, "{} = ", virt(v));
        }
        out.push_str(&phys(p, i.reg));
        out.push('\n');
    }
}

fn block(p: &Program, b: &Block, out: &mut String) {
    let _ = writeln!(out, "{}:", b.label);
    for i in b.insts() {
        let _ = writeln!(out, "    {}", source_inst(p, i));
    }
    for x in b.bundles() {
        let _ = writeln!(out, "    {}", bundle(p, x));
    }
    let _ = writeln!(out, "    {}", terminator(p, &b.term));
}

/// A source-form instruction: `[dest = ]opcode operands`.
pub fn source_inst(p: &Program, i: &Inst) -> String {
    let mut s = String::new();
    if let Some(d) = &i.dest {
        let _ = write!(s, "{} = ", operand(p, d));
    }
    s.push_str(&i.opcode);
    push_operands(p, i.srcs.iter(), &mut s);
    s
}

/// A machine op without its slot: `opcode dest, srcs`.
pub fn machine_inst(p: &Program, i: &Inst) -> String {
    let mut s = i.opcode.to_string();
    push_operands(p, i.dest.iter().chain(i.srcs.iter()), &mut s);
    s
}

fn push_operands<'a>(p: &Program, ops: impl Iterator<Item = &'a Operand>, s: &mut String) {
    for (k, o) in ops.enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        s.push_str(&operand(p, o));
    }
}

/// A bundle: `{ slot: op ; … }`, `{ }`, or a bare op on a single-slot target.
pub fn bundle(p: &Program, b: &Bundle) -> String {
    if let ([op], [only]) = (b.ops.as_slice(), p.target.slots) {
        if op.slot == *only {
            return machine_inst(p, &op.inst);
        }
    }
    let wait = match b.wait {
        0 => String::new(),
        n => format!(" wait {n}"),
    };
    if b.ops.is_empty() {
        return format!("{{ }}{wait}");
    }
    let ops: Vec<String> = b.ops.iter().map(|o| format!("{}: {}", o.slot, machine_inst(p, &o.inst))).collect();
    format!("{{ {} }}{wait}", ops.join(" ; "))
}

/// A terminator line.
pub fn terminator(p: &Program, t: &Terminator) -> String {
    match &t.kind {
        TermKind::Jmp(l) => format!("jmp {l}"),
        TermKind::Brnz { cond, nonzero, zero } => format!("brnz {}, {nonzero}, {zero}", operand(p, cond)),
        TermKind::End => "end".to_string(),
    }
}

/// One operand as written.
pub fn operand(p: &Program, o: &Operand) -> String {
    match o {
        Operand::Virt(v) => virt(v),
        Operand::Phys(r) => phys(p, *r),
        Operand::Imm(i) => imm(*i),
        Operand::Label(l) => l.to_string(),
        Operand::Bypass(b) => format!("^{}.{}", b.unit, b.dist),
    }
}

fn virt(v: &VirtReg) -> String {
    match v.size {
        Some(n) => format!("%{}:{n}", v.name),
        None => format!("%{}", v.name),
    }
}

fn phys(p: &Program, r: PhysReg) -> String {
    match r.size {
        1 => format!("${}", p.reg_name(r.base)),
        n => format!("${}:{n}", p.reg_name(r.base)),
    }
}

/// An immediate that parses back to the same word.
pub fn imm(i: Imm) -> String {
    let f = f32::from_bits(i.bits);
    if i.float && f.is_finite() {
        // `{:?}` is the shortest round-trip form and always has `.` or `e`.
        return format!("{f:?}");
    }
    let s = i.bits as i32;
    if (-65536..=65535).contains(&s) {
        s.to_string()
    } else {
        format!("0x{:x}", i.bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates() {
        assert_eq!(imm(Imm::f32(1.0)), "1.0");
        assert_eq!(imm(Imm::f32(-0.0)), "-0.0");
        assert_eq!(imm(Imm::f32(1e20)), "1e20");
        assert_eq!(imm(Imm::f32(f32::NAN)), "0x7fc00000");
        assert_eq!(imm(Imm::int(-4)), "-4");
        assert_eq!(imm(Imm { bits: 0x3f80_0000, float: false }), "0x3f800000");
        assert_eq!(imm(Imm::int(-1_000_000)), "0xfff0bdc0");
    }
}
