//! The program types shared by both forms.
//!
//! A [`Program`] is a header plus a list of [`Block`]s; the first block is the
//! entry. A block's [`Body`] is of one form: [`Body::Source`] holds
//! [`Inst`]s (one op per line, virtual or preallocated physical registers),
//! [`Body::Machine`] holds [`Bundle`]s (one issue cycle each) of slot-tagged
//! [`Op`]s on physical registers. Every block ends with exactly one
//! [`Terminator`].
//!
//! Stable ids: a block is named by its index in `blocks` (and its label), an
//! instruction by `(block, index)` in its body, a machine op by
//! `(block, bundle, op)`. Every item keeps the [`Span`] it was parsed from so
//! that diagnostics can point at the line.
//!
//! Names (opcodes, slots, virtual registers, labels) are [`SmolStr`]s: a
//! name from the target tables is a `SmolStr::new_static` reference to the
//! table's `&'static str`, and any other name of up to 23 bytes (every
//! generated `%n` and `bN`) is stored inline, so building, cloning and
//! dropping a program allocates only for its lists. A `SmolStr` hashes,
//! compares, orders and prints exactly like the `str` it holds, so maps
//! keyed by names iterate in the same order as with `String` keys.

use crate::target::Target;
use smol_str::SmolStr;
use std::fmt;

/// A physical register: an index into the target's register file (see
/// [`crate::target::RegFile`]). Indices at or beyond the file's `count` can
/// be parsed (`$rf70`) so that the validator or verifier can report them as
/// out of range rather than as syntax errors.
pub type Reg = u16;

/// A position in a source text: 1-based line and column. `line == 0` means
/// "synthesised, no position" (programs built by the compiler or generators).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// 1-based line; 0 when the item was not parsed from text.
    pub line: u32,
    /// 1-based column; 0 when the item was not parsed from text.
    pub col: u32,
}

impl Span {
    /// A span at `line`, `col` (both 1-based).
    pub fn new(line: u32, col: u32) -> Span {
        Span { line, col }
    }
}

/// Which of the two forms a program is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Compiler input: virtual registers, one op per line.
    Source,
    /// Compiler output: bundles of slot-tagged ops on physical registers.
    Machine,
}

/// The shader stage; the target names the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Vertex shader.
    Vertex,
    /// Fragment (pixel) shader.
    Fragment,
    /// Compute shader.
    Compute,
}

impl Stage {
    /// The keyword used in the text format.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
            Stage::Compute => "compute",
        }
    }
}

/// A contiguous run of `size` physical registers starting at `base`
/// (`$g12:2` is g12 and g13). `size >= 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PhysReg {
    /// First register of the run.
    pub base: Reg,
    /// Number of 32-bit registers, at least 1.
    pub size: u8,
}

impl PhysReg {
    /// One register.
    pub const fn one(base: Reg) -> PhysReg {
        PhysReg { base, size: 1 }
    }
    /// The registers this run covers, in order.
    pub fn regs(self) -> impl Iterator<Item = Reg> {
        (self.base as u32..self.base as u32 + self.size as u32).map(|r| r as Reg)
    }
    /// Whether two runs share a register.
    pub fn overlaps(self, other: PhysReg) -> bool {
        let (a0, a1) = (self.base as u32, self.base as u32 + self.size as u32);
        let (b0, b1) = (other.base as u32, other.base as u32 + other.size as u32);
        a0 < b1 && b0 < a1
    }
}

/// A virtual register operand or destination (`%name`, `%name:N`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VirtReg {
    /// The name without the `%`.
    pub name: SmolStr,
    /// The size suffix if one was written; a use may omit it.
    pub size: Option<u8>,
}

/// An immediate: the 32-bit word it stands for, and whether it was written
/// as a float literal (only the printer cares; the meaning is the bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Imm {
    /// The word (two's complement for integers, IEEE-754 single for floats).
    pub bits: u32,
    /// Written as a float literal.
    pub float: bool,
}

impl Imm {
    /// An integer immediate.
    pub fn int(v: i64) -> Imm {
        Imm { bits: v as u32, float: false }
    }
    /// A float immediate.
    pub fn f32(v: f32) -> Imm {
        Imm { bits: v.to_bits(), float: true }
    }
}

/// One operand (or destination) of an instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operand {
    /// A virtual register (source form only).
    Virt(VirtReg),
    /// A physical register run.
    Phys(PhysReg),
    /// An immediate word.
    Imm(Imm),
    /// A block label (only where an opcode takes one; terminators keep their
    /// labels in [`Terminator`]).
    Label(SmolStr),
    /// A read of the bypass network (machine form of a target with a
    /// [`crate::target::network::Network`]): the result of a named unit a
    /// given number of instructions back, written `^unit.distance`.
    Bypass(BypassRead),
}

/// A bypass-network read: `^add0.1` is the result of unit `add0` one
/// instruction back, `^reg0.x.0` the x load of unit `reg0` in the reading
/// instruction itself. The unit is not checked by the parser (the verifier
/// reports unknown units); the distance is any number 0..=255.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BypassRead {
    /// The unit (a slot name of the target) whose result is read.
    pub unit: SmolStr,
    /// Consumer instruction index minus producer instruction index.
    pub dist: u8,
}

