//! Building a source-form program: blocks, fresh virtual registers, and
//! instructions whose opcodes are found in the target's table by their
//! [`Sem`] (so nothing here names a target's opcode spelling).
//!
//! Invariants: every `brnz` the builder makes ([`Builder::branch`]) goes to
//! two fresh blocks that no other edge enters, so the CFG has no critical
//! edges; an immediate operand is kept only where the target's rules accept
//! it in that position, otherwise it is materialised (`mov` or the target's
//! constant load) once per block.

use schedra_ir::target::{Dest, OperandKind, Sem, Sizes};
use schedra_ir::{Block, Body, Imm, Inst, Operand, SmolStr, Span, Target, TermKind, Terminator, VirtReg};
use std::collections::HashMap;

/// A scalar value: a virtual register or an immediate word.
pub type Val = Operand;

/// A float immediate.
pub fn fimm(x: f32) -> Val {
    Operand::Imm(Imm::f32(x))
}

/// The float an immediate stands for.
pub fn as_f32(v: &Val) -> Option<f32> {
    v.imm().map(|i| f32::from_bits(i.bits))
}

struct Bb {
    label: SmolStr,
    insts: Vec<Inst>,
    term: Option<TermKind>,
}

/// The program under construction.
pub struct Builder {
    /// The target.
    pub target: &'static Target,
    blocks: Vec<Bb>,
    /// The block instructions are appended to.
    pub cur: usize,
    next_vreg: u32,
    consts: HashMap<(usize, u32), Val>,
    loads: HashMap<(usize, u64), Val>,
    /// Instructions inserted at the start of the entry block (outside
    /// inputs loaded on first use), in order.
    prelude: usize,
    /// Span given to new instructions.
    pub span: Span,
}

impl Builder {
    /// A builder with one empty entry block.
    pub fn new(target: &'static Target) -> Builder {
        Builder {
            target,
            blocks: vec![Bb { label: "entry".into(), insts: Vec::new(), term: None }],
            cur: 0,
            next_vreg: 0,
            consts: HashMap::new(),
            loads: HashMap::new(),
            prelude: 0,
            span: Span::default(),
        }
    }

    /// A fresh virtual register.
    pub fn vreg(&mut self) -> VirtReg {
        self.next_vreg += 1;
        VirtReg { name: schedra_ir::format_smolstr!("{}", self.next_vreg), size: None }
    }

    /// A new empty block (not current).
    pub fn block(&mut self) -> usize {
        let n = self.blocks.len();
        self.blocks.push(Bb { label: schedra_ir::format_smolstr!("b{n}"), insts: Vec::new(), term: None });
        n
    }

    fn label(&self, b: usize) -> SmolStr {
        self.blocks[b].label.clone()
    }

    /// End block `b` with `jmp to`.
    pub fn jump(&mut self, b: usize, to: usize) {
        let l = self.label(to);
        self.blocks[b].term = Some(TermKind::Jmp(l));
    }

    /// End the current block with `brnz cond`; returns the fresh (nonzero,
    /// zero) successor blocks.
    pub fn branch(&mut self, cond: Val) -> Result<(usize, usize), String> {
        let cond = self.reg(cond)?;
        let (t, f) = (self.block(), self.block());
        let (lt, lf) = (self.label(t), self.label(f));
        self.blocks[self.cur].term = Some(TermKind::Brnz { cond, nonzero: lt, zero: lf });
        Ok((t, f))
    }

