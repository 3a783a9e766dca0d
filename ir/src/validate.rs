//! Source-form validity: is a parsed source program a program of its target?
//!
//! Checks, in order (the first failure is reported, at the item's span, in
//! one sentence):
//! 1. labels are unique and every terminator names an existing label;
//! 2. value sizes: every size suffix on a virtual register (inputs,
//!    definitions, uses) agrees; a virtual register never given a suffix has
//!    size 1; no size exceeds the target's `max_value_size`;
//! 3. inputs name existing registers, no two overlap, none names an
//!    implicitly written register;
//! 4. each instruction: a known, not machine-only opcode; a destination
//!    exactly when the opcode has one; the opcode's operand count and kinds
//!    (`Index` = integer immediate, `Reg` = register, `Value` = register or an
//!    immediate the target's `Rules::imm_ok` allows); sizes per
//!    [`Sizes`]; registers that exist, are not implicitly written (v3d71
//!    rf0) and, as destinations, are not reserved (gen8 g0–g1); labels are
//!    not operands; an op that ends the thread (`Target::ends_thread`, gen8
//!    `send.eot`) is the last instruction of a block ending with `end`,
//!    and on such a target every block ending with `end` ends with it;
//!    the registers the instruction pins (its physical operands) keep the
//!    target's per-op register rules (`Rules::op_regs_ok`: gen8's r127 rule
//!    on sends whose source and destination overlap, the end-of-thread
//!    payload range g112–g127, no partial overlap of a multi-register ALU
//!    destination and a source), judged on the physical operands alone —
//!    no allocation of the virtual ones could repair a breach there;
//!    a texture unit's ops (`Sem::TexCoord`, `TexLookup`, `TexResult`)
//!    keep its first-in first-out order within each block: a result read
//!    only while a lookup's word is unread, and at the block's end every
//!    lookup's [`crate::target::TEXEL_WORDS`] words read and no coordinate
//!    latched (the machine form must do the same, so a source that breaks
//!    it has no correct translation); a discard (`Sem::Discard`) only in
//!    a fragment program;
//! 5. every block is reachable from the entry, and no edge is critical (from
//!    a block with two successors to a block with two predecessors);
//! 6. defined before use: a must-be-defined forward dataflow over the CFG
//!    (IN = ∩ OUT of predecessors, the entry also starts from the inputs and
//!    the stage's payload registers; OUT = IN ∪ the block's destinations),
//!    solved by round-robin iteration from "everything defined" down to the
//!    greatest fixpoint (each pass visiting only the blocks a predecessor
//!    of which changed); then every read of a virtual or physical register
//!    must be in the set where it happens;
//! 7. scratch written before read: the same must-be-defined dataflow over
//!    the scratch slots the program writes (a scratch write of a value of
//!    size N at offset K writes slots K..K+N); every slot a scratch read
//!    reads must be written on every path to it. Scratch memory holds only
//!    garbage at entry, and the verifier treats it so.
//!
//! Machine-form programs are not checked here (`validate` returns `Ok`):
//! their legality is the verifier's business, reported as violations.

use crate::error::Located;
use crate::ir::*;
use crate::lex::show;
use crate::target::{Dest, OpDesc, OperandKind, Sem, Sizes, Target};
use rustc_hash::FxHashMap as HashMap;

/// Check that a source-form program is valid for its target. Returns `Ok`
/// for machine-form programs (the verifier checks those). Never panics.
pub fn validate(p: &Program) -> Result<(), Located> {
    validate_resolved(p, Resolved::default())
}

/// What a caller has looked up in a program already, handed to
/// [`validate_resolved`] so that it is not looked up again. Instructions
/// are numbered block by block in program order. Every field may be left
/// empty (the default): what is missing is looked up by name.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resolved<'a> {
    /// Each instruction's op description, as `p.target.op(&inst.opcode)`
    /// gives it.
    pub descs: &'a [Option<&'static OpDesc>],
    /// Virtual register names numbered so that two operands share a number
    /// exactly when they name the same register: instruction `k`'s
    /// destination has number `operands[starts[k]]` and its source `j`
    /// `operands[starts[k] + 1 + j]` (`u32::MAX` where the operand is not a
    /// virtual register); `starts` has one more entry than there are
    /// instructions. Used only when `starts`, `inputs` and `conds` all
    /// cover the program.
    pub starts: &'a [u32],
    /// See `starts`.
    pub operands: &'a [u32],
    /// Each input's virtual register's number, if it names one.
    pub inputs: &'a [Option<u32>],
    /// Each block's `brnz` condition's number, if it is a virtual register.
    pub conds: &'a [Option<u32>],
    /// How many numbers there are (`0..names`).
    pub names: usize,
}

/// [`validate`], given what the caller has looked up already (see
/// [`Resolved`]; a caller that resolves the program's opcodes and names for
/// its own use saves the second look-up). The result is exactly
/// [`validate`]'s when `r` describes `p` as documented. Never panics.
pub fn validate_resolved(p: &Program, r: Resolved<'_>) -> Result<(), Located> {
    if p.form == Form::Machine {
        return Ok(());
    }
    let labels = labels(p)?;
    let sizes = value_sizes(p)?;
    inputs(p)?;
    let descs = instructions(p, &sizes, r.descs)?;
    let cfg = Cfg::new(p, &labels);
    reachable(p, &cfg)?;
    critical_edges(p, &cfg)?;
    defined_before_use(p, r, &cfg)?;
    scratch_written_before_read(p, &sizes, &descs, &cfg)
}

/// Check 4, block by block: each instruction, the condition of a `brnz`,
/// and the thread-ending rule. On success, the descriptor of every
/// instruction in program order (looked up once, read by the later checks).
/// `known` holds descriptions already looked up, in the same order.
fn instructions(p: &Program, sizes: &SizeMap<'_>, known: &[Option<&'static OpDesc>]) -> Result<Vec<&'static OpDesc>, Located> {
    let t = p.target;
    let end_op = t.thread_end_op();
    let mut descs = Vec::with_capacity(p.blocks.iter().map(|b| b.insts().len()).sum());
    for b in &p.blocks {
        let mut last_desc = None;
        let mut unit = UnitCount::default();
        for (k, i) in b.insts().iter().enumerate() {
            let desc = known.get(descs.len()).map_or_else(|| t.op(&i.opcode), |d| *d);
            let inst = Inst_::new(p, sizes, i, desc)?;
            inst.check()?;
            let last = k + 1 == b.insts().len() && b.term.kind == TermKind::End;
            if t.ends_thread(inst.d) && !last {
                return Err(err(i.span, format!("`{}` ends the thread, so it must be the last instruction of a block that ends with `end`", inst.d.name)));
            }
            unit.op(inst.d).map_err(|m| err(i.span, m))?;
            descs.push(inst.d);
            last_desc = Some(inst.d);
        }
        unit.end(&b.label).map_err(|m| err(b.term.span, m))?;
        if let TermKind::Brnz { cond, .. } = &b.term.kind {
            cond_ok(p, sizes, cond, b.term.span)?;
        }
        thread_ends(p, b, end_op, last_desc)?;
    }
    Ok(descs)
}

