//! The generator's state and straight-line code: choosing an op that is
//! valid at the current point, its operands and its destination.
//!
//! Algorithm (wasm-smith style): the candidates are the target's opcodes
//! allowed by the [`Config`]; an op is emitted only once every operand has
//! been given a value of the right size that is defined on every path (from
//! the [`Scope`]), an immediate the target's `rules.imm_ok` accepts, or an
//! index constant. When no value of a needed size exists, a producer (an
//! outside-input load or `mov` of an immediate) is emitted first.
//!
//! Invariant: every instruction pushed is valid at its point: operands
//! defined, sizes as the op's [`Sizes`] demand, no implicitly written or
//! reserved register named, physical destinations only on ops with an
//! explicit destination and only from the disjoint preallocated pool or
//! the profile's wide runs (values no ALU op can make: gathered there one
//! register at a time by moves, and a wide result's registers read one at a
//! time).

use super::config::{imm_class, Config};
use super::features::Features;
use super::profile::Profile;
use super::scope::{Def, Loc, Scope};
use super::draw::Cursor;
use arbitrary::Result;
use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem, Sizes, TEXEL_WORDS};
use schedra_ir::{Block, Body, Imm, Inst, Operand, PhysReg, Span, Stage, Target, TermKind, Terminator, VirtReg};
use schedra_ir::SmolStr;
use std::cell::RefCell;
use std::rc::Rc;

/// A program under construction.
pub struct Gen<'a, 'u> {
    pub(super) u: &'a mut Cursor<'u>,
    pub(super) t: &'static Target,
    pub(super) cfg: &'a Config,
    pub(super) prof: &'static Profile,
    /// Finished blocks.
    pub(super) blocks: Vec<Block>,
    /// The open block's label and instructions.
    pub(super) label: SmolStr,
    pub(super) insts: Vec<Inst>,
    pub(super) scope: Scope,
    /// Size of each virtual register, by id.
    pub(super) sizes: Vec<u8>,
    /// Virtual registers that must not be redefined (loop counters, values
    /// kept live for pressure).
    pub(super) locked: Vec<u32>,
    /// Values of the pressure burst beyond [`burst_read`](super::profile::Profile::burst_read), out of
    /// scope, output when their block ends.
    pub(super) tail: Vec<(Loc, u8)>,
    /// Preallocated registers this program may use.
    pub(super) pool: Vec<PhysReg>,
    /// Registers holding the counters of the enclosing loops, on a target
    /// whose loop counters live in registers.
    pub(super) counters: Vec<PhysReg>,
    /// Instructions left in the body's budget.
    pub(super) budget: usize,
    pub(super) next_label: u32,
    pub(super) features: Features,
    /// Candidate ops for straight-line code.
    pub(super) ops: Candidates,
    pub(super) inputs: Vec<schedra_ir::Input>,
    /// Inside the pressure burst: prefer the widest values (gen8 `:2`
    /// spills and fills).
    pub(super) in_pressure: bool,
}

/// `prefix` followed by `n` in decimal (`%12`'s name, label `b3`), as
/// `format!("{prefix}{n}")` writes it, stored inline (a prefix byte and at
/// most ten digits fit in a `SmolStr`): no heap allocation. A `const fn`, so
/// that the tables of the usual names are made at compile time.
const fn decimal(prefix: Option<u8>, n: u32) -> SmolStr {
    let mut buf = [0u8; 11];
    let mut i = buf.len();
    let mut rest = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if let Some(p) = prefix {
        i -= 1;
        buf[i] = p;
    }
    match std::str::from_utf8(buf.split_at(i).1) {
        Ok(s) => SmolStr::new_inline(s),
        Err(_) => SmolStr::new_static(""),
    }
}

/// How many register and label names the compile-time tables hold; larger
/// numbers are formatted when asked for.
const NAMED: usize = 512;

