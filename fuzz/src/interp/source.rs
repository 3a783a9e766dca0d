//! The source interpreter: executes the source form one instruction at a
//! time (format.md "Source form", semantics.md).
//!
//! State: virtual registers (by the dense slot [`Decoded`] gives each name
//! → words) and physical registers (register → word). At entry each `input %v:N = $r:N` binds `%v` to the world's
//! input words of registers r..r+N and puts the same words in those physical
//! registers; every other physical register holds the world's garbage word.
//! An instruction reads all its operands, computes its [`Action`], then
//! writes its named destination: a virtual register (also for ops whose
//! machine form writes a fixed register implicitly — the source form never
//! models that register) or a physical register. A physical register changes
//! only when an instruction names it as its destination.
//!
//! A destination's width is its size suffix, the physical run's size, the
//! opcode's fixed size, or else (suffix omitted) the size of the op's
//! register operands (scratch reads: the variable's current size, else 1).
//! `brnz` tests the first word of its condition.
//!
//! Invariant: the run is a pure function of (program, seed, fuel).

use super::unit::Unit;
use super::exec::{self, Action, Arg, Channel};
use super::scratch::Scratch;
use super::words::Words;
use schedra_ir::target::opcache::OpCache;
use super::{label_map, plain_number, successor, Effects, Exits, Fuel, Outcome, Place, RunError, Trace, World};
use rustc_hash::FxHashMap;
use schedra_ir::target::{Dest, Sizes};
use schedra_ir::{Block, Inst, OpDesc, Operand, PhysReg, Program, Reg, TermKind};
use std::sync::Arc;

/// Run a source-form program on `world` with `fuel`.
pub fn run(p: &Program, world: World, fuel: u64) -> Result<Outcome, RunError> {
    Decoded::new(p).run(world, fuel)
}

/// No virtual register at this operand position.
const NO_SLOT: u32 = u32::MAX;

/// One instruction, decoded: its description (`None` for an opcode the
/// target does not have) and the slot of each virtual register it names.
struct DInst<'p> {
    inst: &'p Inst,
    desc: Option<&'static OpDesc>,
    /// Where the slots of its source operands start in
    /// [`Decoded::src_slots`] (one per operand: the slot, or [`NO_SLOT`]).
    srcs: usize,
    /// The destination's slot, or [`NO_SLOT`].
    dest: u32,
}

/// One block, decoded.
struct DBlock<'p> {
    block: &'p Block,
    /// Its instructions in [`Decoded::insts`].
    insts: std::ops::Range<usize>,
    /// The slot of a `brnz` condition's virtual register, or [`NO_SLOT`].
    cond: u32,
    exits: Exits,
    /// Its label, shared with every trace that passes control to it.
    name: Arc<str>,
}

/// A source program with virtual register names numbered into dense slots,
/// opcodes looked up and labels resolved, ready to run on many worlds.
/// Invariant: every slot index stored is below `slots`, every physical
/// register named is below `phys`.
pub struct Decoded<'p> {
    p: &'p Program,
    blocks: Vec<DBlock<'p>>,
    /// Every instruction, block after block.
    insts: Vec<DInst<'p>>,
    /// The operand slots of every instruction, instruction after instruction.
    src_slots: Vec<u32>,
    /// Per `input` line: the slot of its virtual register, or [`NO_SLOT`].
    inputs: Vec<u32>,
    slots: usize,
    phys: usize,
}

/// Numbers virtual register names in order of first appearance: names
/// that are plain numbers below `dense` (the generator's) through the
/// dense table `by_number`, any other name through `map`.
#[derive(Default)]
struct Slots<'p> {
    dense: u32,
    by_number: Vec<u32>,
    map: FxHashMap<&'p str, u32>,
    /// How many slots are numbered.
    count: u32,
    phys: usize,
}

impl<'p> Slots<'p> {
    fn of(&mut self, op: &'p Operand) -> u32 {
        match op {
            Operand::Virt(v) => self.name(&v.name),
            Operand::Phys(r) => {
                self.phys_run(*r);
                NO_SLOT
            }
            _ => NO_SLOT,
        }
    }

