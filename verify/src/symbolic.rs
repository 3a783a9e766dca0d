//! Symbolic execution of one block of either form.
//!
//! Both simulators give every op the *same* meaning ([`outcome`]): the
//! verifier's own reading of the target's [`Sem`] (word-wise ALU ops, outside
//! inputs as leaves, texture words as functions of the coordinates, scratch
//! slots, output effects; a fragment discard is an effect whose last word is
//! its place, the literal count of the block's earlier outputs,
//! [`Channel::place`]). They differ only in *when* values move:
//!
//! - [`run_source`]: the source form, one op after another, over variables
//!   ([`Var`]: virtual register words, physical registers the source names,
//!   scratch slots).
//! - [`run_machine`]: the machine form, cycle-accurate per
//!   `semantics.md` "Time in the machine form". Each bundle issues in one
//!   cycle; all its reads happen at issue (parallel reads), before any of its
//!   writes land; a write issued at `c` with latency `L` lands at `c + L`. On a
//!   non-interlocked target (a padded or encoded-waits clock) a read before
//!   the landing sees the old contents; on an interlocked one the bundle
//!   waits (stall cycles) until the registers it reads or writes have no
//!   write in flight. A read of a result after its read window's maximum
//!   (issue + max) is a timing issue (`latency`). Every write is recorded as
//!   an event; the reads (with their provenance, for the diagnosis) only
//!   when asked: the fixpoint runs without them, and a diagnosis runs the
//!   block again from the same entry with recording on, which reads the
//!   same terms and makes no new one.
//!
//! Invariant: a machine register's term at any cycle is the term of the last
//! write that landed on it (or its block-entry term), and every read event
//! records exactly that term and that write.

use crate::ids::{VregId, Vregs};
use crate::regfile::{RegMap, RegTable, SlotMap};
use crate::machcode::{MachArg, MachBlock, MachCode, MachCond, MachOp};
use crate::srccode::{Arg, SrcCode};
use crate::term::{Fun, Node, SymKey, SymKind, Term, Terms};
use crate::texunit::TexUnit;
use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem, DISCARD_CHANNEL};
use schedra_ir::SmolStr;
use schedra_ir::{Inst, Operand, PhysReg, Program, Reg};
use rustc_hash::FxHashMap;

/// A source-form variable: one word of a value the source names. Ordered
/// as the names are (see [`crate::ids`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Var {
    /// Word `.1` of virtual register `%.0`.
    V(VregId, u8),
    /// A physical register named by the source.
    P(Reg),
    /// A scratch slot.
    S(u32),
}

impl Var {
    /// The variable as a symbol key of the given scheme (distinct
    /// variables give distinct keys).
    pub fn key(self, kind: SymKind) -> SymKey {
        let (a, b) = match self {
            Var::V(id, w) => (id.0, u32::from(w)),
            Var::P(r) => (u32::from(r), 0x100),
            Var::S(s) => (s, 0x200),
        };
        SymKey { kind, a, b }
    }

    /// The variable a key of [`Var::key`] was made from.
    pub fn from_key(k: SymKey) -> Var {
        match k.b {
            0x100 => Var::P(Reg::try_from(k.a).unwrap_or(Reg::MAX)),
            0x200 => Var::S(k.a),
            w => Var::V(VregId(k.a), w as u8),
        }
    }

    /// The key of the block-entry symbol of this variable. Variables
    /// spelled alike (`%a.1`: word 1 of `%a`, or register `%a.1`) share it,
    /// as they share the name.
    pub fn entry_key(self, vregs: &Vregs) -> SymKey {
        match self {
            Var::V(id, w) => match vregs.spelled_like(id, w) {
                Some(other) => Var::V(other, 0).key(SymKind::Entry),
                None => self.key(SymKind::Entry),
            },
            _ => self.key(SymKind::Entry),
        }
    }
}

/// The namer of a verification's symbols (see [`Terms::set_namer`]):
/// block ids are indices of `p`'s blocks; entry values read `%a@b1`,
/// undefined source reads `undefined V("a", 0) in source b1`, junk
/// `?rf3@b1` and `?scratch[2]@b1`.
pub fn namer(p: &Program, vregs: std::rc::Rc<Vregs>) -> crate::term::Namer {
    let labels: Vec<SmolStr> = p.blocks.iter().map(|b| b.label.clone()).collect();
    let target = p.target;
    Box::new(move |key: SymKey, block: u32| {
        let label = labels.get(block as usize).map(SmolStr::as_str).unwrap_or("?");
        let var = Var::from_key(key);
        match key.kind {
            SymKind::Entry => format!("{}@{label}", spell_var(target, &vregs, &var)),
            SymKind::Undefined => format!("undefined {} in source {label}", var_debug(&vregs, var)),
            SymKind::JunkReg => {
                let reg = target.regs.name(Reg::try_from(key.a).unwrap_or(Reg::MAX));
                let expired = if key.b == 1 { " (expired)" } else { "" };
                format!("?{reg}{expired}@{label}")
            }
            SymKind::JunkSlot => format!("?scratch[{}]@{label}", key.a),
        }
    })
}

/// An empty map with room for `n` entries (the simulators' maps grow to a
/// size known in advance; rehashing them as they grow was a visible cost).
pub fn sized<K, V>(n: usize) -> FxHashMap<K, V> {
    FxHashMap::with_capacity_and_hasher(n, Default::default())
}

/// What the machine locations hold at a block entry (registers and
/// scratch slots not listed hold junk).
#[derive(Clone, Debug, Default)]
pub struct MachEntry {
    /// Register contents.
    pub regs: RegMap,
    /// Scratch slot contents.
    pub slots: SlotMap<Term>,
}

impl MachEntry {
    /// The entry state from location terms.
    pub fn from_locs(locs: impl IntoIterator<Item = (Loc, Term)>) -> MachEntry {
        let mut e = MachEntry::default();
        for (loc, t) in locs {
            e.set(loc, t);
        }
        e
    }

    /// Set a location's term.
    pub fn set(&mut self, loc: Loc, t: Term) {
        match loc.get() {
            Place::R(r) => {
                self.regs.insert(r, t);
            }
            Place::S(s) => {
                self.slots.insert(s, t);
            }
        }
    }

    /// Set a location's term unless it has one.
    pub fn set_if_absent(&mut self, loc: Loc, t: Term) {
        match loc.get() {
            Place::R(r) => {
                self.regs.insert_if_absent(r, t);
            }
            Place::S(s) => {
                self.slots.insert_if_absent(s, t);
            }
        }
    }
}

/// A machine location: a register or a scratch slot, packed in one word
/// (kind above the number) so that comparing two locations is one integer
/// comparison. Locations order as [`Place`]s do: every register before
/// every slot, each kind by number. The facts sort, merge and group their
/// pairs by location on every block visit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc(u64);

/// A machine location, unpacked (see [`Loc::get`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// A register.
    R(Reg),
    /// A scratch slot.
    S(u32),
}

impl Loc {
    /// Register `r`.
    pub const fn reg(r: Reg) -> Loc {
        Loc(r as u64)
    }

    /// Scratch slot `s`.
    pub const fn slot(s: u32) -> Loc {
        Loc(1 << 32 | s as u64)
    }

    /// Which location this is.
    pub fn get(self) -> Place {
        match self.0 >> 32 {
            0 => Place::R(self.0 as Reg),
            _ => Place::S(self.0 as u32),
        }
    }
}

impl std::fmt::Debug for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// An output channel: the target's name for the output and, for an
/// indexed output, the index (spelled `name index`, as messages show it).
/// It is `Copy`, so that recording an effect allocates no name; channels
/// compare and order as their spellings do.
#[derive(Clone, Copy, Debug)]
pub struct Channel {
    /// The output's name in the target description.
    pub name: &'static str,
    /// The index operand of an indexed output.
    pub index: Option<u32>,
}

impl Channel {
    /// The bytes of the spelling, in order (made without allocating).
    fn spelled(&self) -> impl Iterator<Item = u8> + '_ {
        let (mut digits, mut n) = ([0u8; 10], 0);
        if let Some(mut i) = self.index {
            while let Some(d) = digits.get_mut(n) {
                *d = b'0' + (i % 10) as u8;
                n += 1;
                i /= 10;
                if i == 0 {
                    break;
                }
            }
        }
        let space = self.index.map(|_| b' ');
        self.name.bytes().chain(space).chain(digits.into_iter().take(n).rev())
    }
}

