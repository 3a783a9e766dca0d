//! The backend of a bypass-network target (lima-gp): instruction selection
//! into per-block graphs ([`nodes`]), then a scheduler that places ops in
//! units, reads results within their windows and moves or spills values
//! that must outlive them ([`schedule`]), with spill components from
//! [`regs`]. Values cross blocks in register components: those the source
//! names (`$rK.c`), and those [`cross`] colours virtual registers into; a
//! value is spilled to a component the source never names, outside the
//! ranges where a cross-block value occupies it.
//!
//! The target is known only through its description: units, windows,
//! sequences and the opcodes of moves and register accesses come from its
//! [`Network`]; instruction legality from `Rules::placed_ok`.

pub mod cross;
pub mod nodes;
pub mod regs;
pub mod schedule;

use crate::{CompileError, Compiled, Options, Ra, Stats};
use schedra_ir::target::network::Network;
use schedra_ir::{Form, Operand, Program};

/// Compile a validated source program for a target with network `net`.
///
/// The two levels of register allocation (seed 000): [`cross`] colours the
/// virtual registers that cross blocks into register components and names
/// them so; then each block is scheduled, its values allocated in the
/// network while it is scheduled and spilled to components [`regs`] hands
/// out. Under `--ra split` a block may spill to a cross-block component
/// outside the ranges where the block needs it; under `--ra graph` every
/// component a cross-block value takes is closed to spills program-wide.
pub fn compile(src: &Program, net: &'static Network, opts: &Options) -> Result<Compiled, CompileError> {
    let t = src.target;
    let named = named_regs(src);
    let free: Vec<u16> = (0..t.regs.count).filter(|r| !named.contains(r)).collect();
    let choice = match opts.ra {
        Ra::Split => regs::Choice::RoundRobin,
        Ra::Graph => regs::Choice::Lowest,
    };
    let assignment = cross::Assignment::of(src, &free, regs::Choice::Lowest)?;
    let rewritten = assignment.rewrite(src)?;
    let pool_regs: Vec<u16> = match opts.ra {
        Ra::Split => free,
        Ra::Graph => free.into_iter().filter(|r| !assignment.colour.values().any(|c| c == r)).collect(),
    };
    let mut pool = regs::RegPool::new(pool_regs, choice);
    let mut blocks = Vec::with_capacity(rewritten.blocks.len());
    let mut stats = Stats::default();
    for (k, b) in rewritten.blocks.iter().enumerate() {
        let g = nodes::Graph::of(&rewritten, net, b)?;
        let pre = match opts.ra {
            Ra::Split => assignment.block_ranges(src, k).into_iter().map(|(r, occ)| regs::Prealloc::in_graph(&g, net, r, occ)).collect(),
            Ra::Graph => Vec::new(),
        };
        pool.set_block(pre);
        let job = schedule::BlockJob { t, net, g: &g, block: b, sched: opts.sched, inject: opts.inject };
        let (mb, c) = schedule::schedule_block(job, &mut pool)?;
        stats.instructions += mb.bundles().len();
        stats.nops += mb.bundles().iter().filter(|x| x.ops.is_empty()).count();
        stats.spills += c.spills;
        stats.fills += c.fills;
        stats.moves += c.moves;
        stats.remats += c.remats;
        stats.max_live = stats.max_live.max(c.max_live);
        blocks.push(mb);
    }
    if stats.instructions > net.max_instructions {
        return Err(CompileError::Allocation(format!("{} instructions, more than the {} the target runs", stats.instructions, net.max_instructions)));
    }
    stats.cycles = stats.instructions;
    let inputs = src.inputs.iter().map(|i| schedra_ir::Input { vreg: None, reg: i.reg, span: schedra_ir::Span::default() }).collect();
    let program = Program { name: src.name.clone(), target: t, stage: src.stage, form: Form::Machine, inputs, blocks };
    Ok(Compiled { program, stats })
}

/// Every register component the source program names.
fn named_regs(p: &Program) -> Vec<u16> {
    let mut v: Vec<u16> = p.inputs.iter().flat_map(|i| i.reg.regs()).collect();
    for b in &p.blocks {
        let term = match &b.term.kind {
            schedra_ir::TermKind::Brnz { cond, .. } => Some(cond),
            _ => None,
        };
        for o in b.insts().iter().flat_map(|i| i.dest.iter().chain(i.srcs.iter())).chain(term) {
            if let Operand::Phys(r) = o {
                v.extend(r.regs());
            }
        }
    }
    v.sort();
    v.dedup();
    v
}