    /// The slot of the register named `name` (a new one at its first
    /// appearance).
    fn name(&mut self, name: &'p str) -> u32 {
        let next = self.count;
        let slot = match plain_number(name, self.dense) {
            Some(n) => {
                if self.by_number.len() <= n as usize {
                    self.by_number.resize(n as usize + 1, NO_SLOT);
                }
                match self.by_number.get_mut(n as usize) {
                    Some(s) if *s == NO_SLOT => {
                        *s = next;
                        next
                    }
                    Some(s) => *s,
                    None => NO_SLOT,
                }
            }
            None => *self.map.entry(name).or_insert(next),
        };
        if slot == next {
            self.count += 1;
        }
        slot
    }

    /// Note that the registers of `r` are named.
    fn phys_run(&mut self, r: PhysReg) {
        let end = r.regs().map(|x| x as usize + 1).max().unwrap_or(0);
        self.phys = self.phys.max(end);
    }
}

impl<'p> Decoded<'p> {
    /// Decode `p` (never fails: an unknown opcode or label fails when run).
    pub fn new(p: &'p Program) -> Decoded<'p> {
        let n: usize = p.blocks.iter().map(|b| b.insts().len()).sum();
        // Room for names up to a few times the number of definitions.
        let dense = (4 * (p.inputs.len() + n) + 64).min(1 << 20) as u32;
        let mut slots = Slots { dense, by_number: Vec::with_capacity(p.inputs.len() + n), ..Slots::default() };
        let labels = label_map(p);
        let mut opcodes = OpCache::new(p.target);
        let mut inputs = Vec::with_capacity(p.inputs.len());
        for input in &p.inputs {
            slots.phys_run(input.reg);
            inputs.push(input.vreg.as_ref().map_or(NO_SLOT, |v| slots.name(&v.name)));
        }
        let mut insts = Vec::with_capacity(n);
        let mut src_slots = Vec::with_capacity(2 * n);
        let mut blocks = Vec::with_capacity(p.blocks.len());
        for block in &p.blocks {
            let start = insts.len();
            for inst in block.insts() {
                let srcs = src_slots.len();
                src_slots.extend(inst.srcs.iter().map(|o| slots.of(o)));
                let dest = inst.dest.as_ref().map_or(NO_SLOT, |o| slots.of(o));
                let desc = opcodes.op(&inst.opcode);
                insts.push(DInst { inst, desc, srcs, dest });
            }
            let cond = match &block.term.kind {
                TermKind::Brnz { cond, .. } => slots.of(cond),
                _ => NO_SLOT,
            };
            blocks.push(DBlock { block, insts: start..insts.len(), cond, exits: Exits::of(&block.term, &labels), name: Arc::from(block.label.as_str()) });
        }
        Decoded { p, blocks, insts, src_slots, inputs, slots: slots.count as usize, phys: slots.phys }
    }

    /// Run on `world` with `fuel`.
    pub fn run(&self, world: World, fuel: u64) -> Result<Outcome, RunError> {
        self.run_with(&mut Buffers::default(), world, fuel)
    }

    /// Run on `world` with `fuel`, in the room of `buffers` (left for the
    /// next run; the outcome is [`Decoded::run`]'s).
    pub fn run_with(&self, buffers: &mut Buffers, world: World, fuel: u64) -> Result<Outcome, RunError> {
        if self.blocks.is_empty() {
            return Err(RunError::NoBlocks);
        }
        let mut st = State::new(self, world, std::mem::take(buffers));
        let mut fuel = Fuel::new(fuel);
        let (mut effects, mut trace) = (Effects::new(), Trace::with_capacity(self.blocks.len()));
        let ran = self.drive(&mut st, &mut fuel, &mut effects, &mut trace);
        *buffers = st.into_buffers();
        ran.map(|()| Outcome { effects, cycles: 0, stalls: 0, executed: fuel.used(), trace })
    }

    /// Execute every instruction and terminator from the entry until `end`.
    fn drive(&self, st: &mut State, fuel: &mut Fuel, effects: &mut Effects, trace: &mut Trace) -> Result<(), RunError> {
        let mut b = 0;
        while let Some(d) = self.blocks.get(b) {
            let block = d.block;
            for (i, di) in self.insts.get(d.insts.clone()).unwrap_or(&[]).iter().enumerate() {
                fuel.spend()?;
                let at = || Place::new(&block.label, i, di.inst.span.line);
                let slots = self.src_slots.get(di.srcs..).unwrap_or(&[]);
                if let Some((channel, words)) = st.step(di, slots).map_err(|e| e.at(at()))? {
                    channel.record(effects, &words);
                }
            }
            fuel.spend()?;
            let at = || Place::new(&block.label, block.insts().len(), block.term.span.line);
            st.unit.end_block().map_err(|m| RunError::Malformed { at: at(), message: m })?;
            let cond = match &block.term.kind {
                TermKind::Brnz { cond, .. } => Some(st.cond(cond, d.cond).map_err(|m| RunError::Malformed { at: at(), message: m })?),
                _ => None,
            };
            match successor(&block.term, cond, d.exits, at)? {
                Some((next, hash)) => {
                    if let Some(to) = self.blocks.get(next) {
                        trace.push_shared(&to.name, hash);
                    }
                    b = next;
                }
                None => return Ok(()),
            }
        }
        Ok(())
    }
}

/// The room a run keeps its registers, scratch memory and operand list in,
/// lent from run to run so that runs on many seeds do not allocate it
/// again. Every run refills what it uses first, so what an earlier run
/// left in it never shows.
#[derive(Default)]
pub struct Buffers {
    vregs: Vec<Option<Words>>,
    phys: Vec<Option<u32>>,
    args: Vec<Arg>,
    scratch: Option<Scratch>,
}

/// Why one instruction failed, before its place is known.
enum StepError {
    Unknown(String, &'static str),
    Bad(String),
}

impl StepError {
    fn at(self, at: Place) -> RunError {
        match self {
            StepError::Unknown(opcode, target) => RunError::UnknownOpcode { at, opcode, target },
            StepError::Bad(message) => RunError::Malformed { at, message },
        }
    }
}

impl From<String> for StepError {
    fn from(m: String) -> StepError {
        StepError::Bad(m)
    }
}

/// The registers and memory of a source run: virtual registers by slot
/// (`None` until defined), physical registers by number (`None` until
/// written: then the input or garbage word of the world).
struct State {
    target: &'static schedra_ir::Target,
    world: World,
    vregs: Vec<Option<Words>>,
    phys: Vec<Option<u32>>,
    scratch: Scratch,
    /// The texture unit (read without timing: never early).
    unit: Unit,
    /// The operand buffer, reused by every step.
    args: Vec<Arg>,
}

impl State {
    fn new(d: &Decoded<'_>, world: World, room: Buffers) -> State {
        let Buffers { mut vregs, mut phys, mut args, scratch } = room;
        vregs.clear();
        vregs.resize(d.slots, None);
        phys.clear();
        phys.resize(d.phys, None);
        args.clear();
        let scratch = match scratch {
            Some(mut s) => {
                s.renew(world.clone());
                s
            }
            None => Scratch::new(world.clone()),
        };
        let mut st = State { target: d.p.target, scratch, world, vregs, phys, unit: Unit::default(), args };
        for (input, &slot) in d.p.inputs.iter().zip(&d.inputs) {
            let words: Words = input.reg.regs().map(|r| st.world.input_reg(r)).collect();
            for (r, w) in input.reg.regs().zip(words.iter()) {
                if let Some(x) = st.phys.get_mut(r as usize) {
                    *x = Some(*w);
                }
            }
            if let Some(v) = st.vregs.get_mut(slot as usize) {
                *v = Some(words);
            }
        }
        st
    }

