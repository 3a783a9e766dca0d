//! The machine simulator: executes the machine form cycle by cycle
//! (semantics.md "Time in the machine form").
//!
//! Clock: one global cycle counter `now`. A block's bundles issue at
//! consecutive cycles, or on a target with encoded waits (kepler) each
//! bundle's `wait N` puts N more cycles before the next (and before the
//! terminator); its terminator takes the cycle after the last bundle
//! (reading its condition then); the next block's first bundle issues one
//! cycle after the terminator. The entry's first bundle issues at cycle 0.
//!
//! Writes: an op issued at cycle c with latency L (from its `OpDesc`;
//! implicit destinations such as v3d71's rf0 come from `Dest::Implicit`)
//! queues its words as pending writes landing at c + max(L, 1). Before
//! anything reads at cycle t, every pending write with landing cycle <= t is
//! applied, in landing order. Pending writes are global: a write in flight at
//! a block's end keeps flying and lands in the next block.
//!
//! Parallel reads: all ops of a bundle read their operands at issue before
//! any of the bundle's writes (including scratch stores) take effect.
//!
//! Non-interlocked targets: a read before a write lands sees the old
//! contents. Two pending writes that would land on one register in the same
//! cycle are a [`RunError::Hazard`], reported at the op that queues the
//! second one (this also covers two ops of one bundle writing one register).
//!
//! Interlocked targets (gen8): before a bundle issues, if any register it
//! reads or writes has a pending write, the bundle waits until the last such
//! write lands; the wait is counted in `stalls` (the scoreboard also covers
//! destinations, so writes land in program order). The terminator waits for
//! its condition the same way. Which targets these are is the interpreter's
//! own reading of `Target::clock` (`waits`).
//!
//! Read windows: a write by an op whose read window has a maximum
//! (`OpDesc::window`) expires at its issue cycle + that maximum (measured
//! from its landing, so never before it lands); a read of the register
//! after that cycle, before another write lands on it, stops the run
//! ([`RunError::Expired`]). Targets without such an op skip the check.
//!
//! Unknown-landing results (kepler `tex`): the k-th of the run lands at a
//! cycle drawn from the world's seed inside the target's window after
//! issue ([`World::landing_delay`]), and never before an earlier one (they
//! land in issue order). A barrier `texbar N` holds the next bundle until
//! at most N of the results issued before it are in flight; the hold is
//! counted in `stalls`.
//!
//! Texture unit (v3d71 TMU, [`super::unit`]): coordinate writes, lookups
//! and result reads act at issue in the bundle's op order; a lookup issued
//! at c lands at c + its latency, and a result read before that gets a
//! wrong word; a read with nothing queued, or a block end with anything
//! queued, is a [`RunError::Hazard`].
//!
//! Effects happen at issue, in the bundle's op order. Scratch memory is
//! private. `thrsw` does nothing. At entry each declared input register holds
//! the world's input word and every other register the world's garbage word.
//!
//! Hardware rules: a program that breaks a rule of `targets.md` (slots,
//! pairing, read ports, immediates, registers, the end of the program) does
//! not run: every run stops with the rule ([`RunError::Rule`], read by
//! [`super::rules`]). [`Decoded::ignoring_rules`] runs it as time and
//! meaning alone make it behave.
//!
//! Invariant: the simulation never panics; every op it cannot execute
//! (unknown opcode, wrong operands, register out of range) is a `RunError`.

use super::exec::{self, Action, Arg};
use super::scratch::Scratch;
use super::unit::Unit;
use super::words::Words;
use schedra_ir::target::opcache::OpCache;
use super::{label_map, successor, Effects, Exits, Fuel, Outcome, Place, RunError, Trace, World};
use schedra_ir::target::{Clock, Dest, Sem, Sizes};
use schedra_ir::{Block, Bundle, Inst, OpDesc, Operand, PhysReg, Program, Reg, TermKind};
use std::sync::Arc;

/// The machine clock may not pass this cycle (guards against absurd
/// latencies or stall chains).
pub const MAX_CYCLES: u64 = 1 << 40;

/// Run a machine-form program on `world` with `fuel`.
pub fn run(p: &Program, world: World, fuel: u64) -> Result<Outcome, RunError> {
    Decoded::new(p).run(world, fuel)
}

/// Where an op or terminator sits, cheap to copy (12 bytes: every queued
/// write carries one); made a [`Place`] only when an error is reported.
#[derive(Clone, Copy, Debug)]
struct Position {
    /// The block's index in the program, saturated at `u32::MAX`.
    block: u32,
    /// The bundle's index in the block (the terminator's: one past the
    /// last bundle), saturated at `u32::MAX`.
    index: u32,
    line: u32,
}

impl Position {
    fn new(block: usize, index: usize, line: u32) -> Position {
        let sat = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Position { block: sat(block), index: sat(index), line }
    }
    /// The place in `p` (the program the location was made in).
    fn place(self, p: &Program) -> Place {
        let label = p.blocks.get(self.block as usize).map_or("", |b| b.label.as_str());
        Place::new(label, self.index as usize, self.line)
    }
}

/// A write in flight.
#[derive(Clone, Copy, Debug)]
struct Pending {
    land: u64,
    reg: Reg,
    word: u32,
    at: Position,
    /// For how many cycles after landing the word may be read
    /// ([`FOREVER`]: until overwritten); two bytes, which the struct's
    /// padding had room for.
    keep: u16,
}

/// [`Pending::keep`] of a word without a read window maximum.
const FOREVER: u16 = u16::MAX;

/// One decoded op of a bundle, ready to read its operands.
struct DOp<'p> {
    desc: &'static OpDesc,
    inst: &'p Inst,
    /// Where its result goes (registers), if anywhere.
    dest: Option<PhysReg>,
    /// For how many cycles after landing its result may be read ([`keep`]).
    keep: u16,
}

