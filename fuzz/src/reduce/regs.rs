//! Register-level passes: preallocations become virtual registers, inputs
//! go away, multi-register values get narrower.
//!
//! - [`preallocs`]: each physical register run written by an instruction
//!   (`$rf5 = mov %x`) is one opportunity; applying it renames every
//!   occurrence of exactly that run (destinations, sources, conditions) to a
//!   fresh virtual register of the same size. Reads the rename leaves
//!   undefined are repaired afterwards. `input` lines keep their registers.
//! - [`inputs`]: each `input` line is one opportunity; its uses are repaired.
//! - [`shrinks`]: each virtual register wider than one register, all of
//!   whose definitions and uses are opcodes with free sizes, may halve
//!   (`:4` → `:2` → `:1`); the validator rejects the combinations the
//!   opcodes do not allow, and ddmin tries all of them together first.
//!
//! Invariant: every rename is applied to the whole program at once, so
//! names stay consistent; no pass here adds instructions.

use super::passes::Opp;
use super::scope::Scope;
use schedra_ir::target::Sizes;
use schedra_ir::{Body, Inst, Operand, PhysReg, Program, TermKind, VirtReg};
use std::collections::BTreeSet;

/// Physical register runs written by some instruction, in order.
pub fn preallocs(p: &Program) -> Vec<Opp> {
    let runs: BTreeSet<PhysReg> = p.blocks.iter().flat_map(|b| b.insts()).filter_map(|i| i.dest.as_ref().and_then(Operand::phys)).collect();
    runs.into_iter().map(Opp::Prealloc).collect()
}

/// Every operand of the program, destinations and conditions included.
fn operands_mut(p: &mut Program) -> impl Iterator<Item = &mut Operand> {
    p.blocks.iter_mut().flat_map(|b| {
        let cond = match &mut b.term.kind {
            TermKind::Brnz { cond, .. } => Some(cond),
            _ => None,
        };
        let insts: &mut [Inst] = match &mut b.body {
            Body::Source(v) => v,
            Body::Machine(_) => &mut [],
        };
        insts.iter_mut().flat_map(|i: &mut Inst| i.dest.iter_mut().chain(i.srcs.iter_mut())).chain(cond)
    })
}

/// Rename every occurrence of `run` to a fresh virtual register.
pub fn unpin(p: &mut Program, run: PhysReg) {
    let taken = Scope::of(p).sizes;
    let mut k = 0usize;
    let name = loop {
        let n = schedra_ir::format_smolstr!("_p{}_{k}", run.base);
        if !taken.contains_key(&n) {
            break n;
        }
        k += 1;
    };
    let v = VirtReg { name, size: (run.size > 1).then_some(run.size) };
    for o in operands_mut(p) {
        if o.phys() == Some(run) {
            *o = Operand::Virt(v.clone());
        }
    }
}

/// One opportunity per `input` line.
pub fn inputs(p: &Program) -> Vec<Opp> {
    (0..p.inputs.len()).map(Opp::Input).collect()
}

/// Drop the `input` lines with these indices.
pub fn drop_inputs(p: &mut Program, chosen: &BTreeSet<usize>) {
    let mut i = 0;
    p.inputs.retain(|_| {
        i += 1;
        !chosen.contains(&(i - 1))
    });
}

/// Virtual registers wider than one register that only free-size opcodes
/// touch.
pub fn shrinks(p: &Program) -> Vec<Opp> {
    let scope = Scope::of(p);
    let mut fixed: BTreeSet<&str> = BTreeSet::new();
    for i in p.blocks.iter().flat_map(|b| b.insts()) {
        let free = p.target.op(&i.opcode).is_some_and(|d| !matches!(d.sizes, Sizes::Fixed { .. }));
        if !free {
            fixed.extend(i.dest.iter().chain(&i.srcs).filter_map(Operand::virt).map(|v| v.name.as_str()));
        }
    }
    scope
        .sizes
        .iter()
        .filter(|(n, &s)| s > 1 && !fixed.contains(n.as_str()))
        .map(|(n, &s)| Opp::Shrink { name: n.clone(), to: s / 2 })
        .collect()
}

/// Give `name` the size `to` everywhere it is written with a size.
pub fn shrink(p: &mut Program, name: &str, to: u8) {
    let size = (to > 1).then_some(to);
    for input in &mut p.inputs {
        if let Some(v) = input.vreg.as_mut().filter(|v| v.name == name) {
            v.size = size;
            input.reg.size = to;
        }
    }
    for o in operands_mut(p) {
        if let Operand::Virt(v) = o {
            if v.name == name && v.size.is_some() {
                v.size = size;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    #[test]
    fn unpin_renames_every_occurrence() {
        let mut p = parse(b"target v3d71\ninput %a = $rf1\nb0:\n $rf5 = mov %a\n tlbw $rf5\n end\n", None).expect("parses");
        assert_eq!(preallocs(&p), vec![Opp::Prealloc(PhysReg::one(5))]);
        unpin(&mut p, PhysReg::one(5));
        let i = p.blocks[0].insts();
        assert!(i[0].dest.as_ref().and_then(Operand::virt).is_some());
        assert_eq!(i[0].dest, Some(i[1].srcs[0].clone()));
    }

    #[test]
    fn shrink_skips_fixed_size_opcodes() {
        let p = parse(b"target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = mul %x, %x\n %t:4 = send.tex %y\n %u:2 = add %x, %x\n end\n", None).expect("parses");
        let s = shrinks(&p);
        assert_eq!(s, vec![Opp::Shrink { name: "u".into(), to: 1 }, Opp::Shrink { name: "x".into(), to: 1 }]);
        let mut q = p.clone();
        shrink(&mut q, "x", 1);
        assert_eq!(q.inputs[0].reg.size, 1);
    }
}