impl Channel {
    /// Whether this is the channel of a fragment discard ([`Sem::Discard`]).
    pub fn is_discard(&self) -> bool {
        self.name == DISCARD_CHANNEL && self.index.is_none()
    }

    /// A discard's place word: the number of output effects (every effect
    /// that is not a discard) the block made before it, as a literal. Both
    /// programs' blocks are compared from equal entry states and must make
    /// as many effects per channel, so equal places in every block mean
    /// equal places in the run (the interpreters' count from the start).
    pub fn place<'a>(terms: &mut Terms, earlier: impl Iterator<Item = &'a Channel>) -> Term {
        let n = earlier.filter(|c| !c.is_discard()).count();
        terms.lit(n as u32)
    }
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{} {i}", self.name),
            None => f.write_str(self.name),
        }
    }
}

impl Ord for Channel {
    fn cmp(&self, o: &Channel) -> std::cmp::Ordering {
        if self.index == o.index && crate::ids::same_name(self.name.as_bytes(), o.name.as_bytes()) {
            return std::cmp::Ordering::Equal;
        }
        self.spelled().cmp(o.spelled())
    }
}

impl PartialOrd for Channel {
    fn partial_cmp(&self, o: &Channel) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Channel {
    fn eq(&self, o: &Channel) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}

impl Eq for Channel {}

/// What one op does, independent of form and timing (the machine
/// simulator's pending form of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpMeaning {
    /// Writes these words to its destination.
    Write(Vec<Term>),
    /// Reads `size` scratch slots from `offset` into its destination.
    Load(u32, usize),
    /// Writes these words to scratch slots from `offset`.
    Store(u32, Vec<Term>),
    /// An effect on an output channel.
    Effect(Channel, Vec<Term>),
    /// No dataflow meaning.
    Nothing,
}

/// What one op does, with its words in [`outcome`]'s output buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Writes the words to its destination.
    Write,
    /// Reads `size` scratch slots from `offset` into its destination (no
    /// words).
    Load(u32, usize),
    /// Writes the words to scratch slots from `offset`.
    Store(u32),
    /// Writes the words to an output channel.
    Effect(Channel),
    /// Latches the words as texture coordinates.
    TexCoord,
    /// Starts a texture lookup of the words and the latched coordinates.
    TexLookup,
    /// Writes the texture unit's next result word to its destination (no
    /// words: the simulator pops it).
    TexResult,
    /// No dataflow meaning (no words).
    Nothing,
}

impl Shape {
    /// The [`OpMeaning`] of this shape with these words.
    pub fn with(self, words: Vec<Term>) -> OpMeaning {
        match self {
            Shape::Write => OpMeaning::Write(words),
            Shape::Load(off, n) => OpMeaning::Load(off, n),
            Shape::Store(off) => OpMeaning::Store(off, words),
            Shape::Effect(ch) => OpMeaning::Effect(ch, words),
            Shape::TexCoord | Shape::TexLookup | Shape::TexResult | Shape::Nothing => OpMeaning::Nothing,
        }
    }
}

/// The operand words of one op, as one flat list (reused from op to op
/// so that an op costs no allocation): operand `i` is the `i`-th run.
#[derive(Clone, Debug, Default)]
pub struct Args {
    words: Vec<Term>,
    ends: Vec<u32>,
}

impl Args {
    /// Forget every operand (keeping the room).
    pub fn clear(&mut self) {
        self.words.clear();
        self.ends.clear();
    }

    /// Add a word to the operand being built.
    pub fn push(&mut self, t: Term) {
        self.words.push(t);
    }

    /// Close the operand being built (an operand with no word is empty).
    pub fn end(&mut self) {
        self.ends.push(self.words.len() as u32);
    }

    /// Number of closed operands.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no operand was closed.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The words of operand `i` (empty past the last).
    pub fn get(&self, i: usize) -> &[Term] {
        self.words.get(self.range(i)).unwrap_or(&[])
    }

    /// Where operand `i`'s words are in the flat list (empty past the
    /// last operand).
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends.get(i - 1).copied().unwrap_or(0) as usize };
        let end = self.ends.get(i).copied().unwrap_or(0) as usize;
        start..end.max(start)
    }
}

/// The index operand of an op (0 when it has none).
pub fn index_operand(inst: &Inst, desc: &OpDesc) -> u32 {
    desc.operands
        .iter()
        .zip(&inst.srcs)
        .find(|(k, _)| **k == OperandKind::Index)
        .and_then(|(_, o)| o.imm())
        .map(|i| i.bits)
        .unwrap_or(0)
}

fn word(vals: &[Term], w: usize) -> Option<Term> {
    vals.get(w).or(vals.last()).copied()
}

/// The meaning of one op. Operand `i` of `vals` holds the words of source
/// operand `i` (empty for index operands); `idx` is the op's index operand
/// and `dest_size` the destination's size in words. The words written,
/// stored or output are appended to `out`. Never panics: missing operands
/// make a junk-free literal 0.
pub fn outcome(terms: &mut Terms, desc: &OpDesc, idx: u32, vals: &Args, dest_size: usize, out: &mut Vec<Term>) -> Shape {
    let n = desc.operands.len().min(vals.len());
    let value_ops = || desc.operands.iter().take(n).enumerate().filter(|(_, k)| **k != OperandKind::Index).map(|(i, _)| vals.get(i));
    match desc.sem {
        Sem::Uniform => {
            out.extend((0..dest_size).map(|w| terms.intern(Node::Uniform(idx, w as u8))));
            Shape::Write
        }
        Sem::Varying => {
            out.extend((0..dest_size).map(|w| terms.intern(Node::Varying(idx, w as u8))));
            Shape::Write
        }
        Sem::Const => {
            out.extend((0..dest_size).map(|_| terms.lit(idx)));
            Shape::Write
        }
        Sem::Texture => {
            let coords: Vec<Term> = value_ops().flat_map(|v| v.iter().copied()).collect();
            out.extend((0..dest_size).map(|w| terms.app_of(Fun::Tex(w as u8), &coords)));
            Shape::Write
        }
        Sem::ScratchRead => Shape::Load(idx, dest_size),
        Sem::ScratchWrite => {
            out.extend(value_ops().flat_map(|v| v.iter().copied()));
            Shape::Store(idx)
        }
        Sem::Output(name, indexed) => {
            let channel = Channel { name, index: indexed.then_some(idx) };
            out.extend(value_ops().flat_map(|v| v.iter().copied()));
            Shape::Effect(channel)
        }
        Sem::Discard => {
            // The place word is appended where the effect is recorded
            // (`Channel::place`): it depends on the block's earlier effects.
            out.extend(value_ops().flat_map(|v| v.iter().copied()));
            Shape::Effect(Channel { name: DISCARD_CHANNEL, index: None })
        }
        Sem::ThreadSwitch | Sem::TexBarrier => Shape::Nothing,
        Sem::TexCoord => {
            out.extend(value_ops().flat_map(|v| v.iter().copied()));
            Shape::TexCoord
        }
        Sem::TexLookup => {
            out.extend(value_ops().flat_map(|v| v.iter().copied()));
            Shape::TexLookup
        }
        Sem::TexResult => Shape::TexResult,
        sem => {
            let zero = terms.zero();
            let mut args: Vec<Term> = Vec::new();
            for w in 0..dest_size {
                let mut small = [zero; 4];
                let mut n = 0;
                for v in value_ops() {
                    match small.get_mut(n) {
                        Some(slot) => *slot = word(v, w).unwrap_or(zero),
                        None => break,
                    }
                    n += 1;
                }
                let t = if n < small.len() {
                    terms.app_of(Fun::Alu(sem), small.get(..n).unwrap_or(&[]))
                } else {
                    // More than 4 value operands (no target has them): the
                    // general path.
                    args.clear();
                    args.extend(value_ops().map(|v| word(v, w).unwrap_or(zero)));
                    terms.app_of(Fun::Alu(sem), &args)
                };
                out.push(t);
            }
            Shape::Write
        }
    }
}

/// The source simulator's operand and outcome lists, kept between runs.
#[derive(Default)]
pub struct SrcBuffers {
    args: Args,
    out: Vec<Term>,
}

