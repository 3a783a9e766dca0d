//! Text → [`Program`], per `shared/spec/format.md`.
//!
//! Algorithm: the text is checked to be UTF-8, then read one line at a time;
//! each line is lexed ([`crate::lex`]) and dispatched on its first tokens.
//! Lines before the first label are header lines (`shader`, `target`,
//! `stage`, `form`, `input`); `input` lines are kept until the header ends
//! because their registers can only be read once the target and form are
//! known. From the first label on, each line is a label (`name:`), a
//! terminator (`jmp`, `brnz`, `end`), a source instruction
//! (`[dest =] opcode operands`) or, in the machine form, a bundle
//! (`{ slot: op ; … }`, or a bare op on a single-slot target).
//!
//! Invariants: the parser never recurses and never backtracks, so it runs in
//! time linear in the input on any bytes; every error is a [`Located`] with a
//! 1-based line and column and one sentence saying what was expected.
//! Unknown opcodes and slots are not errors here (the validator and the
//! verifier report them); in the machine form the target's opcode table
//! decides whether an op's first operand is its destination.

use crate::error::Located;
use crate::ir::*;
use crate::lex::{self, pos, show, Tok, Token};
use crate::target::{self, Dest, Target};
use smol_str::SmolStr;

/// Parse `text` into a program. `default_target` is used when the text has
/// no `target` line (a `target` line wins). Never panics; linear time.
pub fn parse(text: &[u8], default_target: Option<&'static Target>) -> Result<Program, Located> {
    let text = lex::utf8(text)?;
    let mut header = Header::default();
    let mut body: Option<Reading> = None;
    let mut eof = Span::new(1, 1); // end of the last line with a token
    for (n, line) in text.split('\n').enumerate() {
        let lineno = pos(n + 1);
        let toks = lex::lex_line(line, lineno)?;
        let eol = end_of_line(line, lineno);
        let Some(first) = toks.first() else { continue };
        eof = eol;
        match &mut body {
            Some(b) => b.line(&toks, eol)?,
            None if is_label_line(&toks) => {
                let mut b = std::mem::take(&mut header).finish(default_target, first.span)?;
                b.line(&toks, eol)?;
                body = Some(b);
            }
            None => header.line(toks, eol)?,
        }
    }
    match body {
        Some(b) => b.finish(eof),
        None => {
            header.finish(default_target, eof)?;
            Err(Located::new(eof, "expected at least one block, starting with a label line such as `b0:`"))
        }
    }
}

/// The column just after the last non-blank character before any comment.
fn end_of_line(line: &str, lineno: u32) -> Span {
    let code = line.split('#').next().unwrap_or("");
    Span::new(lineno, pos(code.trim_end().len() + 1))
}

fn is_label_line(toks: &[Token<'_>]) -> bool {
    matches!(toks, [Token { tok: Tok::Ident(_), .. }, Token { tok: Tok::Punct(b':'), .. }, ..])
}

/// How a token is named in messages.
fn describe(t: Option<&Token<'_>>) -> String {
    match t.map(|t| t.tok) {
        None => "the end of the line".to_string(),
        Some(Tok::Ident(s)) => format!("`{}`", show(s)),
        Some(Tok::Virt(s, _)) => format!("`%{}`", show(s)),
        Some(Tok::Phys(s, _)) => format!("`${}`", show(s)),
        Some(Tok::Imm(_)) => "a number".to_string(),
        Some(Tok::Punct(p)) => format!("`{}`", p as char),
        Some(Tok::Bypass(u, d)) => format!("`^{}.{d}`", show(u)),
    }
}

/// A cursor over one line's tokens.
struct Cur<'t, 'a> {
    toks: &'t [Token<'a>],
    i: usize,
    eol: Span,
}

