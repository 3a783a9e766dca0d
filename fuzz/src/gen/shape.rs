//! The program's shape: inputs, the pressure burst, structured control flow
//! (if/else diamonds and counted loops, nested), register swaps, and the
//! end of the program (outputs of the values still unused, an optional
//! dead tail op, the final output, `end`).
//!
//! Control flow is built from regions, each a sequence of straight-line ops
//! and nested constructs. Every `brnz` goes to two fresh blocks that have
//! no other predecessor, and every join or loop header is entered only by
//! `jmp`s, so no edge is ever critical. Loops count a locked counter down
//! from a small constant to exactly zero (`sub 1`, or `add -1.0` on targets
//! without integer ops), so every run terminates after at most 4^depth
//! trips.

use super::build::Gen;
use super::features::Features;
use super::scope::{Loc, Scope};
use arbitrary::Result;
use schedra_ir::{Imm, Input, Inst, Operand, PhysReg, Span, TermKind};
use schedra_ir::SmolStr;

impl<'a, 'u> Gen<'a, 'u> {
    /// Bind some of the target's input registers with `input` lines.
    pub(super) fn gen_inputs(&mut self) -> Result<()> {
        if !self.cfg.inputs {
            return Ok(());
        }
        let prof = self.prof;
        for &p in &prof.inputs {
            if (p.size > 1 && !self.cfg.multi_reg) || !self.u.bool() {
                continue;
            }
            let id = self.fresh(p.size);
            let vreg = match self.operand(Loc::Virt(id), true) {
                Operand::Virt(v) => v,
                _ => continue,
            };
            self.inputs.push(Input { vreg: Some(vreg), reg: p, span: Span::default() });
            self.scope.define(Loc::Virt(id), p.size);
            self.features.insert(Features::INPUT);
        }
        Ok(())
    }

    /// Choose the preallocated registers this program uses.
    pub(super) fn gen_pool(&mut self) -> Result<()> {
        if !self.cfg.prealloc {
            return Ok(());
        }
        let inputs = &self.prof.inputs;
        let mut cands: Vec<PhysReg> = self.prof.pool.iter().copied().filter(|p| self.cfg.clobber_inputs || !inputs.iter().any(|i| i.overlaps(*p))).collect();
        for _ in 0..self.cfg.pool_size() {
            if cands.is_empty() {
                break;
            }
            let i = self.pick(cands.len().min(12))?;
            self.pool.push(cands.remove(i));
        }
        Ok(())
    }

    /// Define many values early and lock them, so that they stay live until
    /// the end and force spills; beyond [`burst_read`](super::profile::Profile::burst_read) values they
    /// are out of scope and only output at the block's end.
    pub(super) fn gen_pressure(&mut self) -> Result<()> {
        let n = self.cfg.pressure_values();
        self.in_pressure = true;
        let mut readable = 0;
        for _ in 0..n {
            if let Some(Loc::Virt(id)) = self.op(true)? {
                self.features.insert(Features::PRESSURE);
                match self.scope.get(Loc::Virt(id)) {
                    Some(d) if readable >= self.prof.burst_read => {
                        self.scope.forget(d.loc);
                        self.tail.push((d.loc, d.size));
                    }
                    _ => {
                        self.locked.push(id);
                        readable += 1;
                    }
                }
            }
        }
        self.in_pressure = false;
        Ok(())
    }

    /// A region: straight-line ops and nested constructs until the budget
    /// or the bytes run out, or (below the top level) the region chooses to
    /// stop.
    pub(super) fn region(&mut self, depth: usize) -> Result<()> {
        while !self.exhausted() {
            if depth > 0 && self.chance(8)? {
                break;
            }
            let nest = depth < self.cfg.depth();
            let roll = self.u.percent();
            if roll < 6 && nest && self.cfg.branches {
                self.if_else(depth)?;
            } else if roll < 10 && nest && self.cfg.loops && self.prof.counter.is_some() {
                self.counted_loop(depth)?;
            } else if roll < 13 && self.cfg.swaps && self.pool.len() >= 2 {
                self.swap()?;
            } else {
                self.op(false)?;
            }
        }
        Ok(())
    }

