//! Control-flow passes: fewer edges, fewer blocks.
//!
//! Opportunities name blocks by label, so that several of them can be
//! applied one after another to the same program:
//!
//! - [`Opp::Term`]: replace a block's terminator by `end` or by a `jmp` to
//!   one of its `brnz` successors (the cut-off part becomes unreachable);
//! - [`Opp::Merge`]: a non-entry block whose only predecessor ends in a
//!   `jmp` to it is appended to that predecessor;
//! - [`Opp::Bypass`]: an empty non-entry block that only jumps on is
//!   removed and its predecessors jump straight to its successor.
//!
//! [`remove_unreachable`] runs after every application. Invariant: the
//! entry block stays first and keeps its label; blocks keep their order;
//! no pass adds an edge that was not a path before, so a program without
//! critical edges only gets one from a bypass (which the validator then
//! rejects).

use super::passes::Opp;
use super::scope::predecessors;
use schedra_ir::{Body, Program, TermKind};
use schedra_ir::SmolStr;
use std::collections::VecDeque;

/// Which replacement terminator a [`Opp::Term`] installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewTerm {
    /// `end`.
    End,
    /// `jmp label`.
    Jmp(SmolStr),
}

/// `end` for every block that does not end the program.
pub fn to_end(p: &Program) -> Vec<Opp> {
    p.blocks
        .iter()
        .filter(|b| b.term.kind != TermKind::End)
        .map(|b| Opp::Term { block: b.label.clone(), to: NewTerm::End })
        .collect()
}

/// `jmp` to the `nonzero` (or `zero`) successor of every `brnz`.
pub fn brnz_to_jmp(p: &Program, nonzero: bool) -> Vec<Opp> {
    let mut out = Vec::new();
    for b in &p.blocks {
        if let TermKind::Brnz { nonzero: nz, zero: z, .. } = &b.term.kind {
            let to = if nonzero { nz } else { z };
            out.push(Opp::Term { block: b.label.clone(), to: NewTerm::Jmp(to.clone()) });
        }
    }
    out
}

/// Blocks that can be appended to their only predecessor.
pub fn merges(p: &Program) -> Vec<Opp> {
    let preds = predecessors(p);
    let mut out = Vec::new();
    for (i, b) in p.blocks.iter().enumerate().skip(1) {
        if let Some(&[q]) = preds.get(i).map(Vec::as_slice) {
            let jumps_here = p.blocks.get(q).is_some_and(|pb| pb.term.kind == TermKind::Jmp(b.label.clone()));
            if q != i && jumps_here {
                out.push(Opp::Merge(b.label.clone()));
            }
        }
    }
    out
}

/// Empty non-entry blocks that only jump on.
pub fn bypasses(p: &Program) -> Vec<Opp> {
    p.blocks
        .iter()
        .skip(1)
        .filter(|b| b.insts().is_empty() && matches!(&b.term.kind, TermKind::Jmp(t) if *t != b.label))
        .map(|b| Opp::Bypass(b.label.clone()))
        .collect()
}

/// Install a new terminator in block `label` (no-op when it is gone).
pub fn set_term(p: &mut Program, label: &str, to: &NewTerm) {
    if let Some(b) = p.blocks.iter_mut().find(|b| b.label == label) {
        b.term.kind = match to {
            NewTerm::End => TermKind::End,
            NewTerm::Jmp(l) => TermKind::Jmp(l.clone()),
        };
    }
}

/// Append block `label` to its only predecessor if that still jumps to it.
pub fn merge(p: &mut Program, label: &str) {
    let Some(i) = p.block_index(label).filter(|&i| i > 0) else { return };
    let preds = predecessors(p);
    let Some(&[q]) = preds.get(i).map(Vec::as_slice) else { return };
    let jumps_here = p.blocks.get(q).is_some_and(|pb| pb.term.kind == TermKind::Jmp(SmolStr::new(label)));
    if q == i || !jumps_here {
        return;
    }
    let absorbed = p.blocks.remove(i);
    let q = if q > i { q - 1 } else { q };
    if let Some(pb) = p.blocks.get_mut(q) {
        if let (Some(l), Body::Source(more)) = (pb.inst_list(), absorbed.body) {
            l.extend(more);
        }
        pb.term = absorbed.term;
    }
}

/// Remove the empty block `label` and send its predecessors to its
/// successor.
pub fn bypass(p: &mut Program, label: &str) {
    let Some(i) = p.block_index(label).filter(|&i| i > 0) else { return };
    let next = match (&p.blocks[i].term.kind, p.blocks[i].insts().is_empty()) {
        (TermKind::Jmp(t), true) if t != label => t.clone(),
        _ => return,
    };
    p.blocks.remove(i);
    for b in &mut p.blocks {
        match &mut b.term.kind {
            TermKind::Jmp(t) if t == label => *t = next.clone(),
            TermKind::Brnz { nonzero, zero, .. } => {
                for t in [nonzero, zero] {
                    if t == label {
                        *t = next.clone();
                    }
                }
            }
            _ => {}
        }
    }
}

/// Drop the blocks the entry cannot reach (keeping the order of the rest).
pub fn remove_unreachable(p: &mut Program) {
    let mut seen = vec![false; p.blocks.len()];
    let mut work = VecDeque::new();
    if !seen.is_empty() {
        seen[0] = true;
        work.push_back(0);
    }
    while let Some(b) = work.pop_front() {
        let succs: Vec<usize> = p.blocks[b].term.successors().iter().filter_map(|s| p.block_index(s)).collect();
        for s in succs {
            if !seen[s] {
                seen[s] = true;
                work.push_back(s);
            }
        }
    }
    let mut k = 0;
    p.blocks.retain(|_| {
        k += 1;
        seen[k - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    const DIAMOND: &str = "target v3d71\nb0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n %x = mov %c\n jmp b3\nb2:\n jmp b3\nb3:\n tlbw %c\n end\n";

    #[test]
    fn brnz_to_jmp_then_cleanup_and_merge_leaves_one_block() {
        let mut p = parse(DIAMOND.as_bytes(), None).expect("parses");
        set_term(&mut p, "b0", &NewTerm::Jmp("b1".into()));
        remove_unreachable(&mut p);
        assert_eq!(p.blocks.len(), 3);
        for l in ["b1", "b3"] {
            merge(&mut p, l);
        }
        assert_eq!(p.blocks.len(), 1);
        assert_eq!(p.blocks[0].insts().len(), 3);
        assert_eq!(p.blocks[0].term.kind, TermKind::End);
    }

    #[test]
    fn bypass_redirects_predecessors() {
        let mut p = parse(DIAMOND.as_bytes(), None).expect("parses");
        assert_eq!(bypasses(&p), vec![Opp::Bypass("b2".into())]);
        bypass(&mut p, "b2");
        assert_eq!(p.blocks.len(), 3);
        assert!(matches!(&p.blocks[0].term.kind, TermKind::Brnz { zero, .. } if zero == "b3"));
    }

    #[test]
    fn merge_refuses_a_block_with_two_predecessors() {
        let mut p = parse(DIAMOND.as_bytes(), None).expect("parses");
        merge(&mut p, "b3");
        assert_eq!(p.blocks.len(), 4);
        assert!(merges(&p).is_empty());
    }
}
