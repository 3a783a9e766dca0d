//! A source program with its opcodes and virtual register names resolved
//! once per compile, for the pre-RA scheduler and the allocator's lowering
//! (which otherwise each hashed every opcode and every name again).
//!
//! Every distinct virtual register name gets a number (its *name id*), in
//! order of first occurrence: block by block, within an instruction its
//! sources before its destination; then the branch conditions of the blocks
//! in order; then the `input` lines. Every instruction gets its
//! `&'static OpDesc` (`None` for an opcode the target lacks) and the name id
//! of each operand that is a virtual register.
//!
//! Names spelled as plain decimal numbers (`%0`, `%17`: no sign, no
//! leading zero, below a bound proportional to the program's size), which
//! is how generated and compiler-made programs name their values, are
//! looked up in a dense table indexed by that number; any other name in a
//! hash map. Which of the two holds a name depends only on its text, so a
//! name is always found where it was numbered.
//!
//! Block successors are resolved from the terminators' labels here too
//! ([`Successors`], [`SourceIds::succs`]), once per compile, for the pre-RA
//! live-out and the allocator's lowering.
//!
//! Invariant: `name(id)` is the text of name id `id`, and for every
//! instruction `k` of block `b`, `operand(b, k, j)` is the id of operand `j`
//! (0 the destination, `1 + s` source `s`) exactly when that operand is a
//! virtual register.

use schedra_ir::cfg::Successors;
use rustc_hash::FxHashMap as HashMap;
use schedra_ir::target::OpDesc;
use schedra_ir::{Inst, Operand, Program, TermKind};

/// Operand slot holding no virtual register.
const NONE: u32 = u32::MAX;

/// A program's opcodes and names resolved (see the module doc).
pub struct SourceIds<'p> {
    /// The text of each name id.
    names: Vec<&'p str>,
    /// Each name that is not a dense decimal (see [`SourceIds::dense`]) by
    /// its text.
    by_name: HashMap<&'p str, u32>,
    /// The id of each decimal name by its number ([`NONE`] when the program
    /// has no such name), for numbers below its length: twice the most
    /// names the program can have, so that a program numbering its values
    /// from 0 has them all here.
    by_number: Vec<u32>,
    /// The largest size any block occurrence of each name writes (1 when
    /// none is written): the size the pre-RA scheduler counts.
    sizes: Vec<u32>,
    /// Index of each block's first instruction in `descs` and `starts`.
    block_first: Vec<usize>,
    /// Each instruction's op description (block-major order).
    descs: Vec<Option<&'static OpDesc>>,
    /// Where each instruction's operand ids begin in `operands` (one more
    /// entry than instructions: the last is the end).
    starts: Vec<u32>,
    /// Operand ids: per instruction, the destination then each source.
    operands: Vec<u32>,
    /// Each block's branch condition, if it is a virtual register.
    conds: Vec<Option<u32>>,
    /// Each input's name id, if it names a value.
    inputs: Vec<Option<u32>>,
    /// Each block's successors (labels naming no block left out).
    succs: Successors,
}