    /// A branch condition: a size-1 value, often passed through the
    /// target's condition op so that both ways are taken.
    fn condition(&mut self) -> Result<Option<Operand>> {
        let Some(v) = self.reg_operand(1)? else { return Ok(None) };
        let src = self.operand(v, false);
        let cond = self.prof.cond;
        match cond {
            Some((op, imm)) if self.chance(70)? => {
                let arg = self.constant(op, 1, imm);
                let id = self.fresh(1);
                let inst = Inst { opcode: SmolStr::new_static(op.name), dest: Some(self.operand(Loc::Virt(id), true)), srcs: vec![src, arg], span: Span::default() };
                self.push(inst);
                self.scope.define(Loc::Virt(id), 1);
                self.scope.used(Loc::Virt(id));
                Ok(Some(self.operand(Loc::Virt(id), false)))
            }
            _ => Ok(Some(src)),
        }
    }

    /// Operand `k` of `op` holding the constant `imm`: the immediate where
    /// the target takes it there, else a value the profile's constant load
    /// makes first.
    fn constant(&mut self, op: &'static schedra_ir::target::OpDesc, k: usize, imm: Imm) -> Operand {
        match self.prof.load {
            Some(load) if !self.t.rules.imm_ok(op, k, imm) => {
                let id = self.fresh(1);
                let word = Operand::Imm(Imm { bits: imm.bits, float: false });
                self.push(Inst { opcode: SmolStr::new_static(load.name), dest: Some(self.operand(Loc::Virt(id), true)), srcs: vec![word], span: Span::default() });
                self.scope.define(Loc::Virt(id), 1);
                self.scope.used(Loc::Virt(id));
                self.operand(Loc::Virt(id), false)
            }
            _ => Operand::Imm(imm),
        }
    }

    /// Before a block ends on a target whose values live in one block: the
    /// values kept live for pressure are output (they end with the block),
    /// and half the time the newest value is carried into a preallocated
    /// register, which later blocks may read.
    fn leave_block(&mut self) -> Result<()> {
        if !self.prof.local_values {
            return Ok(());
        }
        let mut kept: Vec<(Loc, u8)> = self.scope.defs().iter().filter(|d| matches!(d.loc, Loc::Virt(id) if self.locked.contains(&id))).map(|d| (d.loc, d.size)).collect();
        kept.append(&mut self.tail);
        for (loc, size) in kept {
            self.output(loc, size)?;
        }
        let Some(mov) = self.prof.mov else { return Ok(()) };
        if self.pool.is_empty() || !self.chance(50)? {
            return Ok(());
        }
        let Some(v) = self.scope.defs().iter().rev().find(|d| matches!(d.loc, Loc::Virt(_))).copied() else { return Ok(()) };
        let k = self.pick(self.pool.len())?;
        let Some(&p) = self.pool.get(k) else { return Ok(()) };
        if p.size != v.size {
            return Ok(());
        }
        let inst = Inst { opcode: SmolStr::new_static(mov.name), dest: Some(Operand::Phys(p)), srcs: vec![self.operand(v.loc, false)], span: Span::default() };
        self.push(inst);
        self.scope.used(v.loc);
        self.scope.define(Loc::Phys(p), p.size);
        self.features.insert(Features::PREALLOC_WRITE);
        Ok(())
    }

    /// A register for a loop counter on a target whose values live in one
    /// block: the first single register of the profile's pool that this
    /// program never writes otherwise and no enclosing loop counts in.
    fn counter_reg(&self) -> Option<PhysReg> {
        let busy = |p: &PhysReg| self.pool.iter().chain(&self.counters).any(|q| q.overlaps(*p)) || self.inputs.iter().any(|i| i.reg.overlaps(*p));
        self.prof.pool.iter().copied().find(|p| p.size == 1 && !busy(p))
    }

    /// `brnz c, then, else`; both arms jump to a fresh join block. What is
    /// defined after the join is what both arms define.
    fn if_else(&mut self, depth: usize) -> Result<()> {
        let Some(cond) = self.condition()? else { return Ok(()) };
        self.features.insert(Features::BRANCH);
        if depth > 0 {
            self.features.insert(Features::NESTED);
        }
        let (then_l, else_l, join_l) = (self.new_label(), self.new_label(), self.new_label());
        self.leave_block()?;
        self.close(TermKind::Brnz { cond, nonzero: then_l.clone(), zero: else_l.clone() }, then_l);
        let before = self.scope.snapshot();
        self.region(depth + 1)?;
        self.leave_block()?;
        self.close(TermKind::Jmp(join_l.clone()), else_l);
        let after_then: Scope = std::mem::replace(&mut self.scope, before);
        self.region(depth + 1)?;
        self.leave_block()?;
        self.close(TermKind::Jmp(join_l.clone()), join_l);
        self.scope = self.scope.meet(&after_then);
        Ok(())
    }