/// An effect of the source program.
#[derive(Clone, Debug)]
pub struct SrcEffect {
    /// Output channel.
    pub channel: Channel,
    /// The words written.
    pub words: Vec<Term>,
    /// Index of the instruction in its block.
    pub inst: usize,
    /// Line of the instruction in the source file.
    pub line: u32,
}

/// Terms of source variables by variable number (see
/// [`SrcCode::var`]); a table, not a map, since the numbers are dense.
#[derive(Clone, Debug, Default)]
pub struct Env {
    terms: Vec<Option<Term>>,
}

impl Env {
    /// An environment for `n` variables, none set.
    pub fn new(n: usize) -> Env {
        Env { terms: vec![None; n] }
    }

    /// The term of variable `i`, if set.
    pub fn get(&self, i: u32) -> Option<Term> {
        self.terms.get(i as usize).copied().flatten()
    }

    /// Set variable `i` (growing the table if `i` is past its end).
    pub fn set(&mut self, i: u32, t: Term) {
        let i = i as usize;
        if self.terms.len() <= i {
            self.terms.resize(i + 1, None);
        }
        if let Some(slot) = self.terms.get_mut(i) {
            *slot = Some(t);
        }
    }
}

/// The result of running one source block.
#[derive(Clone, Debug, Default)]
pub struct SrcRun {
    /// Effects in program order.
    pub effects: Vec<SrcEffect>,
    /// The branch condition (word 0 of the `brnz` operand), if any.
    pub cond: Option<Term>,
    /// Every variable's term at the block end (entry values included), by
    /// variable number ([`SrcCode::var`]).
    pub exit: Env,
    /// The block-entry terms of the live-in variables, in variable order
    /// (names for entry values).
    pub entry: Vec<(Var, Term)>,
    /// Every word a named destination received, in program order: the
    /// term, the destination's name for it and the defining line, if the
    /// run records (empty otherwise). Only diagnoses read it
    /// ([`SrcRun::name`], [`SrcRun::def_line`]), so the fixpoint's runs do
    /// not record it and a diagnosis runs the block again with recording
    /// on (see [`run_source`]).
    pub defs: Vec<(Term, TermName, u32)>,
}

impl SrcRun {
    /// The source's name for a term: the smallest variable whose entry
    /// value it is, else the destination that first defined it in the
    /// block (rendered by [`TermName::render`] only when a message needs
    /// it).
    pub fn name(&self, t: Term) -> Option<TermName> {
        let var = self.entry.iter().filter(|(_, u)| *u == t).map(|(v, _)| *v).min();
        var.map(TermName::Var).or_else(|| self.defs.iter().find(|d| d.0 == t).map(|d| d.1.clone()))
    }

    /// The source line of the first definition in the block of a term, if
    /// a named destination received it.
    pub fn def_line(&self, t: Term) -> Option<u32> {
        self.defs.iter().find(|d| d.0 == t).map(|d| d.2)
    }
}

/// The variables an operand names (one per word).
pub fn operand_vars(op: &Operand, vregs: &Vregs) -> impl Iterator<Item = Var> {
    let (virt, phys) = match op {
        Operand::Virt(v) => (vregs.id(&v.name).map(|id| (id, v.size.or_else(|| vregs.size(id)).unwrap_or(1))), None),
        Operand::Phys(p) => (None, Some(*p)),
        _ => (None, None),
    };
    let virt = virt.into_iter().flat_map(|(id, n)| (0..n).map(move |w| Var::V(id, w)));
    virt.chain(phys.into_iter().flat_map(|p| p.regs().map(Var::P)))
}

/// Where a source name for a term comes from; rendered on demand, since
/// only diagnoses read names and every block run records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermName {
    /// The variable whose block-entry value the term is.
    Var(Var),
    /// The destination of the instruction that defined the term, and the
    /// word when the destination has more than one.
    Dest(DestName, Option<u8>),
}

/// A destination operand, as [`operand_name`] would spell it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DestName {
    /// A virtual register.
    Virt(VregId),
    /// A physical register run.
    Phys(PhysReg),
    /// Any other operand, already spelled.
    Text(String),
}

impl DestName {
    /// The name of destination operand `o` of program `p`.
    pub fn of(p: &Program, vregs: &Vregs, o: &Operand) -> DestName {
        match o {
            Operand::Virt(v) => vregs.id(&v.name).map(DestName::Virt).unwrap_or_else(|| DestName::Text(operand_name(p, o))),
            Operand::Phys(r) => DestName::Phys(*r),
            _ => DestName::Text(operand_name(p, o)),
        }
    }
}

impl TermName {
    /// The name as messages spell it (`%a`, `%v.1`, `$rf3`); `p` is the
    /// source program the name comes from.
    pub fn render(&self, p: &Program, vregs: &Vregs) -> String {
        match self {
            TermName::Var(v) => var_label(p, vregs, v),
            TermName::Dest(d, w) => {
                let base = match d {
                    DestName::Virt(id) => format!("%{}", vregs.name(*id)),
                    DestName::Phys(r) => operand_name(p, &Operand::Phys(*r)),
                    DestName::Text(t) => t.clone(),
                };
                match w {
                    Some(w) => format!("{base}.{w}"),
                    None => base,
                }
            }
        }
    }
}

/// Run source block `b` of `code` from `env` (terms of the live-in
/// variables by number; `entry` lists them with their variables, for
/// names). Variables read before any definition and not in `env` read as
/// junk. `at` is the block's id for its symbols (see [`namer`]).
/// `scratch` holds the operand lists between calls. With `record` the run
/// also lists the destinations' words ([`SrcRun::defs`]); everything else
/// is the same either way, and a run again from the same `env` makes no
/// new term (every term and symbol it builds exists already).
#[allow(clippy::too_many_arguments)]
pub fn run_source(terms: &mut Terms, code: &SrcCode, b: usize, at: u32, env: Env, entry: Vec<(Var, Term)>, bufs: &mut SrcBuffers, record: bool) -> SrcRun {
    let Some(block) = code.block(b) else { return SrcRun { entry, exit: env, ..SrcRun::default() } };
    let insts = code.insts(block);
    let defs = if record { Vec::with_capacity(insts.len()) } else { Vec::new() };
    let mut run = SrcRun { entry, exit: env, defs, ..SrcRun::default() };
    let SrcBuffers { args, out } = bufs;
    let mut unit = TexUnit::default();
    for (i, inst) in insts.iter().enumerate() {
        let Some(desc) = inst.desc else { continue };
        args.clear();
        for a in code.args(inst) {
            src_operand(terms, &mut run, code, a, at, args);
            args.end();
        }
        let dest = code.dest(inst);
        out.clear();
        match outcome(terms, desc, inst.idx, args, dest.len(), out) {
            Shape::Write => {}
            Shape::Load(off, n) => {
                for w in 0..n as u32 {
                    let t = src_read_var(terms, &mut run, code, Var::S(off.wrapping_add(w)), at);
                    out.push(t);
                }
            }
            Shape::Store(off) => {
                for (w, t) in out.iter().enumerate() {
                    // Every slot a store may write has a number (see
                    // `SrcCode::of`).
                    if let Some(i) = code.ix(&Var::S(off.wrapping_add(w as u32))) {
                        run.exit.set(i, *t);
                    }
                }
                continue;
            }
            Shape::Effect(channel) => {
                let mut words = out.clone();
                if channel.is_discard() {
                    words.push(Channel::place(terms, run.effects.iter().map(|e| &e.channel)));
                }
                run.effects.push(SrcEffect { channel, words, inst: i, line: inst.line });
                continue;
            }
            Shape::TexCoord => {
                unit.coord(out);
                continue;
            }
            Shape::TexLookup => {
                unit.lookup(out, 0, None);
                continue;
            }
            Shape::TexResult => {
                // A validated source never reads an empty unit; if it did,
                // the word is a literal 0.
                let t = unit.result(terms).map_or_else(|| terms.zero(), |r| r.term);
                out.push(t);
            }
            Shape::Nothing => continue,
        }
        for (w, (var, t)) in dest.iter().zip(out.iter()).enumerate() {
            if let Some(n) = inst.dest_name.as_ref().filter(|_| record) {
                let word = (dest.len() > 1).then_some(w as u8);
                run.defs.push((*t, TermName::Dest(n.clone(), word), inst.line));
            }
            run.exit.set(*var, *t);
        }
    }
    if let Some(cond) = &block.cond {
        args.clear();
        src_operand(terms, &mut run, code, cond, at, args);
        args.end();
        run.cond = args.get(0).first().copied();
    }
    run
}

