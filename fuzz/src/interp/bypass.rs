//! The machine form of a bypass-network target (lima-gp), simulated
//! instruction by instruction (`semantics.md`, "Bypass network").
//!
//! Model: each bundle is one instruction and one cycle; a terminator takes
//! the cycle after its block's last instruction and reads its condition as
//! an instruction at index `bundles.len()` would. Within an instruction the
//! loads run first (their results are readable at distance 0), then every
//! ALU op reads its operands (loads of this instruction, results of earlier
//! ones) before any of them produces, then the stores read results of this
//! instruction (distance 0). A result of unit `u` made at instruction `p` is
//! readable at `c` when `c - p` lies in the window the description gives
//! for `u` and the op; a read outside it, of a unit that made nothing
//! there, or across the block's start is a [`RunError::Hazard`] (the real
//! network then delivers another unit's word: the run is undefined), as is
//! a read in an operand position that cannot name its unit
//! (`Network::forbidden_reads`: the source code means 0 or 1 there).
//! A register store issued at cycle `s` lands at `s + store_load_latency`;
//! a load before then sees the register's previous contents. Complex
//! sequences compute by [`super::eval`]'s model.
//!
//! Invariant: never panics; every error names its block, bundle and line.

use super::error::{Place, RunError};
use super::trace::Trace;
use super::{eval, Effects, Fuel, Outcome, World};
use schedra_ir::target::network::{Network, UnitKind};
use schedra_ir::target::{OpDesc, OperandKind, Sem};
use schedra_ir::{BypassRead, Bundle, Inst, Operand, Program, TermKind};

/// The most cycles a run may take (a guard; fuel usually stops it first).
const CYCLE_LIMIT: u64 = 1 << 40;

/// What one unit made in one instruction.
#[derive(Clone, Copy, Debug)]
struct Made {
    unit: usize,
    op: &'static str,
    word: u32,
}

/// A register store in flight.
#[derive(Clone, Copy, Debug)]
struct Pending {
    lands: u64,
    reg: usize,
    word: u32,
}

struct Sim<'p> {
    p: &'p Program,
    net: &'static Network,
    world: World,
    regs: Vec<Option<u32>>,
    pending: Vec<Pending>,
    /// Results of the current block's instructions, by instruction index.
    made: Vec<Vec<Made>>,
    cycle: u64,
    effects: Effects,
    trace: Trace,
    fuel: Fuel,
}

/// A machine program of a target with a bypass network, with the first
/// hardware rule it breaks ([`super::rules::check`]).
pub struct Decoded<'p> {
    p: &'p Program,
    net: &'static Network,
    broken: Option<RunError>,
    enforce: bool,
}

impl<'p> Decoded<'p> {
    /// `p` for runs that stop with the first rule it breaks, if any.
    pub fn new(p: &'p Program, net: &'static Network) -> Decoded<'p> {
        Decoded { enforce: true, ..Decoded::ignoring_rules(p, net) }
    }

    /// `p` for runs that follow only time and meaning: a broken rule is
    /// known ([`Decoded::broken`]) but the run goes on as if the hardware
    /// allowed it.
    pub fn ignoring_rules(p: &'p Program, net: &'static Network) -> Decoded<'p> {
        Decoded { p, net, broken: super::rules::check(p), enforce: false }
    }

    /// The first hardware rule the program breaks, if any.
    pub fn broken(&self) -> Option<&RunError> {
        self.broken.as_ref()
    }

    /// Run on `world` with `fuel`.
    pub fn run(&self, world: World, fuel: u64) -> Result<Outcome, RunError> {
        match (self.enforce, &self.broken) {
            (true, Some(rule)) => Err(rule.clone()),
            _ => run(self.p, self.net, world, fuel),
        }
    }
}

/// Run a machine program of a target with a bypass network.
fn run(p: &Program, net: &'static Network, world: World, fuel: u64) -> Result<Outcome, RunError> {
    let mut regs = vec![None; p.target.regs.count as usize];
    for r in p.inputs.iter().flat_map(|i| i.reg.regs()) {
        if let Some(x) = regs.get_mut(r as usize) {
            *x = Some(world.input_reg(r));
        }
    }
    let mut s = Sim { p, net, world, regs, pending: Vec::new(), made: Vec::new(), cycle: 0, effects: Effects::new(), trace: Trace::default(), fuel: Fuel::new(fuel) };
    let mut b = if p.blocks.is_empty() { return Err(RunError::NoBlocks) } else { 0 };
    loop {
        match s.block(b)? {
            Some(next) => b = next,
            None => break,
        }
    }
    Ok(Outcome { effects: s.effects, cycles: s.cycle, stalls: 0, executed: s.fuel.used(), trace: s.trace })
}

fn hazard(at: Place, message: String) -> RunError {
    RunError::Hazard { at, message }
}