    /// `c = mov N; jmp head; head: body; c = step c; brnz c, back, exit;
    /// back: jmp head; exit:` with the counter locked in the body.
    fn counted_loop(&mut self, depth: usize) -> Result<()> {
        let Some(counter) = self.prof.counter else { return Ok(()) };
        self.features.insert(Features::LOOP);
        if depth > 0 {
            self.features.insert(Features::NESTED);
        }
        let trips = self.u.u32_in(1, if depth == 0 { 4 } else { 2 });
        // The counter: a locked virtual register, or, where values live in
        // one block, a register of its own.
        let c = if self.prof.local_values {
            match self.counter_reg() {
                Some(p) => Loc::Phys(p),
                None => return Ok(()),
            }
        } else {
            Loc::Virt(self.fresh(1))
        };
        let start = match counter.load {
            Some(_) => Operand::Imm(Imm { bits: counter.start(trips).bits, float: false }),
            None => Operand::Imm(counter.start(trips)),
        };
        let mov = Inst { opcode: SmolStr::new_static(counter.mov.name), dest: Some(self.operand(c, true)), srcs: vec![start], span: Span::default() };
        self.push(mov);
        self.scope.define(c, 1);
        match c {
            Loc::Virt(id) => self.locked.push(id),
            Loc::Phys(p) => self.counters.push(p),
        }
        let (head, back, exit) = (self.new_label(), self.new_label(), self.new_label());
        self.leave_block()?;
        self.close(TermKind::Jmp(head.clone()), head.clone());
        self.region(depth + 1)?;
        let cv = self.operand(c, false);
        let delta = self.constant(counter.step, 1, counter.delta);
        let step = Inst { opcode: SmolStr::new_static(counter.step.name), dest: Some(self.operand(c, true)), srcs: vec![cv.clone(), delta], span: Span::default() };
        self.push(step);
        self.scope.define(c, 1);
        self.scope.used(c);
        self.leave_block()?;
        self.close(TermKind::Brnz { cond: cv, nonzero: back.clone(), zero: exit.clone() }, back);
        self.close(TermKind::Jmp(head), exit);
        match c {
            Loc::Virt(id) => self.locked.retain(|&x| x != id),
            Loc::Phys(p) => self.counters.retain(|&x| x != p),
        }
        Ok(())
    }

    /// Swap two preallocated registers (or an input register and another):
    /// `%t = mov $A; $A = mov $B; $B = mov %t`, or with an input's value
    /// where the register still holds it.
    fn swap(&mut self) -> Result<()> {
        let Some(mov) = self.prof.mov else { return Ok(()) };
        let i = self.pick(self.pool.len())?;
        let j = self.pick(self.pool.len())?;
        let (a, b) = (self.pool[i], self.pool.get(j).copied().unwrap_or(self.pool[0]));
        if a == b || a.size != b.size || a.size > self.t.max_alu_size {
            return Ok(());
        }
        let t = self.t;
        let fits = |p: PhysReg| mov.slots.iter().any(|s| t.rules.slot_ok(mov, s, Some(p)).is_ok());
        if !fits(a) || !fits(b) {
            return Ok(());
        }
        let (Some(va), Some(vb)) = (self.value_of(a), self.value_of(b)) else { return Ok(()) };
        let tmp = self.fresh(a.size);
        let mk = |g: &Gen, d: Loc, s: Loc| Inst { opcode: SmolStr::new_static(mov.name), dest: Some(g.operand(d, true)), srcs: vec![g.operand(s, false)], span: Span::default() };
        let insts = [mk(self, Loc::Virt(tmp), va), mk(self, Loc::Phys(a), vb), mk(self, Loc::Phys(b), Loc::Virt(tmp))];
        for inst in insts {
            self.push(inst);
        }
        self.scope.define(Loc::Virt(tmp), a.size);
        self.scope.define(Loc::Phys(a), a.size);
        self.scope.define(Loc::Phys(b), b.size);
        self.features.insert(Features::SWAP | Features::PREALLOC_WRITE | Features::PREALLOC_READ);
        if self.inputs.iter().any(|x| x.reg.overlaps(a) || x.reg.overlaps(b)) {
            self.features.insert(Features::INPUT_CLOBBER);
        }
        Ok(())
    }