/// How a source variable is spelled (`%a`, `%v.1`, `$rf3`, `scratch[2]`).
pub fn var_label(p: &Program, vregs: &Vregs, v: &Var) -> String {
    spell_var(p.target, vregs, v)
}

fn spell_var(target: &schedra_ir::Target, vregs: &Vregs, v: &Var) -> String {
    match v {
        Var::V(n, 0) => format!("%{}", vregs.name(*n)),
        Var::V(n, w) => format!("%{}.{w}", vregs.name(*n)),
        Var::P(r) => format!("${}", target.regs.name(*r)),
        Var::S(s) => format!("scratch[{s}]"),
    }
}

/// How an operand is spelled (`%p`, `$rf3`, `7`).
pub fn operand_name(p: &Program, o: &Operand) -> String {
    match o {
        Operand::Virt(v) => format!("%{}", v.name),
        Operand::Phys(r) if r.size > 1 => format!("${}:{}", p.reg_name(r.base), r.size),
        Operand::Phys(r) => format!("${}", p.reg_name(r.base)),
        Operand::Imm(i) => format!("{:#x}", i.bits),
        Operand::Label(l) => l.to_string(),
        Operand::Bypass(b) => format!("^{}.{}", b.unit, b.dist),
    }
}

/// How a variable was spelled by its derived `Debug` when it held the
/// register's name (`V("a", 0)`), kept for the names of junk symbols.
fn var_debug(vregs: &Vregs, v: Var) -> String {
    match v {
        Var::V(n, w) => format!("V({:?}, {w})", vregs.name(n)),
        other => format!("{other:?}"),
    }
}

/// Read variable number `i`: its term, or (read before any definition)
/// its undefined symbol.
fn src_read(terms: &mut Terms, run: &mut SrcRun, code: &SrcCode, i: u32, at: u32) -> Term {
    if let Some(t) = run.exit.get(i) {
        return t;
    }
    let t = terms.symbol_for(code.var(i).key(SymKind::Undefined), at, true);
    run.exit.set(i, t);
    t
}

/// [`src_read`] by variable (every slot a load may read has a number; see
/// `SrcCode::of`).
fn src_read_var(terms: &mut Terms, run: &mut SrcRun, code: &SrcCode, v: Var, at: u32) -> Term {
    match code.ix(&v) {
        Some(i) => src_read(terms, run, code, i, at),
        None => terms.symbol_for(v.key(SymKind::Undefined), at, true),
    }
}

fn src_operand(terms: &mut Terms, run: &mut SrcRun, code: &SrcCode, a: &Arg, at: u32, args: &mut Args) {
    match a {
        Arg::Imm(bits) => args.push(terms.lit(*bits)),
        Arg::Label => {}
        Arg::Vars(s) => {
            for &i in code.vars(*s) {
                let t = src_read(terms, run, code, i, at);
                args.push(t);
            }
        }
    }
}

/// Where a machine op sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpAt {
    /// Bundle index within the block (the bundle count for the terminator).
    pub bundle: usize,
    /// Op index within the bundle.
    pub op: usize,
    /// Line in the machine file.
    pub line: u32,
    /// The opcode (`brnz` for the terminator).
    pub opcode: &'static str,
}

/// Index of a [`ReadEvent`] in [`MachRun::reads`].
pub type ReadId = usize;
/// Index of a [`WriteEvent`] in [`MachRun::writes`].
pub type WriteId = usize;

/// A register read by a machine op.
#[derive(Clone, Debug)]
pub struct ReadEvent {
    /// The register.
    pub reg: Reg,
    /// The cycle of the read (the bundle's issue cycle).
    pub cycle: u64,
    /// The term read.
    pub term: Term,
    /// The write whose value was read (`None`: the block-entry contents).
    pub from: Option<WriteId>,
    /// The reading op.
    pub at: OpAt,
}

/// A register write by a machine op (one per word).
#[derive(Clone, Debug)]
pub struct WriteEvent {
    /// The register.
    pub reg: Reg,
    /// The term written.
    pub term: Term,
    /// Issue cycle.
    pub issue: u64,
    /// Cycle from which reads see it.
    pub land: u64,
    /// The writing op.
    pub at: OpAt,
    /// The reads this word was computed from (operand order), as a range
    /// of [`MachRun::write_reads`] (read them with that method).
    pub reads: std::ops::Range<u32>,
    /// Whether the word is a copy of `reads[0]`'s value (moves, fills).
    pub copy: bool,
    /// The last cycle at which a read may see it (issue + the op's read
    /// window maximum), if the result expires.
    pub expires: Option<u64>,
}

/// An effect of the machine program.
#[derive(Clone, Debug)]
pub struct MachEffect {
    /// Output channel.
    pub channel: Channel,
    /// The words written.
    pub words: Vec<Term>,
    /// The read behind each word (`None` for immediates).
    pub reads: Vec<Option<ReadId>>,
    /// The op.
    pub at: OpAt,
}

/// A timing problem found while running the machine block.
#[derive(Clone, Debug)]
pub enum TimingIssue {
    /// Two writes land on one register in the same cycle (the second write).
    SameCycle {
        /// The second write.
        write: WriteId,
        /// The first write.
        other: WriteId,
    },
    /// A register read or overwritten while a write to it may still be in
    /// flight at a time the program cannot know: an unknown-landing result
    /// (kepler `tex`) that no barrier has waited for, or a fixed-latency
    /// write in flight across a barrier (whose stall is unknown) read before
    /// it lands.
    Unsettled {
        /// The op that reads or overwrites the register.
        at: OpAt,
        /// The register.
        reg: Reg,
        /// The write that may be in flight.
        write: WriteId,
        /// Whether that write is an unknown-landing result.
        tex: bool,
        /// Whether the op overwrites the register (else it reads it).
        overwrite: bool,
    },
    /// A write still in flight when the block ends (an unknown-landing
    /// result no barrier waited for lands at `u64::MAX`).
    InFlight {
        /// The write.
        write: WriteId,
        /// The terminator's cycle.
        end: u64,
    },
    /// A texture unit's result read before its lookup lands (v3d71
    /// `ldtmu` too soon after `tmus`).
    TexEarly {
        /// The reading op.
        at: OpAt,
        /// The op that started the lookup.
        lookup: Option<OpAt>,
        /// The cycle of the read.
        cycle: u64,
        /// The cycle the lookup lands.
        lands: u64,
    },
    /// A texture unit's result read with no lookup word left to read.
    TexEmpty {
        /// The reading op.
        at: OpAt,
    },
    /// The block ends with texture work left in the unit: `unread` words
    /// of lookups (the oldest started by `lookup`), or a latched
    /// coordinate with no lookup started.
    TexLeft {
        /// Words started and not read.
        unread: u32,
        /// The op that started the oldest unread lookup.
        lookup: Option<OpAt>,
    },
    /// A read of a result after its read window ended.
    Expired {
        /// The write whose result was read.
        write: WriteId,
        /// The reading op (the terminator for a condition).
        read: OpAt,
        /// The cycle of the read.
        cycle: u64,
    },
}

/// The result of running one machine block.
#[derive(Clone, Debug, Default)]
pub struct MachRun {
    /// Effects in issue order.
    pub effects: Vec<MachEffect>,
    /// The branch condition and the read behind it.
    pub cond: Option<(Term, Option<ReadId>)>,
    /// Register contents at the block end (after every write landed).
    pub regs: RegMap,
    /// Scratch contents at the block end.
    pub mem: SlotMap<Term>,
    /// Every register read (if `recorded`).
    pub reads: Vec<ReadEvent>,
    /// Every register write.
    pub writes: Vec<WriteEvent>,
    /// The reads behind the writes' words (see [`MachRun::write_reads`]).
    pub write_reads: Vec<ReadId>,
    /// Block-entry contents of the registers that were read or overwritten.
    pub entry: RegMap,
    /// Block-entry contents of the scratch slots (as given to the run).
    pub entry_slots: SlotMap<Term>,
    /// Whether the reads were recorded: `reads`, `write_reads`, the
    /// effects' reads, the condition's read and `issue_cycle` are empty
    /// (`None`) otherwise.
    pub recorded: bool,
    /// Timing problems.
    pub issues: Vec<TimingIssue>,
    /// Issue cycles, stalls included (the terminator's cycle).
    pub cycles: u64,
    /// Issue cycle of each bundle (if `recorded`; empty otherwise).
    pub issue_cycle: Vec<u64>,
}