/// `decimal(prefix, n)` for every `n` below [`NAMED`], made at compile time.
const fn names(prefix: Option<u8>) -> [SmolStr; NAMED] {
    let mut table = [const { SmolStr::new_static("") }; NAMED];
    let mut n = 0;
    while n < NAMED {
        // The placeholder has nothing to drop (and a const fn may not).
        std::mem::forget(std::mem::replace(&mut table[n], decimal(prefix, n as u32)));
        n += 1;
    }
    table
}

/// Virtual register `%n`'s name (without the `%`) for small `n`.
static REG_NAMES: [SmolStr; NAMED] = names(None);
/// Block label `bn` for small `n`.
static LABEL_NAMES: [SmolStr; NAMED] = names(Some(b'b'));

/// The name of virtual register `%n` (without the `%`): a copy of a table
/// entry, as the generator names an operand for every use.
fn reg_name(n: u32) -> SmolStr {
    REG_NAMES.get(n as usize).cloned().unwrap_or_else(|| decimal(None, n))
}

/// Block label `bn`.
fn label_name(n: u32) -> SmolStr {
    LABEL_NAMES.get(n as usize).cloned().unwrap_or_else(|| decimal(Some(b'b'), n))
}

/// The distinct immediate words an op being built has, in the order they
/// were added: the first few inline (an op has at most a few operands),
/// any more in `more`.
#[derive(Default)]
struct Imms {
    inline: [u32; 4],
    len: usize,
    more: Vec<u32>,
}

impl Imms {
    fn contains(&self, w: u32) -> bool {
        self.inline.iter().take(self.len).any(|&x| x == w) || self.more.contains(&w)
    }
    fn len(&self) -> usize {
        self.len + self.more.len()
    }
    fn push(&mut self, w: u32) {
        match self.inline.get_mut(self.len) {
            Some(slot) => {
                *slot = w;
                self.len += 1;
            }
            None => self.more.push(w),
        }
    }
}

/// Whether `op` may be a straight-line candidate under `cfg`: not one
/// whose fixed operand sizes no value of the target can have (an op only
/// for physical registers, kepler `tex.2d`), and a fragment discard only
/// where outputs may come mid-program and the program is a fragment one.
fn candidate(t: &Target, op: &OpDesc, cfg: &Config) -> bool {
    if let Sizes::Fixed { dest, src } = op.sizes {
        if dest.max(src) > t.max_value_size {
            return false;
        }
    }
    let outside = matches!(op.sem, Sem::ScratchRead | Sem::ScratchWrite | Sem::ThreadSwitch);
    let output = matches!(op.sem, Sem::Output(..));
    // A discard is drawn like a mid-program output, and only in a
    // fragment program.
    let discard = op.sem == Sem::Discard;
    let discard_ok = !discard || (cfg.mid_outputs && super::stage_of(t, cfg) == Stage::Fragment);
    let implicit = matches!(op.dest, Dest::Implicit(_));
    let send = matches!(op.sem, Sem::Texture | Sem::TexLookup);
    // A texture unit's coordinate writes and result reads come only inside
    // a whole lookup sequence (`Gen::unit_lookup`).
    let unit_part = matches!(op.sem, Sem::TexCoord | Sem::TexResult);
    !op.machine_only && !outside && !unit_part && !t.ends_thread(op) && (!output || cfg.mid_outputs) && discard_ok && (!implicit || cfg.implicit) && (!op.sfu || cfg.sfu) && (!send || cfg.sends)
}

/// The straight-line candidates of `t` under `cfg`: the enabled
/// [`candidate`]s, or, when none of them writes a result, every candidate
/// that does.
fn candidate_list(t: &'static Target, cfg: &Config) -> Candidates {
    let ops: Vec<&'static OpDesc> = t.ops.iter().enumerate().filter(|(i, o)| cfg.op_enabled(*i) && candidate(t, o, cfg)).map(|(_, o)| o).collect();
    if ops.iter().any(|o| o.dest != Dest::None) {
        return ops.into();
    }
    t.ops.iter().filter(|o| candidate(t, o, cfg) && o.dest != Dest::None).collect()
}

