//! The backend of a bypass-network target (lima-gp): instruction selection
//! into per-block graphs ([`nodes`]), then a scheduler that places ops in
//! units, reads results within their windows and moves or spills values
//! that must outlive them ([`schedule`]), with spill components from
//! [`regs`]. Values cross blocks only in the register components the source
//! names (`$rK.c`); the register a value is spilled to is one the source
//! never names.
//!
//! The target is known only through its description: units, windows,
//! sequences and the opcodes of moves and register accesses come from its
//! [`Network`]; instruction legality from `Rules::placed_ok`.

pub mod nodes;
pub mod regs;
pub mod schedule;

use crate::{CompileError, Compiled, Options, Ra, Stats};
use schedra_ir::target::network::Network;
use schedra_ir::{Form, Operand, Program};

/// Compile a validated source program for a target with network `net`.
pub fn compile(src: &Program, net: &'static Network, opts: &Options) -> Result<Compiled, CompileError> {
    let t = src.target;
    let named = named_regs(src);
    let pool_regs: Vec<u16> = (0..t.regs.count).filter(|r| !named.contains(r)).collect();
    let choice = match opts.ra {
        Ra::Split => regs::Choice::RoundRobin,
        Ra::Graph => regs::Choice::Lowest,
    };
    let mut pool = regs::RegPool::new(pool_regs, choice);
    let mut blocks = Vec::with_capacity(src.blocks.len());
    let mut stats = Stats::default();
    for b in &src.blocks {
        let g = nodes::Graph::of(src, net, b)?;
        let job = schedule::BlockJob { t, net, g: &g, block: b, sched: opts.sched, inject: opts.inject };
        let (mb, c) = schedule::schedule_block(job, &mut pool)?;
        stats.instructions += mb.bundles.len();
        stats.nops += mb.bundles.iter().filter(|x| x.ops.is_empty()).count();
        stats.spills += c.spills;
        stats.fills += c.fills;
        stats.moves += c.moves;
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
        for o in b.insts.iter().flat_map(|i| i.dest.iter().chain(i.srcs.iter())).chain(term) {
            if let Operand::Phys(r) = o {
                v.extend(r.regs());
            }
        }
    }
    v.sort();
    v.dedup();
    v
}
