//! The machine program decoded once per verification.
//!
//! The fixpoint runs every machine block once per visit of its source
//! block. Looking up each op's description by its opcode string, finding
//! the block by its label and re-deriving destination registers and
//! operand kinds on every visit was a fixed cost per op; [`MachCode`]
//! does it once. Per op it keeps the `&'static OpDesc`, the operands as the
//! simulator reads them, the destination registers, the index operand and
//! where the op sits ([`OpAt`]); ops with an unknown opcode are left out
//! (the simulator skips them).
//!
//! Invariant: running the decoded form is running the program — an
//! operand reads registers exactly when it is a register operand that is
//! not an index operand, an immediate is a value exactly when it is not an
//! index operand, and the destination registers are [`dest_regs`].
//!
//! [`dest_regs`]: crate::symbolic::dest_regs

use schedra_ir::target::opcache::OpCache;
use crate::srccode::Span;
use crate::symbolic::{index_operand, OpAt};
use schedra_ir::target::{Clock, Dest, OpDesc, OperandKind};
use schedra_ir::{Operand, PhysReg, Program, Reg, TermKind};

/// One operand of a machine op, as the simulator reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachArg {
    /// A register operand read at issue (one read per register).
    Regs(PhysReg),
    /// An immediate value.
    Imm(u32),
    /// No value (an index operand, or anything else).
    None,
}

/// One decoded machine op.
#[derive(Clone, Debug)]
pub struct MachOp {
    /// The opcode's description.
    pub desc: &'static OpDesc,
    args: Span,
    /// The registers the op writes (explicit or implicit destination).
    pub dest: Option<PhysReg>,
    /// Register operands, whatever their kind (an interlocked core waits on
    /// them and on `dest`).
    touched: Span,
    /// The index operand (0 when there is none).
    pub idx: u32,
    /// Where the op sits.
    pub at: OpAt,
}

/// When the bundle after a bundle issues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BundleTiming {
    /// Its encoded wait (the next bundle issues `1 + wait` cycles later).
    pub wait: u8,
    /// The level N of a barrier op it holds (`texbar N`): the next bundle
    /// waits until at most N earlier unknown-landing results are in flight.
    pub barrier: Option<u32>,
}

/// The branch condition of a machine block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachCond {
    /// Word 0 of a register.
    Reg(Reg),
    /// An immediate.
    Imm(u32),
}

/// One decoded machine block.
#[derive(Clone, Debug, Default)]
pub struct MachBlock {
    bundles: Span,
    /// Number of bundles.
    pub len: usize,
    /// The terminator's line.
    pub term_line: u32,
    /// The branch condition, for a `brnz` on a register or an immediate.
    pub cond: Option<MachCond>,
}

/// A machine program, decoded (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct MachCode {
    /// Whether a bundle waits (stall cycles) until the registers it
    /// touches have no write in flight, instead of reading old values
    /// ([`stalls`] of the target's clock).
    pub interlocked: bool,
    /// Whether some op of the target has a result that expires (a read
    /// window with a maximum), so reads must be checked against windows.
    pub expiring: bool,
    /// Whether the target encodes its waits (`Clock::EncodedWaits`): its
    /// unknown-landing results land only when a barrier waits for them.
    pub waits: bool,
    /// The earliest an unknown-landing result lands, in cycles after its
    /// issue (the start of `WaitClock::landing`): a barrier holds its next
    /// bundle at least until then for the youngest result it covers.
    pub earliest_landing: u64,
    blocks: Vec<MachBlock>,
    /// Per bundle, its ops.
    bundles: Vec<Span>,
    /// Per bundle, its timing: the encoded wait and, for a bundle holding
    /// a barrier op (`texbar N`), its level N.
    timing: Vec<BundleTiming>,
    ops: Vec<MachOp>,
    args: Vec<MachArg>,
    touched: Vec<PhysReg>,
    /// Every op's description in program order, unknown opcodes included
    /// (`None`), for the rules; per bundle (in program order) its range,
    /// and per block its first bundle.
    descs: Vec<Option<&'static OpDesc>>,
    desc_spans: Vec<Span>,
    first_bundle: Vec<u32>,
}

/// The verifier's reading of a clock (semantics.md "Time in the machine
/// form"): whether a bundle waits for pending writes. Only an interlocked
/// core does; on a padded or encoded-waits core an early read sees the old
/// contents (the machine form carries no `wait N`, so every bundle issues
/// one cycle after the previous one).
pub fn stalls(clock: Clock) -> bool {
    match clock {
        Clock::Interlocked => true,
        Clock::Padded | Clock::EncodedWaits { .. } => false,
    }
}

fn op_line(op_line: u32, bundle_line: u32) -> u32 {
    if op_line != 0 {
        op_line
    } else {
        bundle_line
    }
}

