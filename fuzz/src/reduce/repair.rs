//! Repairing the uses a reduction left undefined.
//!
//! After a pass removes instructions, blocks, inputs or edges, some uses of
//! virtual registers may no longer be reached by a definition on every path.
//! [`repair`] walks every block with the set of names defined at each point
//! ([`Scope`]) and replaces each such use, in this order of preference:
//!
//! 1. the latest-ranked defined name of the same size (keeps the dataflow
//!    shape, so the failure is more likely to survive);
//! 2. the immediate 0, where the opcode's operand takes an immediate;
//! 3. a fresh name defined by `mov 0` inserted just before the use, where the
//!    target has such a `mov` for that size.
//!
//! If none applies the repair fails and the candidate is dropped.
//!
//! Invariant: on success every virtual-register use of a reachable block is
//! defined on every path to it, and only operands that were undefined (plus
//! inserted `mov`s) changed.

use super::scope::{defined, Scope};
use schedra_ir::target::{OperandKind, Sem, Sizes};
use schedra_ir::{Body, Imm, Inst, OpDesc, Operand, Program, Span, Target, TermKind, VirtReg};
use schedra_ir::SmolStr;
use std::collections::{BTreeMap, BTreeSet};

/// Replace every undefined use in `p`; `false` when some use has no
/// replacement (then `p` is partly changed and must be dropped). `hint`
/// gives the sizes of names whose definitions may have been removed.
pub fn repair(p: &mut Program, hint: &BTreeMap<SmolStr, u8>) -> bool {
    let scope = Scope::of(p);
    let mut r = Repairer { target: p.target, sizes: scope.sizes.clone(), rank: scope.rank.clone(), fresh: 0 };
    for (name, size) in hint {
        r.sizes.entry(name.clone()).or_insert(*size);
    }
    for (b, block) in p.blocks.iter_mut().enumerate() {
        let mut defs = scope.entry.get(b).cloned().unwrap_or_default();
        let mut out: Vec<Inst> = Vec::with_capacity(block.insts().len());
        for mut inst in block.take_insts() {
            let desc = p.target.op(&inst.opcode);
            for k in 0..inst.srcs.len() {
                let Some(v) = undefined(&inst.srcs[k], &defs) else { continue };
                let Some((op, mov)) = r.replacement(&v, desc.map(|d| (d, k)), &defs) else { return false };
                out.extend(mov.inspect(|m| r.define(m, &mut defs)));
                inst.srcs[k] = op;
            }
            r.define(&inst, &mut defs);
            out.push(inst);
        }
        block.body = Body::Source(out);
        if let TermKind::Brnz { cond, .. } = &mut block.term.kind {
            if let Some(v) = undefined(cond, &defs) {
                let Some((op, mov)) = r.replacement(&v, None, &defs) else { return false };
                if let Body::Source(l) = &mut block.body {
                    l.extend(mov);
                }
                *cond = op;
            }
        }
    }
    true
}

/// The state of one repair: sizes and ranks of all names, fresh-name counter.
struct Repairer {
    target: &'static Target,
    sizes: BTreeMap<SmolStr, u8>,
    rank: BTreeMap<SmolStr, usize>,
    fresh: usize,
}

impl Repairer {
    /// Record the name `inst` defines.
    fn define(&self, inst: &Inst, defs: &mut BTreeSet<SmolStr>) {
        if let Some((n, _)) = defined(inst.dest.as_ref()) {
            defs.insert(SmolStr::new(n));
        }
    }