impl<'p> Sim<'p> {
    fn place(&self, b: usize, i: usize, line: u32) -> Place {
        Place::new(self.p.blocks.get(b).map_or("", |x| x.label.as_str()), i, line)
    }

    /// Run block `b`; the next block's index, or `None` at `end`.
    fn block(&mut self, b: usize) -> Result<Option<usize>, RunError> {
        let Some(block) = self.p.blocks.get(b) else { return Err(RunError::NoBlocks) };
        self.made.clear();
        for (i, x) in block.bundles().iter().enumerate() {
            self.instruction(b, i, x)?;
            self.tick()?;
        }
        self.fuel.spend()?;
        let n = block.bundles().len();
        let at = self.place(b, n, block.term.span.line);
        let next = match &block.term.kind {
            TermKind::End => None,
            TermKind::Jmp(l) => Some(l.clone()),
            TermKind::Brnz { cond, nonzero, zero } => {
                let w = match cond {
                    Operand::Bypass(r) => self.read(n, r).map_err(|m| hazard(at.clone(), m))?,
                    Operand::Imm(i) => i.bits,
                    _ => return Err(RunError::Malformed { at, message: "the condition of `brnz` must be a bypass read".to_string() }),
                };
                Some(if w != 0 { nonzero.clone() } else { zero.clone() })
            }
        };
        self.tick()?;
        let Some(label) = next else { return Ok(None) };
        let to = self.p.block_index(&label).ok_or_else(|| RunError::Malformed { at: self.place(b, n, block.term.span.line), message: format!("unknown label `{label}`") })?;
        self.trace.push(&label);
        Ok(Some(to))
    }

    fn tick(&mut self) -> Result<(), RunError> {
        self.cycle += 1;
        if self.cycle > CYCLE_LIMIT {
            return Err(RunError::TooManyCycles { limit: CYCLE_LIMIT });
        }
        let now = self.cycle;
        let regs = &mut self.regs;
        self.pending.retain(|w| {
            if w.lands <= now {
                if let Some(r) = regs.get_mut(w.reg) {
                    *r = Some(w.word);
                }
                false
            } else {
                true
            }
        });
        Ok(())
    }

    /// The word a bypass read at instruction `at` sees.
    fn read(&self, at: usize, r: &BypassRead) -> Result<u32, String> {
        let d = usize::from(r.dist);
        let name = || format!("^{}.{}", r.unit, r.dist);
        let Some(p) = at.checked_sub(d) else {
            return Err(format!("{} reads before the start of its block (results do not cross blocks)", name()));
        };
        let unit = self.net.units.iter().position(|u| u.name == r.unit).ok_or_else(|| format!("{}: no unit `{}`", name(), r.unit))?;
        let made = self.made.get(p).and_then(|m| m.iter().find(|x| x.unit == unit)).ok_or_else(|| format!("{}: unit {} made nothing {d} instruction(s) back", name(), r.unit))?;
        let u = self.net.units.get(unit).ok_or_else(name)?;
        let w = self.net.window(u, made.op);
        if !w.contains(d as u32) {
            return Err(format!("{} reads `{}` of unit {} past its maximum lifetime (readable at distance {}..={})", name(), made.op, r.unit, w.min, w.max));
        }
        Ok(made.word)
    }

    fn operand(&self, at: usize, o: &Operand) -> Result<u32, String> {
        match o {
            Operand::Bypass(r) => self.read(at, r),
            Operand::Phys(r) => self.reg(usize::from(r.base)),
            _ => Err("expected a bypass read".to_string()),
        }
    }

    fn reg(&self, r: usize) -> Result<u32, String> {
        match self.regs.get(r) {
            Some(w) => Ok(w.unwrap_or_else(|| self.world.garbage_reg(r as u16))),
            None => Err(format!("register {r} is outside the register file")),
        }
    }

    fn instruction(&mut self, b: usize, i: usize, x: &'p Bundle) -> Result<(), RunError> {
        let mut ops: Vec<(usize, &'static OpDesc, &'p Inst, UnitKind, Place)> = Vec::with_capacity(x.ops.len());
        for op in &x.ops {
            let line = if op.inst.span.line != 0 { op.inst.span.line } else { x.span.line };
            let at = self.place(b, i, line);
            let desc = self.p.target.op(&op.inst.opcode).ok_or_else(|| RunError::UnknownOpcode { at: at.clone(), opcode: op.inst.opcode.to_string(), target: self.p.target.name })?;
            let unit = self.net.units.iter().position(|u| u.name == op.slot).ok_or_else(|| RunError::Malformed { at: at.clone(), message: format!("no unit `{}`", op.slot) })?;
            let kind = self.net.units.get(unit).map_or(UnitKind::Alu, |u| u.kind);
            self.fuel.spend()?;
            ops.push((unit, desc, &op.inst, kind, at));
        }
        self.made.push(Vec::new());
        for phase in [UnitKind::Load, UnitKind::Alu, UnitKind::Store] {
            let mut out = Vec::new();
            for (unit, desc, inst, _, at) in ops.iter().filter(|o| o.3 == phase) {
                let bad = |m: String| RunError::Malformed { at: at.clone(), message: m };
                match phase {
                    UnitKind::Load => out.push(Made { unit: *unit, op: desc.name, word: self.load(desc, inst).map_err(bad)? }),
                    UnitKind::Alu => out.push(Made { unit: *unit, op: desc.name, word: self.alu(i, *unit, desc, inst).map_err(|m| hazard(at.clone(), m))? }),
                    UnitKind::Store => self.store(i, desc, inst).map_err(|m| hazard(at.clone(), m))?,
                }
            }
            if let Some(m) = self.made.last_mut() {
                m.extend(out);
            }
        }
        Ok(())
    }