/// One bundle, decoded: its ops, and on an interlocked target every
/// register they read or write (what it waits for; nothing on other
/// targets, which never wait).
struct DBundle {
    at: Position,
    /// Its encoded wait: the next bundle issues `1 + wait` cycles later.
    wait: u64,
    /// The level of the barrier op it holds, if any (`texbar N`).
    barrier: Option<u32>,
    /// Its ops in [`Decoded::ops`].
    ops: std::ops::Range<usize>,
    /// Its registers in [`Decoded::touched`].
    touched: std::ops::Range<usize>,
}

/// One block, decoded. A bundle that cannot be decoded keeps the error it
/// raises when it issues (decoding depends only on the program).
struct DBlock<'p> {
    block: &'p Block,
    /// Where its terminator sits.
    end: Position,
    /// Its bundles in [`Decoded::bundles`].
    bundles: std::ops::Range<usize>,
    /// The registers of a `brnz` condition (what an interlocked target
    /// waits for; empty on other targets).
    cond_regs: Vec<Reg>,
    exits: Exits,
    /// Its label, shared with every trace that passes control to it.
    name: Arc<str>,
}

/// A machine program with opcodes looked up, destinations found, register
/// ranges checked and labels resolved, ready to run on many worlds.
pub struct Decoded<'p> {
    p: &'p Program,
    blocks: Vec<DBlock<'p>>,
    /// Every bundle, block after block.
    bundles: Vec<Result<DBundle, RunError>>,
    /// The ops of every decoded bundle, bundle after bundle.
    ops: Vec<DOp<'p>>,
    /// The registers every decoded bundle reads or writes (interlocked
    /// targets only).
    touched: Vec<Reg>,
    /// The first hardware rule the program breaks ([`super::rules`]).
    broken: Option<RunError>,
    /// Whether a run stops with `broken` before it starts.
    enforce: bool,
}

fn bad(p: &Program, at: Position, message: String) -> RunError {
    RunError::Malformed { at: at.place(p), message }
}

/// Check that every register of `r` exists.
#[inline]
fn in_range(p: &Program, r: PhysReg, at: Position) -> Result<(), RunError> {
    if p.target.regs.contains(r) {
        Ok(())
    } else {
        Err(out_of_range(p, r, at))
    }
}

#[cold]
fn out_of_range(p: &Program, r: PhysReg, at: Position) -> RunError {
    bad(p, at, format!("register ${}:{} is outside the register file", p.reg_name(r.base), r.size))
}

/// Look up an op (through `opcodes`), find its destination registers and append it to `ops`
/// (built in place: a decoded op is large).
fn decode_op<'p>(p: &Program, opcodes: &mut OpCache<'p>, inst: &'p Inst, at: Position, ops: &mut Vec<DOp<'p>>) -> Result<(), RunError> {
    let t = p.target;
    let desc = opcodes.op(&inst.opcode).ok_or_else(|| RunError::UnknownOpcode { at: at.place(p), opcode: inst.opcode.to_string(), target: t.name })?;
    let dest = match (desc.dest, &inst.dest) {
        (Dest::Explicit, Some(Operand::Phys(r))) => Some(*r),
        (Dest::Explicit, _) => return Err(bad(p, at, format!("`{}` needs a physical destination register", desc.name))),
        (Dest::Implicit(r), None) => {
            let size = if let Sizes::Fixed { dest, .. } = desc.sizes { dest.max(1) } else { 1 };
            Some(PhysReg { base: r, size })
        }
        (Dest::None, None) => None,
        (Dest::Unit, None) => return Err(bad(p, at, format!("`{}` leaves its result in its unit: a target without a bypass network cannot run it", desc.name))),
        (_, Some(_)) => return Err(bad(p, at, format!("`{}` names a destination it does not write", desc.name))),
    };
    if let Some(d) = dest {
        in_range(p, d, at)?;
    }
    for r in inst.srcs.iter().filter_map(Operand::phys) {
        in_range(p, r, at)?;
    }
    ops.push(DOp { desc, inst, dest, keep: keep(desc) });
    Ok(())
}

/// The op's index operand (0 when it has none).
fn index_of(desc: &OpDesc, srcs: &[Operand]) -> u32 {
    desc.operands.iter().zip(srcs).find(|(k, _)| **k == schedra_ir::target::OperandKind::Index).and_then(|(_, o)| o.imm()).map_or(0, |i| i.bits)
}

/// Append the registers of `r` to `touched`.
fn touch(touched: &mut Vec<Reg>, r: PhysReg) {
    for i in 0..r.size as u32 {
        touched.push((r.base as u32 + i) as Reg);
    }
}

/// Decode every op of a bundle into `ops` and, on an interlocked target,
/// its registers into `touched` (the first failing op's error wins; then
/// nothing is added).
fn decode_bundle<'p>(p: &Program, opcodes: &mut OpCache<'p>, block: usize, index: usize, bundle: &'p Bundle, ops: &mut Vec<DOp<'p>>, touched: &mut Vec<Reg>) -> Result<DBundle, RunError> {
    let at = Position::new(block, index, bundle.span.line);
    let (first_op, first_reg) = (ops.len(), touched.len());
    for op in &bundle.ops {
        if let Err(e) = decode_op(p, opcodes, &op.inst, at, ops) {
            ops.truncate(first_op);
            return Err(e);
        }
    }
    let waits = if p.target.clock.interlocked() { ops.get(first_op..).unwrap_or(&[]) } else { &[] };
    for d in waits {
        for o in &d.inst.srcs {
            if let Operand::Phys(r) = o {
                touch(touched, *r);
            }
        }
        if let Some(r) = d.dest {
            touch(touched, r);
        }
    }
    let decoded = ops.get(first_op..).unwrap_or(&[]);
    let barrier = decoded.iter().find(|d| d.desc.sem == Sem::TexBarrier).map(|d| index_of(d.desc, &d.inst.srcs));
    Ok(DBundle { at, wait: u64::from(bundle.wait), barrier, ops: first_op..ops.len(), touched: first_reg..touched.len() })
}