/// On a target with an op that ends the thread (gen8 `send.eot`, given as
/// `end_op`), a block that ends the program must end with that op (`last`
/// is the descriptor of the block's last instruction): no machine program
/// could end the thread otherwise, and the verifier rejects every such
/// output.
fn thread_ends(p: &Program, b: &Block, end_op: Option<&OpDesc>, last: Option<&OpDesc>) -> Result<(), Located> {
    let t = p.target;
    let Some(end_op) = end_op else { return Ok(()) };
    if b.term.kind != TermKind::End {
        return Ok(());
    }
    let ends = last.is_some_and(|d| t.ends_thread(d));
    match ends {
        true => Ok(()),
        false => Err(err(b.term.span, format!("block `{}` ends the program without `{}`; on target {} the last instruction before `end` must end the thread", show(&b.label), end_op.name, t.name))),
    }
}

/// A block's texture-unit traffic so far: coordinates latched for the next
/// lookup, and result words started and not yet read.
#[derive(Default)]
struct UnitCount {
    latched: u32,
    unread: u32,
}

impl UnitCount {
    /// Account for one op.
    fn op(&mut self, d: &OpDesc) -> Result<(), String> {
        match d.sem {
            Sem::TexCoord => self.latched = self.latched.saturating_add(1),
            Sem::TexLookup => {
                self.latched = 0;
                self.unread = self.unread.saturating_add(crate::target::TEXEL_WORDS);
            }
            Sem::TexResult if self.unread == 0 => return Err(format!("`{}` reads the texture unit while no lookup has a word left to read", d.name)),
            Sem::TexResult => self.unread -= 1,
            _ => {}
        }
        Ok(())
    }
    /// The block's end: nothing may be left in the unit.
    fn end(&self, label: &str) -> Result<(), String> {
        if self.unread > 0 {
            return Err(format!("block `{}` ends with {} word(s) of a texture lookup unread; every lookup's words are read in the block that starts it", show(label), self.unread));
        }
        if self.latched > 0 {
            return Err(format!("block `{}` ends with a texture coordinate written and no lookup started", show(label)));
        }
        Ok(())
    }
}

fn err(span: Span, msg: String) -> Located {
    Located::new(span, msg)
}

/// Each block's successors as block indices, in [`successors`] order
/// (labels looked up once, here); duplicate and missing labels are errors.
fn labels(p: &Program) -> Result<Vec<[Option<usize>; 2]>, Located> {
    if p.blocks.is_empty() {
        return Err(err(Span::default(), "expected at least one block".to_string()));
    }
    let mut map = HashMap::default();
    map.reserve(p.blocks.len());
    for (k, b) in p.blocks.iter().enumerate() {
        if map.insert(b.label.as_str(), k).is_some() {
            return Err(err(b.span, format!("duplicate label `{}`; expected each label to name one block", show(&b.label))));
        }
    }
    let mut succs = Vec::with_capacity(p.blocks.len());
    for b in &p.blocks {
        let mut to = [None; 2];
        for (slot, s) in to.iter_mut().zip(crate::cfg::successor_labels(&b.term)) {
            match map.get(s) {
                Some(&j) => *slot = Some(j),
                None => return Err(err(b.term.span, format!("`{}` jumps to label `{}`, which names no block", show(&b.label), show(s)))),
            }
        }
        succs.push(to);
    }
    Ok(succs)
}

/// The size of each virtual register, from the suffixes written on it
/// (and where it was first given).
struct SizeMap<'p> {
    map: HashMap<&'p str, (u8, Span)>,
    /// Every size recorded is 1, so every virtual register has size 1 (an
    /// unrecorded one too): [`size_of`] needs no look-up.
    all_one: bool,
}

fn value_sizes(p: &Program) -> Result<SizeMap<'_>, Located> {
    let mut map = SizeMap { map: HashMap::default(), all_one: true };
    for i in &p.inputs {
        if let Some(v) = &i.vreg {
            let n = v.size.unwrap_or(i.reg.size);
            if n != i.reg.size {
                return Err(err(i.span, format!("input `%{}` has size {n} but its register run has size {}", show(&v.name), i.reg.size)));
            }
            insert_size(p, &mut map, v, n, i.span)?;
        }
    }
    for i in p.blocks.iter().flat_map(|b| b.insts()) {
        if let Some(Operand::Virt(v)) = &i.dest {
            if let Some(n) = v.size {
                insert_size(p, &mut map, v, n, i.span)?;
            }
        }
    }
    Ok(map)
}

/// Record that `v` is defined with size `n` at `span`.
fn insert_size<'p>(p: &Program, map: &mut SizeMap<'p>, v: &'p VirtReg, n: u8, span: Span) -> Result<(), Located> {
    let max = p.target.max_value_size;
    if n > max {
        return Err(err(span, format!("`%{}` has size {n}, more than target {}'s largest value size {max}", show(&v.name), p.target.name)));
    }
    match map.map.get(v.name.as_str()) {
        Some(&(m, at)) if m != n => Err(err(
            span,
            format!("`%{}` is defined here with size {n} but with size {m} at line {}; a redefinition must keep the size", show(&v.name), at.line),
        )),
        Some(_) => Ok(()),
        None => {
            map.map.insert(v.name.as_str(), (n, span));
            map.all_one &= n == 1;
            Ok(())
        }
    }
}

/// The size of `v` (1 if never given).
#[inline]
fn size_of(sizes: &SizeMap<'_>, v: &VirtReg) -> u8 {
    match sizes.all_one {
        true => 1,
        false => sizes.map.get(v.name.as_str()).map_or(1, |s| s.0),
    }
}

/// Inputs: registers exist, do not overlap, are not implicitly written; a
/// virtual register is bound once.
fn inputs(p: &Program) -> Result<(), Located> {
    let t = p.target;
    let mut regs: HashMap<Reg, u32> = HashMap::default();
    let mut names: HashMap<&str, u32> = HashMap::default();
    for i in &p.inputs {
        reg_exists(t, i.reg, i.span)?;
        not_implicit(t, i.reg, i.span)?;
        if let Some(line) = i.reg.regs().find_map(|r| regs.insert(r, i.span.line)) {
            return Err(err(i.span, format!("input register ${} overlaps the input declared at line {line}", p.reg_name(i.reg.base))));
        }
        if let Some(line) = i.vreg.as_ref().and_then(|v| names.insert(v.name.as_str(), i.span.line)) {
            let name = i.vreg.as_ref().map_or("", |v| v.name.as_str());
            return Err(err(i.span, format!("`%{}` is already declared as an input at line {line}", show(name))));
        }
    }
    Ok(())
}

#[inline]
fn reg_exists(t: &Target, r: PhysReg, span: Span) -> Result<(), Located> {
    match t.regs.contains(r) {
        true => Ok(()),
        false => reg_outside(t, r, span),
    }
}

/// The error of [`reg_exists`], built only when it fails.
#[cold]
#[inline(never)]
fn reg_outside(t: &Target, r: PhysReg, span: Span) -> Result<(), Located> {
    let last = t.regs.name(t.regs.count.saturating_sub(1));
    Err(err(span, format!("register ${}{} is outside target {}'s register file ({} to {last})", t.regs.name(r.base), suffix(r), t.name, t.regs.name(0))))
}

fn suffix(r: PhysReg) -> String {
    if r.size == 1 {
        String::new()
    } else {
        format!(":{}", r.size)
    }
}

#[inline]
fn not_implicit(t: &Target, r: PhysReg, span: Span) -> Result<(), Located> {
    match r.regs().find(|x| t.implicit_regs.contains(x)) {
        Some(x) => implicit_named(t, x, span),
        None => Ok(()),
    }
}

/// The error of [`not_implicit`] for register `x`.
#[cold]
#[inline(never)]
fn implicit_named(t: &Target, x: Reg, span: Span) -> Result<(), Located> {
    Err(err(span, format!("source programs may not name ${}, which target {} writes implicitly", t.regs.name(x), t.name)))
}