/// What [`candidate_list`] depends on: the target and the configuration's
/// op mask and op-class switches.
type CandidateKey = (usize, u32, [bool; 5]);

/// A list of straight-line candidates, shared.
type Candidates = Rc<[&'static OpDesc]>;

/// How many candidate lists a thread keeps.
const KEPT_LISTS: usize = 8;

thread_local! {
    /// The candidate lists this thread made last, newest last.
    static CANDIDATES: RefCell<Vec<(CandidateKey, Candidates)>> = const { RefCell::new(Vec::new()) };
}

/// [`candidate_list`], kept per thread for the last few configurations (a
/// campaign with a fixed configuration asks for the same list every case).
fn candidates(t: &'static Target, cfg: &Config) -> Candidates {
    let key: CandidateKey = (t as *const Target as usize, cfg.op_mask, [cfg.mid_outputs, cfg.implicit, cfg.sfu, cfg.sends, cfg.fragment]);
    CANDIDATES.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some((_, list)) = kept.iter().find(|(k, _)| *k == key) {
            return list.clone();
        }
        let list = candidate_list(t, cfg);
        if kept.len() >= KEPT_LISTS {
            kept.remove(0);
        }
        kept.push((key, list.clone()));
        list
    })
}

impl<'a, 'u> Gen<'a, 'u> {
    /// A generator for `t` under `cfg`, drawing from `u`.
    pub fn new(u: &'a mut Cursor<'u>, t: &'static Target, cfg: &'a Config) -> Gen<'a, 'u> {
        let prof = Profile::cached(t);
        let ops = candidates(t, cfg);
        Gen {
            u,
            t,
            cfg,
            prof,
            blocks: Vec::with_capacity(16),
            label: SmolStr::new_static("b0"),
            insts: Vec::with_capacity(32),
            scope: Scope::with_capacity(cfg.insts()),
            sizes: Vec::with_capacity(cfg.insts() + cfg.pressure_values() + 16),
            locked: Vec::with_capacity(cfg.pressure_values() + 4),
            tail: Vec::new(),
            pool: Vec::with_capacity(cfg.pool_size()),
            counters: Vec::new(),
            // A target with an instruction limit gets a body its machine
            // program fits in (a quarter of the limit: moves and spills add
            // instructions).
            budget: cfg.insts().min(t.network.map_or(usize::MAX, |n| n.max_instructions / 4)),
            next_label: 1,
            features: Features::default(),
            ops,
            inputs: Vec::with_capacity(prof.inputs.len()),
            in_pressure: false,
        }
    }

    /// True with probability `percent`/100 (false once the bytes run out).
    pub(super) fn chance(&mut self, percent: u32) -> Result<bool> {
        if self.u.is_empty() {
            return Ok(false);
        }
        Ok(self.u.percent() < percent)
    }

    /// An index below `n` (`n > 0`).
    pub(super) fn pick(&mut self, n: usize) -> Result<usize> {
        if n <= 1 {
            return Ok(0);
        }
        Ok(self.u.below(n))
    }

    /// Whether generation should wind down: no budget or no bytes left.
    pub(super) fn exhausted(&self) -> bool {
        self.budget == 0 || self.u.is_empty()
    }

    /// Append `inst` to the open block.
    pub(super) fn push(&mut self, inst: Inst) {
        self.budget = self.budget.saturating_sub(1);
        self.insts.push(inst);
    }

    /// A fresh virtual register of `size` registers.
    pub(super) fn fresh(&mut self, size: u8) -> u32 {
        self.sizes.push(size);
        (self.sizes.len() - 1) as u32
    }

    /// The operand naming `loc` (the size suffix written on definitions and
    /// multi-register uses).
    pub(super) fn operand(&self, loc: Loc, def: bool) -> Operand {
        match loc {
            Loc::Phys(p) => Operand::Phys(p),
            Loc::Virt(id) => {
                let size = self.sizes.get(id as usize).copied().unwrap_or(1);
                let suffix = (size > 1 || (def && size == 0)).then_some(size);
                Operand::Virt(VirtReg { name: reg_name(id), size: suffix })
            }
        }
    }