impl<'t, 'a> Cur<'t, 'a> {
    fn new(toks: &'t [Token<'a>], eol: Span) -> Self {
        Cur { toks, i: 0, eol }
    }
    fn peek(&self) -> Option<&Token<'a>> {
        self.toks.get(self.i)
    }
    fn peek_at(&self, k: usize) -> Option<Tok<'a>> {
        self.toks.get(self.i + k).map(|t| t.tok)
    }
    fn here(&self) -> Span {
        self.peek().map_or(self.eol, |t| t.span)
    }
    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }
    fn at_punct(&self, p: u8) -> bool {
        self.peek_at(0) == Some(Tok::Punct(p))
    }
    /// An error at the current token: "expected WHAT, found THIS".
    fn expected(&self, what: &str) -> Located {
        Located::new(self.here(), format!("expected {what}, found {}", describe(self.peek())))
    }
    fn eat(&mut self, p: u8) -> bool {
        let hit = self.at_punct(p);
        if hit {
            self.i += 1;
        }
        hit
    }
    fn punct(&mut self, p: u8, what: &str) -> Result<(), Located> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }
    fn ident(&mut self, what: &str) -> Result<(&'a str, Span), Located> {
        match self.peek() {
            Some(&Token { tok: Tok::Ident(s), span }) => {
                self.i += 1;
                Ok((s, span))
            }
            _ => Err(self.expected(what)),
        }
    }
    fn end(&self, what: &str) -> Result<(), Located> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }
    /// One operand; `machine` forbids virtual registers.
    fn operand(&mut self, t: &Target, machine: bool) -> Result<(Operand, Span), Located> {
        let Some(&Token { tok, span }) = self.peek() else {
            return Err(self.expected("an operand (register, number or label)"));
        };
        let op = match tok {
            Tok::Virt(name, _) if machine => {
                return Err(Located::new(span, format!("the machine form names physical registers only, found `%{}`", show(name))));
            }
            Tok::Virt(name, size) => Operand::Virt(VirtReg { name: SmolStr::new(name), size }),
            Tok::Phys(name, size) => Operand::Phys(phys(t, name, size, span)?),
            Tok::Imm(imm) => Operand::Imm(imm),
            Tok::Ident(l) => Operand::Label(SmolStr::new(l)),
            Tok::Bypass(u, _) if !machine || t.network.is_none() => {
                let why = if machine { format!("target {} has no bypass network", t.name) } else { "bypass reads belong to the machine form".to_string() };
                return Err(Located::new(span, format!("unexpected bypass read `^{}`: {why}", show(u))));
            }
            Tok::Bypass(u, dist) => Operand::Bypass(BypassRead { unit: SmolStr::new(u), dist }),
            Tok::Punct(_) => return Err(self.expected("an operand (register, number or label)")),
        };
        self.i += 1;
        Ok((op, span))
    }
    /// A comma-separated operand list, possibly empty (ends at the end of
    /// the line, `;` or `}`).
    fn operands(&mut self, t: &Target, machine: bool) -> Result<Vec<Operand>, Located> {
        let mut out = Vec::new();
        if self.at_end() || self.at_punct(b';') || self.at_punct(b'}') {
            return Ok(out);
        }
        loop {
            out.push(self.operand(t, machine)?.0);
            if !self.eat(b',') {
                return Ok(out);
            }
        }
    }
}

/// A physical register named `name` on `t`.
fn phys(t: &Target, name: &str, size: Option<u8>, span: Span) -> Result<PhysReg, Located> {
    match t.regs.parse(name) {
        Some(base) => Ok(PhysReg { base, size: size.unwrap_or(1) }),
        None => Err(Located::new(
            span,
            format!("`${}` is not a register of target {}; expected a name like `${}`", show(name), t.name, t.regs.name(1)),
        )),
    }
}

/// The header lines read so far.
#[derive(Default)]
struct Header<'a> {
    name: Option<String>,
    target: Option<&'static Target>,
    stage: Option<Stage>,
    stage_span: Span,
    form: Option<Form>,
    inputs: Vec<(Vec<Token<'a>>, Span)>,
}

fn dup<T>(slot: &Option<T>, kw: &str, span: Span) -> Result<(), Located> {
    match slot {
        Some(_) => Err(Located::new(span, format!("duplicate `{kw}` line; expected each header line at most once"))),
        None => Ok(()),
    }
}