    /// A location holding the value register run `p` holds now: `p` itself
    /// if the program wrote it, or the input bound to it if never written.
    fn value_of(&self, p: PhysReg) -> Option<Loc> {
        if self.scope.get(Loc::Phys(p)).is_some() {
            return Some(Loc::Phys(p));
        }
        let input = self.inputs.iter().find(|i| i.reg == p)?;
        let id: u32 = input.vreg.as_ref()?.name.parse().ok()?;
        self.scope.get(Loc::Virt(id)).map(|d| d.loc)
    }

    /// The end of the program: output the unused and kept values, then
    /// (with `dead_tail`) one op nothing reads, then the final output (if
    /// the target has one), then `end`.
    pub(super) fn finish(&mut self) -> Result<()> {
        let sinks: Vec<(Loc, u8)> = self
            .scope
            .defs()
            .iter()
            .filter(|d| d.uses == 0 || matches!(d.loc, Loc::Virt(id) if self.locked.contains(&id)))
            .map(|d| (d.loc, d.size))
            .collect();
        let mut outputs = 0;
        if !self.prof.outputs.is_empty() {
            for (loc, size) in sinks.iter().copied() {
                outputs += usize::from(self.output(loc, size)?);
            }
            if outputs == 0 {
                if let Some(loc) = self.reg_operand(1)? {
                    self.output(loc, 1)?;
                }
            }
        }
        if self.cfg.dead_tail {
            self.op(true)?;
        }
        if let Some(eot) = self.prof.final_output {
            let payload = self.fold_payload(&sinks)?;
            if let Some(p) = payload {
                let src = self.operand(p, false);
                self.insts.push(Inst { opcode: SmolStr::new_static(eot.name), dest: None, srcs: vec![src], span: Span::default() });
            }
        }
        let next = SmolStr::default();
        self.close(TermKind::End, next);
        Ok(())
    }

    /// Emit an output of the value at `loc` with a non-final output op that
    /// takes its size. Returns whether one was emitted.
    fn output(&mut self, loc: Loc, size: u8) -> Result<bool> {
        let t = self.t;
        let fits = &self.prof.outputs;
        if fits.is_empty() || size > t.max_alu_size {
            return Ok(false);
        }
        let op = fits[self.pick(fits.len())?];
        let mut srcs = Vec::with_capacity(op.operands.len());
        for &k in op.operands {
            srcs.push(match k {
                schedra_ir::target::OperandKind::Index => self.index_imm(op)?,
                _ => self.operand(loc, false),
            });
        }
        self.insts.push(Inst { opcode: SmolStr::new_static(op.name), dest: None, srcs, span: Span::default() });
        self.scope.used(loc);
        Ok(true)
    }

    /// The final output's payload: a send result, or the fold (with the
    /// target's fold op) of the unused values of the chosen size.
    fn fold_payload(&mut self, sinks: &[(Loc, u8)]) -> Result<Option<Loc>> {
        let sizes: Vec<u8> = (1..=self.t.max_value_size).filter(|s| self.scope.defs().iter().any(|d| d.size == *s)).collect();
        if sizes.is_empty() {
            return self.reg_operand(1);
        }
        let size = sizes[self.pick(sizes.len())?];
        let mut vals: Vec<Loc> = sinks.iter().filter(|s| s.1 == size).map(|s| s.0).collect();
        if vals.is_empty() {
            vals = self.scope.of_size(size, |_| true).iter().rev().take(1).map(|d| d.loc).collect();
        }
        let Some(&first) = vals.first() else { return Ok(None) };
        let mut acc = first;
        let fold = match self.prof.fold {
            Some(f) if size <= self.t.max_alu_size => f,
            _ => return Ok(Some(first)),
        };
        if let (Loc::Phys(_), Some(mov)) = (acc, self.prof.mov) {
            let id = self.fresh(size);
            let inst = Inst { opcode: SmolStr::new_static(mov.name), dest: Some(self.operand(Loc::Virt(id), true)), srcs: vec![self.operand(acc, false)], span: Span::default() };
            self.insts.push(inst);
            acc = Loc::Virt(id);
        }
        for &v in &vals[1..] {
            let id = self.fresh(size);
            let inst = Inst { opcode: SmolStr::new_static(fold.name), dest: Some(self.operand(Loc::Virt(id), true)), srcs: vec![self.operand(acc, false), self.operand(v, false)], span: Span::default() };
            self.insts.push(inst);
            self.scope.define(Loc::Virt(id), size);
            acc = Loc::Virt(id);
        }
        Ok(Some(acc))
    }
}