impl<'p> SourceIds<'p> {
    /// Resolve every opcode and name of `p`.
    pub fn new(p: &'p Program) -> SourceIds<'p> {
        let ninsts: usize = p.blocks.iter().map(|b| b.insts().len()).sum();
        let mut ids = SourceIds {
            names: Vec::with_capacity(ninsts),
            by_name: HashMap::default(),
            by_number: vec![NONE; 2 * (ninsts + p.inputs.len()) + 64],
            sizes: Vec::with_capacity(ninsts),
            block_first: Vec::with_capacity(p.blocks.len() + 1),
            descs: Vec::with_capacity(ninsts),
            starts: Vec::with_capacity(ninsts + 1),
            operands: Vec::with_capacity(ninsts * 3),
            conds: Vec::with_capacity(p.blocks.len()),
            inputs: Vec::with_capacity(p.inputs.len()),
            succs: Successors::new(p),
        };
        for b in &p.blocks {
            ids.block_first.push(ids.descs.len());
            for i in b.insts() {
                ids.add_inst(p, i);
            }
        }
        ids.block_first.push(ids.descs.len());
        ids.starts.push(ids.operands.len() as u32);
        for b in &p.blocks {
            let cond = match &b.term.kind {
                TermKind::Brnz {
                    cond: Operand::Virt(v),
                    ..
                } => Some(ids.intern(&v.name, v.size)),
                _ => None,
            };
            ids.conds.push(cond);
        }
        for i in &p.inputs {
            let id = i.vreg.as_ref().map(|v| ids.intern(&v.name, None));
            ids.inputs.push(id);
        }
        ids
    }

    /// Resolve instruction `i`. Sizes written on an instruction whose
    /// opcode the target lacks are not counted (the scheduler treats it as
    /// a barrier without operands).
    fn add_inst(&mut self, p: &'p Program, i: &'p Inst) {
        let desc = p.target.op(&i.opcode);
        let size = |s: Option<u8>| s.filter(|_| desc.is_some());
        self.descs.push(desc);
        self.starts.push(self.operands.len() as u32);
        let at = self.operands.len();
        self.operands.push(NONE);
        for o in &i.srcs {
            let id = match o {
                Operand::Virt(v) => self.intern(&v.name, size(v.size)),
                _ => NONE,
            };
            self.operands.push(id);
        }
        if let Some(Operand::Virt(v)) = &i.dest {
            let id = self.intern(&v.name, size(v.size));
            if let Some(slot) = self.operands.get_mut(at) {
                *slot = id;
            }
        }
    }

    /// The id of `name`, numbering it if new; `size` (when written)
    /// raises the name's size.
    fn intern(&mut self, name: &'p str, size: Option<u8>) -> u32 {
        let next = self.names.len() as u32;
        let id = match self.dense(name) {
            Some(n) => self.dense_slot(n, next),
            None => *self.by_name.entry(name).or_insert(next),
        };
        if id == next {
            self.names.push(name);
            self.sizes.push(1);
        }
        if let (Some(s), Some(slot)) = (size, self.sizes.get_mut(id as usize)) {
            *slot = (*slot).max(s as u32);
        }
        id
    }

    /// The number `name` spells when it is a plain decimal (ASCII digits,
    /// no leading zero unless it is `0`) below `by_number`'s length: the
    /// index of its entry there.
    fn dense(&self, name: &str) -> Option<usize> {
        let digits = name.as_bytes();
        if digits.is_empty() || digits.len() > 9 || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        let mut n = 0usize;
        for &c in digits {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + (c - b'0') as usize;
        }
        (n < self.by_number.len()).then_some(n)
    }

    /// The id in `by_number` of decimal name `n` (below its length), set
    /// to `next` if it has none yet.
    fn dense_slot(&mut self, n: usize, next: u32) -> u32 {
        match self.by_number.get_mut(n) {
            Some(slot) if *slot == NONE => {
                *slot = next;
                next
            }
            Some(slot) => *slot,
            None => next,
        }
    }

    /// How many names there are (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The text of name `id` (empty for an unknown id).
    pub fn name(&self, id: u32) -> &'p str {
        self.names.get(id as usize).copied().unwrap_or("")
    }

    /// The id of the name `name`, if the program has it.
    pub fn id_of(&self, name: &str) -> Option<u32> {
        match self.dense(name) {
            Some(n) => self.by_number.get(n).copied().filter(|&id| id != NONE),
            None => self.by_name.get(name).copied(),
        }
    }

    /// The largest size written for name `id` (1 when none is).
    pub fn size(&self, id: u32) -> u32 {
        self.sizes.get(id as usize).copied().unwrap_or(1)
    }

    fn inst_index(&self, b: usize, k: usize) -> Option<usize> {
        let first = *self.block_first.get(b)?;
        let end = *self.block_first.get(b + 1)?;
        (first + k < end).then_some(first + k)
    }