fn cond_ok(p: &Program, sizes: &SizeMap<'_>, cond: &Operand, span: Span) -> Result<(), Located> {
    match cond {
        Operand::Phys(r) => {
            reg_exists(p.target, *r, span)?;
            not_implicit(p.target, *r, span)?;
            if r.size != 1 {
                return Err(err(span, "the condition of `brnz` must be a single register".to_string()));
            }
        }
        Operand::Virt(v) => {
            use_suffix_ok(sizes, v, span)?;
            if size_of(sizes, v) != 1 {
                return Err(err(span, format!("the condition `%{}` of `brnz` must have size 1", show(&v.name))));
            }
        }
        _ => {}
    }
    Ok(())
}

#[inline]
fn use_suffix_ok(sizes: &SizeMap<'_>, v: &VirtReg, span: Span) -> Result<(), Located> {
    match v.size {
        Some(n) if n != size_of(sizes, v) => suffix_mismatch(sizes, v, n, span),
        _ => Ok(()),
    }
}

/// The error of [`use_suffix_ok`] for a use of `v` written with size `n`.
#[cold]
#[inline(never)]
fn suffix_mismatch(sizes: &SizeMap<'_>, v: &VirtReg, n: u8, span: Span) -> Result<(), Located> {
    Err(err(span, format!("`%{}:{n}` does not match its definition's size {}", show(&v.name), size_of(sizes, v))))
}

/// One instruction being checked.
struct Inst_<'a> {
    p: &'a Program,
    sizes: &'a SizeMap<'a>,
    i: &'a Inst,
    d: &'static OpDesc,
}

impl<'a> Inst_<'a> {
    /// `desc`: what `p.target.op(&i.opcode)` gives.
    fn new(p: &'a Program, sizes: &'a SizeMap<'a>, i: &'a Inst, desc: Option<&'static OpDesc>) -> Result<Self, Located> {
        let t = p.target;
        let d = desc.ok_or_else(|| err(i.span, format!("unknown opcode `{}` for target {}", show(&i.opcode), t.name)))?;
        if d.machine_only {
            return Err(err(i.span, format!("`{}` exists only in the machine form", d.name)));
        }
        if d.sem == Sem::Discard && p.stage != Stage::Fragment {
            return Err(err(i.span, format!("`{}` discards a fragment and exists only in the fragment stage, not the {} stage", d.name, p.stage.as_str())));
        }
        Ok(Inst_ { p, sizes, i, d })
    }

    fn check(&self) -> Result<(), Located> {
        self.dest()?;
        if self.i.srcs.len() != self.d.operands.len() {
            return Err(self.err(format!("`{}` takes {} operand(s), found {}", self.d.name, self.d.operands.len(), self.i.srcs.len())));
        }
        for (k, (o, kind)) in self.i.srcs.iter().zip(self.d.operands).enumerate() {
            self.operand(k, o, *kind)?;
        }
        self.sizes()?;
        self.pinned_rules()
    }

    /// The target's per-op register rules on the registers this instruction
    /// pins. `op_regs_ok` reads only physical operands, so virtual ones (the
    /// compiler's to place) never fail here; what fails is a breach the
    /// source itself fixes, which every compilation would repeat.
    fn pinned_rules(&self) -> Result<(), Located> {
        let t = self.p.target;
        t.rules.op_regs_ok(self.d, self.i).map_err(|msg| self.err(format!("the registers pinned here break a register rule of target {}: {msg}", t.name)))
    }

    fn err(&self, msg: String) -> Located {
        err(self.i.span, msg)
    }

    fn dest(&self) -> Result<(), Located> {
        let t = self.p.target;
        match (&self.i.dest, self.d.dest) {
            (Some(_), Dest::None) => Err(self.err(format!("`{}` has no destination; expected `{} …` without `=`", self.d.name, self.d.name))),
            (None, Dest::Explicit | Dest::Implicit(_) | Dest::Unit) => Err(self.err(format!("`{}` needs a destination (`%d = {} …`)", self.d.name, self.d.name))),
            (Some(Operand::Phys(r)), _) => {
                reg_exists(t, *r, self.i.span)?;
                not_implicit(t, *r, self.i.span)?;
                match r.regs().find(|x| t.reserved.contains(x)) {
                    Some(x) => Err(self.err(format!("${} is reserved on target {}: it may be read but never written", t.regs.name(x), t.name))),
                    None => Ok(()),
                }
            }
            (Some(Operand::Virt(_)), _) | (None, Dest::None) => Ok(()),
            (Some(_), _) => Err(self.err("expected a register as the destination".to_string())),
        }
    }

    fn operand(&self, k: usize, o: &Operand, kind: OperandKind) -> Result<(), Located> {
        let t = self.p.target;
        let n = k + 1;
        let name = self.d.name;
        match (o, kind) {
            (Operand::Label(l), _) => Err(self.err(format!("operand {n} of `{name}` is the label `{}`; labels are operands of terminators only", show(l)))),
            (Operand::Bypass(_), _) => Err(self.err(format!("operand {n} of `{name}` is a bypass read; those belong to the machine form"))),
            (Operand::Imm(i), OperandKind::Index) if !i.float => Ok(()),
            (_, OperandKind::Index) => Err(self.err(format!("operand {n} of `{name}` must be an integer constant"))),
            (Operand::Imm(_), OperandKind::Reg) => Err(self.err(format!("operand {n} of `{name}` must be a register, not an immediate"))),
            (Operand::Imm(i), _) if !t.rules.imm_ok(self.d, k, *i) => {
                Err(self.err(format!("immediate {} is not allowed as operand {n} of `{name}` on target {}", crate::print::imm(*i), t.name)))
            }
            (Operand::Phys(r), _) => {
                reg_exists(t, *r, self.i.span)?;
                not_implicit(t, *r, self.i.span)
            }
            (Operand::Virt(v), _) => use_suffix_ok(self.sizes, v, self.i.span),
            (Operand::Imm(_), _) => Ok(()),
        }
    }

    #[inline]
    fn size(&self, o: &Operand) -> Option<u8> {
        match o {
            Operand::Virt(v) => Some(size_of(self.sizes, v)),
            Operand::Phys(r) => Some(r.size),
            _ => None,
        }
    }

    /// Register operand sizes per the opcode's [`Sizes`].
    fn sizes(&self) -> Result<(), Located> {
        let t = self.p.target;
        let dest = self.i.dest.as_ref().and_then(|o| self.size(o));
        let srcs = || self.i.srcs.iter().filter_map(|o| self.size(o));
        let name = self.d.name;
        match self.d.sizes {
            Sizes::Uniform => {
                // `n`: the first size (destination, then sources); `m`:
                // the first that differs from it.
                let mut first = dest;
                for m in srcs() {
                    match first {
                        None => first = Some(m),
                        Some(n) if m != n => return Err(self.err(format!("the register operands of `{name}` must all have one size, found sizes {n} and {m}"))),
                        Some(_) => {}
                    }
                }
                let Some(n) = first else { return Ok(()) };
                if n > t.max_alu_size {
                    return Err(self.err(format!("`{name}` operands span {n} registers; target {} allows at most {}", t.name, t.max_alu_size)));
                }
            }
            Sizes::Fixed { dest: dn, src: sn } => {
                if let Some(d) = dest.filter(|&d| d != dn) {
                    return Err(self.err(format!("the destination of `{name}` must have size {dn}, found {d}")));
                }
                if let Some(s) = srcs().find(|&s| s != sn) {
                    return Err(self.err(format!("the register operands of `{name}` must have size {sn}, found {s}")));
                }
            }
            Sizes::Any => {
                if let Some(s) = dest.into_iter().chain(srcs()).find(|&s| s > t.max_value_size) {
                    return Err(self.err(format!("`{name}` operand of size {s} exceeds target {}'s largest value size {}", t.name, t.max_value_size)));
                }
            }
        }
        Ok(())
    }
}

