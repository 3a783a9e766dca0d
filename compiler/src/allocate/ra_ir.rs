//! The register allocator's working form of a source program.
//!
//! [`Func`] is a source-form program with virtual registers numbered
//! ([`ValId`]), every opcode resolved to its [`OpDesc`], block successors
//! resolved to indices, and every instruction tagged with the [`Kind`] of code
//! it is (source, input copy, split copy, spill code). `input %x = $P` lines
//! become `%x = mov $P` copies at the top of the entry block, so that an input
//! is an ordinary value whose register is merely *preferred* to be `P`.
//!
//! Invariant: after allocation every [`Loc`] is [`Loc::Phys`] or
//! [`Loc::Scratch`] ([`Func::check_physical`]); [`emit_with`] then gives
//! each instruction's allocated form, from which the bundler lowers its
//! machine ops, and [`Func::into_program_resolved`] the whole *allocated program*
//! (source form, physical operands only).

use crate::source_ids::SourceIds;
use crate::CompileError;
use rustc_hash::FxHashMap as HashMap;
use schedra_ir::target::{Dest, OpDesc, Sem};
use schedra_ir::SmolStr;
use schedra_ir::{
    Block, Body, Form, Imm, Inst, Operand, PhysReg, Program, Span, Stage, Target, TermKind, Terminator,
};

/// A virtual register's number.
pub type ValId = u32;

/// A fixed-capacity register set (up to [`RegSet::CAP`] registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegSet([u64; 8]);

impl RegSet {
    /// Largest register file this set can describe.
    pub const CAP: usize = 512;
    /// Add register `r` (ignored when out of range).
    pub fn insert(&mut self, r: u16) {
        if (r as usize) < Self::CAP {
            self.0[r as usize / 64] |= 1 << (r % 64);
        }
    }
    /// Whether `r` is in the set.
    pub fn contains(&self, r: u16) -> bool {
        (r as usize) < Self::CAP && self.0[r as usize / 64] & (1 << (r % 64)) != 0
    }
    /// Add every register of `run`.
    pub fn insert_run(&mut self, run: PhysReg) {
        // A one-register run (the usual case) without a range walk.
        if run.size == 1 {
            self.insert(run.base);
        } else {
            run.regs().for_each(|r| self.insert(r));
        }
    }
    /// Whether any register of `run` is in the set.
    pub fn overlaps(&self, run: PhysReg) -> bool {
        if run.size == 1 {
            self.contains(run.base)
        } else {
            run.regs().any(|r| self.contains(r))
        }
    }
    /// Add every register of `o`.
    pub fn union_with(&mut self, o: &RegSet) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a |= b;
        }
    }
    /// Add register `x - from` for every element `x >= from` of the bit
    /// set with words `words` (element `x` is bit `x % 64` of word
    /// `x / 64`), a word at a time.
    pub fn insert_shifted(&mut self, words: &[u64], from: usize) {
        let (q, s) = (from / 64, (from % 64) as u32);
        let rest = words.get(q..).unwrap_or(&[]);
        for (j, out) in self.0.iter_mut().enumerate().take(rest.len()) {
            let lo = rest.get(j).copied().unwrap_or(0) >> s;
            let hi = match s {
                0 => 0,
                _ => rest.get(j + 1).copied().unwrap_or(0) << (64 - s),
            };
            *out |= lo | hi;
        }
    }
    /// Number of registers in the set that are not in `o`.
    pub fn difference_len(&self, o: &RegSet) -> usize {
        self.0
            .iter()
            .zip(o.0.iter())
            .map(|(a, b)| (a & !b).count_ones() as usize)
            .sum()
    }
    /// Number of registers in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// The registers in the set, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        self.0.iter().enumerate().flat_map(|(wi, &w)| {
            schedra_ir::cfg::word_bits(wi, w).map(|r| r as u16)
        })
    }
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// Where an operand lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// A virtual register (before allocation).
    Val(ValId),
    /// A physical register run: preallocated in the source, or assigned.
    Phys(PhysReg),
    /// A scratch register run used by spill code (spill source, fill
    /// destination, rematerialised value): reserved around that code only.
    Scratch(PhysReg),
}