impl Operand {
    /// The physical register run, if this operand is one.
    pub fn phys(&self) -> Option<PhysReg> {
        match self {
            Operand::Phys(p) => Some(*p),
            _ => None,
        }
    }
    /// The virtual register, if this operand is one.
    pub fn virt(&self) -> Option<&VirtReg> {
        match self {
            Operand::Virt(v) => Some(v),
            _ => None,
        }
    }
    /// The bypass read, if this operand is one.
    pub fn bypass(&self) -> Option<&BypassRead> {
        match self {
            Operand::Bypass(b) => Some(b),
            _ => None,
        }
    }
    /// The immediate, if this operand is one.
    pub fn imm(&self) -> Option<Imm> {
        match self {
            Operand::Imm(i) => Some(*i),
            _ => None,
        }
    }
}

/// One operation: `[dest =] opcode operands` in the source form, the op of a
/// slot in the machine form.
///
/// In the machine form the parser splits the written operand list using the
/// target's opcode table: for an opcode whose description has an explicit
/// destination the first operand becomes `dest`. Ops with an implicit
/// destination (v3d71 `ldunif`) have `dest == None` in the machine form and
/// a virtual `dest` in the source form. For an opcode the target does not
/// know, every operand stays in `srcs` (the verifier reports it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The opcode as the target's table spells it (`fadd`, `send.tex`).
    pub opcode: SmolStr,
    /// The destination, if written.
    pub dest: Option<Operand>,
    /// The sources, in order (index immediates such as `ldunif 3`'s 3
    /// included).
    pub srcs: Vec<Operand>,
    /// Where the opcode was written.
    pub span: Span,
}

/// A machine-form op: an instruction issued in a named slot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    /// The slot name (`add`, `mul`, `sig`, `x`, `t`, `cf`, `alu`). For a
    /// single-slot target written without braces, the parser fills in the
    /// target's one slot.
    pub slot: SmolStr,
    /// The operation.
    pub inst: Inst,
}

/// One issue cycle of the machine form. An empty bundle is a nop cycle.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Bundle {
    /// The ops issued together, in written order.
    pub ops: Vec<Op>,
    /// Where the bundle starts.
    pub span: Span,
    /// On a target with encoded waits (`Target::waits`): the stall after
    /// this bundle, `wait N` in the text (the next bundle issues N + 1
    /// cycles later). Always 0 on other targets.
    pub wait: u8,
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TermKind {
    /// `jmp label`
    Jmp(SmolStr),
    /// `brnz cond, if_nonzero, if_zero`
    Brnz {
        /// The condition (a register or, unusually, an immediate).
        cond: Operand,
        /// Successor when the condition word is non-zero.
        nonzero: SmolStr,
        /// Successor when the condition word is zero.
        zero: SmolStr,
    },
    /// `end`: the program ends.
    End,
}

/// A block terminator with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Terminator {
    /// What it does.
    pub kind: TermKind,
    /// Where it was written.
    pub span: Span,
}

impl Terminator {
    /// The successor labels in order (`nonzero` before `zero`).
    pub fn successors(&self) -> Vec<&str> {
        match &self.kind {
            TermKind::Jmp(l) => vec![l.as_str()],
            TermKind::Brnz { nonzero, zero, .. } => vec![nonzero.as_str(), zero.as_str()],
            TermKind::End => vec![],
        }
    }
}

/// What a block issues before its terminator, in one of the two forms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// Source form: one instruction per line.
    Source(Vec<Inst>),
    /// Machine form: one bundle per issue cycle.
    Machine(Vec<Bundle>),
}

impl Body {
    /// The form this body is in.
    pub fn form(&self) -> Form {
        match self {
            Body::Source(_) => Form::Source,
            Body::Machine(_) => Form::Machine,
        }
    }
    /// An empty body of `form`.
    pub fn empty(form: Form) -> Body {
        match form {
            Form::Source => Body::Source(Vec::new()),
            Form::Machine => Body::Machine(Vec::new()),
        }
    }
}

/// A labelled block. Its body is in the program's [`Form`] (the parser,
/// the compiler and the generators build it so; [`Block::insts`] of a
/// machine block and [`Block::bundles`] of a source block are empty).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    /// The label, unique within the program.
    pub label: SmolStr,
    /// The instructions or bundles.
    pub body: Body,
    /// The block's terminator.
    pub term: Terminator,
    /// Where the label was written.
    pub span: Span,
}