    fn index(inst: &Inst) -> Result<u32, String> {
        inst.srcs.first().and_then(Operand::imm).map(|i| i.bits).ok_or_else(|| "expected an index operand".to_string())
    }

    fn load(&self, desc: &OpDesc, inst: &Inst) -> Result<u32, String> {
        match desc.sem {
            Sem::Varying => Ok(self.world.varying(Self::index(inst)?)),
            Sem::Uniform => Ok(self.world.uniform(Self::index(inst)?)),
            Sem::Const => Self::index(inst),
            Sem::Mov if desc.operands == [OperandKind::Reg] => match inst.srcs.first() {
                Some(Operand::Phys(r)) => self.reg(usize::from(r.base)),
                _ => Err(format!("`{}` needs a register operand", desc.name)),
            },
            _ => Err(format!("`{}` is not a load", desc.name)),
        }
    }

    /// The word of ALU op `inst` issued in `unit` at instruction `i`. An
    /// operand position that cannot name the unit it reads (the hardware
    /// gives that source code another meaning there) is a hazard.
    fn alu(&self, i: usize, unit: usize, desc: &OpDesc, inst: &Inst) -> Result<u32, String> {
        let here = self.net.units.get(unit).map_or("", |u| u.name);
        for (k, o) in inst.srcs.iter().enumerate() {
            if let Operand::Bypass(r) = o {
                if let Some(f) = self.net.forbidden(desc.name, here, k, &r.unit) {
                    return Err(format!("operand {} of `{}` in {here} reads unit {}, which that position cannot name: {}", k + 1, desc.name, r.unit, f.why));
                }
            }
        }
        let args: Vec<u32> = inst.srcs.iter().map(|o| self.operand(i, o)).collect::<Result<_, _>>()?;
        eval::word(desc.sem, &args).ok_or_else(|| format!("`{}` cannot run in an ALU unit with {} operand(s)", desc.name, args.len()))
    }