impl Loc {
    /// The physical run, if the location is physical.
    pub fn phys(self) -> Option<PhysReg> {
        match self {
            Loc::Phys(p) | Loc::Scratch(p) => Some(p),
            Loc::Val(_) => None,
        }
    }
}

/// One operand of an instruction (no target op takes a label, so the
/// allocator's form has none: lowering refuses one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ROperand {
    /// A register operand.
    Loc(Loc),
    /// An immediate (ALU immediate or index).
    Imm(Imm),
}

impl Default for ROperand {
    fn default() -> ROperand {
        ROperand::Imm(Imm::int(0))
    }
}

/// An instruction's sources, kept inline (no allocation per instruction):
/// at most [`Srcs::CAP`], the most any target op takes (lowering refuses
/// an instruction with more).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Srcs {
    len: u8,
    ops: [ROperand; Srcs::CAP],
}

impl Srcs {
    /// The most sources an instruction may have.
    pub const CAP: usize = 3;
    /// Append `o`; `false` (and nothing appended) when the list is full.
    pub fn push(&mut self, o: ROperand) -> bool {
        let Some(slot) = self.ops.get_mut(self.len as usize) else {
            return false;
        };
        *slot = o;
        self.len += 1;
        true
    }
}

impl std::ops::Deref for Srcs {
    type Target = [ROperand];
    fn deref(&self) -> &[ROperand] {
        self.ops.get(..self.len as usize).unwrap_or(&[])
    }
}

impl std::ops::DerefMut for Srcs {
    fn deref_mut(&mut self) -> &mut [ROperand] {
        self.ops.get_mut(..self.len as usize).unwrap_or(&mut [])
    }
}

impl From<ROperand> for Srcs {
    /// The one-source list.
    fn from(o: ROperand) -> Srcs {
        let mut s = Srcs::default();
        s.push(o);
        s
    }
}

impl From<[ROperand; 2]> for Srcs {
    /// The two-source list.
    fn from([a, b]: [ROperand; 2]) -> Srcs {
        let mut s = Srcs::from(a);
        s.push(b);
        s
    }
}

impl<'a> IntoIterator for &'a Srcs {
    type Item = &'a ROperand;
    type IntoIter = std::slice::Iter<'a, ROperand>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Srcs {
    type Item = &'a mut ROperand;
    type IntoIter = std::slice::IterMut<'a, ROperand>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl ROperand {
    /// The location, if the operand is a register.
    pub fn loc(&self) -> Option<Loc> {
        match self {
            ROperand::Loc(l) => Some(*l),
            _ => None,
        }
    }
}

/// What kind of code an instruction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An instruction of the source program.
    Source,
    /// `%x = mov $P` made from `input %x = $P`.
    InputCopy,
    /// A live-range split copy inserted by linear scan.
    SplitCopy,
    /// A scratch write after a spilled value's definition.
    SpillStore,
    /// A scratch read before a spilled value's use.
    Fill,
    /// A rematerialised uniform or constant load.
    Remat,
}

/// An instruction of the working form.
#[derive(Clone, Debug)]
pub struct RInst {
    /// The opcode's description.
    pub desc: &'static OpDesc,
    /// The destination, if any.
    pub dest: Option<Loc>,
    /// The sources in order.
    pub srcs: Srcs,
    /// Where the source instruction was written (0 for inserted code).
    pub span: Span,
    /// What kind of code this is.
    pub kind: Kind,
}