impl<'p> Decoded<'p> {
    /// Decode `p` (never fails: what cannot be decoded fails when run). A
    /// program that breaks a hardware rule of its target does not run: it
    /// stops with the rule ([`RunError::Rule`]).
    pub fn new(p: &'p Program) -> Decoded<'p> {
        Decoded { enforce: true, ..Decoded::ignoring_rules(p) }
    }

    /// Decode `p` for runs that only follow time and meaning: a program
    /// that breaks a hardware rule runs as if the hardware allowed it (the
    /// rule is still known: [`Decoded::broken`]).
    pub fn ignoring_rules(p: &'p Program) -> Decoded<'p> {
        let labels = label_map(p);
        let mut opcodes = OpCache::new(p.target);
        let n: usize = p.blocks.iter().flat_map(|b| b.bundles()).map(|b| b.ops.len()).sum();
        let waits = p.target.clock.interlocked();
        let (mut ops, mut touched) = (Vec::with_capacity(n), Vec::with_capacity(if waits { 3 * n } else { 0 }));
        let mut blocks = Vec::with_capacity(p.blocks.len());
        let mut bundles = Vec::with_capacity(p.blocks.iter().map(|b| b.bundles().len()).sum());
        for (bn, block) in p.blocks.iter().enumerate() {
            let first = bundles.len();
            for (i, b) in block.bundles().iter().enumerate() {
                bundles.push(decode_bundle(p, &mut opcodes, bn, i, b, &mut ops, &mut touched));
            }
            let range = first..bundles.len();
            let cond_regs = match &block.term.kind {
                TermKind::Brnz { cond, .. } if waits => cond.phys().into_iter().flat_map(PhysReg::regs).collect(),
                _ => Vec::new(),
            };
            let end = Position::new(bn, block.bundles().len(), block.term.span.line);
            blocks.push(DBlock { block, end, bundles: range, cond_regs, exits: Exits::of(&block.term, &labels), name: Arc::from(block.label.as_str()) });
        }
        Decoded { p, blocks, bundles, ops, touched, broken: super::rules::check(p), enforce: false }
    }

    /// The first hardware rule the program breaks, if any.
    pub fn broken(&self) -> Option<&RunError> {
        self.broken.as_ref()
    }

    /// Run on `world` with `fuel`.
    pub fn run(&self, world: World, fuel: u64) -> Result<Outcome, RunError> {
        self.run_with(&mut Buffers::default(), world, fuel)
    }

    /// Run on `world` with `fuel`, in the room of `buffers` (left for the
    /// next run; the outcome is [`Decoded::run`]'s).
    pub fn run_with(&self, buffers: &mut Buffers, world: World, fuel: u64) -> Result<Outcome, RunError> {
        if let (true, Some(rule)) = (self.enforce, &self.broken) {
            return Err(rule.clone());
        }
        if self.blocks.is_empty() {
            return Err(RunError::NoBlocks);
        }
        let mut m = Machine::new(self.p, world, fuel, std::mem::take(buffers));
        let ran = self.drive(&mut m);
        let (outcome, room) = m.finish();
        *buffers = room;
        ran.map(|()| outcome)
    }

    /// Issue every bundle and terminator from the entry until `end`.
    fn drive(&self, m: &mut Machine<'p>) -> Result<(), RunError> {
        let mut b = 0;
        while let Some(block) = self.blocks.get(b) {
            for bundle in self.bundles.get(block.bundles.clone()).unwrap_or(&[]) {
                match bundle {
                    Ok(bundle) => {
                        let ops = self.ops.get(bundle.ops.clone()).unwrap_or(&[]);
                        let touched = self.touched.get(bundle.touched.clone()).unwrap_or(&[]);
                        m.issue(bundle.at, ops, touched)?;
                        m.after(bundle.wait, bundle.barrier)?
                    }
                    Err(e) => return Err(e.clone()),
                }
            }
            match m.terminate(block, &self.blocks)? {
                Some(next) => b = next,
                None => return Ok(()),
            }
        }
        Ok(())
    }
}

/// The room a run keeps its registers, writes in flight, scratch memory and
/// operand lists in, lent from run to run so that runs on many seeds do not
/// allocate it again. Every run clears or refills what it uses first, so
/// what an earlier run left in it never shows.
#[derive(Default)]
pub struct Buffers {
    regs: Vec<Option<u32>>,
    pending: Vec<Pending>,
    expires: Vec<u64>,
    args: Vec<Arg>,
    actions: Vec<Action>,
    due: Vec<Pending>,
    tex_lands: Vec<u64>,
    scratch: Option<Scratch>,
}

/// The state of the simulated core. A register holding `None` has not been
/// written since entry and holds the world's garbage word for it.
struct Machine<'p> {
    p: &'p Program,
    world: World,
    regs: Vec<Option<u32>>,
    pending: Vec<Pending>,
    /// Whether the target waits for pending writes ([`waits`]).
    interlocked: bool,
    /// Whether some op's result expires (then `expires` is kept).
    expiring: bool,
    /// Per register, the last cycle its landed word may be read.
    expires: Vec<u64>,
    /// The earliest and latest landing cycles in `pending` (`u64::MAX`
    /// and 0 when it is empty).
    next_land: u64,
    last_land: u64,
    now: u64,
    stalls: u64,
    scratch: Scratch,
    /// The texture unit (v3d71's TMU).
    unit: Unit,
    effects: Effects,
    trace: Trace,
    fuel: Fuel,
    /// Buffers reused by every bundle: operands, actions, landed writes.
    args: Vec<Arg>,
    actions: Vec<Action>,
    due: Vec<Pending>,
    /// The landing window of unknown-landing ops (`Target::waits`), if
    /// the target has one.
    landing: Option<(u32, u32)>,
    /// The landing cycles of the unknown-landing results issued so far, in
    /// issue order (they land in order).
    tex_lands: Vec<u64>,
}

/// The words of a register operand, as the registers hold them now.
#[inline]
fn read(p: &Program, world: &World, regs: &[Option<u32>], op: &Operand) -> Result<Words, String> {
    match op {
        Operand::Phys(r) => {
            let mut out = Words::new();
            for x in r.regs() {
                match regs.get(x as usize) {
                    Some(w) => out.push(w.unwrap_or_else(|| world.garbage_reg(x))),
                    None => return Err(format!("${} is outside the register file", p.reg_name(x))),
                }
            }
            Ok(out)
        }
        Operand::Imm(i) => Ok(Words::one(i.bits)),
        Operand::Virt(v) => Err(format!("virtual register %{} in the machine form", v.name)),
        Operand::Label(l) => Err(format!("the label `{l}` is not a value")),
        Operand::Bypass(b) => Err(format!("the bypass read `^{}.{}` on a target without a bypass network", b.unit, b.dist)),
    }
}

impl<'p> Machine<'p> {
    fn new(p: &'p Program, world: World, fuel: u64, room: Buffers) -> Machine<'p> {
        let count = p.target.regs.count as usize;
        let Buffers { mut regs, mut pending, mut expires, mut args, mut actions, mut due, mut tex_lands, scratch } = room;
        regs.clear();
        regs.resize(count, None);
        for r in p.inputs.iter().flat_map(|i| i.reg.regs()) {
            if let Some(slot) = regs.get_mut(r as usize) {
                *slot = Some(world.input_reg(r));
            }
        }
        expires.clear();
        expires.resize(count, u64::MAX);
        pending.clear();
        args.clear();
        actions.clear();
        due.clear();
        tex_lands.clear();
        let scratch = match scratch {
            Some(mut s) => {
                s.renew(world.clone());
                s
            }
            None => Scratch::new(world.clone()),
        };
        Machine {
            p,
            scratch,
            world,
            regs,
            pending,
            interlocked: waits(p.target.clock),
            expiring: p.target.ops.iter().any(|d| d.window().max.is_some()),
            expires,
            next_land: u64::MAX,
            last_land: 0,
            now: 0,
            stalls: 0,
            unit: Unit::default(),
            effects: Effects::new(),
            trace: Trace::with_capacity(p.blocks.len()),
            fuel: Fuel::new(fuel),
            args,
            actions,
            due,
            landing: p.target.waits.map(|c| c.landing),
            tex_lands,
        }
    }

    /// What the run did (as of now: the clock at the final `end`), and its
    /// room back.
    fn finish(self) -> (Outcome, Buffers) {
        let outcome = Outcome { effects: self.effects, cycles: self.now + 1, stalls: self.stalls, executed: self.fuel.used(), trace: self.trace };
        let Machine { regs, pending, expires, args, actions, due, tex_lands, scratch, .. } = self;
        (outcome, Buffers { regs, pending, expires, args, actions, due, tex_lands, scratch: Some(scratch) })
    }

    /// The landing cycle of op `d` issued now: after its latency, or for an
    /// unknown-landing op a cycle drawn from the world's seed inside the
    /// target's window, never before an earlier such result (they land in
    /// issue order).
    fn land_of(&mut self, d: &DOp<'p>) -> u64 {
        let fixed = self.now + u64::from(d.desc.latency.max(1));
        let (true, Some((lo, hi))) = (d.desc.unknown_landing, self.landing) else { return fixed };
        let k = self.tex_lands.len() as u64;
        let delay = self.world.landing_delay(k, hi.saturating_sub(lo));
        let land = (self.now + u64::from(lo.max(1)) + u64::from(delay)).max(self.tex_lands.last().copied().unwrap_or(0));
        self.tex_lands.push(land);
        land
    }

    /// After a bundle has issued (the clock one past its cycle): its
    /// encoded wait, then a barrier `texbar N` holds the next bundle until
    /// at most N of the unknown-landing results issued before it are in
    /// flight (the hold counted in `stalls`).
    fn after(&mut self, wait: u64, barrier: Option<u32>) -> Result<(), RunError> {
        let issued = self.now.saturating_sub(1);
        self.now += wait;
        if let Some(n) = barrier {
            let in_flight: Vec<u64> = self.tex_lands.iter().copied().filter(|&l| l > issued).collect();
            let must = in_flight.len().saturating_sub(n as usize);
            if let Some(&until) = must.checked_sub(1).and_then(|i| in_flight.get(i)) {
                if until > self.now {
                    self.stalls += until - self.now;
                    self.now = until;
                }
            }
        }
        self.clock_ok()
    }

    /// Apply every pending write that has landed by `self.now`, in landing
    /// order (queue order among writes landing together). Inlined for the
    /// usual bundle, at which nothing lands.
    #[inline]
    fn land(&mut self) {
        if self.next_land > self.now {
            return;
        }
        if self.last_land <= self.now {
            self.land_all();
            return;
        }
        self.land_due();
    }

    /// [`Machine::land`] when some pending writes have landed and others
    /// have not.
    fn land_due(&mut self) {
        let now = self.now;
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        let mut next = u64::MAX;
        let mut kept = 0;
        for i in 0..self.pending.len() {
            let Some(&w) = self.pending.get(i) else { break };
            if w.land > now {
                next = next.min(w.land);
                if let Some(slot) = self.pending.get_mut(kept) {
                    *slot = w;
                }
                kept += 1;
            } else {
                due.push(w);
            }
        }
        self.pending.truncate(kept);
        self.next_land = next;
        // `last_land` is still the latest of what is left.
        if due.len() > 1 {
            due.sort_by_key(|w| w.land);
        }
        for w in &due {
            if let Some(slot) = self.regs.get_mut(w.reg as usize) {
                *slot = Some(w.word);
            }
        }
        if self.expiring {
            due.iter().for_each(|w| set_expiry(&mut self.expires, w));
        }
        self.due = due;
    }

    /// [`Machine::land`] when every pending write has landed: apply them
    /// all in landing order (a stable sort keeps queue order among writes
    /// landing together; no sort when they all land in one cycle).
    #[inline]
    fn land_all(&mut self) {
        if self.next_land != self.last_land {
            self.pending.sort_by_key(|w| w.land);
        }
        for w in &self.pending {
            if let Some(slot) = self.regs.get_mut(w.reg as usize) {
                *slot = Some(w.word);
            }
        }
        if self.expiring {
            self.pending.iter().for_each(|w| set_expiry(&mut self.expires, w));
        }
        self.pending.clear();
        (self.next_land, self.last_land) = (u64::MAX, 0);
    }

    /// Interlocked targets: wait until no write to any of `regs` is pending.
    #[inline]
    fn wait_for(&mut self, regs: &[Reg]) -> Result<(), RunError> {
        if !self.interlocked {
            return Ok(());
        }
        let ready = self.pending.iter().filter(|w| regs.contains(&w.reg)).map(|w| w.land).max();
        if let Some(ready) = ready.filter(|&r| r > self.now) {
            self.stalls += ready - self.now;
            self.now = ready;
        }
        self.clock_ok()
    }

    /// Stop when a register of `reads` holds a word whose read window ended
    /// before the current cycle.
    fn windows_ok(&self, at: Position, reads: impl Iterator<Item = PhysReg>) -> Result<(), RunError> {
        for r in reads.flat_map(|p| p.regs()) {
            if let Some(&e) = self.expires.get(r as usize).filter(|&&e| e < self.now) {
                let message = format!("${} is read at cycle {}, past the maximum lifetime of its value (readable until cycle {e})", self.p.reg_name(r), self.now);
                return Err(RunError::Expired { at: at.place(self.p), message });
            }
        }
        Ok(())
    }

    fn clock_ok(&self) -> Result<(), RunError> {
        if self.now > MAX_CYCLES {
            return Err(RunError::TooManyCycles { limit: MAX_CYCLES });
        }
        Ok(())
    }

    /// Issue one bundle at the current cycle, then advance the clock.
    fn issue(&mut self, at: Position, ops: &[DOp<'p>], touched: &[Reg]) -> Result<(), RunError> {
        if self.interlocked {
            self.wait_for(touched)?;
        }
        self.land();
        if self.expiring {
            let srcs = ops.iter().flat_map(|d| d.inst.srcs.iter());
            self.windows_ok(at, srcs.filter_map(Operand::phys))?;
        }
        // Parallel reads: compute every op's action before applying any.
        self.actions.clear();
        for d in ops {
            self.fuel.spend()?;
            let (p, world, regs) = (self.p, &self.world, &self.regs);
            exec::args(d.desc, &d.inst.srcs, &mut self.args, |_, o| read(p, world, regs, o)).map_err(|m| bad(p, at, m))?;
            let width = d.dest.map_or_else(|| value_width(&self.args), |r| r.size as usize);
            let action = exec::execute(d.desc, &self.args, width, &self.world, &self.scratch).map_err(|m| bad(p, at, m))?;
            self.actions.push(action);
        }
        let mut actions = std::mem::take(&mut self.actions);
        let applied = ops.iter().zip(actions.drain(..)).try_for_each(|(d, action)| self.apply(d, action, at));
        self.actions = actions;
        applied?;
        self.now += 1;
        self.clock_ok()
    }

    /// Carry out one op's action: queue its writes, record its effect.
    fn apply(&mut self, d: &DOp<'p>, action: Action, at: Position) -> Result<(), RunError> {
        match action {
            Action::Write(words) => {
                let dest = d.dest.ok_or_else(|| bad(self.p, at, format!("`{}` has nowhere to write", d.desc.name)))?;
                let (land, keep) = (self.land_of(d), d.keep);
                for (reg, &word) in dest.regs().zip(words.iter()) {
                    self.queue(Pending { land, reg, word, at, keep })?;
                }
            }
            Action::Effect(channel, words) => channel.record(&mut self.effects, &words),
            Action::ScratchWrite(slot, words) => self.scratch.write(slot, &words),
            Action::TexCoord(words) => self.unit.coord(&words),
            Action::TexLookup(words) => self.unit.lookup(&words, self.now.saturating_add(u64::from(d.desc.latency))),
            Action::TexResult => {
                let word = self.unit.result(&self.world, self.now).map_err(|message| RunError::Hazard { at: at.place(self.p), message })?;
                self.apply(d, Action::Write(Words::one(word)), at)?;
            }
            Action::Nothing => {}
        }
        Ok(())
    }

    /// Queue a write; two writes landing on one register in one cycle are a
    /// hazard.
    #[inline]
    fn queue(&mut self, w: Pending) -> Result<(), RunError> {
        if let Some(other) = self.pending.iter().find(|o| o.land == w.land && o.reg == w.reg) {
            return Err(self.hazard(&w, other));
        }
        self.next_land = self.next_land.min(w.land);
        self.last_land = self.last_land.max(w.land);
        self.pending.push(w);
        Ok(())
    }

    /// The hazard of queueing `w` while `other` lands on its register in
    /// the same cycle.
    #[cold]
    fn hazard(&self, w: &Pending, other: &Pending) -> RunError {
        let message = format!("two writes land on ${} at cycle {}: this one and the one issued at {}", self.p.reg_name(w.reg), w.land, other.at.place(self.p));
        RunError::Hazard { at: w.at.place(self.p), message }
    }

    /// Run the block's terminator in the cycle after its last bundle; returns
    /// the next block, with the clock at its first bundle's cycle.
    /// `blocks` are all decoded blocks (the trace takes labels from them).
    fn terminate(&mut self, d: &DBlock<'p>, blocks: &[DBlock<'p>]) -> Result<Option<usize>, RunError> {
        let block = d.block;
        let at = d.end;
        self.fuel.spend()?;
        self.unit.end_block().map_err(|message| RunError::Hazard { at: at.place(self.p), message })?;
        let cond = match &block.term.kind {
            TermKind::Brnz { cond, .. } => {
                if let Some(r) = cond.phys() {
                    in_range(self.p, r, at)?;
                }
                if self.interlocked {
                    self.wait_for(&d.cond_regs)?;
                }
                self.land();
                if self.expiring {
                    self.windows_ok(at, cond.phys().into_iter())?;
                }
                // One register (in range: checked above) is read directly;
                // anything else through `read`, first word or 0.
                match cond {
                    Operand::Phys(r) if r.size == 1 => self.regs.get(r.base as usize).map(|w| w.unwrap_or_else(|| self.world.garbage_reg(r.base))),
                    _ => Some(read(self.p, &self.world, &self.regs, cond).map_err(|m| bad(self.p, at, m))?.first().copied().unwrap_or(0)),
                }
            }
            _ => None,
        };
        let next = successor(&block.term, cond, d.exits, || at.place(self.p))?;
        if let Some((i, hash)) = next {
            if let Some(to) = blocks.get(i) {
                self.trace.push_shared(&to.name, hash);
            }
            self.now += 1;
            self.clock_ok()?;
        }
        Ok(next.map(|(i, _)| i))
    }
}

/// The interpreter's reading of a clock (semantics.md): whether a bundle
/// waits for pending writes. Only an interlocked core does; on a padded or
/// encoded-waits core an early read sees the old contents (the machine form
/// carries no `wait N`, so each bundle issues one cycle after the last).
fn waits(clock: Clock) -> bool {
    match clock {
        Clock::Interlocked => true,
        Clock::Padded | Clock::EncodedWaits { .. } => false,
    }
}

/// For how many cycles after landing (at issue + max(L, 1)) a result of
/// `desc` may be read: its read window's maximum less the landing
/// distance (0 when the window ends before the landing), or [`FOREVER`].
fn keep(desc: &OpDesc) -> u16 {
    let w = desc.window();
    match w.max {
        Some(max) => u16::try_from(max.saturating_sub(w.min.max(1))).unwrap_or(FOREVER - 1).min(FOREVER - 1),
        None => FOREVER,
    }
}

/// Record when the word of landed write `w` stops being readable.
fn set_expiry(expires: &mut [u64], w: &Pending) {
    if let Some(e) = expires.get_mut(w.reg as usize) {
        *e = if w.keep == FOREVER { u64::MAX } else { w.land.saturating_add(u64::from(w.keep)) };
    }
}

/// The width of an op without a destination: its widest register operand.
fn value_width(args: &[Arg]) -> usize {
    args.iter().filter_map(|a| if let Arg::Words(w) = a { Some(w.len()) } else { None }).max().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    // These programs are partial (no thread end, one op where the target
    // pairs): they test time and meaning, so they run ignoring the rules.
    use super::super::{parse_text, run_ignoring_rules as run_any};
    use super::*;

    fn machine(target: &str, inputs: &str, body: &str) -> Program {
        parse_text(&format!("target {target}\nform machine\n{inputs}\n{body}"))
    }

    fn tlb(o: &Outcome) -> Vec<u32> {
        o.effects.channels.get("tlb").map(|es| es.iter().flatten().copied().collect()).unwrap_or_default()
    }

    #[test]
    fn bundle_reads_are_parallel_r600_swap() {
        let swap = machine("r600", "input $R1.x\ninput $R1.y", "b0:\n { x: mov $R1.x, $R1.y ; y: mov $R1.y, $R1.x }\n { cf: export 0, $R1.x }\n { cf: export 1, $R1.y }\n end\n");
        let w = World::new(4);
        let o = run_any(&swap, 4, 100).expect("runs");
        assert_eq!(o.effects.channels.get("export 0"), Some(&vec![vec![w.input_reg(5)]]));
        assert_eq!(o.effects.channels.get("export 1"), Some(&vec![vec![w.input_reg(4)]]));
        assert_eq!(o.cycles, 4);
        let split = machine("r600", "input $R1.x\ninput $R1.y", "b0:\n { x: mov $R1.x, $R1.y }\n { y: mov $R1.y, $R1.x }\n { cf: export 1, $R1.y }\n end\n");
        let o = run_any(&split, 4, 100).expect("runs");
        assert_eq!(o.effects.channels.get("export 1"), Some(&vec![vec![w.input_reg(5)]]));
    }

    #[test]
    fn v3d71_ldvary_lands_two_cycles_later() {
        // ldunif at cycle 0 lands at 1; ldvary at 1 lands at 3; rf0 is read
        // at cycles 1, 2 and 3.
        let p = machine(
            "v3d71",
            "",
            "b0:\n { sig: ldunif 0 }\n { sig: ldvary 0 ; add: tlbw $rf0 }\n { add: tlbw $rf0 }\n { add: tlbw $rf0 }\n end\n",
        );
        let w = World::new(6);
        let o = run_any(&p, 6, 100).expect("runs");
        assert_eq!(tlb(&o), [w.uniform(0), w.uniform(0), w.varying(0)]);
        assert_eq!(o.cycles, 5);
    }

    #[test]
    fn a_read_past_the_read_window_stops_the_run() {
        use schedra_ir::target::{testing::with_lifetime, v3d71::V3D71};
        let expiring = with_lifetime(&V3D71, "v3d71-expiring", "fmul", 1);
        let on = |t, body: &str| {
            let mut p = machine("v3d71", "input $rf1", body);
            p.target = t;
            p
        };
        let late = "b0:\n { mul: fmul $rf4, $rf1, $rf1 }\n { }\n { add: tlbw $rf4 }\n end\n";
        assert!(run_any(&on(&V3D71, late), 1, 100).is_ok(), "without a lifetime a late read is fine");
        match run_any(&on(expiring, late), 1, 100) {
            Err(RunError::Expired { at, message }) => {
                assert_eq!(at.index, 2, "{message}");
                assert!(message.contains("past the maximum lifetime"), "{message}");
            }
            other => panic!("expected an expired read, got {other:?}"),
        }
        let near = "b0:\n { mul: fmul $rf4, $rf1, $rf1 }\n { add: tlbw $rf4 }\n end\n";
        assert!(run_any(&on(expiring, near), 1, 100).is_ok());
        // A later write of the register gives it a value without a window.
        let rewritten = "b0:\n { mul: fmul $rf4, $rf1, $rf1 }\n { add: mov $rf4, $rf1 }\n { }\n { add: tlbw $rf4 }\n end\n";
        assert!(run_any(&on(expiring, rewritten), 1, 100).is_ok());
        // Across a block boundary the window still counts.
        let across = "b0:\n { mul: fmul $rf4, $rf1, $rf1 }\n jmp b1\nb1:\n { add: tlbw $rf4 }\n end\n";
        assert!(matches!(run_any(&on(expiring, across), 1, 100), Err(RunError::Expired { .. })));
    }

    #[test]
    fn only_an_interlocked_clock_waits_for_pending_writes() {
        use schedra_ir::target::{gen8::GEN8, testing::with_clock, Clock};
        let body = "b0:\n mul $g10, $g2, $g2\n add $g11, $g10, $g2\n send.eot $g11\n end\n";
        for (clock, stalls) in [(Clock::Interlocked, true), (Clock::Padded, false), (Clock::EncodedWaits { max: 31 }, false)] {
            let mut p = machine("gen8", "input $g2", body);
            p.target = with_clock(&GEN8, "gen8-variant", clock);
            let o = run_any(&p, 3, 100).expect("runs");
            assert_eq!((o.stalls > 0, o.cycles > 4), (stalls, stalls), "{clock:?}: {} cycles", o.cycles);
        }
    }

    #[test]
    fn rf0_before_any_write_is_garbage() {
        let p = machine("v3d71", "input $rf1", "b0:\n { sig: ldunif 0 ; add: tlbw $rf0 ; mul: tlbw $rf1 }\n end\n");
        let w = World::new(0);
        assert_eq!(tlb(&run_any(&p, 0, 100).expect("runs")), [w.garbage_reg(0), w.input_reg(1)]);
    }

    #[test]
    fn writes_in_flight_cross_block_boundaries() {
        // scratchr (latency 4) at cycle 1 lands at 5; b0's terminator takes
        // cycle 2; b1's bundles issue at 3, 4, 5.
        let p = machine(
            "v3d71",
            "input $rf1",
            "b0:\n { add: scratchw 0, $rf1 }\n { add: scratchr $rf4, 0 }\n jmp b1\nb1:\n { add: tlbw $rf4 }\n { }\n { add: tlbw $rf4 }\n end\n",
        );
        let w = World::new(8);
        let o = run_any(&p, 8, 100).expect("runs");
        assert_eq!(tlb(&o), [w.garbage_reg(4), w.input_reg(1)]);
        assert_eq!(o.trace.labels, [Arc::from("b1")]);
        assert_eq!(o.cycles, 7);
    }

    #[test]
    fn gen8_stalls_until_writes_land() {
        let p = machine("gen8", "input $g2:2", "b0:\n mul $g10:2, $g2:2, $g2:2\n add $g12:2, $g10:2, $g2:2\n send.eot $g12:2\n end\n");
        let w = World::new(2);
        let o = run_any(&p, 2, 100).expect("runs");
        let want: Vec<u32> = [2, 3]
            .iter()
            .map(|&r| {
                let x = f32::from_bits(w.input_reg(r));
                let v = x * x + x;
                if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() }
            })
            .collect();
        assert_eq!(o.effects.channels.get("rt"), Some(&vec![want]));
        // mul at 0 lands 14: add waits 13 cycles, issues at 14, lands 28;
        // eot waits 13 more and issues at 28; end at 29.
        assert_eq!((o.stalls, o.cycles), (26, 30));
    }