    fn store(&mut self, i: usize, desc: &OpDesc, inst: &Inst) -> Result<(), String> {
        let value = inst.srcs.last().ok_or_else(|| format!("`{}` needs a value", desc.name))?;
        if let Operand::Bypass(r) = value {
            if r.dist != 0 {
                return Err(format!("a store reads a result of its own instruction (^unit.0), found ^{}.{}", r.unit, r.dist));
            }
            let made = self.made.get(i).and_then(|m| m.iter().find(|x| self.net.units.get(x.unit).is_some_and(|u| u.name == r.unit)));
            if let Some(m) = made {
                let u = self.net.units.get(m.unit);
                if !u.is_some_and(|u| self.net.storable(u, m.op)) {
                    return Err(format!("the result of `{}` in {} cannot be stored directly", m.op, r.unit));
                }
            }
        }
        let word = match value {
            Operand::Bypass(r) => self.made.get(i).and_then(|m| m.iter().find(|x| self.net.units.get(x.unit).is_some_and(|u| u.name == r.unit))).map(|m| m.word).ok_or_else(|| format!("unit {} made nothing in this instruction", r.unit))?,
            _ => return Err("a store's value must be a bypass read".to_string()),
        };
        match desc.sem {
            Sem::Output(name, true) => {
                let n = Self::index(inst)?;
                self.effects.push(&format!("{name} {n}"), vec![word]);
                Ok(())
            }
            Sem::Mov => {
                let Some(Operand::Phys(r)) = &inst.dest else { return Err(format!("`{}` needs a register", desc.name)) };
                let reg = usize::from(r.base);
                if reg >= self.regs.len() {
                    return Err(format!("register {reg} is outside the register file"));
                }
                let lands = self.cycle + u64::from(self.net.store_load_latency);
                if self.pending.iter().any(|w| w.reg == reg && w.lands == lands) {
                    return Err(format!("two stores to ${} land in the same cycle", self.p.reg_name(r.base)));
                }
                self.pending.push(Pending { lands, reg, word });
                Ok(())
            }
            _ => Err(format!("`{}` is not a store", desc.name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use schedra_ir::parse::parse;

    fn run(text: &str, seed: u64) -> Result<super::Outcome, super::RunError> {
        super::super::run(&parse(text.as_bytes(), None).unwrap(), seed, 10_000)
    }

    const SRC: &str = "target lima-gp\nb0:\n %a = ld_att 0\n %b = ld_uni 1\n %c = add %a, %b\n %r = rcp %c\n st_var 0, %r\n $r1.y = mov %c\n jmp b1\nb1:\n %d = mov $r1.y\n %e = mul %d, %d\n st_var 1, %e\n end\n";
    const MACH: &str = "target lima-gp\nform machine\nb0:\n { reg0.x: ld_att 0 ; uni.y: ld_uni 1 }\n { add0: add ^reg0.x.1, ^uni.y.0 ; uni.y: ld_uni 1 }\n { complex: rcp_impl ^add0.1 ; mul0: complex2 ^add0.1 ; pass: mov ^add0.1 ; st.y: st_reg $r1.y, ^pass.0 }\n { mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }\n { pass: mov ^mul0.2 ; st.x: st_var 0, ^pass.0 }\n jmp b1\nb1:\n { reg1.y: ld_reg $r1.y ; mul1: mul ^reg1.y.0, ^reg1.y.0 }\n { add0: mov ^mul1.1 ; st.y: st_var 1, ^add0.0 }\n end\n";

    #[test]
    fn a_scheduled_program_behaves_like_its_source() {
        for seed in 0..20 {
            let a = run(SRC, seed).unwrap();
            let b = run(MACH, seed).unwrap();
            assert_eq!(a.effects, b.effects, "seed {seed}");
            assert_eq!(a.trace, b.trace);
        }
    }

    #[test]
    fn reads_outside_their_window_are_hazards() {
        let past = MACH.replace("complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }\n { pass: mov ^mul0.2", "complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }\n { }\n { pass: mov ^mul0.3");
        let e = run(&past, 0).unwrap_err().to_string();
        assert!(e.contains("maximum lifetime"), "{e}");
        let uni = MACH.replace("add ^reg0.x.1, ^uni.y.0 ; uni.y: ld_uni 1", "add ^reg0.x.1, ^uni.y.1");
        assert!(run(&uni, 0).unwrap_err().to_string().contains("maximum lifetime"));
        let cross = MACH.replace("{ reg1.y: ld_reg $r1.y ;", "{ pass: mov ^add0.2 ; reg1.y: ld_reg $r1.y ;");
        assert!(run(&cross, 0).unwrap_err().to_string().contains("start of its block"));
    }

    #[test]
    fn a_program_that_breaks_a_rule_stops_with_it_unless_rules_are_ignored() {
        let shared = MACH.replace("{ add0: mov ^mul1.1 ;", "{ add0: mov ^mul1.1 ; add1: min ^mul1.1, ^mul1.1 ;");
        let e = run(&shared, 0).unwrap_err();
        assert!(matches!(e, super::RunError::Rule { kind: crate::interp::rules::RuleKind::Slot, .. }), "{e}");
        let p = parse(shared.as_bytes(), None).unwrap();
        let ignoring = super::super::run_ignoring_rules(&p, 0, 10_000).unwrap();
        assert_eq!(ignoring.effects, run(MACH, 0).unwrap().effects);
    }

    #[test]
    fn a_register_load_before_the_store_lands_sees_old_contents() {
        // The store is in b0's third instruction (cycle 2); b1's first load
        // is at cycle 7 in MACH. Shorten b0 so the load comes at cycle 4.
        let early = MACH.replace(" { }\n { pass: mov ^mul0.2 ; st.x: st_var 0, ^pass.0 }\n jmp b1", " jmp b1");
        let early = early.replace("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n", "");
        let src_like = run(SRC, 3).unwrap();
        let got = run(&early, 3).unwrap();
        assert_ne!(src_like.effects.channels.get("var 1"), got.effects.channels.get("var 1"));
    }

    #[test]
    fn a_move_between_the_complex_parts_breaks_the_sequence() {
        let moved = MACH.replace("complex1 ^complex.1, ^mul0.1, ^pass.1", "complex1 ^complex.1, ^mul0.1, ^add0.2");
        let a = run(SRC, 1).unwrap();
        assert_eq!(a.effects, run(MACH, 1).unwrap().effects);
        // ^add0.2 is the same x: still right.
        assert_eq!(a.effects, run(&moved, 1).unwrap().effects);
        let wrong = MACH.replace("mul0: complex2 ^add0.1", "mul0: complex2 ^pass.0");
        assert!(run(&wrong, 1).is_err(), "complex2 cannot read a result of its own instruction");
    }
}