/// The distinct successors of one block (a terminator names at most two).
#[derive(Clone, Copy, Default)]
struct Succ {
    len: usize,
    to: [usize; 2],
}

impl Succ {
    fn as_slice(&self) -> &[usize] {
        self.to.get(..self.len).unwrap_or(&[])
    }
    fn push(&mut self, j: usize) {
        if let Some(x) = self.to.get_mut(self.len) {
            *x = j;
            self.len += 1;
        }
    }
}

/// The control-flow graph: distinct successors per block (in terminator
/// order), and predecessors per block (in block order) as one flat list
/// with offsets: block `k`'s are `pred[pred_start[k]..pred_start[k + 1]]`.
struct Cfg {
    succ: Vec<Succ>,
    pred_start: Vec<usize>,
    pred: Vec<usize>,
}

impl Cfg {
    /// The graph of `p` given each block's successors (see [`labels`]).
    fn new(p: &Program, targets: &[[Option<usize>; 2]]) -> Cfg {
        let n = p.blocks.len();
        let mut succ = vec![Succ::default(); n];
        let mut pred_start = vec![0usize; n + 1];
        for (k, to) in targets.iter().enumerate().take(n) {
            for &j in to.iter().flatten() {
                if !succ[k].as_slice().contains(&j) {
                    succ[k].push(j);
                    pred_start[j + 1] += 1;
                }
            }
        }
        for k in 0..n {
            pred_start[k + 1] += pred_start[k];
        }
        let mut fill = pred_start.clone();
        let mut pred = vec![0usize; pred_start[n]];
        for (k, s) in succ.iter().enumerate() {
            for &j in s.as_slice() {
                pred[fill[j]] = k;
                fill[j] += 1;
            }
        }
        Cfg { succ, pred_start, pred }
    }

    /// The successors of block `k`.
    fn succs(&self, k: usize) -> &[usize] {
        self.succ.get(k).map_or(&[], Succ::as_slice)
    }

    /// The predecessors of block `k`.
    fn preds(&self, k: usize) -> &[usize] {
        match (self.pred_start.get(k), self.pred_start.get(k + 1)) {
            (Some(&a), Some(&b)) => self.pred.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }
}

fn reachable(p: &Program, cfg: &Cfg) -> Result<(), Located> {
    let mut seen = vec![false; p.blocks.len()];
    let mut stack = Vec::with_capacity(2 * p.blocks.len() + 1);
    stack.push(0usize);
    while let Some(k) = stack.pop() {
        if seen.get(k) == Some(&false) {
            seen[k] = true;
            stack.extend(cfg.succs(k).iter().copied());
        }
    }
    match seen.iter().position(|s| !s) {
        Some(k) => Err(err(p.blocks[k].span, format!("block `{}` is unreachable from the entry block", show(&p.blocks[k].label)))),
        None => Ok(()),
    }
}

fn critical_edges(p: &Program, cfg: &Cfg) -> Result<(), Located> {
    for (k, b) in p.blocks.iter().enumerate() {
        if cfg.succs(k).len() < 2 {
            continue;
        }
        if let Some(&j) = cfg.succs(k).iter().find(|&&j| cfg.preds(j).len() >= 2) {
            let to = &p.blocks[j].label;
            return Err(err(
                b.term.span,
                format!("the edge from `{}` to `{}` is critical (two successors to two predecessors); split it with an empty block", show(&b.label), show(to)),
            ));
        }
    }
    Ok(())
}

/// A fixed-size bit set.
#[derive(Clone, PartialEq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize, full: bool) -> Bits {
        Bits(vec![if full { u64::MAX } else { 0 }; n.div_ceil(64)])
    }
    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    fn set(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    fn and(&mut self, o: &[u64]) {
        self.0.iter_mut().zip(o).for_each(|(a, b)| *a &= b);
    }
    fn or(&mut self, o: &[u64]) {
        self.0.iter_mut().zip(o).for_each(|(a, b)| *a |= b);
    }
    /// Every word set to all ones (`full`) or all zeros, as [`Bits::new`].
    fn fill(&mut self, full: bool) {
        self.0.iter_mut().for_each(|w| *w = if full { u64::MAX } else { 0 });
    }
    /// Become a copy of `o` (of the same size), keeping the allocation.
    fn copy_from(&mut self, o: &Bits) {
        self.0.clear();
        self.0.extend_from_slice(&o.0);
    }
}

/// One [`Bits`] of the same size per block, in one buffer: block `k`'s
/// words are `all[k * words..(k + 1) * words]`.
struct BlockBits {
    words: usize,
    all: Vec<u64>,
}

impl BlockBits {
    /// `n` sets over `0..width`, all full or all empty as [`Bits::new`].
    fn new(n: usize, width: usize, full: bool) -> BlockBits {
        let words = width.div_ceil(64);
        BlockBits { words, all: vec![if full { u64::MAX } else { 0 }; n * words] }
    }
    fn row(&self, k: usize) -> &[u64] {
        self.all.get(k * self.words..(k + 1) * self.words).unwrap_or(&[])
    }
    /// Add fact `i` to block `k`'s set (nothing if either is out of range).
    fn set(&mut self, k: usize, i: usize) {
        if i / 64 < self.words {
            if let Some(w) = self.all.get_mut(k * self.words + i / 64) {
                *w |= 1 << (i % 64);
            }
        }
    }
    /// Make block `k`'s set equal to `s`; whether it changed.
    fn assign(&mut self, k: usize, s: &Bits) -> bool {
        let row = self.all.get_mut(k * self.words..(k + 1) * self.words).unwrap_or(&mut []);
        let changed = row != s.0.as_slice();
        row.iter_mut().zip(&s.0).for_each(|(a, b)| *a = *b);
        changed
    }
}

/// Numbering of the defined-ness facts: virtual registers first (inputs
/// and destinations, in order of first definition), then physical
/// registers. Virtual registers are found by the caller's numbers when
/// [`Resolved`] covers the program, else by name.
struct Ids<'p, 'r> {
    /// By name (when not resolved): each defined name's fact.
    virt: HashMap<&'p str, usize>,
    /// By number (when resolved): each number's fact, or [`NO_FACT`].
    by_num: Vec<usize>,
    /// The caller's numbers, when they cover the program.
    r: Option<Resolved<'r>>,
    /// How many virtual registers are defined (the first physical fact).
    nvirt: usize,
    count: usize,
    /// Per instruction in program order: the fact of its virtual
    /// destination, or [`NO_FACT`] (no destination, or a physical one).
    dest: Vec<usize>,
}

/// No fact (see [`Ids`]).
const NO_FACT: usize = usize::MAX;