    /// The op with this meaning, if the target has one usable here.
    pub fn op(&self, sem: Sem) -> Option<&'static schedra_ir::OpDesc> {
        self.target.ops.iter().find(|o| o.sem == sem && !o.machine_only && o.dest != Dest::None && o.sizes == Sizes::Uniform)
    }

    /// Whether the target has an ALU op with this meaning.
    pub fn has(&self, sem: Sem) -> bool {
        self.op(sem).is_some()
    }

    fn push(&mut self, b: usize, inst: Inst) {
        self.blocks[b].insts.push(inst);
    }

    /// `v` in a register: immediates are materialised once per block.
    pub fn reg(&mut self, v: Val) -> Result<Val, String> {
        let Operand::Imm(imm) = v else { return Ok(v) };
        if let Some(r) = self.consts.get(&(self.cur, imm.bits)) {
            return Ok(r.clone());
        }
        let mov = self.op(Sem::Mov).ok_or("the target has no move")?;
        let d = self.vreg();
        let inst = if self.target.rules.imm_ok(mov, 0, imm) {
            Inst { opcode: SmolStr::new_static(mov.name), dest: Some(Operand::Virt(d.clone())), srcs: vec![Operand::Imm(imm)], span: self.span }
        } else {
            let c = self.target.ops.iter().find(|o| o.sem == Sem::Const).ok_or("the target cannot load this constant")?;
            Inst { opcode: SmolStr::new_static(c.name), dest: Some(Operand::Virt(d.clone())), srcs: vec![Operand::Imm(Imm::int(imm.bits as i64))], span: self.span }
        };
        self.push(self.cur, inst);
        let r = Operand::Virt(d);
        self.consts.insert((self.cur, imm.bits), r.clone());
        Ok(r)
    }

    /// `d = op args` for the op with meaning `sem`; `Err` if the target has none.
    pub fn emit(&mut self, sem: Sem, args: &[Val]) -> Result<Val, String> {
        let op = self.op(sem).ok_or_else(|| format!("the target has no {sem:?} op"))?;
        let mut srcs = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let keep = match (a, op.operands.get(i)) {
                (Operand::Imm(imm), Some(OperandKind::Value)) => self.target.rules.imm_ok(op, i, *imm),
                _ => false,
            };
            srcs.push(if keep { a.clone() } else { self.reg(a.clone())? });
        }
        let d = self.vreg();
        self.push(self.cur, Inst { opcode: SmolStr::new_static(op.name), dest: Some(Operand::Virt(d.clone())), srcs, span: self.span });
        Ok(Operand::Virt(d))
    }

    /// A fragment discard under condition `cond` (the target's
    /// [`Sem::Discard`] op), the condition materialised where the op takes
    /// no immediate; `Err` if the target describes none.
    pub fn discard(&mut self, cond: Val) -> Result<(), String> {
        let op = self.target.ops.iter().find(|o| o.sem == Sem::Discard && !o.machine_only).ok_or_else(|| {
            format!("`discard` is not supported: target {} describes no operation that discards a fragment", self.target.name)
        })?;
        let keep = match (&cond, op.operands.first()) {
            (Operand::Imm(imm), Some(OperandKind::Value)) => self.target.rules.imm_ok(op, 0, *imm),
            _ => false,
        };
        let src = if keep { cond } else { self.reg(cond)? };
        self.raw(op.name, None, vec![src]);
        Ok(())
    }

    /// An instruction written as given into the current block.
    pub fn raw(&mut self, opcode: &'static str, dest: Option<Operand>, srcs: Vec<Operand>) {
        let span = self.span;
        self.push(self.cur, Inst { opcode: SmolStr::new_static(opcode), dest, srcs, span });
    }

    /// `d = mov v` appended to block `b` (before its terminator).
    pub fn mov_into(&mut self, b: usize, d: &VirtReg, v: Val) -> Result<(), String> {
        let save = self.cur;
        self.cur = b;
        let r = self.move_to(Operand::Virt(d.clone()), v);
        self.cur = save;
        r
    }

    /// `dest = mov v` in the current block (dest may be physical).
    pub fn move_to(&mut self, dest: Operand, v: Val) -> Result<(), String> {
        let mov = self.op(Sem::Mov).ok_or("the target has no move")?;
        let src = match &v {
            Operand::Imm(i) if self.target.rules.imm_ok(mov, 0, *i) => v,
            _ => self.reg(v)?,
        };
        self.raw(mov.name, Some(dest), vec![src]);
        Ok(())
    }

    /// `d = op N` inserted at the start of the entry block, after earlier
    /// such loads: an outside input fetched once for the whole program.
    pub fn prelude_load(&mut self, opcode: &'static str, index: u32) -> Val {
        let d = self.vreg();
        let inst = Inst { opcode: SmolStr::new_static(opcode), dest: Some(Operand::Virt(d.clone())), srcs: vec![Operand::Imm(Imm::int(index as i64))], span: self.span };
        self.blocks[0].insts.insert(self.prelude, inst);
        self.prelude += 1;
        Operand::Virt(d)
    }

    /// Instructions so far.
    pub fn inst_count(&self) -> usize {
        self.blocks.iter().map(|b| b.insts.len()).sum()
    }

    /// `d = op N` in the current block, once per block: an outside input
    /// read where it is used (it is a pure function of N).
    pub fn load_here(&mut self, opcode: &'static str, index: u32) -> Val {
        let key = (self.cur, index as u64 | (opcode.as_ptr() as u64) << 32);
        if let Some(v) = self.loads.get(&key) {
            return v.clone();
        }
        let d = self.vreg();
        let span = self.span;
        self.push(self.cur, Inst { opcode: SmolStr::new_static(opcode), dest: Some(Operand::Virt(d.clone())), srcs: vec![Operand::Imm(Imm::int(index as i64))], span });
        let v = Operand::Virt(d);
        self.loads.insert(key, v.clone());
        v
    }

    /// The finished blocks; the current block ends with `end`.
    pub fn finish(mut self) -> Vec<Block> {
        let cur = self.cur;
        self.blocks[cur].term = Some(TermKind::End);
        self.blocks
            .into_iter()
            .map(|b| Block {
                label: b.label,
                body: Body::Source(b.insts),
                term: Terminator { kind: b.term.unwrap_or(TermKind::End), span: Span::default() },
                span: Span::default(),
            })
            .collect()
    }
}