    /// The operand to use instead of the undefined `v` at source `at`
    /// (opcode and index; `None` for a branch condition), and a `mov` to
    /// insert first if one is needed.
    fn replacement(&mut self, v: &VirtReg, at: Option<(&OpDesc, usize)>, defs: &BTreeSet<SmolStr>) -> Option<(Operand, Option<Inst>)> {
        let size = v.size.or_else(|| self.sizes.get(&v.name).copied()).unwrap_or(1);
        let size_of = |n: &SmolStr| self.sizes.get(n).copied().unwrap_or(1);
        let best = defs.iter().filter(|n| size_of(n) == size).max_by_key(|n| self.rank.get(*n).copied().unwrap_or(0));
        if let Some(n) = best {
            return Some((Operand::Virt(VirtReg { name: n.clone(), size: None }), None));
        }
        let zero = Imm::int(0);
        let imm_ok = match at {
            Some((desc, k)) => imm_ok_at(self.target, desc, k, zero),
            None => size == 1,
        };
        if imm_ok {
            return Some((Operand::Imm(zero), None));
        }
        let mov = self.zero_mov(size)?;
        let name = SmolStr::new(defined(mov.dest.as_ref())?.0);
        Some((Operand::Virt(VirtReg { name, size: None }), Some(mov)))
    }

    /// `%fresh:size = mov 0`, if the target has a plain move that takes an
    /// immediate at that size.
    fn zero_mov(&mut self, size: u8) -> Option<Inst> {
        let t = self.target;
        let desc = t.ops.iter().find(|o| o.sem == Sem::Mov && o.operands == [OperandKind::Value] && o.sizes == Sizes::Uniform)?;
        if size > t.max_alu_size || !t.rules.imm_ok(desc, 0, Imm::int(0)) {
            return None;
        }
        let name = loop {
            let n = schedra_ir::format_smolstr!("_z{}", self.fresh);
            self.fresh += 1;
            if !self.sizes.contains_key(&n) {
                break n;
            }
        };
        self.sizes.insert(name.clone(), size);
        self.rank.insert(name.clone(), usize::MAX);
        let dest = VirtReg { name, size: (size > 1).then_some(size) };
        Some(Inst { opcode: SmolStr::new_static(desc.name), dest: Some(Operand::Virt(dest)), srcs: vec![Operand::Imm(Imm::int(0))], span: Span::default() })
    }
}

/// The virtual register of `op` if it is not in `defs`.
fn undefined(op: &Operand, defs: &BTreeSet<SmolStr>) -> Option<VirtReg> {
    let v = op.virt()?;
    (!defs.contains(&v.name)).then(|| v.clone())
}

/// Whether `imm` may be source `k` of `desc` on `target`.
pub fn imm_ok_at(target: &Target, desc: &OpDesc, k: usize, imm: Imm) -> bool {
    desc.operands.get(k) == Some(&OperandKind::Value) && target.rules.imm_ok(desc, k, imm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    fn prog(text: &str) -> Program {
        parse(text.as_bytes(), None).expect("test program parses")
    }

    #[test]
    fn undefined_use_takes_latest_value_then_immediate() {
        let mut p = prog("target v3d71\ninput %w = $rf1\nb0:\n %b = fmul %a, %w\n tlbw %b\n end\n");
        assert!(repair(&mut p, &BTreeMap::new()));
        assert_eq!(p.blocks[0].insts()[0].srcs[0], Operand::Virt(VirtReg { name: "w".into(), size: None }));
        let mut q = prog("target v3d71\nb0:\n %b = fmul %a, %a\n tlbw %b\n end\n");
        assert!(repair(&mut q, &BTreeMap::new()));
        assert_eq!(q.blocks[0].insts()[0].srcs[0], Operand::Imm(Imm::int(0)));
    }

    #[test]
    fn register_only_operand_gets_a_mov() {
        let mut p = prog("target gen8\nb0:\n %r = math.rcp %a\n %t = mov %r\n end\n");
        let mut hint = BTreeMap::new();
        hint.insert(SmolStr::new_static("a"), 1u8);
        assert!(repair(&mut p, &hint));
        assert_eq!(p.blocks[0].insts().len(), 3);
        assert_eq!(p.blocks[0].insts()[0].opcode, "mov");
    }
}