    /// Close the open block with `kind` and open a new one labelled `next`.
    /// On a target whose values live in one block, only the registers
    /// stay defined in the next block.
    pub(super) fn close(&mut self, kind: TermKind, next: SmolStr) {
        if self.prof.local_values {
            self.scope.keep_registers();
        }
        let label = std::mem::replace(&mut self.label, next);
        // The block takes the buffer; the next one starts with room for as
        // many instructions (no copy, one allocation per block).
        let room = self.insts.len().max(8);
        let insts = std::mem::replace(&mut self.insts, Vec::with_capacity(room));
        self.blocks.push(Block { label, body: Body::Source(insts), term: Terminator { kind, span: Span::default() }, span: Span::default() });
    }

    /// A new unique block label.
    pub(super) fn new_label(&mut self) -> SmolStr {
        self.next_label += 1;
        label_name(self.next_label - 1)
    }

    /// An immediate from the configured classes (any class if none is
    /// configured).
    pub(super) fn imm(&mut self) -> Result<Imm> {
        // A target whose immediate rule has edges: a quarter of the
        // immediates are drawn from them (other targets draw nothing here).
        let edges = self.t.rules.edge_imms();
        if !edges.is_empty() && self.chance(25)? {
            let bits = edges.get(self.pick(edges.len())?).copied().unwrap_or(0);
            return Ok(Imm { bits, float: bits & 0xfff == 0 && bits != 0 });
        }
        let classes = if self.cfg.imm_classes & 0x1f == 0 { 0x1f } else { self.cfg.imm_classes & 0x1f };
        let n = classes.count_ones() as usize;
        let k = self.pick(n)?;
        let class = (0..5).map(|b| 1u8 << b).filter(|b| classes & b != 0).nth(k).unwrap_or(imm_class::SMALL_INT);
        Ok(match class {
            imm_class::SMALL_INT => Imm::int(self.u.i64_in(-16, 15)),
            imm_class::POW2_FLOAT => {
                let k = self.u.i32_in(-9, 7);
                let v = if k < -8 { 0.0 } else { 2f32.powi(k) };
                Imm::f32(if self.u.bool() { -v } else { v })
            }
            imm_class::ANY_INT => Imm::int(self.u.i32() as i64),
            imm_class::ANY_FLOAT => {
                let f = f32::from_bits(self.u.u32());
                Imm::f32(if f.is_finite() { f } else { 1.5 })
            }
            _ => {
                let specials = [0x7fc0_0000u32, 0x7f80_0000, 0xff80_0000, 0x8000_0000, 0xffff_ffff];
                Imm { bits: specials[self.pick(specials.len())?], float: false }
            }
        })
    }

    /// A register operand of `size` defined here; emits a producer first
    /// when none exists. `None` when the target cannot make such a value.
    pub(super) fn reg_operand(&mut self, size: u8) -> Result<Option<Loc>> {
        let n = self.scope.count_all(size);
        let def = if n == 0 {
            match self.produce(size)? {
                Some(loc) => loc,
                None => return Ok(None),
            }
        } else {
            let k = if self.chance(self.cfg.chain_percent())? {
                self.features.insert(Features::CHAIN);
                n - 1
            } else {
                self.pick(n)?
            };
            match self.scope.nth_any(size, k) {
                Some(d) => d.loc,
                None => return Ok(None),
            }
        };
        if matches!(def, Loc::Phys(_)) {
            self.features.insert(Features::PREALLOC_READ);
        }
        self.scope.used(def);
        Ok(Some(def))
    }