impl RInst {
    /// The register locations this instruction reads (terminators aside).
    pub fn use_locs(&self) -> impl Iterator<Item = Loc> + '_ {
        self.srcs.iter().filter_map(ROperand::loc)
    }

    /// Whether this is a copy whose destination is the same physical run as
    /// its source: the allocated program leaves it out ([`emit_with`]).
    pub fn is_identity_copy(&self) -> bool {
        let src = self.srcs.first().and_then(ROperand::loc).and_then(Loc::phys);
        self.desc.sem == Sem::Mov && src.is_some() && self.dest.and_then(Loc::phys) == src
    }
}

/// A block of the working form.
#[derive(Clone, Debug)]
pub struct RBlock {
    /// The label.
    pub label: SmolStr,
    /// Instructions in order.
    pub insts: Vec<RInst>,
    /// The original terminator (labels, span).
    pub term: Terminator,
    /// The branch condition, if the terminator reads one.
    pub cond: Option<ROperand>,
    /// Successor block indices.
    pub succs: crate::inline::InlineVec<usize, 2>,
    /// Where the label was written.
    pub span: Span,
}

/// One virtual register.
#[derive(Clone, Debug)]
pub struct ValInfo {
    /// Where its name (in the source, or a synthesised one) lies in
    /// [`Func::val_names`]: start and length in bytes ([`Func::val_name`]).
    pub name_at: (u32, u32),
    /// Its size in registers.
    pub size: u8,
}

/// A program in the allocator's working form.
#[derive(Clone, Debug)]
pub struct Func {
    /// The shader's name.
    pub name: Option<String>,
    /// The target.
    pub target: &'static Target,
    /// The stage.
    pub stage: Stage,
    /// The original `input` lines without their virtual registers (the
    /// input copies at the top of the entry block carry those): as the
    /// allocated and the machine program list them.
    pub inputs: Vec<schedra_ir::Input>,
    /// The blocks; the first is the entry.
    pub blocks: Vec<RBlock>,
    /// The virtual registers.
    pub vals: Vec<ValInfo>,
    /// The values' names, one after the other (one buffer instead of a
    /// string per value).
    pub val_names: String,
    /// Next free scratch slot (in words).
    pub next_slot: u32,
}

fn unsupported(msg: impl Into<String>) -> CompileError {
    CompileError::Unsupported(msg.into())
}

/// The position of `desc` in `t`'s opcode table, if it is one of its
/// entries (found by address: no string comparison).
pub fn op_index(t: &Target, desc: &OpDesc) -> Option<usize> {
    let size = std::mem::size_of::<OpDesc>().max(1);
    let offset = (std::ptr::from_ref(desc) as usize).checked_sub(t.ops.as_ptr() as usize)?;
    let i = offset / size;
    t.ops.get(i).filter(|o| std::ptr::eq(*o, desc)).map(|_| i)
}