impl<'p, 'r> Ids<'p, 'r> {
    fn new(p: &'p Program, r: Resolved<'r>) -> Ids<'p, 'r> {
        let insts = p.blocks.iter().map(|b| b.insts().len()).sum::<usize>();
        let covers = r.starts.len() == insts + 1 && r.inputs.len() == p.inputs.len() && r.conds.len() == p.blocks.len();
        let mut ids = Ids { virt: HashMap::default(), by_num: Vec::new(), r: covers.then_some(r), nvirt: 0, count: 0, dest: Vec::with_capacity(insts) };
        match covers {
            true => ids.number_resolved(p),
            false => ids.number_by_name(p, insts),
        }
        ids.count = ids.nvirt + p.target.regs.count as usize;
        ids
    }
    fn number_by_name(&mut self, p: &'p Program, insts: usize) {
        self.virt.reserve(p.inputs.len() + insts);
        for v in p.inputs.iter().filter_map(|i| i.vreg.as_ref()) {
            let n = self.virt.len();
            self.virt.entry(v.name.as_str()).or_insert(n);
        }
        for i in p.blocks.iter().flat_map(|b| b.insts()) {
            let fact = match &i.dest {
                Some(Operand::Virt(v)) => {
                    let n = self.virt.len();
                    *self.virt.entry(v.name.as_str()).or_insert(n)
                }
                _ => NO_FACT,
            };
            self.dest.push(fact);
        }
        self.nvirt = self.virt.len();
    }
    fn number_resolved(&mut self, p: &Program) {
        let Some(r) = self.r else { return };
        self.by_num = vec![NO_FACT; r.names];
        for num in r.inputs.iter().flatten() {
            self.define_num(*num);
        }
        for (k, i) in p.blocks.iter().flat_map(|b| b.insts()).enumerate() {
            let fact = match &i.dest {
                Some(Operand::Virt(_)) => self.define_num(self.num(k, 0)),
                _ => NO_FACT,
            };
            self.dest.push(fact);
        }
    }
    /// Give number `num` the next fact unless it has one; its fact.
    fn define_num(&mut self, num: u32) -> usize {
        let Some(f) = self.by_num.get_mut(num as usize) else { return NO_FACT };
        if *f == NO_FACT {
            *f = self.nvirt;
            self.nvirt += 1;
        }
        *f
    }
    /// The caller's number of operand `j` (0 the destination, `1 + s`
    /// source `s`) of instruction `k`.
    fn num(&self, k: usize, j: usize) -> u32 {
        let Some(r) = self.r else { return u32::MAX };
        r.starts.get(k).and_then(|&s| r.operands.get(s as usize + j)).copied().unwrap_or(u32::MAX)
    }
    /// The fact of the caller's number `num`, if defined.
    fn of_num(&self, num: Option<u32>) -> Option<usize> {
        num.and_then(|n| self.by_num.get(n as usize)).copied().filter(|&f| f != NO_FACT)
    }
    /// The caller's numbers of instruction `k`'s operands (destination
    /// first, as [`Ids::num`] indexes them); empty when not resolved.
    fn nums(&self, k: usize) -> &'r [u32] {
        let Some(r) = self.r else { return &[] };
        let at = |k: usize| r.starts.get(k).map(|&s| s as usize);
        match (at(k), at(k + 1)) {
            (Some(a), Some(b)) => r.operands.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }
    /// The fact of virtual register `v`, operand `j` of an instruction whose
    /// [`Ids::nums`] are `nums`, if it is ever defined.
    fn operand_in(&self, v: &VirtReg, nums: &[u32], j: usize) -> Option<usize> {
        match self.r {
            Some(_) => self.of_num(nums.get(j).copied()),
            None => self.virt.get(v.name.as_str()).copied(),
        }
    }
    /// The fact of `v`, the virtual register of input `k` or the condition
    /// of block `k` (`cond`), if it is ever defined.
    fn named(&self, v: &VirtReg, k: usize, cond: bool) -> Option<usize> {
        match self.r {
            Some(r) => self.of_num((if cond { r.conds } else { r.inputs }).get(k).copied().flatten()),
            None => self.virt.get(v.name.as_str()).copied(),
        }
    }
    /// The fact of physical register `x`.
    fn phys(&self, x: Reg) -> usize {
        self.nvirt + x as usize
    }
    /// The virtual-destination facts of each block's instructions, block
    /// by block.
    fn dests_by_block<'a>(&'a self, p: &'a Program) -> impl Iterator<Item = &'a [usize]> + 'a {
        let mut rest = self.dest.as_slice();
        p.blocks.iter().map(move |b| {
            let (here, after) = rest.split_at(b.insts().len().min(rest.len()));
            rest = after;
            here
        })
    }
}

fn entry_set(p: &Program, ids: &Ids<'_, '_>) -> Bits {
    let mut s = Bits::new(ids.count, false);
    for (k, i) in p.inputs.iter().enumerate() {
        if let Some(v) = &i.vreg {
            ids.named(v, k, false).into_iter().for_each(|x| s.set(x));
        }
        i.reg.regs().for_each(|x| s.set(ids.phys(x)));
    }
    for &r in p.target.payload(p.stage) {
        s.set(ids.phys(r));
    }
    s
}

/// Add the facts instruction `i`'s destination defines to `set` (`fact`:
/// its virtual destination's, from [`Ids::dest`]).
fn define(i: &Inst, fact: usize, ids: &Ids<'_, '_>, set: &mut Bits) {
    match &i.dest {
        Some(Operand::Virt(_)) => set.set(fact),
        Some(Operand::Phys(r)) => r.regs().for_each(|x| set.set(ids.phys(x))),
        _ => {}
    }
}

/// The facts each block defines (its transfer function is OUT = IN ∪
/// these), written straight into each block's row.
fn block_defs(p: &Program, ids: &Ids<'_, '_>) -> BlockBits {
    let mut defs = BlockBits::new(p.blocks.len(), ids.count, false);
    for (k, (b, facts)) in p.blocks.iter().zip(ids.dests_by_block(p)).enumerate() {
        for (i, &f) in b.insts().iter().zip(facts) {
            match &i.dest {
                Some(Operand::Virt(_)) => defs.set(k, f),
                Some(Operand::Phys(r)) => r.regs().for_each(|x| defs.set(k, ids.phys(x))),
                _ => {}
            }
        }
    }
    defs
}

/// Walk block `bk` (whose first instruction is instruction `first` of the
/// program) from `set`, adding definitions and reporting the first read
/// of something not in the set.
fn transfer(t: &Target, b: &Block, bk: usize, first: usize, ids: &Ids<'_, '_>, set: &mut Bits) -> Result<(), Located> {
    for (j, i) in b.insts().iter().enumerate() {
        let k = first + j;
        let nums = ids.nums(k);
        for (s, o) in i.srcs.iter().enumerate() {
            let fact = match o {
                Operand::Virt(v) => ids.operand_in(v, nums, 1 + s),
                _ => None,
            };
            read_ok(t, o, fact, ids, set, i.span)?;
        }
        define(i, ids.dest.get(k).copied().unwrap_or(NO_FACT), ids, set);
    }
    if let TermKind::Brnz { cond, .. } = &b.term.kind {
        let fact = match cond {
            Operand::Virt(v) => ids.named(v, bk, true),
            _ => None,
        };
        read_ok(t, cond, fact, ids, set, b.term.span)?;
    }
    Ok(())
}

/// Whether operand `o` (a virtual register's: with its fact `fact`, if it
/// is ever defined) is in `set`; if not, the error.
#[inline]
fn read_ok(t: &Target, o: &Operand, fact: Option<usize>, ids: &Ids<'_, '_>, set: &Bits, span: Span) -> Result<(), Located> {
    // Fast path: the message is only built for a read that fails.
    let defined = match o {
        Operand::Virt(_) => fact.is_some_and(|x| set.get(x)),
        Operand::Phys(r) => r.regs().all(|x| set.get(ids.phys(x))),
        _ => true,
    };
    match defined {
        true => Ok(()),
        false => undefined(t, o, fact, span),
    }
}