    #[test]
    fn gen8_waits_for_writes_to_its_destination() {
        // mad (16) then mov (14) to the same register: without the WAW wait
        // the mad would land last and win.
        let p = machine("gen8", "input $g2", "b0:\n mad $g4, $g2, $g2, $g2\n mov $g4, 1.0\n send.eot $g4\n end\n");
        let o = run_any(&p, 0, 100).expect("runs");
        assert_eq!(o.effects.channels.get("rt"), Some(&vec![vec![1.0f32.to_bits()]]));
    }

    #[test]
    fn writes_landing_together_are_a_hazard() {
        let p = machine("v3d71", "input $rf1", "b0:\n { sig: ldvary 0 }\n { add: mov $rf0, $rf1 }\n end\n");
        assert!(matches!(run_any(&p, 0, 100), Err(RunError::Hazard { .. })));
        let q = machine("r600", "", "b0:\n { x: mov $R1.x, 1.0 ; t: mov $R1.x, 2.0 }\n end\n");
        assert!(matches!(run_any(&q, 0, 100), Err(RunError::Hazard { .. })));
    }

    #[test]
    fn a_program_that_breaks_a_rule_does_not_run() {
        use crate::interp::rules::RuleKind;
        let q = machine("r600", "", "b0:\n { x: mov $R1.x, 1.0 ; t: mov $R1.x, 2.0 }\n end\n");
        match super::super::run(&q, 0, 100) {
            Err(RunError::Rule { kind: RuleKind::Slot, at, message }) => {
                assert_eq!((at.block.as_str(), at.index), ("b0", 0));
                assert!(message.contains("two ops of one bundle write"), "{message}");
            }
            other => panic!("expected a slot rule, got {other:?}"),
        }
        // The same program, time and meaning only: the writes collide.
        assert!(matches!(run_any(&q, 0, 100), Err(RunError::Hazard { .. })));
        let unfinished = machine("v3d71", "input $rf1", "b0:\n { add: tlbw $rf1 }\n end\n");
        assert!(matches!(super::super::run(&unfinished, 0, 100), Err(RunError::Rule { kind: RuleKind::Hazard, .. })));
        let finished = machine("v3d71", "input $rf1", "b0:\n { add: tlbw $rf1 }\n { sig: thrsw }\n { }\n { }\n end\n");
        assert_eq!(super::super::run(&finished, 0, 100).map(|o| tlb(&o)), Ok(vec![World::new(0).input_reg(1)]));
    }