    /// The room of this run, for the next.
    fn into_buffers(self) -> Buffers {
        Buffers { vregs: self.vregs, phys: self.phys, args: self.args, scratch: Some(self.scratch) }
    }

    fn phys_word(&self, r: Reg) -> u32 {
        self.phys.get(r as usize).copied().flatten().unwrap_or_else(|| self.world.garbage_reg(r))
    }

    /// The words of a register operand (`slot`: its virtual register's).
    fn read(&self, op: &Operand, slot: u32) -> Result<Words, String> {
        match op {
            Operand::Virt(v) => {
                let words = self.vregs.get(slot as usize).and_then(Option::as_ref).ok_or_else(|| format!("%{} is used before it is defined", v.name))?;
                match v.size {
                    Some(n) if n as usize != words.len() => Err(format!("%{}:{n} is used, but it holds {} words", v.name, words.len())),
                    _ => Ok(words.clone()),
                }
            }
            Operand::Phys(p) => {
                let base = p.base;
                Ok(Words::from_fn(p.size as usize, |i| self.phys_word((base as u32 + i) as Reg)))
            }
            Operand::Imm(i) => Ok(Words::one(i.bits)),
            Operand::Label(l) => Err(format!("the label `{l}` is not a value")),
            Operand::Bypass(b) => Err(format!("the bypass read `^{}.{}` belongs to the machine form", b.unit, b.dist)),
        }
    }