/// The error of a read of `o` (with its fact `fact`, see [`read_ok`]) that
/// is not defined where it happens.
#[cold]
#[inline(never)]
fn undefined(t: &Target, o: &Operand, fact: Option<usize>, span: Span) -> Result<(), Located> {
    let missing = match o {
        Operand::Virt(v) if fact.is_none() => format!("`%{}` is used but never defined", show(&v.name)),
        Operand::Virt(v) => format!("`%{}` is not defined on every path to this use", show(&v.name)),
        Operand::Phys(r) => format!("${}{} is read before it is written on some path (it is neither an input nor a payload register)", t.regs.name(r.base), suffix(*r)),
        _ => return Ok(()),
    };
    Err(err(span, missing))
}

/// The most bits the dataflow may hold (blocks × facts): beyond this a
/// program is rejected as too large rather than exhausting memory.
const DATAFLOW_BUDGET_BITS: usize = 1 << 28;

fn defined_before_use(p: &Program, r: Resolved<'_>, cfg: &Cfg) -> Result<(), Located> {
    let ids = Ids::new(p, r);
    let n = p.blocks.len();
    if n.saturating_mul(ids.count) > DATAFLOW_BUDGET_BITS {
        return Err(err(Span::new(1, 1), format!("program too large to validate ({n} blocks × {} registers)", ids.count)));
    }
    // Reverse postorder, so that the round-robin iteration converges in a
    // few passes on reducible CFGs.
    let order = crate::cfg::reverse_postorder(cfg.succ.len(), |k| cfg.succs(k));
    let entry = entry_set(p, &ids);
    let mut s = Bits::new(ids.count, true);
    let defs = block_defs(p, &ids);
    let mut out = BlockBits::new(n, ids.count, true);
    let block_in = |k: usize, out: &BlockBits, s: &mut Bits| {
        match k {
            0 => s.copy_from(&entry),
            _ => s.fill(true),
        }
        cfg.preds(k).iter().for_each(|&j| s.and(out.row(j)));
    };
    // Passes in reverse postorder over the blocks whose predecessors'
    // OUT changed since their last visit (at first all of them).
    let mut dirty = vec![true; n];
    let mut again = true;
    while again {
        again = false;
        for &k in &order {
            if !dirty.get(k).copied().unwrap_or(false) {
                continue;
            }
            dirty[k] = false;
            block_in(k, &out, &mut s);
            s.or(defs.row(k));
            if out.assign(k, &s) {
                cfg.succs(k).iter().for_each(|&j| dirty[j] = true);
                again = true;
            }
        }
    }
    let mut first = 0;
    for (k, b) in p.blocks.iter().enumerate() {
        block_in(k, &out, &mut s);
        transfer(p.target, b, k, first, &ids, &mut s)?;
        first += b.insts().len();
    }
    Ok(())
}

/// One scratch access of a source instruction: the slots it reads or
/// writes (word addresses, wrapping at 2^32 like the interpreters').
struct ScratchAccess {
    write: bool,
    first: u32,
    size: u8,
    span: Span,
}

impl ScratchAccess {
    fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.size as u32).map(|k| self.first.wrapping_add(k))
    }
}

/// The scratch access of `i`, if it is a scratch read or write (already
/// checked: its offset is an integer constant, its value has a size).
fn scratch_access(sizes: &SizeMap<'_>, i: &Inst, d: &OpDesc) -> Option<ScratchAccess> {
    let write = match d.sem {
        crate::target::Sem::ScratchRead => false,
        crate::target::Sem::ScratchWrite => true,
        _ => return None,
    };
    let at = d.operands.iter().position(|k| *k == OperandKind::Index)?;
    let Some(Operand::Imm(off)) = i.srcs.get(at) else { return None };
    let value = if write { i.srcs.iter().enumerate().find(|(k, _)| *k != at).map(|x| x.1) } else { i.dest.as_ref() };
    let size = match value? {
        Operand::Virt(v) => size_of(sizes, v),
        Operand::Phys(r) => r.size,
        _ => 1,
    };
    Some(ScratchAccess { write, first: off.bits, size, span: i.span })
}