    #[test]
    fn fuel_and_cycles_are_counted() {
        let p = machine("v3d71", "", "b0:\n { sig: ldunif 0 }\n brnz $rf0, b0, b1\nb1:\n end\n");
        let spin = (0..50).find(|&s| World::new(s).uniform(0) != 0).expect("a nonzero uniform");
        assert_eq!(run_any(&p, spin, 500), Err(RunError::OutOfFuel { fuel: 500 }));
        let stop = (0..500).find(|&s| World::new(s).uniform(0) == 0).expect("a zero uniform");
        let o = run_any(&p, stop, 500).expect("runs");
        // bundle at 0, brnz at 1, b1's `end` at 2.
        assert_eq!((o.executed, o.cycles, o.trace.labels.clone()), (3, 3, vec![Arc::from("b1")]));
    }

    #[test]
    fn kepler_waits_advance_time_and_texbar_holds_until_tex_lands() {
        // ipa (15) at 0; wait 14 puts the fadd at 15, where r1 has landed.
        let p = machine("kepler", "", "b0:\n { i0: ipa $r1, 0 } wait 14\n { i0: st.out 0, $r1 }\n end\n");
        let o = run_any(&p, 3, 100).expect("runs");
        assert_eq!(o.effects.channels.get("out 0"), Some(&vec![vec![World::new(3).varying(0)]]));
        assert_eq!(o.cycles, 17);
        let early = machine("kepler", "", "b0:\n { i0: ipa $r1, 0 } wait 13\n { i0: st.out 0, $r1 }\n end\n");
        assert_eq!(run_any(&early, 3, 100).expect("runs").effects.channels.get("out 0"), Some(&vec![vec![World::new(3).garbage_reg(1)]]));
        // A tex read after `texbar 0` sees the sample on every seed; read
        // 40 cycles after issue without a barrier it does not on some.
        let guarded = machine("kepler", "input $r2", "b0:\n { i0: tex $r1, $r2 }\n { i0: texbar 0 }\n { i0: st.out 0, $r1 }\n end\n");
        let bare = machine("kepler", "input $r2", "b0:\n { i0: tex $r1, $r2 } wait 31\n { } wait 8\n { i0: st.out 0, $r1 }\n end\n");
        let (mut stalls, mut missed) = (Vec::new(), 0);
        for seed in 0..20 {
            let w = World::new(seed);
            let want = vec![vec![w.texture(&[w.input_reg(2)], 0)]];
            let o = run_any(&guarded, seed, 100).expect("runs");
            assert_eq!(o.effects.channels.get("out 0"), Some(&want), "seed {seed}");
            assert!((15..=415).contains(&o.stalls), "seed {seed}: {}", o.stalls);
            stalls.push(o.stalls);
            let b = run_any(&bare, seed, 100).expect("runs");
            missed += usize::from(b.effects.channels.get("out 0") != Some(&want));
        }
        assert!(stalls.iter().any(|&s| s != stalls[0]), "the landing depends on the seed: {stalls:?}");
        assert!(missed > 0 && missed < 20, "{missed} of 20 seeds read too early");
    }

