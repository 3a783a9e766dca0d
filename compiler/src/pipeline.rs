//! The compiler's one pipeline: a source program → [`schedule`] →
//! [`allocate`] → [`bundle`], each stage a function from the previous
//! stage's value to its own, sharing one [`Context`] for buffer reuse.
//!
//! - [`Source`]: the source program with its opcodes and virtual-register
//!   names resolved once ([`Source::validate`] checks it against the
//!   format's rules).
//! - [`Scheduled`]: the pre-RA scheduler's order of each block's
//!   instructions (a permutation per block); [`Scheduled::program`] is the
//!   reordered program.
//! - [`Allocation`]: the allocator's function, every location physical,
//!   with its spill, fill and rematerialisation counts;
//!   [`Allocation::into_allocated`] is the allocated program.
//! - [`Compiled`]: the machine program and its statistics.
//!
//! [`crate::compile_with`] runs exactly these stages (a target with a
//! bypass network has its own integrated scheduler instead). No stage
//! builds the inspection programs unless asked: the scheduler's order goes
//! straight into the allocator's form, and the bundler lowers straight from
//! the allocator's form.
//!
//! [`bundle_program`] is the bundler applied to an allocated program
//! written out as a [`Program`] (every operand physical), for inputs that
//! did not come from the allocator.

use crate::allocate as allocator;
use crate::source_ids::SourceIds;
use crate::{bundle as bundler, schedule as scheduler, CompileError, Compiled, Context, Options};
use schedra_ir::{Body, Form, Inst, Program};

pub use crate::bundle::Hints;
pub use crate::allocate::{Allocated, Allocation};

/// A source-form program with its opcodes and names resolved once, the
/// input of every stage.
pub struct Source<'p> {
    program: &'p Program,
    ids: SourceIds<'p>,
}

impl<'p> Source<'p> {
    /// Resolve `p`; fails with [`CompileError::NotSource`] on a machine-form
    /// program. Does not validate (see [`Source::validate`]).
    pub fn new(p: &'p Program) -> Result<Source<'p>, CompileError> {
        if p.form != Form::Source {
            return Err(CompileError::NotSource);
        }
        Ok(Source { program: p, ids: SourceIds::new(p) })
    }

    /// Whether the program is valid (the format's rules, with the names as
    /// resolved here); else [`CompileError::Unsupported`] with the
    /// validator's located message.
    pub fn validate(&self) -> Result<(), CompileError> {
        schedra_ir::validate::validate_resolved(self.program, self.ids.resolved())
            .map_err(|e| CompileError::Unsupported(format!("invalid program: {e}")))
    }

    /// The program.
    pub fn program(&self) -> &'p Program {
        self.program
    }
}

/// The pre-RA scheduler's result: the new order of each block's
/// instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    orders: Vec<Vec<usize>>,
}

impl Scheduled {
    /// Block `b`'s instructions in their new order, as indices into the
    /// block's `insts` (a permutation), for every block.
    pub fn orders(&self) -> &[Vec<usize>] {
        &self.orders
    }

    /// The source program of `src` (the one this schedule was made for) with
    /// each block's instructions in their new order: the same meaning.
    pub fn program(&self, src: &Source) -> Program {
        let mut out = src.program.clone();
        for (b, order) in out.blocks.iter_mut().zip(&self.orders) {
            let old = b.take_insts();
            let mut slots: Vec<Option<Inst>> = old.into_iter().map(Some).collect();
            b.body = Body::Source(order.iter().filter_map(|&i| slots.get_mut(i).and_then(Option::take)).collect());
        }
        out
    }
}

/// Stage 1, the pre-RA list scheduler (`opts.sched`): each block's new
/// order. Never changes meaning.
pub fn schedule(ctx: &mut Context, src: &Source, opts: &Options) -> Scheduled {
    Scheduled { orders: scheduler::block_orders_with(&mut ctx.schedule, src.program, &src.ids, opts) }
}

/// Stage 2, register allocation (`opts.ra`) of `src` in the order `s`.
/// Under `opts.stress_regalloc = Some(n)` a failure is retried with 2n
/// registers, and finally without the limit, whose result (success or the
/// real error) is returned.
pub fn allocate(src: &Source, s: &Scheduled, opts: &Options) -> Result<Allocation, CompileError> {
    let (p, ids, orders) = (src.program, &src.ids, Some(&s.orders[..]));
    let mut o = *opts;
    while let Some(n) = o.stress_regalloc {
        match allocator::allocate_func(p, ids, orders, &o) {
            Ok(a) => return Ok(a),
            Err(_) => {
                let more = n.checked_mul(2);
                o.stress_regalloc = more.filter(|&m| m < p.target.regs.count);
            }
        }
    }
    allocator::allocate_func(p, ids, orders, &o)
}

/// Stage 3, post-RA scheduling and bundling of the allocation `a` of
/// `src`: the machine program, with the allocator's spills, fills, remats
/// and max-live in its statistics.
pub fn bundle(ctx: &mut Context, src: &Source, a: Allocation, opts: &Options) -> Result<Compiled, CompileError> {
    let hints = Hints::from_source(src.program);
    let (program, mut stats) = bundler::bundle_allocated(&mut ctx.bundle, a.func, opts, &hints)?;
    stats.spills = a.spills;
    stats.fills = a.fills;
    stats.remats = a.remats;
    stats.max_live = a.max_live;
    Ok(Compiled { program, stats })
}

/// The bundler of [`bundle`] applied to an allocated program `alloc` (source
/// form, every operand physical), with the source's preallocated registers
/// in `hints`: the machine program and its statistics (spills and fills as
/// scratch writes and reads).
pub fn bundle_program(alloc: &Program, opts: &Options, hints: &Hints) -> Result<(Program, crate::Stats), CompileError> {
    bundler::bundle_program_resolved(alloc.clone(), &[], opts, hints)
}
