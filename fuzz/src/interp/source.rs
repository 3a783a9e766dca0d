//! The source interpreter: executes the source form one instruction at a
//! time (format.md "Source form", semantics.md).
//!
//! State: virtual registers (name → words) and physical registers (register
//! → word). At entry each `input %v:N = $r:N` binds `%v` to the world's
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

use super::exec::{self, Action, Arg};
use super::{label_map, successor, Effects, Fuel, Outcome, Place, RunError, Trace, World};
use super::scratch::Scratch;
use schedra_ir::target::{Dest, Sizes};
use schedra_ir::{Inst, OpDesc, Operand, Program, Reg, TermKind};
use std::collections::HashMap;

/// Run a source-form program on `world` with `fuel`.
pub fn run(p: &Program, world: World, fuel: u64) -> Result<Outcome, RunError> {
    let mut st = State::new(p, world);
    let labels = label_map(p);
    let mut fuel = Fuel::new(fuel);
    let (mut effects, mut trace) = (Effects::new(), Trace::default());
    let mut b = if p.blocks.is_empty() { return Err(RunError::NoBlocks) } else { 0 };
    while let Some(block) = p.blocks.get(b) {
        for (i, inst) in block.insts.iter().enumerate() {
            fuel.spend()?;
            let at = || Place::new(&block.label, i, inst.span.line);
            if let Some((channel, words)) = st.step(inst).map_err(|e| e.at(at()))? {
                effects.push(&channel, words);
            }
        }
        fuel.spend()?;
        let at = || Place::new(&block.label, block.insts.len(), block.term.span.line);
        let cond = match &block.term.kind {
            TermKind::Brnz { cond, .. } => Some(st.cond(cond).map_err(|m| RunError::Malformed { at: at(), message: m })?),
            _ => None,
        };
        match successor(&block.term, cond, &labels, at)? {
            Some((next, label)) => {
                trace.push(label);
                b = next;
            }
            None => break,
        }
    }
    Ok(Outcome { effects, cycles: 0, stalls: 0, executed: fuel.used(), trace })
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

/// The registers and memory of a source run.
struct State<'p> {
    p: &'p Program,
    world: World,
    vregs: HashMap<String, Vec<u32>>,
    phys: HashMap<Reg, u32>,
    scratch: Scratch,
}

impl<'p> State<'p> {
    fn new(p: &'p Program, world: World) -> State<'p> {
        let mut st = State { p, world, vregs: HashMap::new(), phys: HashMap::new(), scratch: Scratch::new(world) };
        for input in &p.inputs {
            let words: Vec<u32> = input.reg.regs().map(|r| world.input_reg(r)).collect();
            for (r, w) in input.reg.regs().zip(&words) {
                st.phys.insert(r, *w);
            }
            if let Some(v) = &input.vreg {
                st.vregs.insert(v.name.clone(), words);
            }
        }
        st
    }

    fn phys_word(&self, r: Reg) -> u32 {
        self.phys.get(&r).copied().unwrap_or_else(|| self.world.garbage_reg(r))
    }

    /// The words of a register operand.
    fn read(&self, op: &Operand) -> Result<Vec<u32>, String> {
        match op {
            Operand::Virt(v) => {
                let words = self.vregs.get(&v.name).ok_or_else(|| format!("%{} is used before it is defined", v.name))?;
                match v.size {
                    Some(n) if n as usize != words.len() => Err(format!("%{}:{n} is used, but it holds {} words", v.name, words.len())),
                    _ => Ok(words.clone()),
                }
            }
            Operand::Phys(p) => Ok(p.regs().map(|r| self.phys_word(r)).collect()),
            Operand::Imm(i) => Ok(vec![i.bits]),
            Operand::Label(l) => Err(format!("the label `{l}` is not a value")),
        }
    }

    /// The word a `brnz` tests: the first word of its condition.
    fn cond(&self, op: &Operand) -> Result<u32, String> {
        self.read(op)?.first().copied().ok_or_else(|| "the condition has no words".to_string())
    }

    /// The width of the value `inst` writes.
    fn width(&self, desc: &OpDesc, inst: &Inst, args: &[Arg]) -> usize {
        match (&inst.dest, desc.sizes) {
            (Some(Operand::Virt(v)), _) if v.size.is_some() => v.size.map_or(1, usize::from),
            (Some(Operand::Phys(p)), _) => p.size as usize,
            (_, Sizes::Fixed { dest, .. }) => dest as usize,
            (Some(Operand::Virt(v)), Sizes::Any) => self.vregs.get(&v.name).map_or(1, Vec::len),
            _ => args.iter().filter_map(|a| if let Arg::Words(w) = a { Some(w.len()) } else { None }).max().unwrap_or(1),
        }
    }

    /// Execute one instruction; returns its effect, if it has one.
    fn step(&mut self, inst: &Inst) -> Result<Option<(String, Vec<u32>)>, StepError> {
        let t = self.p.target;
        let desc = t.op(&inst.opcode).ok_or_else(|| StepError::Unknown(inst.opcode.clone(), t.name))?;
        let args = exec::args(desc, &inst.srcs, |o| self.read(o))?;
        let width = self.width(desc, inst, &args);
        match exec::execute(desc, &args, width, &self.world, &self.scratch)? {
            Action::Write(words) => self.write(desc, inst, words)?,
            Action::Effect(channel, words) => return Ok(Some((channel, words))),
            Action::ScratchWrite(slot, words) => self.scratch.write(slot, &words),
            Action::Nothing => {}
        }
        if desc.dest == Dest::None && inst.dest.is_some() {
            return Err(StepError::Bad(format!("`{}` has no result to write", desc.name)));
        }
        Ok(None)
    }

    /// Write `words` to the destination `inst` names.
    fn write(&mut self, desc: &OpDesc, inst: &Inst, words: Vec<u32>) -> Result<(), String> {
        match &inst.dest {
            Some(Operand::Virt(v)) => {
                self.vregs.insert(v.name.clone(), words);
                Ok(())
            }
            Some(Operand::Phys(p)) if p.size as usize == words.len() => {
                for (r, w) in p.regs().zip(words) {
                    self.phys.insert(r, w);
                }
                Ok(())
            }
            Some(Operand::Phys(p)) => Err(format!("`{}` makes {} words for a {}-register destination", desc.name, words.len(), p.size)),
            Some(_) => Err(format!("the destination of `{}` is not a register", desc.name)),
            None => Err(format!("`{}` needs a destination", desc.name)),
        }
    }
}
