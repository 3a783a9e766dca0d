//! Test-only cross-check of the two interpreters against each other: a
//! deliberately naive lowering turns a source program into a machine program
//! that is correct by construction (one op per bundle, padded with empty
//! bundles until its write has landed, every virtual register in registers
//! of its own that nothing else touches, implicit destinations copied out
//! right after they land, a barrier after each unknown-landing op), and the source interpreter and the machine
//! simulator must then agree on effects and branch traces for every seed.
//! This is independent of the real compiler; it checks the interpreters,
//! not a scheduler.

use super::{run, RunError};
use schedra_ir::target::{Clock, Dest};
use schedra_ir::{Block, Body, Bundle, Form, Inst, Input, Op, Operand, PhysReg, Program, Reg, TermKind};
use schedra_ir::SmolStr;
use std::collections::{BTreeSet, HashMap};

/// Registers for each virtual register name, and what is left to hand out.
struct Alloc {
    free: Vec<Reg>,
    runs: HashMap<SmolStr, PhysReg>,
}

impl Alloc {
    fn new(p: &Program) -> Alloc {
        let t = p.target;
        let mut used: BTreeSet<Reg> = t.reserved.iter().chain(t.implicit_regs).copied().collect();
        let phys = |o: &Operand| o.phys().into_iter().flat_map(PhysReg::regs);
        for b in &p.blocks {
            for i in b.insts() {
                used.extend(i.dest.iter().chain(&i.srcs).flat_map(phys));
            }
            if let TermKind::Brnz { cond, .. } = &b.term.kind {
                used.extend(phys(cond));
            }
        }
        used.extend(p.inputs.iter().flat_map(|i| i.reg.regs()));
        Alloc { free: (0..t.regs.count).rev().filter(|r| !used.contains(r)).collect(), runs: HashMap::new() }
    }

    /// The run of `name`, allocated with `size` registers at first sight.
    fn get(&mut self, name: &str, size: u8) -> Option<PhysReg> {
        if let Some(r) = self.runs.get(name) {
            return Some(*r);
        }
        // Take `size` consecutive free registers from the low end.
        let mut sorted: Vec<Reg> = self.free.clone();
        sorted.sort();
        let base = sorted.windows(size as usize).find(|w| w.iter().enumerate().all(|(k, r)| *r == w[0] + k as Reg))?.first().copied()?;
        self.free.retain(|r| *r < base || *r >= base + size as Reg);
        let run = PhysReg { base, size };
        self.runs.insert(SmolStr::new(name), run);
        Some(run)
    }
}

fn op(slot: &'static str, opcode: &str, dest: Option<Operand>, srcs: Vec<Operand>) -> Bundle {
    let inst = Inst { opcode: SmolStr::new(opcode), dest, srcs, span: Default::default() };
    Bundle { ops: vec![Op { slot: SmolStr::new_static(slot), inst }], span: Default::default(), wait: 0 }
}

/// Lower `p` (source form) naively; `None` when it does not fit.
pub fn lower(p: &Program) -> Option<Program> {
    let t = p.target;
    if t.network.is_some() {
        return None; // results live in the bypass network: no register lowering exists
    }
    let mut alloc = Alloc::new(p);
    let mut sizes: HashMap<SmolStr, u8> = HashMap::new();
    // An interlocked core waits by itself; the others need empty bundles.
    let pad = |latency: u32| match t.clock {
        Clock::Interlocked => 0,
        Clock::Padded | Clock::EncodedWaits { .. } => latency.max(1) as usize - 1,
    };
    let mov = t.op("mov")?;
    let emit = |out: &mut Vec<Bundle>, b: Bundle, latency: u32| {
        out.push(b);
        out.extend(std::iter::repeat_with(Bundle::default).take(pad(latency)));
    };
    let mut blocks = Vec::new();
    for (bi, block) in p.blocks.iter().enumerate() {
        let mut out = Vec::new();
        if bi == 0 {
            for input in &p.inputs {
                let v = input.vreg.as_ref()?;
                sizes.insert(v.name.clone(), input.reg.size);
                let d = alloc.get(&v.name, input.reg.size)?;
                emit(&mut out, op(mov.slots.first()?, "mov", Some(Operand::Phys(d)), vec![Operand::Phys(input.reg)]), mov.latency);
            }
        }
        for inst in block.insts() {
            let desc = t.op(&inst.opcode)?;
            let map = |o: &Operand, alloc: &mut Alloc, sizes: &HashMap<SmolStr, u8>| -> Option<Operand> {
                Some(match o {
                    Operand::Virt(v) => Operand::Phys(alloc.get(&v.name, *sizes.get(&v.name)?)?),
                    other => other.clone(),
                })
            };
            let srcs: Vec<Operand> = inst.srcs.iter().map(|o| map(o, &mut alloc, &sizes)).collect::<Option<_>>()?;
            if let Some(Operand::Virt(v)) = &inst.dest {
                let widest = srcs.iter().filter_map(Operand::phys).map(|r| r.size).max();
                let size = match desc.sizes {
                    schedra_ir::target::Sizes::Fixed { dest, .. } => dest,
                    _ => v.size.or(sizes.get(&v.name).copied()).or(widest).unwrap_or(1),
                };
                sizes.entry(v.name.clone()).or_insert(v.size.unwrap_or(size));
            }
            let dest = match &inst.dest {
                Some(d) => Some(map(d, &mut alloc, &sizes)?),
                None => None,
            };
            let slot = desc.slots.first()?;
            if let Dest::Implicit(r) = desc.dest {
                emit(&mut out, op(slot, &inst.opcode, None, srcs), desc.latency);
                let from = Operand::Phys(PhysReg { base: r, size: dest.as_ref()?.phys()?.size });
                emit(&mut out, op(mov.slots.first()?, "mov", dest, vec![from]), mov.latency);
            } else {
                emit(&mut out, op(slot, &inst.opcode, dest, srcs), desc.latency);
            }
            if desc.unknown_landing {
                // Wait for every result in flight (`texbar 0`).
                let bar = t.ops.iter().find(|o| o.sem == schedra_ir::target::Sem::TexBarrier)?;
                emit(&mut out, op(bar.slots.first()?, bar.name, None, vec![Operand::Imm(schedra_ir::Imm::int(0))]), 1);
            }
        }
        let mut term = block.term.clone();
        if let TermKind::Brnz { cond: Operand::Virt(v), .. } = &block.term.kind {
            let c = Operand::Phys(alloc.get(&v.name, *sizes.get(&v.name)?)?);
            if let TermKind::Brnz { cond, .. } = &mut term.kind {
                *cond = c;
            }
        }
        blocks.push(Block { label: block.label.clone(), body: Body::Machine(out), term, span: block.span });
    }
    let inputs = p.inputs.iter().map(|i| Input { vreg: None, reg: i.reg, span: i.span }).collect();
    Some(Program { name: p.name.clone(), target: t, stage: p.stage, form: Form::Machine, inputs, blocks })
}

