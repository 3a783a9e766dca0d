//! Forwarding: an instruction is removed and the later reads of its result
//! read one of its sources instead (`%b = neg %a; %c = add %b, %x` →
//! `%c = add %a, %x`), llvm-reduce's "operands to an argument of the
//! defining instruction".
//!
//! Plain removal repairs a read it leaves undefined with the latest value
//! defined before the read ([`super::repair`]), which may be an unrelated
//! value far from the removed one; forwarding keeps the chain's shape (the
//! reader still depends on what the removed instruction read), so a
//! failure that needs a value to stay live, or a chain to keep its length
//! minus one, survives more often.
//!
//! Invariant: one opportunity per instruction with a virtual destination
//! and per virtual source of the destination's size; applying a set of
//! them removes every chosen instruction once, renaming from the last
//! chosen instruction to the first so that chains of forwarded
//! instructions resolve to the earliest source. Only reads in the same
//! block up to the next redefinition of the name (or of the source) are
//! renamed; reads elsewhere are left to the repair.

use super::passes::Opp;
use super::scope::defined;
use schedra_ir::{Operand, Program, TermKind, VirtReg};

/// One opportunity per (instruction, same-size virtual source), in program
/// order.
pub fn opportunities(p: &Program) -> Vec<Opp> {
    let mut out = Vec::new();
    for (b, block) in p.blocks.iter().enumerate() {
        for (i, inst) in block.insts().iter().enumerate() {
            let Some((name, size)) = defined(inst.dest.as_ref()) else { continue };
            let mut taken: Vec<&str> = Vec::new();
            for (k, s) in inst.srcs.iter().enumerate() {
                let Some(v) = s.virt() else { continue };
                if v.name == name || v.size.unwrap_or(1) != size || taken.contains(&v.name.as_str()) {
                    continue;
                }
                taken.push(v.name.as_str());
                out.push(Opp::Forward { block: b, inst: i, src: k });
            }
        }
    }
    out
}

/// Apply the chosen forwards `(block, inst, src)` to `p`; returns the
/// instructions to remove (the caller removes them with the other removals).
pub fn apply(p: &mut Program, chosen: &[(usize, usize, usize)]) -> Vec<(usize, usize)> {
    let mut order: Vec<(usize, usize, usize)> = chosen.to_vec();
    order.sort_unstable();
    order.dedup_by_key(|(b, i, _)| (*b, *i));
    let mut dead = Vec::with_capacity(order.len());
    for &(b, i, k) in order.iter().rev() {
        let Some(block) = p.blocks.get_mut(b) else { continue };
        let Some(inst) = block.insts().get(i) else { continue };
        let (Some((name, _)), Some(Operand::Virt(src))) = (defined(inst.dest.as_ref()), inst.srcs.get(k)) else { continue };
        let (name, src): (String, VirtReg) = (name.to_string(), src.clone());
        let rename = |o: &mut Operand| {
            if o.virt().is_some_and(|v| v.name == name) {
                *o = Operand::Virt(VirtReg { name: src.name.clone(), size: src.size });
            }
        };
        let mut ended = false;
        for later in block.insts_mut().iter_mut().skip(i + 1) {
            later.srcs.iter_mut().for_each(rename);
            if defined(later.dest.as_ref()).is_some_and(|(n, _)| n == name || n == src.name.as_str()) {
                ended = true;
                break;
            }
        }
        if !ended {
            if let TermKind::Brnz { cond, .. } = &mut block.term.kind {
                rename(cond);
            }
        }
        dead.push((b, i));
    }
    dead
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::passes;
    use schedra_ir::parse::parse;
    use schedra_ir::print::print;

    #[test]
    fn a_chain_of_forwards_reads_the_first_source() {
        let p = parse(b"target lima-gp\nstage vertex\nb0:\n %a = ld_att 0\n %b = neg %a\n %c = neg %b\n %d = add %c, %a\n st_var 0, %d\n end\n", None).expect("parses");
        let opps = opportunities(&p);
        // %b via %a, %c via %b, %d via %c and via %a.
        assert_eq!(opps.len(), 4);
        let chosen: Vec<&Opp> = opps.iter().take(2).collect();
        let q = passes::apply(&p, &chosen).expect("applies");
        let text = print(&q);
        assert!(text.contains("%d = add %a, %a"), "{text}");
        assert_eq!(q.op_count(), 3);
    }
}
