//! The source program decoded once per verification.
//!
//! The fixpoint runs every source block once per visit (about two visits
//! per block), and liveness reads every instruction once per iteration.
//! Resolving an instruction's opcode (a string hash), the ids of the
//! registers it names (a string hash per operand) and its index operand
//! on each of those reads was a visible fixed cost. [`SrcCode`] does it
//! once: per instruction its `&'static OpDesc`, the variables of each
//! operand and of the destination (ranges of one flat list, so decoding a
//! program is a handful of allocations), its index operand and the name of
//! its destination.
//!
//! Invariant: the decoded form says exactly what the instruction says to
//! the simulators — an operand's variables are [`operand_vars`] of it, the
//! index operand is [`index_operand`], an unknown opcode has no
//! description (the simulators skip it) — so running the decoded form is
//! running the program.

use crate::ids::Vregs;
use crate::symbolic::{index_operand, operand_vars, DestName, Var};
use schedra_ir::target::{OpDesc, Sem};
use schedra_ir::{Operand, Program, TermKind};

/// A range of one of [`SrcCode`]'s flat lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn of(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    fn get<T>(self, v: &[T]) -> &[T] {
        v.get(self.start as usize..self.end as usize).unwrap_or(&[])
    }
}

/// One source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An immediate word.
    Imm(u32),
    /// A label (no value).
    Label,
    /// Registers: their variables, one per word (see [`SrcCode::vars`]).
    Vars(Span),
}

/// One decoded source instruction.
#[derive(Clone, Debug)]
pub struct SrcInst {
    /// The opcode's description (`None`: unknown opcode).
    pub desc: Option<&'static OpDesc>,
    /// The operands (see [`SrcCode::args`]).
    args: Span,
    /// The destination's variables (see [`SrcCode::dest`]).
    dest: Span,
    /// The destination as messages name it, when there is one.
    pub dest_name: Option<DestName>,
    /// The index operand (0 when there is none).
    pub idx: u32,
    /// Line in the source file.
    pub line: u32,
}

/// One decoded source block.
#[derive(Clone, Debug, Default)]
pub struct SrcBlock {
    insts: Span,
    /// The branch condition's operand, if the block ends in `brnz`.
    pub cond: Option<Arg>,
}

/// A source program, decoded (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SrcCode {
    blocks: Vec<SrcBlock>,
    insts: Vec<SrcInst>,
    args: Vec<Arg>,
    vars: Vec<Var>,
}

impl SrcCode {
    /// Decode every block of `p` (registers numbered by `vregs`).
    pub fn of(p: &Program, vregs: &Vregs) -> SrcCode {
        let n: usize = p.blocks.iter().map(|b| b.insts.len()).sum();
        let mut c = SrcCode { blocks: Vec::with_capacity(p.blocks.len()), insts: Vec::with_capacity(n), args: Vec::with_capacity(2 * n), vars: Vec::with_capacity(3 * n) };
        for b in &p.blocks {
            let first = c.insts.len();
            for inst in &b.insts {
                let desc = p.target.op(&inst.opcode);
                let a0 = c.args.len();
                for o in &inst.srcs {
                    let arg = c.arg(o, vregs);
                    c.args.push(arg);
                }
                let d0 = c.vars.len();
                if let Some(d) = &inst.dest {
                    c.vars.extend(operand_vars(d, vregs));
                }
                let dest = Span::of(d0, c.vars.len());
                let dest_name = inst.dest.as_ref().map(|d| DestName::of(p, vregs, d));
                let idx = desc.map(|d| index_operand(inst, d)).unwrap_or(0);
                c.insts.push(SrcInst { desc, args: Span::of(a0, c.args.len()), dest, dest_name, idx, line: inst.span.line });
            }
            let cond = match &b.term.kind {
                TermKind::Brnz { cond, .. } => Some(c.arg(cond, vregs)),
                _ => None,
            };
            c.blocks.push(SrcBlock { insts: Span::of(first, c.insts.len()), cond });
        }
        c
    }

    fn arg(&mut self, o: &Operand, vregs: &Vregs) -> Arg {
        match o {
            Operand::Imm(i) => Arg::Imm(i.bits),
            Operand::Label(_) => Arg::Label,
            _ => {
                let start = self.vars.len();
                self.vars.extend(operand_vars(o, vregs));
                Arg::Vars(Span::of(start, self.vars.len()))
            }
        }
    }

    /// Block `b` (`None` past the last block).
    pub fn block(&self, b: usize) -> Option<&SrcBlock> {
        self.blocks.get(b)
    }

    /// Every block, in program order.
    pub fn blocks(&self) -> &[SrcBlock] {
        &self.blocks
    }

    /// A block's instructions, in order.
    pub fn insts(&self, b: &SrcBlock) -> &[SrcInst] {
        b.insts.get(&self.insts)
    }

    /// An instruction's operands, in order.
    pub fn args(&self, i: &SrcInst) -> &[Arg] {
        i.args.get(&self.args)
    }

    /// The variables of a register operand.
    pub fn vars(&self, s: Span) -> &[Var] {
        s.get(&self.vars)
    }

    /// The variables an instruction's destination names (one per word).
    pub fn dest(&self, i: &SrcInst) -> &[Var] {
        i.dest.get(&self.vars)
    }

    /// The variables an operand reads (none for immediates and labels).
    pub fn arg_vars(&self, a: &Arg) -> &[Var] {
        match a {
            Arg::Vars(s) => self.vars(*s),
            _ => &[],
        }
    }

    /// The source variables an instruction reads and writes, scratch slots
    /// included, appended to `uses` and `defs` (for liveness).
    pub fn uses_defs(&self, i: &SrcInst, uses: &mut Vec<Var>, defs: &mut Vec<Var>) {
        let (u0, d0) = (uses.len(), defs.len());
        for a in self.args(i) {
            uses.extend_from_slice(self.arg_vars(a));
        }
        defs.extend_from_slice(self.dest(i));
        if let Some(d) = i.desc {
            let off = i.idx;
            match d.sem {
                Sem::ScratchRead => {
                    let n = (defs.len() - d0).max(1) as u32;
                    uses.extend((0..n).map(|w| Var::S(off + w)));
                }
                Sem::ScratchWrite => {
                    let n = (uses.len() - u0) as u32;
                    defs.extend((0..n).map(|w| Var::S(off + w)));
                }
                _ => {}
            }
        }
    }
}