    /// The word a `brnz` tests: the first word of its condition.
    fn cond(&self, op: &Operand, slot: u32) -> Result<u32, String> {
        // A defined virtual register without a size suffix: its first word,
        // without copying its words out (`read` would accept it as is).
        if let Operand::Virt(v) = op {
            if let (None, Some(Some(words))) = (v.size, self.vregs.get(slot as usize)) {
                if let Some(&w) = words.first() {
                    return Ok(w);
                }
            }
        }
        self.read(op, slot)?.first().copied().ok_or_else(|| "the condition has no words".to_string())
    }

    /// The width of the value `d` writes.
    fn width(&self, desc: &OpDesc, d: &DInst, args: &[Arg]) -> usize {
        match (&d.inst.dest, desc.sizes) {
            (Some(Operand::Virt(v)), _) if v.size.is_some() => v.size.map_or(1, usize::from),
            (Some(Operand::Phys(p)), _) => p.size as usize,
            (_, Sizes::Fixed { dest, .. }) => dest as usize,
            (Some(Operand::Virt(_)), Sizes::Any) => self.vregs.get(d.dest as usize).and_then(Option::as_ref).map_or(1, |w| w.len()),
            _ => args.iter().filter_map(|a| if let Arg::Words(w) = a { Some(w.len()) } else { None }).max().unwrap_or(1),
        }
    }

    /// Execute one instruction; returns its effect, if it has one.
    /// `slots` starts with the slots of its operands.
    fn step(&mut self, d: &DInst, slots: &[u32]) -> Result<Option<(Channel, Words)>, StepError> {
        let desc = d.desc.ok_or_else(|| StepError::Unknown(d.inst.opcode.to_string(), self.target.name))?;
        let mut args = std::mem::take(&mut self.args);
        let resolved = exec::args(desc, &d.inst.srcs, &mut args, |i, o| self.read(o, slots.get(i).copied().unwrap_or(NO_SLOT)));
        let result = resolved.and_then(|()| {
            let width = self.width(desc, d, &args);
            exec::execute(desc, &args, width, &self.world, &self.scratch)
        });
        self.args = args;
        match result? {
            Action::Write(words) => self.write(desc, d, words)?,
            Action::Effect(channel, words) => return Ok(Some((channel, words))),
            Action::ScratchWrite(slot, words) => self.scratch.write(slot, &words),
            Action::TexCoord(words) => self.unit.coord(&words),
            Action::TexLookup(words) => self.unit.lookup(&words, 0),
            Action::TexResult => {
                let word = self.unit.result(&self.world, u64::MAX)?;
                self.write(desc, d, Words::one(word))?;
            }
            Action::Nothing => {}
        }
        if desc.dest == Dest::None && d.inst.dest.is_some() {
            return Err(StepError::Bad(format!("`{}` has no result to write", desc.name)));
        }
        Ok(None)
    }