/// Compare the source run and the lowered run of `p` on `seed`; `Ok(true)`
/// when both finished and agree, `Ok(false)` when the comparison does not
/// apply (the source runs out of fuel), `Err` with a description otherwise.
pub fn agree(p: &Program, m: &Program, seed: u64) -> Result<bool, String> {
    let src = match run(p, seed, 100_000) {
        Err(RunError::OutOfFuel { .. }) => return Ok(false),
        other => other,
    };
    // The lowering makes no end sequence and pairs nothing: it checks
    // time and meaning, not the hardware rules.
    let mach = super::run_ignoring_rules(m, seed, 10_000_000);
    match (src, mach) {
        (Ok(a), Ok(b)) if a.effects == b.effects && a.trace == b.trace => Ok(true),
        (a, b) => Err(format!(
            "seed {seed}\nsource: {:?}\nmachine: {:?}\n{}\n{}",
            a.map(|o| o.effects.to_string()),
            b.map(|o| o.effects.to_string()),
            schedra_ir::print::print(p),
            schedra_ir::print::print(m)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen;
    use std::path::Path;

    fn corpus() -> Vec<Program> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in [root.join("corpus/spec"), root.join("corpus")] {
            for sub in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                files.extend(std::fs::read_dir(sub.path()).into_iter().flatten().flatten().map(|e| e.path()));
            }
        }
        files.sort();
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "ir"))
            .filter_map(|f| std::fs::read(f).ok())
            .filter_map(|b| schedra_ir::parse::parse(&b, None).ok())
            .collect()
    }

    fn check_all(programs: &[Program], seeds: u64) -> usize {
        let mut agreed = 0;
        for p in programs {
            let Some(m) = lower(p) else { continue };
            for seed in 0..seeds {
                match agree(p, &m, seed) {
                    Ok(true) => agreed += 1,
                    Ok(false) => {}
                    Err(e) => panic!("the interpreters disagree: {e}"),
                }
            }
        }
        agreed
    }

    #[test]
    fn interpreters_agree_on_the_corpus() {
        let programs = corpus();
        assert!(programs.len() >= 7, "{} source programs", programs.len());
        let agreed = check_all(&programs, 4);
        assert!(agreed >= programs.len() * 2, "{agreed} agreeing runs of {} programs", programs.len());
    }

    #[test]
    fn interpreters_agree_on_generated_programs() {
        let mut programs = Vec::new();
        for seed in 0..300u64 {
            let bytes = gen::seed_bytes(seed, 4096);
            let mut u = arbitrary::Unstructured::new(&bytes);
            let all = schedra_ir::target::generated();
            let Some(t) = all.get(seed as usize % all.len()) else { continue };
            let Ok(cfg) = gen::Config::swarm(&mut u) else { continue };
            if let Ok(p) = gen::generate(&mut u, t, &cfg) {
                programs.push(p);
            }
        }
        assert!(programs.len() >= 250);
        let agreed = check_all(&programs, 3);
        assert!(agreed >= programs.len(), "{agreed} agreeing runs of {} programs", programs.len());
    }
}