    /// Every opcode and name resolved here, for
    /// [`schedra_ir::validate::validate_resolved`] (the layouts agree:
    /// instructions block by block, per instruction the destination's
    /// name id then each source's, [`NONE`] = `u32::MAX` for no name).
    pub fn resolved(&self) -> schedra_ir::validate::Resolved<'_> {
        schedra_ir::validate::Resolved {
            descs: &self.descs,
            starts: &self.starts,
            operands: &self.operands,
            inputs: &self.inputs,
            conds: &self.conds,
            names: self.names.len(),
        }
    }
    /// The op description of instruction `k` of block `b` (`None` when the
    /// target lacks its opcode or there is no such instruction).
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn desc(&self, b: usize, k: usize) -> Option<&'static OpDesc> {
        self.inst_index(b, k).and_then(|i| self.descs.get(i).copied().flatten())
    }

    /// The name id of operand `j` of instruction `k` of block `b` (`0` the
    /// destination, `1 + s` source `s`), when it is a virtual register.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn operand(&self, b: usize, k: usize, j: usize) -> Option<u32> {
        self.inst(b, k).operand(j)
    }

    /// The name id of instruction `k` of block `b`'s destination, when it
    /// is a virtual register (`operand(b, k, 0)` without the operand range).
    pub fn dest(&self, b: usize, k: usize) -> Option<u32> {
        let at = *self.starts.get(self.inst_index(b, k)?)?;
        self.operands.get(at as usize).copied().filter(|&id| id != NONE)
    }

    /// Instruction `k` of block `b` resolved (empty when there is none).
    pub fn inst(&self, b: usize, k: usize) -> InstIds<'_> {
        let at = self.inst_index(b, k);
        let range = at.and_then(|i| Some(*self.starts.get(i)? as usize..*self.starts.get(i + 1)? as usize));
        InstIds {
            desc: at.and_then(|i| self.descs.get(i).copied().flatten()),
            operands: range.and_then(|r| self.operands.get(r)).unwrap_or(&[]),
        }
    }

    /// The name id of block `b`'s branch condition, if it is a virtual
    /// register.
    pub fn cond(&self, b: usize) -> Option<u32> {
        self.conds.get(b).copied().flatten()
    }

    /// The name id of input `i`, if it names a value.
    pub fn input(&self, i: usize) -> Option<u32> {
        self.inputs.get(i).copied().flatten()
    }

    /// Every block's successors, `Successors::new` of the program.
    pub fn succs(&self) -> &Successors {
        &self.succs
    }
}

/// One instruction's op description and operand name ids.
pub struct InstIds<'a> {
    desc: Option<&'static OpDesc>,
    operands: &'a [u32],
}

impl InstIds<'_> {
    /// The op description (`None` when the target lacks the opcode).
    pub fn desc(&self) -> Option<&'static OpDesc> {
        self.desc
    }
    /// The name id of operand `j` (`0` the destination, `1 + s` source
    /// `s`), when it is a virtual register.
    pub fn operand(&self, j: usize) -> Option<u32> {
        self.operands.get(j).copied().filter(|&id| id != NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_numbered_in_first_occurrence_order_with_operand_slots() {
        let src = "target v3d71\ninput %w = $rf2\nb0:\n %a = fadd %w, 1\n %b:1 = fmul %a, %a\n brnz %b, b1, b1\nb1:\n tlbw %a\n end\n";
        let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parse");
        let ids = SourceIds::new(&p);
        assert_eq!((ids.name(0), ids.name(1), ids.name(2)), ("w", "a", "b"));
        assert_eq!(ids.operand(0, 0, 0), Some(1));
        assert_eq!(ids.operand(0, 0, 1), Some(0));
        assert_eq!(ids.operand(0, 0, 2), None);
        assert_eq!(ids.operand(1, 0, 1), Some(1));
        assert_eq!(ids.cond(0), Some(2));
        assert_eq!(ids.input(0), Some(0));
        assert_eq!(ids.desc(0, 1).map(|d| d.name), Some("fmul"));
        assert!(ids.desc(0, 5).is_none());
        assert_eq!(ids.id_of("b"), Some(2));
    }

    #[test]
    fn decimal_and_other_names_are_told_apart() {
        let src = "target v3d71\ninput %0 = $rf2\nb0:\n %00 = fadd %0, 1\n %7 = fmul %00, %0\n %999999999 = fadd %7, %x\n %x = mov %7\n tlbw %999999999\n end\n";
        let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parse");
        let ids = SourceIds::new(&p);
        assert_eq!((0..ids.len() as u32).map(|i| ids.name(i)).collect::<Vec<_>>(), ["0", "00", "7", "x", "999999999"]);
        for (k, n) in ["0", "00", "7", "x", "999999999"].iter().enumerate() {
            assert_eq!(ids.id_of(n), Some(k as u32));
        }
        assert_eq!((ids.id_of("07"), ids.id_of("8"), ids.id_of("")), (None, None, None));
        assert_eq!(ids.operand(0, 2, 2), Some(3));
    }
}