    /// Write `words` to the destination `d` names.
    fn write(&mut self, desc: &OpDesc, d: &DInst, words: Words) -> Result<(), String> {
        match &d.inst.dest {
            Some(Operand::Virt(v)) => match self.vregs.get_mut(d.dest as usize) {
                Some(slot) => {
                    *slot = Some(words);
                    Ok(())
                }
                None => Err(format!("%{} has no slot", v.name)),
            },
            Some(Operand::Phys(p)) if p.size as usize == words.len() => {
                for (r, w) in p.regs().zip(words.iter()) {
                    if let Some(x) = self.phys.get_mut(r as usize) {
                        *x = Some(*w);
                    }
                }
                Ok(())
            }
            Some(Operand::Phys(p)) => Err(format!("`{}` makes {} words for a {}-register destination", desc.name, words.len(), p.size)),
            Some(_) => Err(format!("the destination of `{}` is not a register", desc.name)),
            None => Err(format!("`{}` needs a destination", desc.name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_text, run as run_any, World};
    use super::*;

    fn f(x: u32) -> f32 {
        f32::from_bits(x)
    }

    #[test]
    fn computes_with_uniforms_varyings_and_inputs() {
        let p = parse_text("target v3d71\ninput %w = $rf1\nb0:\n %a = ldunif 0\n %b = ldvary 0\n %p = fmul %a, %b\n %q = fmul %p, %w\n tlbw %q\n end\n");
        for seed in 0..5 {
            let w = World::new(seed);
            let want = (f(w.uniform(0)) * f(w.varying(0)) * f(w.input_reg(1))).to_bits();
            let want = if f(want).is_nan() { 0x7fc0_0000 } else { want };
            let o = run_any(&p, seed, 100).expect("runs");
            assert_eq!(o.effects.channels.get("tlb"), Some(&vec![vec![want]]));
            assert_eq!(o.executed, 6);
        }
    }

    #[test]
    fn physical_registers_change_only_when_named() {
        let p = parse_text("target r600\ninput %a = $R1.x\ninput %b = $R1.y\nb0:\n $R1.x = mov %b\n $R1.y = mov %a\n export 0, $R1.x\n export 1, $R1.y\n export 2, $R2.x\n end\n");
        let w = World::new(3);
        let o = run_any(&p, 3, 100).expect("runs");
        let x = 4; // R1.x
        assert_eq!(o.effects.channels.get("export 0"), Some(&vec![vec![w.input_reg(x + 1)]]));
        assert_eq!(o.effects.channels.get("export 1"), Some(&vec![vec![w.input_reg(x)]]));
        assert_eq!(o.effects.channels.get("export 2"), Some(&vec![vec![w.garbage_reg(8)]]));
    }

    #[test]
    fn multi_register_values_and_texture() {
        let p = parse_text("target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = mul %x, 2.0\n %t:4 = send.tex %y\n send.eot %t\n end\n");
        let w = World::new(1);
        let y: Vec<u32> = [2, 3].iter().map(|&r| (f(w.input_reg(r)) * 2.0).to_bits()).collect();
        let want: Vec<u32> = (0..4).map(|i| w.texture(&y, i)).collect();
        let o = run_any(&p, 1, 100).expect("runs");
        assert_eq!(o.effects.channels.get("rt"), Some(&vec![want]));
    }

    #[test]
    fn branches_follow_the_condition_and_are_traced() {
        let text = "target v3d71\nb0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n tlbw 1\n jmp b3\nb2:\n tlbw 2\n jmp b3\nb3:\n end\n";
        let p = parse_text(text);
        let mut seen = [false; 2];
        for seed in 0..200 {
            let o = run_any(&p, seed, 100).expect("runs");
            let zero = World::new(seed).uniform(0) == 0;
            let (word, label) = if zero { (2, "b2") } else { (1, "b1") };
            assert_eq!(o.effects.channels.get("tlb"), Some(&vec![vec![word]]));
            assert_eq!(o.trace.labels, [Arc::from(label), Arc::from("b3")]);
            seen[zero as usize] = true;
        }
        assert_eq!(seen, [true, true], "both branch directions are exercised");
    }

    #[test]
    fn fuel_runs_out_in_a_loop() {
        let p = parse_text("target v3d71\nb0:\n %a = ldunif 0\n jmp b0\n");
        assert_eq!(run_any(&p, 0, 1000), Err(RunError::OutOfFuel { fuel: 1000 }));
        let q = parse_text("target v3d71\nb0:\n %a = ldunif 0\n end\n");
        assert!(run_any(&q, 0, 2).is_ok());
        assert_eq!(run_any(&q, 0, 1), Err(RunError::OutOfFuel { fuel: 1 }));
    }

    #[test]
    fn undefined_values_and_unknown_opcodes_are_errors() {
        let p = parse_text("target v3d71\nb0:\n tlbw %nope\n end\n");
        assert!(matches!(run_any(&p, 0, 100), Err(RunError::Malformed { .. })));
        let q = parse_text("target v3d71\nb0:\n %a = frobnicate 1\n end\n");
        assert!(matches!(run_any(&q, 0, 100), Err(RunError::UnknownOpcode { .. })));
    }

    #[test]
    fn scratch_is_private_memory() {
        let p = parse_text("target v3d71\ninput %w = $rf1\nb0:\n scratchw 3, %w\n %a = scratchr 3\n %b = scratchr 4\n tlbw %a\n tlbw %b\n end\n");
        let w = World::new(2);
        let o = run_any(&p, 2, 100).expect("runs");
        assert_eq!(o.effects.channels.get("tlb"), Some(&vec![vec![w.input_reg(1)], vec![w.garbage_scratch(4)]]));
    }
}
