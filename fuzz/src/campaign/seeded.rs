//! Cases started from seed programs (`schedra fuzz --seeds DIR`: real
//! shaders lowered by the front end) instead of generated ones, so the
//! campaign meets the code shapes real front ends make.
//!
//! Algorithm: a seeded case draws, from its own bytes, one of the seeds for
//! its target and up to [`MAX_MUTATIONS`] mutations applied one after
//! another. The mutations are those [`crate::mutate`] makes on machine
//! programs, on the source form's instructions: swap two neighbours, drop
//! one, move one earlier in its block, read another register, write
//! another register. A mutant is kept only when it is still a valid source
//! program that runs on the case's run seeds; otherwise the program before
//! that mutation goes on, so every seeded case checks a program the
//! oracles can judge (an invalid source is not a finding).
//!
//! Invariant: the program of a seeded case is a function of the case's
//! bytes and the seed list alone (deterministic, like a generated case).

use crate::oracle;
use arbitrary::Unstructured;
use schedra_ir::{Operand, Program, Target};

/// The most mutations applied to one seed.
pub const MAX_MUTATIONS: u8 = 3;

/// Whether case `index` on `target` starts from a seed: every other case,
/// when there are seeds for the target.
pub fn is_seeded(index: u64, seeds: &[Program], target: &Target) -> bool {
    index % 2 == 1 && seeds.iter().any(|p| std::ptr::eq(p.target, target))
}

/// The seed program `u` chooses for `target`, mutated as `u` says (see the
/// module doc); `None` when there is no seed for the target. The second
/// value counts the mutations kept.
pub fn program(u: &mut Unstructured, seeds: &[Program], target: &Target, run_seeds: &[u64]) -> Option<(Program, usize)> {
    let pool: Vec<&Program> = seeds.iter().filter(|p| std::ptr::eq(p.target, target)).collect();
    let mut p = (*pool.get(u.choose_index(pool.len()).ok()?)?).clone();
    let n = u.int_in_range(0..=MAX_MUTATIONS).unwrap_or(0);
    let mut kept = 0;
    for _ in 0..n {
        let Some(q) = mutate(&p, u) else { continue };
        if schedra_ir::validate::validate(&q).is_ok() && oracle::source_outcomes(&q, run_seeds).is_ok() {
            p = q;
            kept += 1;
        }
    }
    Some((p, kept))
}

/// The virtual registers `p` reads or writes, in order of first mention.
fn registers(p: &Program) -> Vec<Operand> {
    let mut out: Vec<Operand> = Vec::new();
    for i in p.blocks.iter().flat_map(|b| b.insts()) {
        for o in i.dest.iter().chain(&i.srcs) {
            if matches!(o, Operand::Virt(_)) && !out.contains(o) {
                out.push(o.clone());
            }
        }
    }
    out
}

/// One mutation of `p`'s instructions as `u` chooses; `None` when the
/// choice has nothing to act on or changes nothing.
fn mutate(p: &Program, u: &mut Unstructured) -> Option<Program> {
    let sites: Vec<(usize, usize)> = p.blocks.iter().enumerate().flat_map(|(b, blk)| (0..blk.insts().len()).map(move |i| (b, i))).collect();
    let (b, i) = *sites.get(u.choose_index(sites.len()).ok()?)?;
    let mut q = p.clone();
    let insts = q.blocks.get_mut(b)?.inst_list()?;
    match u.int_in_range(0..=4u8).ok()? {
        0 => {
            let j = if i + 1 < insts.len() { i + 1 } else { i.checked_sub(1)? };
            insts.swap(i, j);
        }
        1 => {
            insts.remove(i);
        }
        2 => {
            let to = u.int_in_range(0..=i.checked_sub(1)?).ok()?;
            let inst = insts.remove(i);
            insts.insert(to, inst);
        }
        3 => {
            let regs = registers(p);
            let inst = &mut insts[i];
            let virt: Vec<usize> = (0..inst.srcs.len()).filter(|&k| matches!(inst.srcs[k], Operand::Virt(_))).collect();
            let k = *virt.get(u.choose_index(virt.len()).ok()?)?;
            inst.srcs[k] = regs.get(u.choose_index(regs.len()).ok()?)?.clone();
        }
        _ => {
            let regs = registers(p);
            let inst = &mut insts[i];
            if !matches!(inst.dest, Some(Operand::Virt(_))) {
                return None;
            }
            inst.dest = Some(regs.get(u.choose_index(regs.len()).ok()?)?.clone());
        }
    }
    (!q.same_as(p)).then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(text: &str) -> Program {
        schedra_ir::parse::parse(text.as_bytes(), None).expect("parses")
    }

    fn corpus_seed() -> Program {
        let path = format!("{}/../corpus/v3d71/blinn-phong.ir", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        seed(&text)
    }

    #[test]
    fn seeded_cases_alternate_and_need_a_seed_for_the_target() {
        let v3d = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let gen8 = schedra_ir::target::by_name("gen8").expect("gen8");
        let seeds = vec![corpus_seed()];
        assert!(is_seeded(1, &seeds, v3d) && !is_seeded(2, &seeds, v3d));
        assert!(!is_seeded(1, &seeds, gen8), "no seed for gen8");
        assert!(!is_seeded(1, &[], v3d));
    }

    #[test]
    fn mutants_are_valid_runnable_and_reproducible() {
        let v3d = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let seeds = vec![corpus_seed()];
        let mut mutated = 0;
        for s in 0..64u64 {
            let data = crate::gen::seed_bytes(s, 256);
            let (p, kept) = program(&mut Unstructured::new(&data), &seeds, v3d, &[s, s + 1]).expect("a seed for v3d71");
            let (again, _) = program(&mut Unstructured::new(&data), &seeds, v3d, &[s, s + 1]).expect("again");
            assert_eq!(schedra_ir::print::print(&p), schedra_ir::print::print(&again), "deterministic");
            assert!(schedra_ir::validate::validate(&p).is_ok());
            assert!(oracle::source_outcomes(&p, &[s, s + 1]).is_ok());
            if kept == 1 {
                assert!(!p.same_as(&seeds[0]), "a kept mutation changes the program");
            }
            if kept > 0 {
                mutated += 1;
            }
        }
        assert!(mutated > 8, "only {mutated} of 64 seeded cases are mutants");
    }
}
