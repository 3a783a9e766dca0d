//! Mutations of machine programs, for the verifier-soundness oracle: small
//! changes of the kinds compilers get wrong (an op scheduled one bundle too
//! early, two bundles in the wrong order, a wrong register, a write to the
//! wrong place, a dropped op). A mutant that behaves differently from the
//! source must not be proven.
//!
//! Invariant: a mutant is still a machine-form program of the same target
//! with the same blocks and terminators (only bundles change), so the
//! verifier can compare it; it differs from the input in exactly one
//! mutation.

use arbitrary::Unstructured;
use schedra_ir::{Operand, PhysReg, Program};
use schedra_ir::SmolStr;
use std::fmt;

/// One applied mutation and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// Two bundles of one block swapped.
    SwapBundles {
        /// Label of the block.
        block: SmolStr,
        /// 0-based index of the first bundle swapped.
        a: usize,
        /// 0-based index of the second bundle swapped.
        b: usize,
    },
    /// A source register of an op changed.
    ChangeRegister {
        /// Label of the block.
        block: SmolStr,
        /// 0-based index of the bundle holding the op.
        bundle: usize,
        /// Register index read before the mutation.
        from: u16,
        /// Register index read after it.
        to: u16,
    },
    /// An op removed from its bundle.
    DropOp {
        /// Label of the block.
        block: SmolStr,
        /// 0-based index of the bundle the op was removed from.
        bundle: usize,
    },
    /// An op moved into the bundle before (its slot there was free).
    MoveEarlier {
        /// Label of the block.
        block: SmolStr,
        /// 0-based index of the bundle the op was moved out of.
        bundle: usize,
    },
    /// The destination of a write changed.
    RetargetWrite {
        /// Label of the block.
        block: SmolStr,
        /// 0-based index of the bundle holding the op.
        bundle: usize,
        /// Destination register index before the mutation.
        from: u16,
        /// Destination register index after it.
        to: u16,
    },
}

impl Mutation {
    /// A short name for signatures.
    pub fn name(&self) -> &'static str {
        match self {
            Mutation::SwapBundles { .. } => "swap-bundles",
            Mutation::ChangeRegister { .. } => "change-register",
            Mutation::DropOp { .. } => "drop-op",
            Mutation::MoveEarlier { .. } => "move-earlier",
            Mutation::RetargetWrite { .. } => "retarget-write",
        }
    }
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mutation::SwapBundles { block, a, b } => write!(f, "swapped bundles {a} and {b} of {block}"),
            Mutation::ChangeRegister { block, bundle, from, to } => write!(f, "changed source register {from} to {to} in {block} bundle {bundle}"),
            Mutation::DropOp { block, bundle } => write!(f, "dropped an op of {block} bundle {bundle}"),
            Mutation::MoveEarlier { block, bundle } => write!(f, "moved an op of {block} bundle {bundle} one bundle earlier"),
            Mutation::RetargetWrite { block, bundle, from, to } => write!(f, "retargeted a write from register {from} to {to} in {block} bundle {bundle}"),
        }
    }
}

/// (block, bundle, op) of every op.
fn ops(p: &Program) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    for (b, blk) in p.blocks.iter().enumerate() {
        for (x, bundle) in blk.bundles().iter().enumerate() {
            v.extend((0..bundle.ops.len()).map(|o| (b, x, o)));
        }
    }
    v
}

/// A register near `r` (often a neighbour, sometimes anywhere), different
/// from it, with room for `size` registers.
fn other_reg(u: &mut Unstructured, p: &Program, r: PhysReg) -> Option<PhysReg> {
    let count = p.target.regs.count as i64;
    let delta = if u.arbitrary::<bool>().ok()? { u.int_in_range(1..=4i64).ok()? } else { u.int_in_range(1..=count - 1).ok()? };
    let base = (r.base as i64 + delta).rem_euclid(count - r.size as i64 + 1);
    (base != r.base as i64).then_some(PhysReg { base: base as u16, size: r.size })
}

/// Apply one random mutation to `p`; `None` when the chosen mutation has
/// nothing to act on.
pub fn mutate(p: &Program, u: &mut Unstructured) -> Option<(Program, Mutation)> {
    let all = ops(p);
    if all.is_empty() {
        return None;
    }
    let (b, x, o) = all[u.choose_index(all.len()).ok()?];
    let mut q = p.clone();
    let label = q.blocks.get(b)?.label.clone();
    let m = match u.int_in_range(0..=4u8).ok()? {
        0 => {
            let n = q.blocks[b].bundles().len();
            let y = if x + 1 < n { x + 1 } else { x.checked_sub(1)? };
            q.blocks[b].bundles_mut().swap(x, y);
            Mutation::SwapBundles { block: label, a: x.min(y), b: x.max(y) }
        }
        1 => {
            let inst = &mut q.blocks[b].bundles_mut()[x].ops[o].inst;
            let regs: Vec<usize> = (0..inst.srcs.len()).filter(|&i| inst.srcs[i].phys().is_some()).collect();
            let i = *regs.get(u.choose_index(regs.len()).ok()?)?;
            let from = inst.srcs[i].phys()?;
            let to = other_reg(u, p, from)?;
            inst.srcs[i] = Operand::Phys(to);
            Mutation::ChangeRegister { block: label, bundle: x, from: from.base, to: to.base }
        }
        2 => {
            q.blocks[b].bundles_mut()[x].ops.remove(o);
            Mutation::DropOp { block: label, bundle: x }
        }
        3 => {
            let prev = x.checked_sub(1)?;
            let op = q.blocks[b].bundles()[x].ops[o].clone();
            if q.blocks[b].bundles()[prev].ops.iter().any(|p| p.slot == op.slot) {
                return None;
            }
            q.blocks[b].bundles_mut()[x].ops.remove(o);
            q.blocks[b].bundles_mut()[prev].ops.push(op);
            Mutation::MoveEarlier { block: label, bundle: x }
        }
        _ => {
            let inst = &mut q.blocks[b].bundles_mut()[x].ops[o].inst;
            let from = inst.dest.as_ref()?.phys()?;
            let to = other_reg(u, p, from)?;
            inst.dest = Some(Operand::Phys(to));
            Mutation::RetargetWrite { block: label, bundle: x, from: from.base, to: to.base }
        }
    };
    Some((q, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Program {
        let path = format!("{}/../corpus/spec/v3d71-mul/out.s", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(&path).expect("example");
        schedra_ir::parse::parse(&text, None).expect("parses")
    }

    #[test]
    fn every_mutation_kind_changes_the_program() {
        let p = example();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..400u64 {
            let data = crate::gen::seed_bytes(seed, 64);
            let mut u = Unstructured::new(&data);
            if let Some((q, m)) = mutate(&p, &mut u) {
                assert!(!q.same_as(&p), "{m} left the program unchanged");
                assert_eq!(q.blocks.len(), p.blocks.len());
                seen.insert(m.name());
            }
        }
        assert_eq!(seen.len(), 5, "kinds seen: {seen:?}");
    }
}