impl<'a> Header<'a> {
    fn line(&mut self, toks: Vec<Token<'a>>, eol: Span) -> Result<(), Located> {
        let mut c = Cur::new(&toks, eol);
        let (kw, span) = c.ident("a header line (`shader`, `target`, `stage`, `form`, `input`) or a label line")?;
        match kw {
            "shader" => {
                dup(&self.name, kw, span)?;
                self.name = Some(c.ident("a shader name")?.0.to_string());
            }
            "target" => {
                dup(&self.target, kw, span)?;
                let (n, sp) = c.ident("a target name")?;
                self.target = Some(target::by_name(n).ok_or_else(|| unknown_target(n, sp))?);
            }
            "stage" => {
                dup(&self.stage, kw, span)?;
                self.stage_span = span;
                self.stage = Some(match c.ident("a stage")?.0 {
                    "vertex" => Stage::Vertex,
                    "fragment" => Stage::Fragment,
                    "compute" => Stage::Compute,
                    _ => return Err(Located::new(c.toks.get(1).map_or(eol, |t| t.span), "expected a stage: `vertex`, `fragment` or `compute`")),
                });
            }
            "form" => {
                dup(&self.form, kw, span)?;
                self.form = Some(match c.ident("a form")?.0 {
                    "source" => Form::Source,
                    "machine" => Form::Machine,
                    _ => return Err(Located::new(c.toks.get(1).map_or(eol, |t| t.span), "expected a form: `source` or `machine`")),
                });
            }
            "input" => {
                self.inputs.push((toks.clone(), eol));
                return Ok(());
            }
            _ => return Err(Located::new(span, format!("expected a header line (`shader`, `target`, `stage`, `form`, `input`) or a label line, found `{}`", show(kw)))),
        }
        c.end("the end of the header line")
    }

    /// End the header at the first label (`span`): resolve the target and
    /// the `input` lines.
    fn finish(self, default_target: Option<&'static Target>, span: Span) -> Result<Reading, Located> {
        let target = self
            .target
            .or(default_target)
            .ok_or_else(|| Located::new(span, "expected a `target` line (such as `target v3d71`) before the first label"))?;
        let form = self.form.unwrap_or(Form::Source);
        let inputs = self.inputs.iter().map(|(t, eol)| input(target, form, t, *eol)).collect::<Result<Vec<_>, _>>()?;
        let stage = self.stage.unwrap_or(target.default_stage);
        target.rules.stage_ok(stage).map_err(|msg| Located::new(if self.stage.is_some() { self.stage_span } else { span }, msg))?;
        let prog = Program { name: self.name, target, stage, form, inputs, blocks: Vec::new() };
        Ok(Reading { prog, open: None })
    }
}

fn unknown_target(name: &str, span: Span) -> Located {
    let names: Vec<&str> = target::all().iter().map(|t| t.name).collect();
    Located::new(span, format!("unknown target `{}`; expected one of {}", show(name), names.join(", ")))
}