    /// Emit an op that makes a fresh value of `size` from nothing but
    /// constants or outside inputs; its location.
    pub(super) fn produce(&mut self, size: u8) -> Result<Option<Loc>> {
        if let Some(run) = self.prof.wide_run(size) {
            return self.gather(run);
        }
        let implicit = self.cfg.implicit;
        let is_load = move |o: &&'static OpDesc| {
            o.sem.is_outside_input() && o.operands == [OperandKind::Index] && o.dest != Dest::None && size == 1 && (implicit || !matches!(o.dest, Dest::Implicit(_)))
        };
        let loads = self.t.ops.iter().filter(is_load).count();
        // A target that loads its constants (no immediates) produces only
        // by loads.
        let use_mov = loads == 0 || (self.prof.load.is_none() && self.chance(50)?);
        let (op, src) = match (use_mov, self.prof.mov) {
            (true, Some(mov)) => {
                let imm = self.imm()?;
                let imm = if self.t.rules.imm_ok(mov, 0, imm) { imm } else { Imm::int(1) };
                if !self.t.rules.imm_ok(mov, 0, imm) || size > self.t.max_alu_size {
                    return Ok(None);
                }
                (mov, Operand::Imm(imm))
            }
            _ if loads > 0 => {
                let k = self.pick(loads)?;
                let Some(op) = self.t.ops.iter().filter(is_load).nth(k) else { return Ok(None) };
                (op, self.index_imm(op)?)
            }
            _ => return Ok(None),
        };
        let id = self.fresh(size);
        let inst = Inst { opcode: SmolStr::new_static(op.name), dest: Some(self.operand(Loc::Virt(id), true)), srcs: vec![src], span: Span::default() };
        self.note_op(op);
        self.push(inst);
        self.scope.define(Loc::Virt(id), size);
        Ok(Some(Loc::Virt(id)))
    }

    /// Fill the wide run `run` one register at a time with moves of
    /// single-register values; its location.
    fn gather(&mut self, run: PhysReg) -> Result<Option<Loc>> {
        let Some(mov) = self.prof.mov else { return Ok(None) };
        for r in run.regs() {
            let Some(src) = self.reg_operand(1)? else { return Ok(None) };
            let inst = Inst { opcode: SmolStr::new_static(mov.name), dest: Some(Operand::Phys(PhysReg::one(r))), srcs: vec![self.operand(src, false)], span: Span::default() };
            self.push(inst);
            self.scope.define(Loc::Phys(PhysReg::one(r)), 1);
        }
        self.features.insert(Features::PREALLOC_WRITE);
        self.scope.define(Loc::Phys(run), run.size);
        Ok(Some(Loc::Phys(run)))
    }

    /// An index constant for `op` (uniform or varying number, export
    /// number, `ldconst` word).
    pub(super) fn index_imm(&mut self, op: &OpDesc) -> Result<Operand> {
        let v = match op.sem {
            Sem::Const => self.u.u32() as i64,
            Sem::Output(..) => self.u.i64_in(0, 3),
            _ => self.u.i64_in(0, 7),
        };
        Ok(Operand::Imm(if op.sem == Sem::Const { Imm { bits: v as u32, float: false } } else { Imm::int(v) }))
    }

    /// Record the features an op of this kind shows.
    pub(super) fn note_op(&mut self, op: &OpDesc) {
        if matches!(op.dest, Dest::Implicit(_)) {
            self.features.insert(Features::IMPLICIT);
        }
        if op.sfu {
            self.features.insert(Features::SFU);
        }
        if op.sem == Sem::Texture {
            self.features.insert(Features::SEND);
        }
    }

    /// The register size `op` works on here: (destination, register
    /// operands).
    fn sizes_for(&mut self, op: &OpDesc) -> Result<(u8, u8)> {
        Ok(match op.sizes {
            Sizes::Fixed { dest, src } => (dest, src),
            Sizes::Uniform => {
                let wide = if self.in_pressure { 80 } else { 50 };
                let n = match (self.cfg.multi_reg && self.t.max_alu_size > 1, self.chance(wide)?) {
                    (true, true) if self.in_pressure => self.t.max_alu_size,
                    (true, true) => self.u.u8_in(1, self.t.max_alu_size),
                    _ => 1,
                };
                (n, n)
            }
            Sizes::Any => {
                let n = if self.cfg.multi_reg { self.u.u8_in(1, self.t.max_value_size.max(1)) } else { 1 };
                (n, n)
            }
        })
    }

    /// One source operand of `op` at position `k` for register size `size`.
    /// `imms` are the distinct immediate words the op already has.
    fn source(&mut self, op: &OpDesc, k: usize, kind: OperandKind, size: u8, imms: &mut Imms) -> Result<Option<Operand>> {
        match kind {
            OperandKind::Index => self.index_imm(op).map(Some),
            OperandKind::Value if self.chance(self.cfg.imm_percent())? => {
                let imm = self.imm()?;
                let room = self.cfg.imm_overflow || imms.contains(imm.bits) || imms.len() < self.t.rules.max_bundle_imms();
                if room && self.t.rules.imm_ok(op, k, imm) {
                    if !imms.contains(imm.bits) {
                        imms.push(imm.bits);
                    }
                    self.features.insert(Features::IMM);
                    return Ok(Some(Operand::Imm(imm)));
                }
                Ok(self.reg_operand(size)?.map(|l| self.operand(l, false)))
            }
            _ => Ok(self.reg_operand(size)?.map(|l| self.operand(l, false))),
        }
    }

    /// The destination of a result of `size`: a preallocated register, a
    /// redefined virtual register or a fresh one.
    fn dest(&mut self, op: &OpDesc, size: u8, force_new: bool) -> Result<Loc> {
        if super::profile::names_dest(op) && self.cfg.prealloc && !force_new && self.chance(15)? {
            let t = self.t;
            let fits = |p: &&PhysReg| p.size == size && op.slots.iter().any(|s| t.rules.slot_ok(op, s, Some(**p)).is_ok());
            let n = self.pool.iter().filter(fits).count();
            if n > 0 {
                let k = self.pick(n)?;
                if let Some(&p) = self.pool.iter().filter(fits).nth(k) {
                    self.features.insert(Features::PREALLOC_WRITE);
                    if self.prof.inputs.iter().any(|i| i.overlaps(p)) && self.inputs.iter().any(|i| i.reg.overlaps(p)) {
                        self.features.insert(Features::INPUT_CLOBBER);
                    }
                    return Ok(Loc::Phys(p));
                }
            }
        }
        if self.cfg.redefine && !force_new && self.chance(20)? {
            let locked = &self.locked;
            let n = self.scope.count_virt_except(size, locked);
            if n > 0 {
                let k = self.pick(n)?;
                let locked = &self.locked;
                let redefinable = |d: &Def| matches!(d.loc, Loc::Virt(id) if !locked.contains(&id));
                if let Some(d) = self.scope.nth(size, k, redefinable) {
                    self.features.insert(Features::REDEFINE);
                    return Ok(d.loc);
                }
            }
        }
        Ok(Loc::Virt(self.fresh(size)))
    }

    /// Emit one straight-line op valid here. Returns the defined location,
    /// if any. `force_new` makes the destination a fresh virtual register.
    pub(super) fn op(&mut self, force_new: bool) -> Result<Option<Loc>> {
        if self.ops.is_empty() {
            return Ok(None);
        }
        let i = self.pick(self.ops.len())?;
        let op = self.ops[i];
        if op.sem == Sem::TexLookup {
            return self.unit_lookup(op);
        }
        let (dsize, ssize) = self.sizes_for(op)?;
        let mut srcs = Vec::with_capacity(op.operands.len());
        let mut imms = Imms::default();
        for (k, &kind) in op.operands.iter().enumerate() {
            match self.source(op, k, kind, ssize, &mut imms)? {
                Some(o) => srcs.push(o),
                None => return Ok(None),
            }
        }
        self.note_operands(&srcs);
        let wide = self.prof.wide_run(dsize).filter(|_| op.dest == Dest::Explicit);
        let dest = match (op.dest, wide) {
            (Dest::None, _) => None,
            (_, Some(run)) => Some(Loc::Phys(run)),
            _ => Some(self.dest(op, dsize, force_new)?),
        };
        if matches!(op.sem, Sem::Output(..)) {
            self.features.insert(Features::MID_OUTPUT);
        }
        if op.sem == Sem::Discard {
            self.features.insert(Features::DISCARD);
        }
        if dsize > 1 || ssize > 1 && op.operands.iter().any(|k| *k != OperandKind::Index) {
            self.features.insert(Features::MULTI_REG);
        }
        self.note_op(op);
        let inst = Inst { opcode: SmolStr::new_static(op.name), dest: dest.map(|l| self.operand(l, true)), srcs, span: Span::default() };
        self.push(inst);
        match (dest, wide) {
            (Some(_), Some(run)) => {
                // Each register of a wide result is a value of its own.
                self.features.insert(Features::PREALLOC_WRITE);
                run.regs().for_each(|r| self.scope.define(Loc::Phys(PhysReg::one(r)), 1));
                self.scope.define(Loc::Phys(run), run.size);
            }
            (Some(l), None) => self.scope.define(l, dsize),
            _ => {}
        }
        Ok(dest)
    }

    /// One whole texture-unit lookup with `lookup` (`Sem::TexLookup`): a
    /// coordinate write with each of the target's coordinate ops, the
    /// lookup, then its [`TEXEL_WORDS`] result reads into fresh values (the
    /// scheduler spreads them; the unit's rules need them in this block).
    /// Returns the last result's location.
    fn unit_lookup(&mut self, lookup: &'static OpDesc) -> Result<Option<Loc>> {
        let t = self.t;
        let Some(result) = t.ops.iter().find(|o| o.sem == Sem::TexResult && o.dest == Dest::Explicit && o.operands.is_empty()) else { return Ok(None) };
        let coords: Vec<&'static OpDesc> = t.ops.iter().filter(|o| o.sem == Sem::TexCoord && !o.machine_only).collect();
        let mut pending = Vec::with_capacity(coords.len() + 1);
        for op in coords.into_iter().chain([lookup]) {
            let mut imms = Imms::default();
            let Some(kind) = op.operands.first().copied() else { return Ok(None) };
            let Some(src) = self.source(op, 0, kind, 1, &mut imms)? else { return Ok(None) };
            pending.push(Inst { opcode: SmolStr::new_static(op.name), dest: None, srcs: vec![src], span: Span::default() });
        }
        // The coordinates' producers (if any) came first; the unit's ops follow.
        for inst in pending {
            self.push(inst);
        }
        self.features.insert(Features::SEND);
        let mut last = None;
        for _ in 0..TEXEL_WORDS {
            let id = self.fresh(1);
            let inst = Inst { opcode: SmolStr::new_static(result.name), dest: Some(self.operand(Loc::Virt(id), true)), srcs: Vec::new(), span: Span::default() };
            self.push(inst);
            self.scope.define(Loc::Virt(id), 1);
            last = Some(Loc::Virt(id));
        }
        Ok(last)
    }

    fn note_operands(&mut self, srcs: &[Operand]) {
        let is_reg = |o: &&Operand| !matches!(o, Operand::Imm(_) | Operand::Label(_));
        if srcs.iter().filter(is_reg).count() >= 3 {
            self.features.insert(Features::THREE_OPERANDS);
        }
        if srcs.iter().enumerate().filter(|(_, a)| is_reg(a)).any(|(i, a)| srcs.get(i + 1..).unwrap_or(&[]).contains(a)) {
            self.features.insert(Features::REPEATED_OPERAND);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{decimal, label_name, reg_name};

    #[test]
    fn decimal_writes_what_format_writes() {
        for n in [0u32, 1, 9, 10, 99, 100, 511, 512, 1023, 1024, 12345, u32::MAX] {
            assert_eq!(decimal(None, n), n.to_string());
            assert_eq!(decimal(Some(b'b'), n), format!("b{n}"));
            assert_eq!(reg_name(n), n.to_string());
            assert_eq!(label_name(n), format!("b{n}"));
        }
    }
}