/// Check 7: every scratch slot read is written on every path to the read.
/// Costs nothing for programs without scratch reads. `descs` holds the
/// descriptor of every instruction in program order.
fn scratch_written_before_read(p: &Program, sizes: &SizeMap<'_>, descs: &[&'static OpDesc], cfg: &Cfg) -> Result<(), Located> {
    if !descs.iter().any(|d| d.sem == crate::target::Sem::ScratchRead) {
        return Ok(());
    }
    let mut rest = descs;
    let mut acc: Vec<Vec<ScratchAccess>> = Vec::with_capacity(p.blocks.len());
    for b in &p.blocks {
        let (here, after) = rest.split_at(b.insts().len().min(rest.len()));
        rest = after;
        acc.push(b.insts().iter().zip(here).filter_map(|(i, d)| scratch_access(sizes, i, d)).collect());
    }
    if !acc.iter().flatten().any(|a| !a.write) {
        return Ok(());
    }
    let mut ids: HashMap<u32, usize> = HashMap::default();
    for a in acc.iter().flatten().filter(|a| a.write) {
        for s in a.slots() {
            let n = ids.len();
            ids.entry(s).or_insert(n);
        }
    }
    let n = ids.len();
    if p.blocks.len().saturating_mul(n) > DATAFLOW_BUDGET_BITS {
        return Err(err(Span::new(1, 1), format!("program too large to validate ({} blocks × {n} scratch slots)", p.blocks.len())));
    }
    let walk = |k: usize, set: &mut Bits, check: bool| -> Result<(), Located> {
        for a in acc.get(k).into_iter().flatten() {
            if a.write {
                a.slots().filter_map(|s| ids.get(&s)).for_each(|&x| set.set(x));
            } else if let (true, Some(s)) = (check, a.slots().find(|s| !ids.get(s).is_some_and(|&x| set.get(x)))) {
                return Err(err(a.span, format!("scratch slot {s} is read before it is written on some path (scratch memory holds nothing at entry)")));
            }
        }
        Ok(())
    };
    let block_in = |k: usize, out: &[Bits]| {
        let mut s = Bits::new(n, k != 0);
        cfg.preds(k).iter().for_each(|&j| s.and(&out[j].0));
        s
    };
    let mut out = vec![Bits::new(n, true); p.blocks.len()];
    // Reverse postorder, so that the round-robin iteration converges in a
    // few passes on reducible CFGs.
    let order = crate::cfg::reverse_postorder(cfg.succ.len(), |k| cfg.succs(k));
    let mut changed = true;
    while changed {
        changed = false;
        for &k in &order {
            let mut s = block_in(k, &out);
            walk(k, &mut s, false)?;
            if s != out[k] {
                out[k] = s;
                changed = true;
            }
        }
    }
    (0..p.blocks.len()).try_for_each(|k| walk(k, &mut block_in(k, &out), true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn check(text: &str) -> Result<(), Located> {
        match parse(text.as_bytes(), None) {
            Ok(p) => validate(&p),
            Err(e) => panic!("does not parse: {e}\n{text}"),
        }
    }
    /// The error of `body` on `target`, as `line:col: message`.
    fn bad(target: &str, body: &str) -> String {
        let text = format!("target {target}\n{body}");
        match check(&text) {
            Ok(()) => panic!("accepted:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_valid_programs() {
        let v3d = "target v3d71\ninput %w = $rf1\nb0:\n %a = ldunif 0\n %c = fadd %a, 1.0\n %p = fmul %c, %w\n brnz %p, b1, b2\nb1:\n tlbw %p\n jmp b3\nb2:\n jmp b3\nb3:\n end\n";
        check(v3d).unwrap();
        let gen = "target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = mul %x, %x\n %y = add %y, %x\n %t:4 = send.tex %y\n send.eot %t\n end\n";
        check(gen).unwrap();
        let r600 = "target r600\ninput %a = $R1.x\nb0:\n $R1.y = mov %a\n export 0, $R1.y\n end\n";
        check(r600).unwrap();
        let machine = "target v3d71\nform machine\nb0:\n { add: frob $rf0 }\n end\n";
        check(machine).unwrap();
    }

    #[test]
    fn loops_keep_definitions() {
        let s = "target v3d71\nb0:\n %i = ldunif 0\n jmp b1\nb1:\n %i = sub %i, 1\n brnz %i, b2, b3\nb2:\n jmp b1\nb3:\n tlbw %i\n end\n";
        check(s).unwrap();
    }

    #[test]
    fn structural_errors() {
        assert_eq!(bad("v3d71", "b0:\n jmp b0\nb0:\n end\n"), "4:1: duplicate label `b0`; expected each label to name one block");
        assert!(bad("v3d71", "b0:\n jmp nowhere\n").contains("names no block"));
        assert!(bad("v3d71", "b0:\n end\nb1:\n end\n").starts_with("4:1: block `b1` is unreachable"));
        let crit = "b0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n brnz %c, b2, b3\nb2:\n jmp b3\nb3:\n end\n";
        assert!(bad("v3d71", crit).starts_with("4:2: the edge from `b0` to `b2` is critical"), "{}", bad("v3d71", crit));
    }

    #[test]
    fn discards_only_in_fragment_programs() {
        check("target r600\nstage fragment\ninput %c = $R1.x\nb0:\n killne_int %c\n export 0, %c\n end\n").unwrap();
        check("target kepler\nb0:\n %c = ipa 0\n kil.nz %c\n st.out 0, %c\n end\n").unwrap();
        let vertex = "target r600\ninput %c = $R1.x\nb0:\n killne_int %c\n export 0, %c\n end\n";
        let e = check(vertex).unwrap_err().to_string();
        assert!(e.starts_with("4:2: `killne_int` discards a fragment and exists only in the fragment stage"), "{e}");
        assert!(bad("kepler", "stage vertex\nb0:\n %c = ld.attr 0\n kil.nz %c\n st.out 0, %c\n end\n").contains("only in the fragment stage"));
    }

    #[test]
    fn texture_unit_order_within_blocks() {
        let words = " %r = ldtmu\n %g = ldtmu\n %b = ldtmu\n %a = ldtmu\n";
        check(&format!("target v3d71\ninput %u = $rf1\nb0:\n tmut %u\n tmus %u\n{words} tlbw %a\n end\n")).unwrap();
        let extra = format!("input %u = $rf1\nb0:\n tmus %u\n{words} %x = ldtmu\n end\n");
        assert!(bad("v3d71", &extra).starts_with("9:7: `ldtmu` reads"), "{}", bad("v3d71", &extra));
        assert!(bad("v3d71", "b0:\n %x = ldtmu\n end\n").contains("`ldtmu` reads the texture unit while no lookup has a word left to read"));
        assert!(bad("v3d71", "b0:\n tmus 1\n %r = ldtmu\n end\n").contains("block `b0` ends with 3 word(s) of a texture lookup unread"));
        assert!(bad("v3d71", "b0:\n tmut 1\n end\n").contains("ends with a texture coordinate written and no lookup started"));
        // A lookup's words may not be read in a later block.
        let split = format!("b0:\n tmus 1\n jmp b1\nb1:\n{words} end\n");
        assert!(bad("v3d71", &split).contains("block `b0` ends with 4 word(s)"));
    }

    #[test]
    fn instruction_errors() {
        assert!(bad("v3d71", "b0:\n %a = frob 1\n end\n").contains("unknown opcode `frob`"));
        assert!(bad("v3d71", "b0:\n thrsw\n end\n").contains("only in the machine form"));
        assert!(bad("v3d71", "b0:\n %a = fadd 1\n end\n").contains("takes 2 operand(s), found 1"));
        assert!(bad("v3d71", "b0:\n fadd 1, 1\n end\n").contains("needs a destination"));
        assert!(bad("v3d71", "b0:\n %a = tlbw 1\n end\n").contains("has no destination"));
        assert!(bad("v3d71", "b0:\n %a = mov 100\n end\n").contains("immediate 100 is not allowed"));
        assert!(bad("v3d71", "b0:\n %a = ldunif %b\n end\n").contains("integer constant"));
        assert!(bad("v3d71", "b0:\n %a = ldunif 1.0\n end\n").contains("integer constant"));
        assert!(bad("v3d71", "b0:\n %a = mov b0\n end\n").contains("labels are operands of terminators"));
        assert!(bad("v3d71", "b0:\n %a = mov $rf0\n end\n").contains("may not name $rf0"));
        assert!(bad("v3d71", "b0:\n $rf64 = mov 1\n end\n").contains("outside target v3d71's register file"));
        assert!(bad("gen8", "b0:\n $g1 = mov 1\n end\n").contains("$g1 is reserved"));
        assert!(bad("gen8", "b0:\n %a = math.rcp 1\n end\n").contains("must be a register"));
        assert!(bad("gen8", "b0:\n %a = add 1, $g2\n end\n").contains("immediate 1 is not allowed as operand 1"));
        assert!(bad("gen8", "b0:\n send.eot $g120\n $g3 = mov 1\n end\n").contains("must be the last instruction"));
        assert!(bad("gen8", "b0:\n send.eot $g120\n jmp b1\nb1:\n end\n").contains("must be the last instruction"));
    }

    #[test]
    fn pinned_registers_keep_the_target_register_rules() {
        // r127: a send whose source and destination overlap (a scratch read's
        // header is its destination) may not return into g127.
        let fill = bad("gen8", "b0:\n $g126:2 = send.scratch_read 0\n send.eot $g126:2\n end\n");
        assert!(fill.starts_with("3:12: ") && fill.contains("returns into g127"), "{fill}");
        assert!(bad("gen8", "b0:\n $g127 = send.scratch_read 0\n send.eot $g127\n end\n").contains("returns into g127"));
        let tex = "b0:\n $g126:2 = mov 1.0\n $g124:4 = send.tex $g126:2\n send.eot $g124:4\n end\n";
        assert!(bad("gen8", tex).starts_with("4:12: ") && bad("gen8", tex).contains("returns into g127"));
        // End-of-thread payload in g112-g127.
        assert!(bad("gen8", "b0:\n $g20 = mov 1.0\n send.eot $g20\n end\n").contains("outside g112-g127"));
        assert!(bad("gen8", "input %x:2 = $g110:2\nb0:\n $g112:2 = mov %x\n send.eot $g110:4\n end\n").contains("outside g112-g127"));
        // A multi-register ALU destination partly overlapping a source.
        let part = "input %x:2 = $g2:2\nb0:\n $g11:2 = mov %x\n $g10:2 = add $g11:2, $g11:2\n send.eot %x\n end\n";
        assert!(bad("gen8", part).contains("partly overlaps a source"));
        // What the compiler can place is not judged: virtual operands, exact
        // overlap, a send into g127 whose source is elsewhere, g127 in
        // ordinary ops.
        check("target gen8\ninput %x:2 = $g2:2\nb0:\n send.scratch_write 0, %x\n %f:2 = send.scratch_read 0\n $g124:4 = send.tex %x\n $g10:2 = add %f, %f\n $g10:2 = add $g10:2, %f\n send.eot $g124:4\n end\n").unwrap();
        check("target gen8\ninput %x:2 = $g2:2\nb0:\n $g127 = mov $g2\n %t:4 = send.tex %x\n send.eot %t\n end\n").unwrap();
        check("target gen8\ninput %x:4 = $g112:4\nb0:\n send.eot $g112:4\n end\n").unwrap();
    }

    #[test]
    fn programs_end_with_the_thread_ending_op() {
        assert_eq!(bad("gen8", "input %x:2 = $g2:2\nb0:\n %y:2 = add %x, %x\n end\n"), "5:2: block `b0` ends the program without `send.eot`; on target gen8 the last instruction before `end` must end the thread");
        let two_ends = "input %x:2 = $g2:2\nb0:\n brnz $g0, b1, b2\nb1:\n send.eot %x\n end\nb2:\n end\n";
        assert!(bad("gen8", two_ends).starts_with("9:2: block `b2` ends the program without"));
        check("target v3d71\nb0:\n end\n").unwrap();
    }

    #[test]
    fn scratch_is_written_before_it_is_read() {
        assert_eq!(bad("v3d71", "b0:\n %a = scratchr 3\n tlbw %a\n end\n"), "3:7: scratch slot 3 is read before it is written on some path (scratch memory holds nothing at entry)");
        // A 2-word fill needs both slots; the write covers only one.
        let part = "input %x:2 = $g2:2\nb0:\n send.scratch_write 4, $g2\n %y:2 = send.scratch_read 4\n send.eot %y\n end\n";
        assert!(bad("gen8", part).contains("scratch slot 5 is read before"), "{}", bad("gen8", part));
        // Written on one path only.
        let one_path = "b0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n scratchw 0, %c\n jmp b3\nb2:\n jmp b3\nb3:\n %a = scratchr 0\n tlbw %a\n end\n";
        assert!(bad("v3d71", one_path).starts_with("11:7: scratch slot 0 is read before"));
        // Written on every path, around a loop, and in a multi-word run.
        check("target v3d71\nb0:\n %c = ldunif 0\n scratchw 0, %c\n jmp b1\nb1:\n %a = scratchr 0\n scratchw 0, %a\n brnz %a, b2, b3\nb2:\n jmp b1\nb3:\n tlbw %a\n end\n").unwrap();
        check("target gen8\ninput %x:2 = $g2:2\nb0:\n send.scratch_write 4, %x\n %y:2 = send.scratch_read 4\n %z = send.scratch_read 5\n send.eot %y\n end\n").unwrap();
        check("target r600\ninput %a = $R1.x\nb0:\n scratch_write 4294967295, %a\n %b = scratch_read 4294967295\n export 0, %b\n end\n").unwrap();
    }

    #[test]
    fn size_errors() {
        assert!(bad("gen8", "input %x:2 = $g2:2\nb0:\n %y = mul %x, %x\n end\n").contains("one size, found sizes 1 and 2"));
        assert!(bad("gen8", "input %x:4 = $g2:4\nb0:\n %y:4 = mul %x, %x\n end\n").contains("allows at most 2"));
        assert!(bad("gen8", "input %x:2 = $g2:2\nb0:\n %y:2 = mul %x:1, %x\n end\n").contains("does not match its definition's size 2"));
        assert!(bad("gen8", "input %x:2 = $g2:2\nb0:\n %x:1 = mov 1\n end\n").contains("must keep the size"));
        assert!(bad("gen8", "input %x:2 = $g2:2\nb0:\n %t:2 = send.tex %x\n end\n").contains("must have size 4"));
        assert!(bad("gen8", "input %x:2 = $g2\nb0:\n end\n").contains("register run has size 1"));
        assert!(bad("gen8", "input %x:5 = $g2:5\nb0:\n end\n").contains("largest value size 4"));
    }

    #[test]
    fn resolved_descriptions_give_the_same_result() {
        let texts = [
            "target v3d71\ninput %w = $rf1\nb0:\n %a = ldunif 0\n %c = fadd %a, 1.0\n tlbw %c\n end\n",
            "target v3d71\ninput %w = $rf1\nb0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n %x = mov %w\n jmp b3\nb2:\n jmp b3\nb3:\n tlbw %x\n end\n",
            "target v3d71\nb0:\n %a = mov %b\n end\n",
            "target v3d71\ninput %w = $rf1\nb0:\n %i = mov %w\n jmp b1\nb1:\n %i = sub %i, 1\n brnz %i, b2, b3\nb2:\n jmp b1\nb3:\n tlbw %i\n end\n",
            "target v3d71\nb0:\n %a = frob 1\n end\n",
            "target v3d71\nb0:\n thrsw\n end\n",
            "target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = add %x, %x\n end\n",
        ];
        for text in texts {
            let Ok(p) = parse(text.as_bytes(), None) else { panic!("does not parse: {text}") };
            let descs: Vec<_> = p.blocks.iter().flat_map(|b| b.insts()).map(|i| p.target.op(&i.opcode)).collect();
            // Names numbered in reverse order of first appearance.
            let mut seen: Vec<smol_str::SmolStr> = Vec::new();
            let mut num = |o: Option<&Operand>| match o.and_then(Operand::virt) {
                Some(v) => {
                    if !seen.contains(&v.name) {
                        seen.push(v.name.clone());
                    }
                    seen.iter().position(|n| *n == v.name).map_or(u32::MAX, |x| 100 - x as u32)
                }
                None => u32::MAX,
            };
            let (mut starts, mut operands) = (Vec::new(), Vec::new());
            for i in p.blocks.iter().flat_map(|b| b.insts()) {
                starts.push(operands.len() as u32);
                operands.push(num(i.dest.as_ref()));
                operands.extend(i.srcs.iter().map(|o| num(Some(o))));
            }
            starts.push(operands.len() as u32);
            let conds: Vec<_> = p.blocks.iter().map(|b| if let TermKind::Brnz { cond, .. } = &b.term.kind { Some(num(Some(cond))) } else { None }).collect();
            let inputs: Vec<_> = p.inputs.iter().map(|i| i.vreg.clone().map(|v| num(Some(&Operand::Virt(v))))).collect();
            let full = Resolved { descs: &descs, starts: &starts, operands: &operands, inputs: &inputs, conds: &conds, names: 101 };
            let show = |r: Result<(), Located>| r.map_err(|e| e.to_string());
            assert_eq!(show(validate_resolved(&p, full)), show(validate(&p)), "{text}");
            let part = Resolved { descs: descs.get(..1).unwrap_or(&[]), starts: &[], ..full };
            assert_eq!(show(validate_resolved(&p, part)), show(validate(&p)), "{text}");
        }
    }

    #[test]
    fn definedness_errors() {
        assert_eq!(bad("v3d71", "b0:\n %a = mov %b\n end\n"), "3:7: `%b` is used but never defined");
        let s = "b0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n %x = mov 1\n jmp b3\nb2:\n jmp b3\nb3:\n tlbw %x\n end\n";
        assert_eq!(bad("v3d71", s), "11:2: `%x` is not defined on every path to this use");
        assert!(bad("v3d71", "b0:\n tlbw $rf5\n end\n").contains("$rf5 is read before it is written"));
        check("target v3d71\nb0:\n tlbw $rf2\n end\n").unwrap();
        check("target v3d71\nb0:\n $rf5 = mov 1\n tlbw $rf5\n end\n").unwrap();
    }
}