impl MachCode {
    /// Decode every block of `p`.
    pub fn of(p: &Program) -> MachCode {
        let n: usize = p.blocks.iter().flat_map(|b| b.bundles()).map(|x| x.ops.len()).sum();
        let nb: usize = p.blocks.iter().map(|b| b.bundles().len()).sum();
        let mut c = MachCode { interlocked: stalls(p.target.clock), expiring: p.target.ops.iter().any(|d| d.window().max.is_some()), waits: matches!(p.target.clock, Clock::EncodedWaits { .. }), earliest_landing: u64::from(p.target.wait_timing().landing.0.max(1)), blocks: Vec::with_capacity(p.blocks.len()), bundles: Vec::with_capacity(nb), ops: Vec::with_capacity(n), args: Vec::with_capacity(2 * n), touched: Vec::with_capacity(2 * n), ..MachCode::default() };
        c.descs.reserve(n);
        c.desc_spans.reserve(nb);
        let mut ops = OpCache::new(p.target);
        for b in &p.blocks {
            let first = c.bundles.len();
            c.first_bundle.push(first as u32);
            for (bi, bundle) in b.bundles().iter().enumerate() {
                let o0 = c.ops.len();
                let d0 = c.descs.len();
                c.descs.extend(bundle.ops.iter().map(|op| ops.op(&op.inst.opcode)));
                c.desc_spans.push(Span::of(d0, c.descs.len()));
                for (oi, op) in bundle.ops.iter().enumerate() {
                    let Some(desc) = c.descs.get(d0 + oi).copied().flatten() else { continue };
                    let at = OpAt { bundle: bi, op: oi, line: op_line(op.inst.span.line, bundle.span.line), opcode: desc.name };
                    c.push_op(desc, &op.inst, at);
                }
                let barrier = c.ops.get(o0..).unwrap_or(&[]).iter().find(|o| o.desc.sem == schedra_ir::target::Sem::TexBarrier).map(|o| o.idx);
                c.timing.push(BundleTiming { wait: bundle.wait, barrier });
                c.bundles.push(Span::of(o0, c.ops.len()));
            }
            let cond = match &b.term.kind {
                TermKind::Brnz { cond: Operand::Phys(r), .. } => Some(MachCond::Reg(r.base)),
                TermKind::Brnz { cond: Operand::Imm(i), .. } => Some(MachCond::Imm(i.bits)),
                _ => None,
            };
            c.blocks.push(MachBlock { bundles: Span::of(first, c.bundles.len()), len: b.bundles().len(), term_line: b.term.span.line, cond });
        }
        c
    }

    fn push_op(&mut self, desc: &'static OpDesc, inst: &schedra_ir::Inst, at: OpAt) {
        let (a0, t0) = (self.args.len(), self.touched.len());
        for (i, o) in inst.srcs.iter().enumerate() {
            let kind = desc.operands.get(i).copied().unwrap_or(OperandKind::Value);
            self.args.push(match o {
                Operand::Phys(p) if kind != OperandKind::Index => MachArg::Regs(*p),
                Operand::Imm(imm) if kind != OperandKind::Index => MachArg::Imm(imm.bits),
                _ => MachArg::None,
            });
            if let Operand::Phys(p) = o {
                self.touched.push(*p);
            }
        }
        let dest = match desc.dest {
            Dest::Explicit => inst.dest.as_ref().and_then(Operand::phys),
            Dest::Implicit(r) => Some(PhysReg::one(r)),
            Dest::None | Dest::Unit => None,
        };
        let idx = index_operand(inst, desc);
        self.ops.push(MachOp { desc, args: Span::of(a0, self.args.len()), dest, touched: Span::of(t0, self.touched.len()), idx, at });
    }

    /// The descriptions of the ops of bundle `bi` of block `b`, in op
    /// order (`None`: unknown opcode; empty past the program's bundles).
    pub fn bundle_descs(&self, b: usize, bi: usize) -> &[Option<&'static OpDesc>] {
        if self.blocks.get(b).is_none_or(|k| bi >= k.len) {
            return &[];
        }
        let gb = self.first_bundle.get(b).map(|f| *f as usize + bi);
        gb.and_then(|g| self.desc_spans.get(g)).map(|s| s.get(&self.descs)).unwrap_or(&[])
    }

    /// Block `b` (`None` past the last block).
    pub fn block(&self, b: usize) -> Option<&MachBlock> {
        self.blocks.get(b)
    }

    /// The ops of each bundle of a block, in order, as ranges of op
    /// indices (see [`MachCode::ops`]).
    pub fn bundle_ranges<'c>(&'c self, b: &MachBlock) -> impl Iterator<Item = std::ops::Range<usize>> + 'c {
        b.bundles.get(&self.bundles).iter().map(|s| s.range())
    }

    /// The ops of each bundle of a block with the bundle's timing, in
    /// order (the ranges of [`MachCode::bundle_ranges`]).
    pub fn timed_bundles<'c>(&'c self, b: &MachBlock) -> impl Iterator<Item = (std::ops::Range<usize>, BundleTiming)> + 'c {
        let spans = b.bundles.get(&self.bundles).iter().map(|s| s.range());
        let timing = self.timing.get(b.bundles.range()).unwrap_or(&[]).iter().copied().chain(std::iter::repeat(BundleTiming::default()));
        spans.zip(timing)
    }

    /// The ops with indices in `r`.
    pub fn ops(&self, r: std::ops::Range<usize>) -> &[MachOp] {
        self.ops.get(r).unwrap_or(&[])
    }

    /// The op with index `i`.
    pub fn op(&self, i: usize) -> Option<&MachOp> {
        self.ops.get(i)
    }

    /// An op's operands, in order.
    pub fn args(&self, op: &MachOp) -> &[MachArg] {
        op.args.get(&self.args)
    }

    /// The registers an op reads or writes (what an interlocked core waits
    /// on), with repetitions.
    pub fn touched<'c>(&'c self, op: &'c MachOp) -> impl Iterator<Item = Reg> + 'c {
        op.touched.get(&self.touched).iter().chain(&op.dest).flat_map(|p| p.regs())
    }

    /// Number of ops in a block.
    pub fn op_count(&self, b: &MachBlock) -> usize {
        b.bundles.get(&self.bundles).iter().map(|s| s.range().len()).sum()
    }
}