impl MachRun {
    /// The writes to each register, in issue order (computed on demand from
    /// `writes`: only a diagnosis needs it, so a run does not keep it).
    pub fn writes_by_reg(&self) -> FxHashMap<Reg, Vec<WriteId>> {
        let mut by_reg: FxHashMap<Reg, Vec<WriteId>> = sized(self.writes.len());
        for (id, w) in self.writes.iter().enumerate() {
            by_reg.entry(w.reg).or_default().push(id);
        }
        by_reg
    }

    /// The reads a write's word was computed from (operand order).
    pub fn write_reads(&self, w: &WriteEvent) -> &[ReadId] {
        self.write_reads.get(w.reads.start as usize..w.reads.end as usize).unwrap_or(&[])
    }

    /// Make `self` an empty run with room for the events of a block of
    /// `ops` ops in `bundles` bundles (a read per operand word, a write per
    /// op, as a rule), starting from `entry`. Field by field, in place (a
    /// run is a few hundred bytes; building one and moving it in was a
    /// `memcpy` call); every field is named, so none can be left over.
    fn reset_for(&mut self, ops: usize, bundles: usize, entry: RegMap, record: bool) {
        let MachRun { effects, cond, regs, mem, reads, writes, write_reads, entry: entry_regs, entry_slots, recorded, issues, cycles, issue_cycle } = self;
        let n_reads = if record { 2 * ops + 1 } else { 0 };
        *effects = Vec::new();
        *cond = None;
        *regs = RegMap::default();
        *mem = SlotMap::default();
        *reads = Vec::with_capacity(n_reads);
        *writes = Vec::with_capacity(ops);
        *write_reads = Vec::with_capacity(n_reads);
        *entry_regs = entry;
        *entry_slots = SlotMap::default();
        *recorded = record;
        *issues = Vec::new();
        *cycles = 0;
        *issue_cycle = Vec::with_capacity(if record { bundles } else { 0 });
    }

    /// The block-entry state this run started from, enough to run the
    /// block again: the registers it read or overwrote (junk included) and
    /// the scratch slots. A run from it reads the same terms and makes no
    /// new term (every junk symbol it meets exists already).
    pub fn entry_state(&self) -> MachEntry {
        MachEntry { regs: self.entry.clone(), slots: self.entry_slots.clone() }
    }
}

struct Machine<'a> {
    terms: &'a mut Terms,
    code: &'a MachCode,
    /// The block's id for its symbols.
    at: u32,
    run: &'a mut MachRun,
    mem: SlotMap<(Term, Option<ReadId>)>,
    s: &'a mut MachBuffers,
    /// The texture unit within this block.
    unit: TexUnit,
}

/// The machine simulator's working tables, reused from run to run (a
/// verification runs a few dozen blocks; allocating these per run was a
/// visible cost). Every run starts by clearing them.
#[derive(Default)]
pub struct MachBuffers {
    /// Registers a landed write changed, with their contents and that
    /// write; every other register holds its `run.entry` term (a register
    /// is in `cur` only after a write to it was issued, which puts it in
    /// `run.entry` first).
    cur: RegTable<(Term, Option<WriteId>)>,
    /// The writes in flight, in issue order.
    pending: Vec<Pending>,
    /// The earliest cycle a pending write lands (`u64::MAX`: none pending).
    next_land: u64,
    /// The writes landing at one cycle (scratch of `land`).
    due: Vec<Pending>,
    ready: RegTable<u64>,
    bundle: BundleBuffers,
    /// Registers whose contents are unsettled until a cycle (see
    /// [`TimingIssue::Unsettled`]); empty on targets without barriers.
    unsettled: Vec<Unsettled>,
    /// The unknown-landing writes no barrier has waited for yet, in issue
    /// order, each with the index of the op that made it (an op's writes
    /// are adjacent; a barrier level counts ops, not registers).
    uncovered: Vec<(usize, WriteId)>,
}

/// A register whose contents are not known until `until`.
#[derive(Clone, Copy)]
struct Unsettled {
    reg: Reg,
    until: u64,
    write: WriteId,
    tex: bool,
}

/// A write in flight: what landing it needs, copied from its
/// [`WriteEvent`] (landing and the same-cycle check read no event).
#[derive(Clone, Copy)]
struct Pending {
    land: u64,
    id: WriteId,
    reg: Reg,
    term: Term,
}

/// One bundle's pending work, computed from its parallel reads: flat lists
/// reused from bundle to bundle, so that an op costs no allocation.
#[derive(Default)]
struct BundleBuffers {
    /// The operand words of the op being issued, and the read behind each.
    args: Args,
    arg_reads: Vec<Option<ReadId>>,
    /// Every issued op's outcome words.
    words: Vec<Term>,
    /// The reads behind each destination word (runs ending at `word_ends`).
    word_reads: Vec<ReadId>,
    word_ends: Vec<u32>,
    /// The read behind each stored or output word.
    store_reads: Vec<Option<ReadId>>,
    issued: Vec<Issued>,
}

/// One op's pending work: ranges of [`BundleBuffers`]'s lists.
struct Issued {
    /// The op's index in [`MachCode`].
    op: usize,
    shape: Shape,
    words: std::ops::Range<usize>,
    /// Index of the op's first destination word in `word_ends`.
    first_word: usize,
    stores: std::ops::Range<usize>,
}

impl<'a> Machine<'a> {
    /// The junk symbol of a register at this block's entry.
    fn junk_reg(&mut self, r: Reg) -> Term {
        let key = SymKey { kind: SymKind::JunkReg, a: u32::from(r), b: 0 };
        self.terms.symbol_for(key, self.at, true)
    }

    /// The junk symbol of a scratch slot at this block's entry.
    fn junk_slot(&mut self, s: u32) -> Term {
        let key = SymKey { kind: SymKind::JunkSlot, a: s, b: 0 };
        self.terms.symbol_for(key, self.at, true)
    }

    fn land(&mut self, cycle: u64) {
        if cycle < self.s.next_land {
            return;
        }
        let MachBuffers { cur, pending, next_land, due, .. } = &mut *self.s;
        // A single pending write (the common case) is the one due: no
        // lists to sort or filter.
        if pending.len() <= 1 {
            if let Some(w) = pending.pop() {
                cur.set(w.reg, (w.term, Some(w.id)));
            }
            *next_land = u64::MAX;
            return;
        }
        // The due writes move to `due`, the others stay in order.
        due.clear();
        let (mut next, mut kept) = (u64::MAX, 0);
        for i in 0..pending.len() {
            let Some(&w) = pending.get(i) else { break };
            if w.land <= cycle {
                due.push(w);
            } else {
                next = next.min(w.land);
                if let Some(slot) = pending.get_mut(kept) {
                    *slot = w;
                }
                kept += 1;
            }
        }
        pending.truncate(kept);
        *next_land = next;
        if due.len() > 1 {
            due.sort_by_key(|w| (w.land, w.id));
        }
        for w in due.iter() {
            cur.set(w.reg, (w.term, Some(w.id)));
        }
    }

    /// A register's current contents and the write they came from.
    fn current(&mut self, reg: Reg) -> (Term, Option<WriteId>) {
        if let Some(v) = self.s.cur.get(reg) {
            return v;
        }
        if let Some(t) = self.run.entry.get(reg) {
            return (t, None);
        }
        let t = self.junk_reg(reg);
        self.run.entry.insert(reg, t);
        (t, None)
    }

    /// Read a register: its term, and the read's id if the run records.
    fn read(&mut self, reg: Reg, cycle: u64, at: &OpAt) -> (Term, Option<ReadId>) {
        let (term, from) = self.current(reg);
        if self.code.expiring {
            self.window(from, cycle, at);
        }
        if !self.run.recorded {
            return (term, None);
        }
        self.run.reads.push(ReadEvent { reg, cycle, term, from, at: at.clone() });
        (term, Some(self.run.reads.len() - 1))
    }