/// An `input` line: `input %v[:N] = $r[:N]` (source) or `input $r[:N]`.
fn input(t: &Target, form: Form, toks: &[Token<'_>], eol: Span) -> Result<Input, Located> {
    let mut c = Cur::new(toks, eol);
    let (_, span) = c.ident("`input`")?;
    let vreg = match form {
        Form::Source => {
            let Some(Tok::Virt(name, size)) = c.peek_at(0) else {
                return Err(c.expected("a virtual register (`input %name = $reg`)"));
            };
            c.i += 1;
            c.punct(b'=', "`=` and the register the input arrives in")?;
            Some(VirtReg { name: SmolStr::new(name), size })
        }
        Form::Machine => None,
    };
    let Some(&Token { tok: Tok::Phys(name, size), span: rspan }) = c.peek() else {
        return Err(c.expected("a physical register such as `$r` for the input"));
    };
    c.i += 1;
    let reg = phys(t, name, size, rspan)?;
    c.end("the end of the `input` line")?;
    Ok(Input { vreg, reg, span })
}

/// A block being read.
struct Open {
    label: SmolStr,
    span: Span,
    body: Body,
    term: Option<Terminator>,
}

/// The program read so far.
struct Reading {
    prog: Program,
    open: Option<Open>,
}

impl Reading {
    fn line(&mut self, toks: &[Token<'_>], eol: Span) -> Result<(), Located> {
        let mut c = Cur::new(toks, eol);
        if is_label_line(toks) {
            let (label, span) = c.ident("a label")?;
            c.i += 1;
            c.end("the end of the line after the label")?;
            self.close(span)?;
            self.open = Some(Open { label: SmolStr::new(label), span, body: Body::empty(self.prog.form), term: None });
            return Ok(());
        }
        let t = self.prog.target;
        let machine = self.prog.form == Form::Machine;
        let Some(open) = self.open.as_mut() else {
            return Err(c.expected("a label line such as `b0:`"));
        };
        if open.term.is_some() {
            return Err(Located::new(c.here(), format!("block `{}` already ended with its terminator; expected a label line to start a new block", show(&open.label))));
        }
        if let Some(Tok::Ident(kw @ ("shader" | "target" | "stage" | "form" | "input"))) = c.peek_at(0) {
            return Err(Located::new(c.here(), format!("the header line `{kw}` must come before the first label")));
        }
        if let Some(Tok::Ident(kw @ ("jmp" | "brnz" | "end"))) = c.peek_at(0) {
            let span = c.here();
            c.i += 1;
            open.term = Some(Terminator { kind: terminator(&mut c, kw, t, machine)?, span });
        } else {
            match &mut open.body {
                Body::Machine(v) => v.push(bundle(&mut c, t)?),
                Body::Source(v) => v.push(source_inst(&mut c, t)?),
            }
        }
        Ok(())
    }

    /// Close the open block; `next` is where its terminator was expected.
    fn close(&mut self, next: Span) -> Result<(), Located> {
        let Some(o) = self.open.take() else { return Ok(()) };
        let Some(term) = o.term else {
            return Err(Located::new(next, format!("block `{}` has no terminator; expected `jmp`, `brnz` or `end` before this point", show(&o.label))));
        };
        self.prog.blocks.push(Block { label: o.label, body: o.body, term, span: o.span });
        Ok(())
    }

    fn finish(mut self, eof: Span) -> Result<Program, Located> {
        self.close(eof)?;
        Ok(self.prog)
    }
}

/// The rest of a terminator line after its keyword.
fn terminator(c: &mut Cur<'_, '_>, kw: &str, t: &Target, machine: bool) -> Result<TermKind, Located> {
    let kind = match kw {
        "jmp" => TermKind::Jmp(SmolStr::new(c.ident("a label after `jmp`")?.0)),
        "brnz" => {
            let (cond, span) = c.operand(t, machine)?;
            if matches!(cond, Operand::Label(_)) {
                return Err(Located::new(span, "expected a register or immediate as the condition of `brnz`"));
            }
            c.punct(b',', "`,` after the condition of `brnz`")?;
            let nonzero = SmolStr::new(c.ident("the label taken when the condition is non-zero")?.0);
            c.punct(b',', "`,` and the label taken when the condition is zero")?;
            let zero = SmolStr::new(c.ident("the label taken when the condition is zero")?.0);
            TermKind::Brnz { cond, nonzero, zero }
        }
        _ => TermKind::End,
    };
    c.end("the end of the line after the terminator")?;
    Ok(kind)
}

/// A source instruction: `[dest =] opcode [operand {, operand}]`.
fn source_inst(c: &mut Cur<'_, '_>, t: &Target) -> Result<Inst, Located> {
    if c.at_punct(b'{') {
        return Err(Located::new(c.here(), "expected an instruction; bundles `{ … }` belong to the machine form (`form machine`)"));
    }
    let dest = if c.peek_at(1) == Some(Tok::Punct(b'=')) {
        let (d, span) = c.operand(t, false)?;
        if !matches!(d, Operand::Virt(_) | Operand::Phys(_)) {
            return Err(Located::new(span, "expected a register as the destination before `=`"));
        }
        c.i += 1;
        Some(d)
    } else {
        None
    };
    let (opcode, span) = c.ident("an opcode")?;
    let srcs = c.operands(t, false)?;
    c.end("`,` or the end of the line")?;
    Ok(Inst { opcode: SmolStr::new(opcode), dest, srcs, span })
}

/// A machine-form line: a bundle, or a bare op on a single-slot target.
fn bundle(c: &mut Cur<'_, '_>, t: &Target) -> Result<Bundle, Located> {
    let span = c.here();
    if !c.eat(b'{') {
        let slot = match t.slots {
            [only] => *only,
            _ => return Err(c.expected(&format!("a bundle `{{ slot: op ; … }}` (target {} has several slots)", t.name))),
        };
        let inst = machine_inst(c, t)?;
        c.end("`,` or the end of the line")?;
        return Ok(Bundle { ops: vec![Op { slot: SmolStr::new_static(slot), inst }], span, wait: 0 });
    }
    let mut ops = Vec::new();
    if !c.eat(b'}') {
        loop {
            let (slot, _) = c.ident("a slot name (as in `{ add: mov $rf1, 0 }`)")?;
            c.punct(b':', "`:` after the slot name")?;
            ops.push(Op { slot: SmolStr::new(slot), inst: machine_inst(c, t)? });
            if !c.eat(b';') {
                c.punct(b'}', "`,`, `;` or `}`")?;
                break;
            }
        }
    }
    let wait = wait(c, t)?;
    c.end("the end of the line after `}`")?;
    Ok(Bundle { ops, span, wait })
}

/// An optional `wait N` after a bundle's `}` (targets with encoded waits
/// only; 0..=the clock's `max_wait`).
fn wait(c: &mut Cur<'_, '_>, t: &Target) -> Result<u8, Located> {
    if c.peek_at(0) != Some(Tok::Ident("wait")) {
        return Ok(0);
    }
    let crate::target::Clock::EncodedWaits { max } = t.clock else {
        return Err(Located::new(c.here(), format!("target {} does not encode waits; expected the end of the line after `}}`", t.name)));
    };
    c.i += 1;
    let span = c.here();
    let Some(Tok::Imm(n)) = c.peek_at(0) else {
        return Err(c.expected("the number of cycles after `wait`"));
    };
    c.i += 1;
    let max = u32::from(max);
    match (n.float, n.bits) {
        (false, k) if k <= max => Ok(k as u8),
        _ => Err(Located::new(span, format!("`wait {}` is out of range: a wait is 0 to {max} cycles on target {}", crate::print::imm(n), t.name))),
    }
}

/// A machine op; the opcode table says whether the first operand is the
/// destination.
fn machine_inst(c: &mut Cur<'_, '_>, t: &Target) -> Result<Inst, Located> {
    let (opcode, span) = c.ident("an opcode")?;
    let mut srcs = c.operands(t, true)?;
    let explicit = t.op(opcode).is_some_and(|d| d.dest == Dest::Explicit);
    let dest = if explicit && !srcs.is_empty() { Some(srcs.remove(0)) } else { None };
    Ok(Inst { opcode: SmolStr::new(opcode), dest, srcs, span })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> Located {
        parse(s.as_bytes(), None).unwrap_err()
    }

    const MUL: &str = "shader mul\ntarget v3d71\nstage fragment\ninput %w = $rf1\n\nb0:\n    %a = ldunif 0\n    %q = fmul %a, %w\n    tlbw %q\n    end\n";

    #[test]
    fn source_program() {
        let p = parse(MUL.as_bytes(), None).unwrap();
        assert_eq!(p.name.as_deref(), Some("mul"));
        assert_eq!(p.target.name, "v3d71");
        assert_eq!(p.inputs[0].reg, PhysReg::one(1));
        let b = &p.blocks[0];
        assert_eq!(b.insts().len(), 3);
        assert_eq!(b.insts()[1].dest, Some(Operand::Virt(VirtReg { name: "q".into(), size: None })));
        assert_eq!(b.insts()[1].span, Span::new(8, 10));
        assert_eq!(b.term.kind, TermKind::End);
    }

    #[test]
    fn machine_program() {
        let s = "target v3d71\nform machine\ninput $rf1\nb0:\n { sig: ldunif 0 }\n { add: mov $rf4, $rf0 ; sig: ldvary 0 }\n { }\n end\n";
        let p = parse(s.as_bytes(), None).unwrap();
        let bs = p.blocks[0].bundles();
        assert_eq!(bs.len(), 3);
        assert_eq!(bs[0].ops[0].inst.dest, None);
        assert_eq!(bs[1].ops[0].inst.dest, Some(Operand::Phys(PhysReg::one(4))));
        assert!(bs[2].ops.is_empty());
        let g = "target gen8\nform machine\nb0:\n mul $g10:2, $g2:2, $g2:2\n frob $g1, 3\n end\n";
        let p = parse(g.as_bytes(), None).unwrap();
        let ops = p.blocks[0].bundles();
        assert_eq!(ops[0].ops[0].slot, "alu");
        assert_eq!(ops[0].ops[0].inst.dest, Some(Operand::Phys(PhysReg { base: 10, size: 2 })));
        assert_eq!(ops[1].ops[0].inst.srcs.len(), 2, "unknown opcodes keep every operand");
    }

    #[test]
    fn default_target_and_override() {
        let s = "b0:\n end\n";
        assert_eq!(parse(s.as_bytes(), Some(&crate::target::gen8::GEN8)).unwrap().target.name, "gen8");
        let s = "target r600\nb0:\n end\n";
        assert_eq!(parse(s.as_bytes(), Some(&crate::target::gen8::GEN8)).unwrap().target.name, "r600");
        assert_eq!(parse(s.as_bytes(), None).unwrap().stage, Stage::Vertex);
    }

    #[test]
    fn branches_and_floats() {
        let s = "target r600\nb0:\n %c = mov 1.5\n brnz %c, b1, b2\nb1:\n jmp b2\nb2:\n end\n";
        let p = parse(s.as_bytes(), None).unwrap();
        assert_eq!(p.blocks[0].insts()[0].srcs[0], Operand::Imm(Imm::f32(1.5)));
        assert_eq!(p.blocks[0].term.kind, TermKind::Brnz { cond: Operand::Virt(VirtReg { name: "c".into(), size: None }), nonzero: "b1".into(), zero: "b2".into() });
    }

    const LIMA: &str = "target lima-gp\nform machine\nb0:\n    { reg0.x: ld_att 0 ; uni.y: ld_uni 1 }\n    { add0: add ^reg0.x.1, ^reg0.x.1 ; st.x: st_reg $r3.x, ^add0.0 }\n    { mul1: mul ^add0.1, ^add0.1 ; complex: rcp_impl ^add0.1 }\n    { pass: mov ^complex.1 ; st.z: st_var 2, ^pass.0 }\n    brnz ^mul1.2, b1, b1\nb1:\n    end\n";

    #[test]
    fn bypass_reads_round_trip() {
        let p = parse(LIMA.as_bytes(), None).unwrap();
        let ops = &p.blocks[0].bundles()[1].ops;
        assert_eq!(ops[0].inst.dest, None, "ALU results stay in their unit");
        assert_eq!(ops[0].inst.srcs[0], Operand::Bypass(BypassRead { unit: "reg0.x".into(), dist: 1 }));
        assert_eq!(ops[1].inst.dest, Some(Operand::Phys(PhysReg::one(12))), "st_reg names its register");
        assert!(matches!(&p.blocks[0].term.kind, TermKind::Brnz { cond: Operand::Bypass(b), .. } if b.unit == "mul1" && b.dist == 2));
        let text = crate::print::print(&p);
        assert!(text.contains("{ add0: add ^reg0.x.1, ^reg0.x.1 ; st.x: st_reg $r3.x, ^add0.0 }"), "{text}");
        let again = parse(text.as_bytes(), None).unwrap();
        assert!(again.same_as(&p));
        assert_eq!(crate::print::print(&again), text);
    }

    #[test]
    fn bypass_reads_only_in_lima_machine_programs() {
        assert!(err("target v3d71\nform machine\nb0:\n { add: mov $rf1, ^add.1 }\n end\n").message.contains("no bypass network"));
        assert!(err("target lima-gp\nb0:\n %a = mov ^add0.1\n end\n").message.contains("machine form"));
        let e = err("target lima-gp\nstage fragment\nb0:\n end\n");
        assert_eq!(e.span, Span::new(2, 1));
        assert!(e.message.contains("vertex shaders only"));
    }

    #[test]
    fn kepler_waits_parse_print_and_are_bounded() {
        let s = "target kepler\nform machine\nb0:\n    { i0: ipa $r1, 0 } wait 14\n    { i0: fadd $r2, $r1, 0.5 ; i1: fmul $r3, $r1, $r1 }\n    { } wait 31\n    end\n";
        let p = parse(s.as_bytes(), None).unwrap();
        let waits: Vec<u8> = p.blocks[0].bundles().iter().map(|b| b.wait).collect();
        assert_eq!(waits, [14, 0, 31]);
        let text = crate::print::print(&p);
        assert!(text.contains("{ i0: ipa $r1, 0 } wait 14\n") && text.contains("$r1 }\n") && text.contains("{ } wait 31\n"), "{text}");
        assert!(parse(text.as_bytes(), None).unwrap().same_as(&p));
        let e = err("target kepler\nform machine\nb0:\n    { i0: mov $r1, 0 } wait 40\n    end\n");
        assert_eq!(e.span, Span::new(4, 29));
        assert!(e.message.contains("out of range"), "{}", e.message);
        assert!(err("target kepler\nform machine\nb0:\n { i0: mov $r1, 0 } wait\n end\n").message.contains("number of cycles"));
        assert!(err("target kepler\nform machine\nb0:\n { i0: mov $r1, 0 } wait -1\n end\n").message.contains("out of range"));
        assert!(err("target v3d71\nform machine\nb0:\n { add: mov $rf1, 0 } wait 2\n end\n").message.contains("does not encode waits"));
    }

    #[test]
    fn errors_are_located() {
        assert_eq!(err("b0:\n end\n").span, Span::new(1, 1));
        assert_eq!(err("target foo\n").span, Span::new(1, 8));
        assert_eq!(err("target v3d71\nb0:\n %a = mov $x1\n end\n").span, Span::new(3, 11));
        assert_eq!(err("target v3d71\nb0:\n %a = mov 1\n").span, Span::new(3, 12));
        assert_eq!(err("target v3d71\nb0:\n end\n %a = mov 1\n").span, Span::new(4, 2));
        assert_eq!(err("target v3d71\nform machine\nb0:\n { add: mov $rf1, 0 \n end\n").span, Span::new(4, 20));
        assert_eq!(err("target v3d71\nform machine\nb0:\n mov $rf1, 0\n end\n").span, Span::new(4, 2));
        assert_eq!(err("target v3d71\nform machine\nb0:\n { { }\n end\n").span, Span::new(4, 4));
        assert_eq!(err("target v3d71\nform machine\nb0:\n { add: mov %a, 0 }\n end\n").span, Span::new(4, 13));
        assert_eq!(err("target v3d71\nb0: end\n").span, Span::new(2, 5));
        assert_eq!(err("target v3d71\n").span, Span::new(1, 13));
        assert_eq!(err("target v3d71\ntarget gen8\n").span, Span::new(2, 1));
        assert_eq!(err("target v3d71\ninput $rf1\nb0:\n end\n").span, Span::new(2, 7));
        assert_eq!(err("target v3d71\nb0:\n brnz b1, b1, b2\n").span, Span::new(3, 7));
        assert!(err("target v3d71\nb0:\n stage vertex\n end\n").message.contains("before the first label"));
    }
}
