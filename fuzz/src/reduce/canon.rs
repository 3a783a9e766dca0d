//! Canonical names: virtual registers become `%0`, `%1`, … and blocks
//! `b0`, `b1`, … in order of first appearance.
//!
//! Algorithm: one walk in text order (inputs, then each block's label, each
//! instruction's destination and sources, the terminator) assigns the next
//! number to each name not seen before; a second walk renames. Invariant:
//! the renaming is a bijection on names, so the program means the same, and
//! canonicalising twice gives the same program.

use schedra_ir::{format_smolstr, Operand, Program, SmolStr, TermKind, ToSmolStr};
use std::collections::BTreeMap;

/// `p` with dense canonical names.
pub fn canonical(p: &Program) -> Program {
    let mut vregs: BTreeMap<SmolStr, SmolStr> = BTreeMap::new();
    let mut see = |name: &str| {
        let n = vregs.len();
        vregs.entry(SmolStr::new(name)).or_insert_with(|| n.to_smolstr());
    };
    for v in p.inputs.iter().filter_map(|i| i.vreg.as_ref()) {
        see(&v.name);
    }
    for b in &p.blocks {
        for i in b.insts() {
            i.dest.iter().chain(&i.srcs).filter_map(Operand::virt).for_each(|v| see(&v.name));
        }
        if let TermKind::Brnz { cond: Operand::Virt(v), .. } = &b.term.kind {
            see(&v.name);
        }
    }
    let labels: BTreeMap<SmolStr, SmolStr> = p.blocks.iter().enumerate().map(|(k, b)| (b.label.clone(), format_smolstr!("b{k}"))).collect();
    let mut q = p.clone();
    rename(&mut q, &vregs, &labels);
    q
}

/// Apply the two renamings to every name in `p` (names not in a map stay).
fn rename(p: &mut Program, vregs: &BTreeMap<SmolStr, SmolStr>, labels: &BTreeMap<SmolStr, SmolStr>) {
    let label = |l: &mut SmolStr| {
        if let Some(n) = labels.get(l.as_str()) {
            *l = n.clone();
        }
    };
    let operand = |o: &mut Operand| match o {
        Operand::Virt(v) => {
            if let Some(n) = vregs.get(&v.name) {
                v.name = n.clone();
            }
        }
        Operand::Label(l) => label(l),
        _ => {}
    };
    for v in p.inputs.iter_mut().filter_map(|i| i.vreg.as_mut()) {
        if let Some(n) = vregs.get(&v.name) {
            v.name = n.clone();
        }
    }
    for b in &mut p.blocks {
        label(&mut b.label);
        for i in b.insts_mut() {
            i.dest.iter_mut().chain(i.srcs.iter_mut()).for_each(operand);
        }
        match &mut b.term.kind {
            TermKind::Jmp(t) => label(t),
            TermKind::Brnz { cond, nonzero, zero } => {
                operand(cond);
                label(nonzero);
                label(zero);
            }
            TermKind::End => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    #[test]
    fn names_become_dense_and_canonicalising_is_idempotent() {
        let p = parse(b"target v3d71\ninput %w = $rf1\nentry:\n %c = ldunif 0\n brnz %c, yes, no\nyes:\n %x = fmul %c, %w\n tlbw %x\n end\nno:\n end\n", None).expect("parses");
        let c = canonical(&p);
        let labels: Vec<_> = c.blocks.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(labels, ["b0", "b1", "b2"]);
        assert_eq!(c.inputs[0].vreg.as_ref().map(|v| v.name.as_str()), Some("0"));
        assert!(matches!(&c.blocks[0].term.kind, TermKind::Brnz { cond: Operand::Virt(v), nonzero, .. } if v.name == "1" && nonzero == "b1"));
        assert!(canonical(&c) == c);
    }
}