    /// Record an [`TimingIssue::Expired`] when the write `from` that a read
    /// at `cycle` sees has passed the end of its read window.
    fn window(&mut self, from: Option<WriteId>, cycle: u64, at: &OpAt) {
        let expired = from.and_then(|w| self.run.writes.get(w)).and_then(|w| w.expires).is_some_and(|e| cycle > e);
        if let (true, Some(write)) = (expired, from) {
            self.run.issues.push(TimingIssue::Expired { write, read: at.clone(), cycle });
        }
    }

    /// Report a read (or, with `overwrite`, a write) of `reg` at `cycle`
    /// by the op at `at` while its contents are unsettled.
    fn settled(&mut self, reg: Reg, cycle: u64, at: &OpAt, overwrite: bool) {
        if self.s.unsettled.is_empty() {
            return;
        }
        let hit = self.s.unsettled.iter().find(|u| u.reg == reg && u.until > cycle && (!overwrite || u.tex)).copied();
        if let Some(u) = hit {
            self.run.issues.push(TimingIssue::Unsettled { at: at.clone(), reg, write: u.write, tex: u.tex, overwrite });
        }
    }

    /// After a barrier whose next bundle would issue at `cycle` with no
    /// hold (`level`: how many unknown-landing results may stay in
    /// flight): the barrier holds that bundle at least until the youngest
    /// result it covers can land (its issue plus the earliest landing), and
    /// the covered results land then. Its stall beyond that is unknown, so
    /// fixed-latency writes still in flight become unsettled until they
    /// land (a read before may see either value). Returns the cycle the
    /// next bundle issues at on this timeline: every texture landing at
    /// its earliest, the timeline an interpreter run with no landing delay
    /// takes.
    fn barrier(&mut self, level: u32, cycle: u64) -> u64 {
        let k = covered(&self.s.uncovered, level);
        let youngest = self.s.uncovered.get(..k).and_then(|c| c.last()).and_then(|(_, id)| self.run.writes.get(*id));
        let cycle = youngest.map_or(cycle, |w| cycle.max(w.issue + self.code.earliest_landing));
        let s = &mut *self.s;
        for (_, id) in s.uncovered.drain(..k) {
            if let Some(w) = s.pending.iter_mut().find(|w| w.id == id) {
                w.land = cycle;
            }
            if let Some(w) = self.run.writes.get_mut(id) {
                w.land = cycle;
            }
            s.unsettled.retain(|u| u.write != id);
            s.next_land = s.next_land.min(cycle);
        }
        s.unsettled.retain(|u| u.until > cycle);
        for w in s.pending.iter().filter(|w| w.land > cycle && w.land != u64::MAX) {
            s.unsettled.push(Unsettled { reg: w.reg, until: w.land, write: w.id, tex: false });
        }
        cycle
    }

    /// Read one op's operands (into `bundle.args`, and if the run records,
    /// the read behind each into `bundle.arg_reads`).
    fn operands(&mut self, op: &MachOp, cycle: u64) {
        self.s.bundle.args.clear();
        self.s.bundle.arg_reads.clear();
        let record = self.run.recorded;
        for a in self.code.args(op) {
            match *a {
                MachArg::Regs(p) => {
                    for r in p.regs() {
                        self.settled(r, cycle, &op.at, false);
                        let (term, id) = self.read(r, cycle, &op.at);
                        self.s.bundle.args.push(term);
                        if record {
                            self.s.bundle.arg_reads.push(id);
                        }
                    }
                }
                MachArg::Imm(bits) => {
                    let t = self.terms.lit(bits);
                    self.s.bundle.args.push(t);
                    if record {
                        self.s.bundle.arg_reads.push(None);
                    }
                }
                MachArg::None => {}
            }
            self.s.bundle.args.end();
        }
    }

    /// Issue one op: read its operands, compute its outcome and the reads
    /// behind each word it writes, stores or outputs.
    fn issue(&mut self, k: usize, cycle: u64) {
        let code = self.code;
        let Some(op) = code.op(k) else { return };
        self.operands(op, cycle);
        let desc = op.desc;
        let dest_n = op.dest.map(|p| usize::from(p.size)).unwrap_or(0);
        let b = &mut self.s.bundle;
        let w0 = b.words.len();
        let shape = outcome(self.terms, desc, op.idx, &b.args, dest_n, &mut b.words);
        if !self.run.recorded {
            let (w1, s0) = (b.words.len(), b.store_reads.len());
            b.issued.push(Issued { op: k, shape, words: w0..w1, first_word: b.word_ends.len(), stores: s0..s0 });
            return;
        }
        let n = desc.operands.len().min(b.args.len());
        let value_ops = desc.operands.iter().take(n).enumerate().filter(|(_, k)| **k != OperandKind::Index).map(|(i, _)| i);
        let reads = |i: usize| b.arg_reads.get(b.args.range(i)).unwrap_or(&[]);
        let first_word = b.word_ends.len();
        for w in 0..dest_n {
            for i in value_ops.clone() {
                let r = reads(i);
                match desc.sem {
                    Sem::Texture => b.word_reads.extend(r.iter().flatten()),
                    _ => b.word_reads.extend(r.get(w).or(r.last()).copied().flatten()),
                }
            }
            b.word_ends.push(b.word_reads.len() as u32);
        }
        let s0 = b.store_reads.len();
        if matches!(shape, Shape::Store(..) | Shape::Effect(..)) {
            for i in value_ops {
                b.store_reads.extend_from_slice(reads(i));
            }
        }
        let (w1, s1) = (b.words.len(), b.store_reads.len());
        b.issued.push(Issued { op: k, shape, words: w0..w1, first_word, stores: s0..s1 });
    }

    /// Complete one issued op: stores and effects at once, register writes
    /// as pending writes landing after the op's latency.
    fn complete(&mut self, mut i: Issued, cycle: u64) {
        let code = self.code;
        let Some(op) = code.op(i.op) else { return };
        if matches!(i.shape, Shape::TexCoord | Shape::TexLookup | Shape::TexResult) && !self.tex_unit(op, &mut i, cycle) {
            return;
        }
        let mut loaded: Vec<(Term, Option<ReadId>)> = Vec::new();
        let copy = match i.shape {
            Shape::Write => op.desc.sem == Sem::Mov,
            Shape::Load(off, n) => {
                for w in 0..n as u32 {
                    let v = match self.mem.get(off + w) {
                        Some(v) => v,
                        None => {
                            let t = self.junk_slot(off + w);
                            self.mem.insert(off + w, (t, None));
                            (t, None)
                        }
                    };
                    loaded.push(v);
                }
                true
            }
            Shape::Store(off) => {
                let words = self.s.bundle.words.get(i.words.clone()).unwrap_or(&[]);
                let reads = self.s.bundle.store_reads.get(i.stores.clone()).unwrap_or(&[]);
                for (w, t) in words.iter().enumerate() {
                    let r = reads.get(w).copied().flatten();
                    self.mem.insert(off + w as u32, (*t, r));
                }
                return;
            }
            Shape::Effect(channel) => {
                let mut words = self.s.bundle.words.get(i.words.clone()).unwrap_or(&[]).to_vec();
                let mut reads = self.s.bundle.store_reads.get(i.stores.clone()).unwrap_or(&[]).to_vec();
                if channel.is_discard() {
                    reads.resize(words.len(), None);
                    words.push(Channel::place(self.terms, self.run.effects.iter().map(|e| &e.channel)));
                    reads.push(None);
                }
                self.run.effects.push(MachEffect { channel, words, reads, at: op.at.clone() });
                return;
            }
            Shape::TexCoord | Shape::TexLookup | Shape::TexResult | Shape::Nothing => return,
        };
        let latency = u64::from(op.desc.latency.max(1));
        let unknown = op.desc.unknown_landing && self.code.waits;
        let regs = op.dest.into_iter().flat_map(|p| p.regs());
        for (k, reg) in regs.enumerate() {
            let (term, reads) = if matches!(i.shape, Shape::Load(..)) {
                let Some(&(t, r)) = loaded.get(k) else { break };
                let start = self.run.write_reads.len();
                self.run.write_reads.extend(r);
                (t, start..self.run.write_reads.len())
            } else {
                let Some(&t) = self.s.bundle.words.get(i.words.start + k).filter(|_| i.words.start + k < i.words.end) else { break };
                let at = i.first_word + k;
                let ends = &self.s.bundle.word_ends;
                let start = at.checked_sub(1).and_then(|j| ends.get(j)).copied().unwrap_or(0) as usize;
                let end = ends.get(at).map(|e| *e as usize).unwrap_or(start);
                let from = self.run.write_reads.len();
                self.run.write_reads.extend_from_slice(self.s.bundle.word_reads.get(start..end).unwrap_or(&[]));
                (t, from..self.run.write_reads.len())
            };
            let land = if unknown { u64::MAX } else { cycle + latency };
            let id = self.run.writes.len();
            self.settled(reg, cycle, &op.at, true);
            if unknown {
                // A fixed-latency write to the register still in flight when
                // the result issues: a texture result may overwrite only a
                // register with no write in flight (Mesa's rule; the
                // hardware's order of the two landings is not public).
                if let Some(w) = self.s.pending.iter().find(|o| o.reg == reg && o.land != u64::MAX && o.land > cycle) {
                    self.run.issues.push(TimingIssue::Unsettled { at: op.at.clone(), reg, write: w.id, tex: false, overwrite: true });
                }
                self.s.uncovered.push((i.op, id));
                self.s.unsettled.push(Unsettled { reg, until: u64::MAX, write: id, tex: true });
            } else if let Some(other) = self.s.pending.iter().find(|o| o.reg == reg && o.land == land) {
                self.run.issues.push(TimingIssue::SameCycle { write: id, other: other.id });
            }
            let reads = reads.start as u32..reads.end as u32;
            let expires = op.desc.window().max.map(|m| cycle + u64::from(m));
            self.run.writes.push(WriteEvent { reg, term, issue: cycle, land, at: op.at.clone(), reads, copy, expires });
            self.s.pending.push(Pending { land, id, reg, term });
            self.s.next_land = self.s.next_land.min(land);
            let ready = self.s.ready.get(reg).unwrap_or(0);
            self.s.ready.set(reg, ready.max(land));
            if !self.run.entry.contains(reg) {
                let t = self.junk_reg(reg);
                self.run.entry.insert(reg, t);
            }
        }
    }
}