    #[test]
    fn tmu_results_land_after_the_lookup_latency() {
        // tmut at 0, tmus at 1: the lookup lands at 101.
        let body = |gap: usize| format!("b0:\n {{ add: tmut $rf1 }}\n {{ add: tmus $rf2 }}\n{} {{ sig: ldtmu $rf4 }}\n {{ sig: ldtmu $rf5 }}\n {{ sig: ldtmu $rf6 }}\n {{ sig: ldtmu $rf7 }}\n {{ add: tlbw $rf4 }}\n {{ add: tlbw $rf7 }}\n end\n", " { }\n".repeat(gap));
        let w = World::new(4);
        let texel = |k| w.texture(&[w.input_reg(2), w.input_reg(1)], k);
        let on_time = machine("v3d71", "input $rf1\ninput $rf2", &body(99));
        let o = run_any(&on_time, 4, 1000).expect("runs");
        assert_eq!(o.effects.channels.get("tlb"), Some(&vec![vec![texel(0)], vec![texel(3)]]));
        // One cycle early: the first word is wrong, the last (read at 104) right.
        let early = machine("v3d71", "input $rf1\ninput $rf2", &body(98));
        let o = run_any(&early, 4, 1000).expect("runs");
        assert_eq!(o.effects.channels.get("tlb"), Some(&vec![vec![!texel(0)], vec![texel(3)]]));
        // A fifth ldtmu, or a block end with a word unread, stops the run.
        let extra = machine("v3d71", "input $rf1\ninput $rf2", &body(99).replace(" { add: tlbw $rf4 }", " { sig: ldtmu $rf8 }"));
        assert!(matches!(run_any(&extra, 4, 1000), Err(RunError::Hazard { .. })));
        let missing = machine("v3d71", "input $rf1\ninput $rf2", &body(99).replace(" { sig: ldtmu $rf7 }\n", ""));
        assert!(matches!(run_any(&missing, 4, 1000), Err(RunError::Hazard { .. })));
    }

    #[test]
    fn unknown_opcodes_and_bad_registers_are_errors() {
        let p = machine("v3d71", "", "b0:\n { add: frob $rf1, $rf2 }\n end\n");
        assert!(matches!(run_any(&p, 0, 100), Err(RunError::UnknownOpcode { .. })));
        let q = machine("v3d71", "", "b0:\n { add: mov $rf70, $rf2 }\n end\n");
        assert!(matches!(run_any(&q, 0, 100), Err(RunError::Malformed { .. })));
        let r = machine("gen8", "", "b0:\n add $g4:2, $g2:2, $g6\n end\n");
        assert!(matches!(run_any(&r, 0, 100), Err(RunError::Malformed { .. })));
    }
}
