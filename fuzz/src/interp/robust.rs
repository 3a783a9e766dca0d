//! Robustness tests: the interpreters never panic, whatever program they
//! are given. Programs of the spec examples and the corpus are mutated at
//! random (registers out of range and misaligned sizes, wrong opcodes,
//! operands of the wrong kind, dangling labels, deleted or duplicated ops,
//! forms swapped) and run with a little fuel; every run must return `Ok` or
//! `Err`, never panic.

use super::run;
use schedra_ir::{Body, Imm, Operand, PhysReg, Program, TermKind, VirtReg};
use schedra_ir::SmolStr;
use std::path::Path;

/// xorshift64*: a tiny deterministic generator for the mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn programs() -> Vec<Program> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in [root.join("corpus/spec"), root.join("corpus")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for sub in entries.flatten() {
            let Ok(inner) = std::fs::read_dir(sub.path()) else { continue };
            files.extend(inner.flatten().map(|e| e.path()));
        }
    }
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .filter_map(|bytes| schedra_ir::parse::parse(&bytes, None).ok())
        .collect()
}

fn random_operand(rng: &mut Rng) -> Operand {
    match rng.below(5) {
        0 => Operand::Phys(PhysReg { base: rng.below(600) as u16, size: 1 + rng.below(5) as u8 }),
        1 => Operand::Imm(Imm::int(rng.next() as u32 as i64)),
        2 => Operand::Virt(VirtReg { name: SmolStr::new_static(["a", "x", "nope"][rng.below(3)]), size: None }),
        3 => Operand::Label(SmolStr::new_static("b0")),
        _ => Operand::Phys(PhysReg { base: u16::MAX - 1, size: 255 }),
    }
}

fn mutate(p: &mut Program, rng: &mut Rng) {
    let nb = p.blocks.len();
    let Some(block) = p.blocks.get_mut(rng.below(nb)) else { return };
    let ops = p.target.ops;
    let mut insts: Vec<&mut schedra_ir::Inst> = match &mut block.body {
        Body::Source(v) => v.iter_mut().collect(),
        Body::Machine(v) => v.iter_mut().flat_map(|b| b.ops.iter_mut().map(|o| &mut o.inst)).collect(),
    };
    let n = insts.len();
    match rng.below(8) {
        0 if n > 0 => insts[rng.below(n)].opcode = ops.get(rng.below(ops.len() + 1)).map_or(SmolStr::new_static("bogus"), |o| SmolStr::new_static(o.name)),
        1 if n > 0 => {
            let i = &mut insts[rng.below(n)];
            let k = rng.below(i.srcs.len() + 1);
            if k < i.srcs.len() {
                i.srcs[k] = random_operand(rng);
            } else {
                i.srcs.push(random_operand(rng));
            }
        }
        2 if n > 0 => insts[rng.below(n)].dest = [None, Some(random_operand(rng))][rng.below(2)].clone(),
        3 => block.term.kind = TermKind::Jmp(SmolStr::new_static(["b0", "missing", "b1"][rng.below(3)])),
        4 => block.term.kind = TermKind::Brnz { cond: random_operand(rng), nonzero: block.label.clone(), zero: SmolStr::new_static("b0") },
        5 if !block.bundles().is_empty() => {
            let k = rng.below(block.bundles().len());
            let b = block.bundles()[k].clone();
            if let Some(l) = block.bundle_list() {
                l.insert(k, b);
            }
        }
        6 if !block.insts().is_empty() => {
            let k = rng.below(block.insts().len());
            if let Some(l) = block.inst_list() {
                l.remove(k);
            }
        }
        _ => {
            p.form = match p.form {
                schedra_ir::Form::Source => schedra_ir::Form::Machine,
                schedra_ir::Form::Machine => schedra_ir::Form::Source,
            }
        }
    }
}

#[test]
fn mutated_programs_never_panic() {
    let base = programs();
    assert!(base.len() >= 14, "the examples parse ({} programs)", base.len());
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut ok, mut err) = (0, 0);
    for round in 0..3000 {
        let mut p = base[round % base.len()].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut p, &mut rng);
        }
        match run(&p, rng.next(), 2000) {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    assert!(ok > 100 && err > 100, "both outcomes exercised: {ok} ok, {err} errors");
}