/// How many of the oldest `uncovered` writes a barrier of `level` covers:
/// all but those of the `level` most recent ops.
fn covered(uncovered: &[(usize, WriteId)], level: u32) -> usize {
    let mut ops = 0u32;
    let mut last = None;
    for (k, (op, _)) in uncovered.iter().enumerate().rev() {
        if last != Some(*op) {
            if ops == level {
                return k + 1;
            }
            ops += 1;
            last = Some(*op);
        }
    }
    0
}

impl Machine<'_> {
    /// A texture-unit op issued at `cycle`: coordinates latched and lookups
    /// started (`false`: nothing is written), or a result word popped into
    /// `i`'s words, to be written like any result (`true`). A read before
    /// the lookup lands, or of an empty unit, is a timing issue.
    fn tex_unit(&mut self, op: &MachOp, i: &mut Issued, cycle: u64) -> bool {
        let words = self.s.bundle.words.get(i.words.clone()).unwrap_or(&[]);
        match i.shape {
            Shape::TexCoord => self.unit.coord(words),
            Shape::TexLookup => {
                let lands = cycle.saturating_add(u64::from(op.desc.latency));
                let words = words.to_vec();
                self.unit.lookup(&words, lands, Some(op.at.clone()));
            }
            _ => {
                let term = match self.unit.result(self.terms) {
                    Some(p) => {
                        if cycle < p.lands {
                            self.run.issues.push(TimingIssue::TexEarly { at: op.at.clone(), lookup: p.at, cycle, lands: p.lands });
                        }
                        p.term
                    }
                    None => {
                        self.run.issues.push(TimingIssue::TexEmpty { at: op.at.clone() });
                        self.junk_reg(Reg::MAX)
                    }
                };
                let w0 = self.s.bundle.words.len();
                self.s.bundle.words.push(term);
                i.words = w0..w0 + 1;
                i.shape = Shape::Write;
                return true;
            }
        }
        false
    }
}

/// The registers a machine op writes (explicit or implicit destination).
pub fn dest_regs(desc: &OpDesc, inst: &Inst) -> impl Iterator<Item = Reg> {
    let run = match desc.dest {
        Dest::Explicit => inst.dest.as_ref().and_then(Operand::phys),
        Dest::Implicit(r) => Some(PhysReg::one(r)),
        Dest::None | Dest::Unit => None,
    };
    run.into_iter().flat_map(|p| p.regs())
}

/// Run block `b` of `code` from `entry` (terms of the known locations at
/// block entry). Registers and slots not in `entry` hold junk; `at` is the
/// block's id for its symbols (see [`namer`]).
/// `scratch` holds the simulator's working tables between runs. With
/// `record` the run also lists every register read and the reads behind
/// each written, stored or output word (only a diagnosis reads them);
/// everything else in the run is the same either way.
pub fn run_machine(terms: &mut Terms, code: &MachCode, bufs: &mut MachBuffers, b: usize, at: u32, entry: MachEntry, record: bool) -> MachRun {
    let mut run = MachRun::default();
    run_machine_into(terms, code, bufs, (b, at), entry, record, &mut run);
    run
}

/// [`run_machine`] of block `b` with symbol id `at`, into `run` (whatever
/// it held is replaced).
pub fn run_machine_into(terms: &mut Terms, code: &MachCode, bufs: &mut MachBuffers, (b, at): (usize, u32), entry: MachEntry, record: bool, run: &mut MachRun) {
    let Some(block) = code.block(b) else {
        *run = MachRun::default();
        return;
    };
    bufs.cur.clear();
    bufs.ready.clear();
    bufs.pending.clear();
    bufs.unsettled.clear();
    bufs.uncovered.clear();
    bufs.next_land = u64::MAX;
    run.reset_for(code.op_count(block), block.len, entry.regs, record);
    let mut m = Machine { terms, code, at, run, mem: entry.slots.map(|t| (t, None)), s: bufs, unit: TexUnit::default() };
    m.run.entry_slots = entry.slots;
    let mut cycle = 0u64;
    for (ops, timing) in code.timed_bundles(block) {
        if code.interlocked {
            for op in code.ops(ops.clone()) {
                for r in code.touched(op) {
                    cycle = cycle.max(m.s.ready.get(r).unwrap_or(0));
                }
            }
        }
        m.land(cycle);
        if m.run.recorded {
            m.run.issue_cycle.push(cycle);
        }
        for k in ops {
            m.issue(k, cycle);
        }
        let mut issued = std::mem::take(&mut m.s.bundle.issued);
        for i in issued.drain(..) {
            m.complete(i, cycle);
        }
        m.s.bundle.issued = issued;
        let b = &mut m.s.bundle;
        b.words.clear();
        b.word_reads.clear();
        b.word_ends.clear();
        b.store_reads.clear();
        cycle += 1 + u64::from(timing.wait);
        if let Some(level) = timing.barrier {
            cycle = m.barrier(level, cycle);
        }
    }
    finish(&mut m, block, cycle);
}

fn finish(m: &mut Machine, block: &MachBlock, mut cycle: u64) {
    let at = OpAt { bundle: block.len, op: 0, line: block.term_line, opcode: "brnz" };
    match block.cond {
        Some(MachCond::Reg(r)) => {
            if m.code.interlocked {
                cycle = cycle.max(m.s.ready.get(r).unwrap_or(0));
            }
            m.land(cycle);
            m.settled(r, cycle, &at, false);
            m.run.cond = Some(m.read(r, cycle, &at));
        }
        Some(MachCond::Imm(bits)) => m.run.cond = Some((m.terms.lit(bits), None)),
        None => {}
    }
    m.land(cycle);
    let (unread, lookup) = m.unit.unread();
    if unread > 0 || m.unit.latched() {
        m.run.issues.push(TimingIssue::TexLeft { unread, lookup: lookup.cloned() });
    }
    if !m.code.interlocked {
        for w in &m.s.pending {
            m.run.issues.push(TimingIssue::InFlight { write: w.id, end: cycle });
        }
    }
    m.land(u64::MAX);
    m.run.cycles = cycle;
    // Every register a landed write changed is in `entry` (see `Machine`).
    m.run.regs = m.run.entry.overlaid(&m.s.cur);
    if m.code.expiring {
        expire_at_exit(m, cycle + 1);
    }
    m.run.mem = m.mem.map(|(t, _)| t);
}