impl Block {
    /// A source-form block.
    pub fn source(label: SmolStr, insts: Vec<Inst>, term: Terminator, span: Span) -> Block {
        Block { label, body: Body::Source(insts), term, span }
    }
    /// A machine-form block.
    pub fn machine(label: SmolStr, bundles: Vec<Bundle>, term: Terminator, span: Span) -> Block {
        Block { label, body: Body::Machine(bundles), term, span }
    }
    /// The source instructions; empty for a machine block.
    pub fn insts(&self) -> &[Inst] {
        match &self.body {
            Body::Source(v) => v,
            Body::Machine(_) => &[],
        }
    }
    /// The bundles; empty for a source block.
    pub fn bundles(&self) -> &[Bundle] {
        match &self.body {
            Body::Machine(v) => v,
            Body::Source(_) => &[],
        }
    }
    /// The source instructions, to edit in place; empty for a machine block.
    pub fn insts_mut(&mut self) -> &mut [Inst] {
        match &mut self.body {
            Body::Source(v) => v,
            Body::Machine(_) => &mut [],
        }
    }
    /// The bundles, to edit in place; empty for a source block.
    pub fn bundles_mut(&mut self) -> &mut [Bundle] {
        match &mut self.body {
            Body::Machine(v) => v,
            Body::Source(_) => &mut [],
        }
    }
    /// The list of source instructions, to add or remove some; `None` for a
    /// machine block.
    pub fn inst_list(&mut self) -> Option<&mut Vec<Inst>> {
        match &mut self.body {
            Body::Source(v) => Some(v),
            Body::Machine(_) => None,
        }
    }
    /// The list of bundles, to add or remove some; `None` for a source block.
    pub fn bundle_list(&mut self) -> Option<&mut Vec<Bundle>> {
        match &mut self.body {
            Body::Machine(v) => Some(v),
            Body::Source(_) => None,
        }
    }
    /// The source instructions, leaving the block's list empty; empty for
    /// a machine block.
    pub fn take_insts(&mut self) -> Vec<Inst> {
        self.inst_list().map(std::mem::take).unwrap_or_default()
    }
}

/// An `input` line: a register live at entry, bound to a virtual register in
/// the source form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Input {
    /// The virtual register it defines (source form), `None` in the machine
    /// form.
    pub vreg: Option<VirtReg>,
    /// The register run it arrives in.
    pub reg: PhysReg,
    /// Where it was written.
    pub span: Span,
}

/// A whole shader in either form.
#[derive(Clone, Debug)]
pub struct Program {
    /// `shader NAME`, if given.
    pub name: Option<String>,
    /// The target this program is for.
    pub target: &'static Target,
    /// The stage (the target's default when not written).
    pub stage: Stage,
    /// Source or machine form.
    pub form: Form,
    /// Registers live at entry.
    pub inputs: Vec<Input>,
    /// The blocks; the first is the entry.
    pub blocks: Vec<Block>,
}

impl PartialEq for Program {
    fn eq(&self, o: &Program) -> bool {
        self.name == o.name
            && self.target.name == o.target.name
            && self.stage == o.stage
            && self.form == o.form
            && self.inputs == o.inputs
            && self.blocks == o.blocks
    }
}

impl Program {
    /// The index of the block with this label.
    pub fn block_index(&self, label: &str) -> Option<usize> {
        self.blocks.iter().position(|b| b.label == label)
    }
    /// Number of source instructions or machine ops over all blocks.
    pub fn op_count(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| match &b.body {
                Body::Source(v) => v.len(),
                Body::Machine(v) => v.iter().map(|x| x.ops.len()).sum(),
            })
            .sum()
    }
    /// Number of bundles over all blocks (machine form).
    pub fn bundle_count(&self) -> usize {
        self.blocks.iter().map(|b| b.bundles().len()).sum()
    }
    /// A copy with every span cleared and every non-finite float immediate
    /// marked as an integer (the text format writes those in hex, so the
    /// flag does not survive printing). Two programs whose normalised copies
    /// are equal print the same text.
    pub fn normalized(&self) -> Program {
        let mut p = self.clone();
        let imm = |o: &mut Operand| {
            if let Operand::Imm(i) = o {
                i.float = i.float && f32::from_bits(i.bits).is_finite();
            }
        };
        let inst = |i: &mut Inst| {
            i.span = Span::default();
            i.dest.iter_mut().chain(i.srcs.iter_mut()).for_each(imm);
        };
        p.inputs.iter_mut().for_each(|i| i.span = Span::default());
        for b in &mut p.blocks {
            b.span = Span::default();
            b.term.span = Span::default();
            if let TermKind::Brnz { cond, .. } = &mut b.term.kind {
                imm(cond);
            }
            match &mut b.body {
                Body::Source(v) => v.iter_mut().for_each(inst),
                Body::Machine(v) => {
                    for x in v {
                        x.span = Span::default();
                        x.ops.iter_mut().for_each(|o| inst(&mut o.inst));
                    }
                }
            }
        }
        p
    }
    /// Whether two programs are equal up to spans (see [`Program::normalized`]):
    /// the round-trip property is `parse(print(p)).same_as(p)`.
    pub fn same_as(&self, other: &Program) -> bool {
        self.normalized() == other.normalized()
    }
    /// The register's name on this program's target, without `$`.
    pub fn reg_name(&self, r: Reg) -> String {
        self.target.regs.name(r)
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::print::print(self))
    }
}