/// The target's plain register copy (`mov`).
pub fn mov_desc(t: &'static Target) -> Result<&'static OpDesc, CompileError> {
    t.ops
        .iter()
        .find(|o| o.sem == Sem::Mov && o.dest == Dest::Explicit)
        .ok_or_else(|| unsupported(format!("target {} has no mov", t.name)))
}

/// The target's constant load (v3d71 `ldconst`), if it has one.
fn const_desc(t: &'static Target) -> Option<&'static OpDesc> {
    t.ops.iter().find(|o| o.sem == Sem::Const)
}

/// The target's op with semantics `sem` (scratch read/write).
pub fn desc_by_sem(t: &'static Target, sem: Sem) -> Result<&'static OpDesc, CompileError> {
    t.ops
        .iter()
        .find(|o| o.sem == sem)
        .ok_or_else(|| unsupported(format!("target {} has no op for {:?}", t.name, sem)))
}

/// Numbers the values while lowering: each program name (by its id in
/// [`SourceIds`]) becomes a value when declared; synthesised names
/// (`#immN`) that are not program names are kept by text.
struct Names<'a, 'p> {
    ids: &'a SourceIds<'p>,
    /// The value of each name id, once declared.
    val_of: Vec<Option<ValId>>,
    /// Values of synthesised names that are not names of the program.
    synth: HashMap<String, ValId>,
    vals: Vec<ValInfo>,
    /// The names of `vals`, one after the other.
    text: String,
}

impl Names<'_, '_> {
    /// The value of name `id`, made (with `size`) if not declared yet.
    fn declare(&mut self, id: u32, size: u8) -> Option<ValId> {
        let next = self.vals.len() as ValId;
        let slot = self.val_of.get_mut(id as usize)?;
        if let Some(v) = *slot {
            return Some(v);
        }
        *slot = Some(next);
        let name_at = push_name(&mut self.text, self.ids.name(id));
        self.vals.push(ValInfo {
            name_at,
            size: size.max(1),
        });
        Some(next)
    }
    /// The value named `name` (a synthesised name), made if new.
    fn declare_text(&mut self, name: String, size: u8) -> ValId {
        if let Some(v) = self.ids.id_of(&name).and_then(|id| self.declare(id, size)) {
            return v;
        }
        let next = self.vals.len() as ValId;
        let v = *self.synth.entry(name.clone()).or_insert(next);
        if v == next {
            let name_at = push_name(&mut self.text, &name);
            self.vals.push(ValInfo {
                name_at,
                size: size.max(1),
            });
        }
        v
    }
    /// The value of name `id` (whose text is `name`), which must be declared.
    #[inline]
    fn get(&self, id: Option<u32>, name: &str) -> Result<ValId, CompileError> {
        match id.and_then(|id| self.val_of.get(id as usize).copied().flatten()) {
            Some(v) => Ok(v),
            None => Err(undefined(name)),
        }
    }
}

/// The error for a use of `%name`, which no instruction or input defines.
#[cold]
#[inline(never)]
fn undefined(name: &str) -> CompileError {
    unsupported(format!("%{name} is used but never defined"))
}

/// The error for the label `l` used as an operand.
#[cold]
#[inline(never)]
fn label_operand(l: &str) -> CompileError {
    unsupported(format!(
        "the label `{l}` as an operand; labels are operands of terminators only"
    ))
}

/// Append `name` to `text`; where it lies there (start, length).
fn push_name(text: &mut String, name: &str) -> (u32, u32) {
    let at = (text.len() as u32, name.len() as u32);
    text.push_str(name);
    at
}

/// Lower operand `o`, whose name id (when it is a virtual register) is `id`.
#[inline]
fn lower_operand(o: &Operand, id: Option<u32>, names: &Names) -> Result<ROperand, CompileError> {
    Ok(match o {
        Operand::Virt(v) => ROperand::Loc(Loc::Val(names.get(id, &v.name)?)),
        Operand::Phys(p) => ROperand::Loc(Loc::Phys(*p)),
        Operand::Imm(i) => ROperand::Imm(*i),
        Operand::Label(l) => return Err(label_operand(l)),
        Operand::Bypass(b) => return Err(CompileError::Unsupported(format!("bypass read `^{}.{}` in a source program", b.unit, b.dist))),
    })
}

impl Func {
    /// [`Func::from_resolved`] of `p` as written.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn from_program(p: &Program) -> Result<Func, CompileError> {
        Func::from_resolved(p, &SourceIds::new(p), None)
    }

    /// Lower the source-form program `p` (opcodes and names resolved in
    /// `ids`, which must be `SourceIds::new(p)`), each block's instructions
    /// taken in the order `orders[b]` (indices into the block's `insts`),
    /// exactly as if the program had first been rewritten in that order
    /// (the pre-RA scheduler's result) — without building that program.
    /// Fails on the machine form, unknown opcodes, undefined values or
    /// unknown labels (all rejected earlier by validation).
    pub fn from_resolved(
        p: &Program,
        ids: &SourceIds,
        orders: Option<&[Vec<usize>]>,
    ) -> Result<Func, CompileError> {
        if p.form != Form::Source {
            return Err(CompileError::NotSource);
        }
        if p.target.regs.count as usize > RegSet::CAP {
            return Err(unsupported("register file too large"));
        }
        let order_of = |bi: usize| orders.and_then(|o| o.get(bi));
        let mut names = declare_names(p, ids, &order_of);
        let mov = mov_desc(p.target)?;
        let konst = const_desc(p.target);
        let mut blocks = Vec::with_capacity(p.blocks.len());
        for (bi, b) in p.blocks.iter().enumerate() {
            let order = ordered_insts(b, order_of(bi));
            let mut insts = Vec::with_capacity(order.size_hint().1.unwrap_or(0));
            if bi == 0 {
                input_copies(p, mov, &names, &mut insts)?;
            }
            for (k, i) in order {
                lower_inst(p.target, (bi, k), i, &names, &mut insts)?;
                legalize_imms(p.target, konst, &mut names, &mut insts);
            }
            blocks.push(lower_block_end((bi, b), insts, &names, p)?);
        }
        Ok(Func {
            name: p.name.clone(),
            target: p.target,
            stage: p.stage,
            inputs: p
                .inputs
                .iter()
                .map(|i| schedra_ir::Input {
                    vreg: None,
                    reg: i.reg,
                    span: i.span,
                })
                .collect(),
            blocks,
            vals: names.vals,
            val_names: names.text,
            next_slot: 0,
        })
    }

    /// The name of value `v` (`None` when there is no such value).
    pub fn val_name(&self, v: ValId) -> Option<&str> {
        let (start, len) = self.vals.get(v as usize)?.name_at;
        self.val_names
            .get(start as usize..start as usize + len as usize)
    }

    /// The size in registers of a location.
    pub fn size(&self, l: Loc) -> u8 {
        match l {
            Loc::Val(v) => self.vals.get(v as usize).map_or(1, |x| x.size),
            Loc::Phys(p) | Loc::Scratch(p) => p.size,
        }
    }

    /// Whether every location is physical; else the error
    /// [`Func::into_program_resolved`] would give (the first virtual location, block
    /// by block: an instruction's destination, then its sources, then the
    /// branch condition).
    pub fn check_physical(&self) -> Result<(), CompileError> {
        let virt = |l: Option<Loc>| matches!(l, Some(Loc::Val(_)));
        for b in &self.blocks {
            for i in &b.insts {
                if virt(i.dest) {
                    return Err(CompileError::Allocation(
                        "a destination was left without a register".into(),
                    ));
                }
                if i.use_locs().any(|l| virt(Some(l))) {
                    return Err(left_virtual());
                }
            }
            let brnz = matches!(b.term.kind, TermKind::Brnz { .. });
            if brnz && virt(b.cond.as_ref().and_then(ROperand::loc)) {
                return Err(left_virtual());
            }
        }
        Ok(())
    }

    /// Back to a program once every location is physical, with each
    /// block's op descriptions parallel to its instructions (so that later
    /// stages need not look opcodes up). Copies whose source and
    /// destination are the same run are dropped; copies wider than the
    /// target's ALU operands are split into chunks, ordered so that an
    /// overlapping source is read before it is overwritten.
    #[allow(clippy::type_complexity)]
    pub fn into_program_resolved(
        self,
    ) -> Result<(Program, Vec<Vec<&'static OpDesc>>), CompileError> {
        let target = self.target;
        let mut blocks = Vec::with_capacity(self.blocks.len());
        let mut descs = Vec::with_capacity(self.blocks.len());
        for b in self.blocks {
            let mut insts = Vec::with_capacity(b.insts.len());
            let mut block_descs = Vec::with_capacity(b.insts.len());
            for i in &b.insts {
                emit_with(target, i, &mut |x| {
                    insts.push(x);
                    Ok(())
                })?;
                block_descs.resize(insts.len(), i.desc);
            }
            descs.push(block_descs);
            let mut term = b.term;
            if let (TermKind::Brnz { cond, .. }, Some(c)) = (&mut term.kind, &b.cond) {
                *cond = phys_operand(c)?;
            }
            blocks.push(Block {
                label: b.label,
                body: Body::Source(insts),
                term,
                span: b.span,
            });
        }
        let program = Program {
            name: self.name,
            target,
            stage: self.stage,
            form: Form::Source,
            inputs: self.inputs,
            blocks,
        };
        Ok((program, descs))
    }
}

/// Every value name of `p` with its size: the inputs' names, then each
/// destination of the blocks' instructions in lowering order (block `b`'s
/// order is `order_of(b)`, see [`ordered_insts`]), numbered in that order.
fn declare_names<'a, 'p, 'o>(
    p: &Program,
    ids: &'a SourceIds<'p>,
    order_of: &dyn Fn(usize) -> Option<&'o Vec<usize>>,
) -> Names<'a, 'p> {
    // At most one value per input and per instruction: sized once.
    let bound = p.inputs.len() + p.blocks.iter().map(|b| b.insts().len()).sum::<usize>();
    let mut names = Names {
        ids,
        val_of: vec![None; ids.len()],
        synth: HashMap::default(),
        vals: Vec::with_capacity(bound),
        text: String::with_capacity(4 * bound),
    };
    for (n, i) in p.inputs.iter().enumerate() {
        if let (Some(v), Some(id)) = (&i.vreg, ids.input(n)) {
            names.declare(id, v.size.unwrap_or(i.reg.size));
        }
    }
    for (bi, b) in p.blocks.iter().enumerate() {
        for (k, i) in ordered_insts(b, order_of(bi)) {
            if let (Some(Operand::Virt(v)), Some(id)) = (&i.dest, ids.dest(bi, k)) {
                names.declare(id, v.size.unwrap_or(1));
            }
        }
    }
    names
}

/// Append to `insts` a copy (`mov`) of each named input's preallocated
/// register into its value: the entry block's first instructions.
fn input_copies(
    p: &Program,
    mov: &'static OpDesc,
    names: &Names,
    insts: &mut Vec<RInst>,
) -> Result<(), CompileError> {
    for (n, i) in p.inputs.iter().enumerate() {
        if let Some(v) = &i.vreg {
            insts.push(RInst {
                desc: mov,
                dest: Some(Loc::Val(names.get(names.ids.input(n), &v.name)?)),
                srcs: ROperand::Loc(Loc::Phys(i.reg)).into(),
                span: i.span,
                kind: Kind::InputCopy,
            });
        }
    }
    Ok(())
}

/// The lowered block of `b` with the lowered instructions `insts`: its
/// successors as resolved once in [`SourceIds::succs`] (an unknown label
/// fails) and its branch condition lowered.
fn lower_block_end(
    (bi, b): (usize, &Block),
    insts: Vec<RInst>,
    names: &Names,
    p: &Program,
) -> Result<RBlock, CompileError> {
    let succs = names.ids.succs().of(bi);
    if succs.len() != schedra_ir::cfg::successor_labels(&b.term).count() {
        return Err(unknown_label(p, b));
    }
    let cond = match &b.term.kind {
        TermKind::Brnz { cond, .. } => Some(lower_operand(cond, names.ids.cond(bi), names)?),
        _ => None,
    };
    Ok(RBlock {
        label: b.label.clone(),
        insts,
        term: b.term.clone(),
        cond,
        succs: succs.iter().copied().collect(),
        span: b.span,
    })
}

/// The error for block `b` of `p`, a successor label of which names no
/// block.
#[cold]
fn unknown_label(p: &Program, b: &Block) -> CompileError {
    let labels = schedra_ir::cfg::BlockIndex::new(p);
    let l = schedra_ir::cfg::successor_labels(&b.term)
        .find(|l| labels.get(l).is_none())
        .unwrap_or_default();
    unsupported(format!("unknown label `{l}`"))
}

/// `b`'s instructions in `order` (indices into `b.insts`; indices beyond
/// the block skipped), or as written, each with its index.
fn ordered_insts<'p>(
    b: &'p Block,
    order: Option<&'p Vec<usize>>,
) -> impl Iterator<Item = (usize, &'p Inst)> + 'p {
    let n = order.map_or(b.insts().len(), Vec::len);
    (0..n).filter_map(move |j| {
        let k = match order {
            Some(o) => *o.get(j)?,
            None => j,
        };
        b.insts().get(k).map(|i| (k, i))
    })
}

/// Lower instruction `k` of block `b` (`i`) and push it to `out`.
fn lower_inst(
    t: &'static Target,
    (b, k): (usize, usize),
    i: &Inst,
    names: &Names,
    out: &mut Vec<RInst>,
) -> Result<(), CompileError> {
    let ids = names.ids.inst(b, k);
    let desc = ids
        .desc()
        .ok_or_else(|| unsupported(format!("unknown opcode `{}` for {}", i.opcode, t.name)))?;
    let dest = match &i.dest {
        None => None,
        Some(o) => match lower_operand(o, ids.operand(0), names)? {
            ROperand::Loc(l) => Some(l),
            _ => {
                return Err(unsupported(format!(
                    "`{}` has a destination that is not a register",
                    i.opcode
                )))
            }
        },
    };
    let mut srcs = Srcs::default();
    for (s, o) in i.srcs.iter().enumerate() {
        if !srcs.push(lower_operand(o, ids.operand(1 + s), names)?) {
            return Err(unsupported(format!(
                "`{}` has more than {} sources",
                i.opcode,
                Srcs::CAP
            )));
        }
    }
    out.push(RInst {
        desc,
        dest,
        srcs,
        span: i.span,
        kind: Kind::Source,
    });
    Ok(())
}

/// The error for a source or condition left virtual.
fn left_virtual() -> CompileError {
    CompileError::Allocation("a value was left without a register".into())
}

/// `o` as an operand of the allocated program (a location must be
/// physical).
#[inline]
pub fn phys_operand(o: &ROperand) -> Result<Operand, CompileError> {
    Ok(match o {
        ROperand::Loc(l) => Operand::Phys(l.phys().ok_or_else(left_virtual)?),
        ROperand::Imm(i) => Operand::Imm(*i),
    })
}

/// The allocated instruction(s) of `i` (every location physical), each
/// handed to `out`: nothing for an identity copy
/// ([`RInst::is_identity_copy`]), chunks for a copy wider than the
/// target's ALU operands ([`emit_chunked_copy`]), else one instruction.
/// A location left virtual fails (the destination first, then the sources
/// in order).
pub fn emit_with(
    t: &'static Target,
    i: &RInst,
    out: &mut impl FnMut(Inst) -> Result<(), CompileError>,
) -> Result<(), CompileError> {
    let dest = match i.dest {
        Some(l) => Some(Operand::Phys(l.phys().ok_or_else(|| {
            CompileError::Allocation("a destination was left without a register".into())
        })?)),
        None => None,
    };
    let mut srcs = Vec::with_capacity(i.srcs.len());
    for o in &i.srcs {
        srcs.push(phys_operand(o)?);
    }
    let copy = if i.desc.sem == Sem::Mov {
        dest.as_ref()
            .and_then(Operand::phys)
            .zip(srcs.first().and_then(Operand::phys))
    } else {
        None
    };
    if let Some((d, s)) = copy {
        if d == s {
            return Ok(());
        }
        if d.size > t.max_alu_size && d.size == s.size {
            return emit_chunked_copy(i, d, s, t.max_alu_size.max(1), out);
        }
    }
    out(Inst {
        opcode: SmolStr::new_static(i.desc.name),
        dest,
        srcs,
        span: i.span,
    })
}

/// A copy of `s` into `d` in chunks of at most `chunk` registers, in an order
/// that reads every source register before any chunk overwrites it.
fn emit_chunked_copy(
    i: &RInst,
    d: PhysReg,
    s: PhysReg,
    chunk: u8,
    out: &mut impl FnMut(Inst) -> Result<(), CompileError>,
) -> Result<(), CompileError> {
    let mut offs: Vec<u8> = (0..d.size).step_by(chunk as usize).collect();
    if d.base > s.base {
        offs.reverse();
    }
    for o in offs {
        let n = chunk.min(d.size - o);
        let dd = PhysReg {
            base: d.base + o as u16,
            size: n,
        };
        let ss = PhysReg {
            base: s.base + o as u16,
            size: n,
        };
        out(Inst {
            opcode: SmolStr::new_static(i.desc.name),
            dest: Some(Operand::Phys(dd)),
            srcs: vec![Operand::Phys(ss)],
            span: i.span,
        })?;
    }
    Ok(())
}

/// Legalize the instruction just pushed to `out`: immediates beyond the
/// most one bundle may carry (v3d71: one distinct word) move into fresh
/// values loaded by the target's constant op (`ldconst`), pushed before
/// it. Targets without one keep the instruction as is. `konst` is the
/// target's constant op ([`const_desc`]).
fn legalize_imms(
    t: &'static Target,
    konst: Option<&'static OpDesc>,
    names: &mut Names,
    out: &mut Vec<RInst>,
) {
    let Some(konst) = konst else {
        return;
    };
    let has_imm = |i: &RInst| i.srcs.iter().any(|s| matches!(s, ROperand::Imm(_)));
    if !out.last().is_some_and(has_imm) {
        return;
    }
    let Some(mut i) = out.pop() else {
        return;
    };
    // The distinct immediate words kept so far (no allocation: the
    // target's limit is a handful).
    let mut seen: crate::inline::InlineVec<usize, 4> = Default::default();
    let kinds = i.desc.operands;
    for (k, s) in i.srcs.iter_mut().enumerate() {
        let ROperand::Imm(imm) = *s else { continue };
        if kinds.get(k) != Some(&schedra_ir::target::OperandKind::Value)
            || seen.contains(&(imm.bits as usize))
        {
            continue;
        }
        if seen.len() < t.rules.max_bundle_imms() {
            seen.push(imm.bits as usize);
            continue;
        }
        let v = names.declare_text(format!("#imm{}", names.vals.len()), 1);
        out.push(RInst {
            desc: konst,
            dest: Some(Loc::Val(v)),
            srcs: ROperand::Imm(Imm {
                bits: imm.bits,
                float: false,
            })
            .into(),
            span: i.span,
            kind: Kind::Source,
        });
        *s = ROperand::Loc(Loc::Val(v));
    }
    out.push(i);
}

/// Test helper: parse `src` and lower it into the allocator's form; panics
/// on bad text (tests only).
#[cfg(test)]
pub(crate) fn test_func(src: &str) -> Func {
    let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parse");
    Func::from_program(&p).expect("lower")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_kept_inline_up_to_the_cap() {
        let mut s = Srcs::default();
        for k in 0..Srcs::CAP {
            assert!(s.push(ROperand::Imm(Imm::int(k as i64))));
        }
        assert!(!s.push(ROperand::Loc(Loc::Val(0))));
        assert_eq!(s.len(), Srcs::CAP);
        assert_eq!(s.last(), Some(&ROperand::Imm(Imm::int(2))));
    }

    #[test]
    fn label_operands_are_refused() {
        let src = "target v3d71\nb0:\n %a = ldunif 0\n %b = fadd %a, b0\n tlbw %b\n end\n";
        let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parse");
        assert!(matches!(Func::from_program(&p), Err(CompileError::Unsupported(m)) if m.contains("b0")));
    }
}