/// Registers whose result has expired by `next` (the first cycle a
/// successor block can read) leave the block holding unknown contents (a
/// fresh junk symbol per register, distinct from the block-entry junk), so
/// a successor that needs such a value is refuted.
fn expire_at_exit(m: &mut Machine, next: u64) {
    let expired: Vec<Reg> = m
        .s
        .cur
        .iter()
        .filter(|(_, (_, from))| from.and_then(|w| m.run.writes.get(w)).and_then(|w| w.expires).is_some_and(|e| e < next))
        .map(|(r, _)| r)
        .collect();
    for r in expired {
        let key = SymKey { kind: SymKind::JunkReg, a: u32::from(r), b: 1 };
        let t = m.terms.symbol_for(key, m.at, true);
        m.run.regs.insert(r, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(target: &str, body: &str) -> Program {
        let text = format!("target {target}\nform machine\n{body}");
        schedra_ir::parse::parse(text.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn a_barrier_level_counts_ops_not_registers() {
        // op 3 wrote one register, op 5 four: `texbar 1` covers op 3 only.
        let u = [(3, 10), (5, 11), (5, 12), (5, 13), (5, 14)];
        assert_eq!(covered(&u, 1), 1);
        assert_eq!(covered(&u, 0), 5);
        assert_eq!(covered(&u, 2), 0);
        assert_eq!(covered(&[], 0), 0);
    }

    #[test]
    fn locations_order_compare_and_unpack_as_places() {
        let places = [Place::S(u32::MAX), Place::R(Reg::MAX), Place::S(0), Place::R(0), Place::R(7), Place::S(7), Place::R(7)];
        let pack = |p: Place| match p {
            Place::R(r) => Loc::reg(r),
            Place::S(s) => Loc::slot(s),
        };
        for a in places {
            assert_eq!(pack(a).get(), a);
            for b in places {
                assert_eq!(pack(a).cmp(&pack(b)), a.cmp(&b), "{a:?} {b:?}");
            }
        }
        assert_eq!(format!("{:?}", Loc::slot(3)), "S(3)");
    }

    #[test]
    fn channels_spell_compare_and_order_as_their_names() {
        let chans = [("export", Some(10)), ("export", Some(2)), ("export", Some(0)), ("export", None), ("exp", Some(4_294_967_295)), ("tlb", None), ("rt", None), ("export", Some(2))];
        let chans: Vec<Channel> = chans.iter().map(|&(name, index)| Channel { name, index }).collect();
        let mut by_spelling: Vec<String> = chans.iter().map(|c| c.to_string()).collect();
        by_spelling.sort_unstable();
        let mut sorted = chans.clone();
        sorted.sort_unstable();
        assert_eq!(sorted.iter().map(|c| c.to_string()).collect::<Vec<_>>(), by_spelling);
        assert_eq!(Channel { name: "export", index: Some(7) }.to_string(), "export 7");
        for a in &chans {
            for b in &chans {
                assert_eq!(a == b, a.to_string() == b.to_string(), "{a} {b}");
                assert_eq!(a.cmp(b), a.to_string().cmp(&b.to_string()), "{a} {b}");
            }
        }
    }

    #[test]
    fn bundles_read_in_parallel() {
        let p = machine("r600", "b0:\n    { x: mov $R1.x, $R1.y ; y: mov $R1.y, $R1.x }\n    end\n");
        let mut t = Terms::new();
        let (x, y) = (t.intern(Node::Reg(4)), t.intern(Node::Reg(5)));
        let entry = MachEntry::from_locs([(Loc::reg(4), x), (Loc::reg(5), y)]);
        let run = run_machine(&mut t, &MachCode::of(&p), &mut MachBuffers::default(), 0, 0, entry, true);
        assert_eq!((run.regs.get(4), run.regs.get(5)), (Some(y), Some(x)));
        assert!(run.issues.is_empty());
    }

    #[test]
    fn a_read_before_the_write_lands_sees_the_old_value() {
        let p = machine("v3d71", "b0:\n    { sig: ldvary 0 }\n    { add: mov $rf4, $rf0 }\n    { add: mov $rf5, $rf0 }\n    end\n");
        let mut t = Terms::new();
        let old = t.intern(Node::Reg(0));
        let run = run_machine(&mut t, &MachCode::of(&p), &mut MachBuffers::default(), 0, 0, MachEntry::from_locs([(Loc::reg(0), old)]), true);
        let vary = t.intern(Node::Varying(0, 0));
        assert_eq!(run.regs.get(4), Some(old), "one cycle after ldvary rf0 is unchanged");
        assert_eq!(run.regs.get(5), Some(vary), "two cycles after, it has landed");
        assert_eq!(run.cycles, 3);
    }

    #[test]
    fn a_recorded_rerun_reads_the_same_terms_and_makes_none() {
        let p = machine("v3d71", "b0:\n    { add: fadd $rf4, $rf0, $rf1 }\n    { add: fmul $rf5, $rf4, $rf2 }\n    { add: mov $rf6, $rf5 }\n    end\n");
        let (code, mut s, mut t) = (MachCode::of(&p), MachBuffers::default(), Terms::new());
        let a = t.intern(Node::Reg(0));
        let fast = run_machine(&mut t, &code, &mut s, 0, 0, MachEntry::from_locs([(Loc::reg(0), a)]), false);
        assert!(fast.reads.is_empty() && fast.write_reads.is_empty());
        let n = t.len();
        let rec = run_machine(&mut t, &code, &mut s, 0, 0, fast.entry_state(), true);
        assert_eq!(t.len(), n, "the rerun made a term");
        assert_eq!((rec.regs.get(6), rec.writes.len(), rec.cycles), (fast.regs.get(6), fast.writes.len(), fast.cycles));
        assert!(!rec.reads.is_empty());
    }

    #[test]
    fn a_recorded_source_rerun_names_the_words_and_makes_no_term() {
        let text = "target v3d71\nb0:\n    %a = ldunif 0\n    %b = fadd %a, %c\n    tlbw %b\n    end\n";
        let p = schedra_ir::parse::parse(text.as_bytes(), None).expect("parses");
        let vregs = Vregs::of(&p);
        let code = SrcCode::of(&p, &vregs);
        let (mut t, mut s) = (Terms::new(), SrcBuffers::default());
        let u = code.universe_len();
        let fast = run_source(&mut t, &code, 0, 0, Env::new(u), Vec::new(), &mut s, false);
        assert!(fast.defs.is_empty());
        let n = t.len();
        let rec = run_source(&mut t, &code, 0, 0, Env::new(u), Vec::new(), &mut s, true);
        assert_eq!(t.len(), n, "the rerun made a term");
        assert_eq!(rec.defs.len(), 2);
        assert_eq!(rec.effects.first().map(|e| e.words.clone()), fast.effects.first().map(|e| e.words.clone()));
    }

    #[test]
    fn writes_landing_together_and_writes_in_flight_are_reported() {
        let p = machine("v3d71", "b0:\n    { add: recip $rf4, $rf5 }\n    { add: mov $rf4, $rf6 }\n    { add: recip $rf7, $rf5 }\n    end\n");
        let mut t = Terms::new();
        let run = run_machine(&mut t, &MachCode::of(&p), &mut MachBuffers::default(), 0, 0, MachEntry::default(), true);
        assert!(matches!(run.issues.as_slice(), [TimingIssue::SameCycle { .. }, TimingIssue::InFlight { .. }]), "{:?}", run.issues);
    }

    #[test]
    fn interlocked_targets_stall_instead_of_reading_old_values() {
        let p = machine("gen8", "b0:\n    mul $g10, $g2, $g2\n    add $g11, $g10, $g2\n    end\n");
        let mut t = Terms::new();
        let g2 = t.intern(Node::Reg(2));
        let run = run_machine(&mut t, &MachCode::of(&p), &mut MachBuffers::default(), 0, 0, MachEntry::from_locs([(Loc::reg(2), g2)]), true);
        let sq = t.app(Fun::Alu(Sem::FMul), vec![g2, g2]);
        let want = t.app(Fun::Alu(Sem::FAdd), vec![sq, g2]);
        assert_eq!(run.regs.get(11), Some(want));
        assert_eq!(run.issue_cycle, vec![0, 14]);
        assert!(run.issues.is_empty());
    }
}
