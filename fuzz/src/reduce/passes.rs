//! The reduction passes and their opportunities.
//!
//! A pass lists *opportunities* on a program (spirv-reduce's word): small,
//! independent edits, each named so that any subset of them can be applied
//! to the program the list was made from ([`apply`]). ddmin
//! ([`super::ddmin`]) then searches for a large subset that keeps the
//! program interesting. After the edits, [`apply`] always drops unreachable
//! blocks and repairs undefined uses, so a candidate is either a complete
//! program or `None`.
//!
//! Invariant: [`Pass::ALL`] is in a fixed order (coarse passes first) and
//! every pass lists its opportunities deterministically, so a reduction is a
//! pure function of its input and its predicate.

use super::cfg::{self, NewTerm};
use super::operands::{self, Site};
use super::{forward, insts, regs, repair, scope};
use schedra_ir::{Operand, PhysReg, Program};
use schedra_ir::SmolStr;
use std::collections::BTreeSet;

/// One edit a pass may make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opp {
    /// Replace block `block`'s terminator.
    Term {
        /// The block's label.
        block: SmolStr,
        /// The new terminator.
        to: NewTerm,
    },
    /// Append the block with this label to its only predecessor.
    Merge(SmolStr),
    /// Remove this empty block, sending its predecessors to its successor.
    Bypass(SmolStr),
    /// Remove instruction `inst` of block `block` (indices).
    Inst {
        /// Block index.
        block: usize,
        /// Instruction index within the block.
        inst: usize,
    },
    /// Replace the operand at `site` by `to`.
    Operand {
        /// Where the operand is.
        site: Site,
        /// What it becomes.
        to: Operand,
    },
    /// Turn instruction `inst` of block `block` into a `mov` of source `src`.
    ToMov {
        /// Block index.
        block: usize,
        /// Instruction index within the block.
        inst: usize,
        /// The source kept.
        src: usize,
    },
    /// Turn this preallocated register run into a virtual register.
    Prealloc(PhysReg),
    /// Remove instruction `inst` of block `block`, its later reads reading
    /// its source `src` instead ([`super::forward`]).
    Forward {
        /// Block index.
        block: usize,
        /// Instruction index within the block.
        inst: usize,
        /// The source its readers read instead.
        src: usize,
    },
    /// Drop the `input` line with this index.
    Input(usize),
    /// Give virtual register `name` the size `to`.
    Shrink {
        /// The register's name.
        name: SmolStr,
        /// Its new size.
        to: u8,
    },
}

/// The passes, run in the order of [`Pass::ALL`] until none makes progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Remove instructions.
    Insts,
    /// Remove instructions, forwarding a source to their readers.
    Forward,
    /// Terminators become `end`.
    TermToEnd,
    /// `brnz` becomes a `jmp` to its non-zero successor.
    BrnzNonzero,
    /// `brnz` becomes a `jmp` to its zero successor.
    BrnzZero,
    /// Merge a block into its only predecessor.
    Merge,
    /// Remove empty forwarding blocks.
    Bypass,
    /// Register reads become the immediate 0.
    ToZero,
    /// Register reads become earlier values.
    ToEarlier,
    /// ALU ops become moves.
    ToMov,
    /// Preallocated registers become virtual.
    Prealloc,
    /// Drop inputs.
    Inputs,
    /// Halve multi-register values.
    Shrink,
}

impl Pass {
    /// Every pass in the order a round runs them.
    pub const ALL: [Pass; 13] = [
        Pass::Insts,
        Pass::Forward,
        Pass::TermToEnd,
        Pass::BrnzNonzero,
        Pass::BrnzZero,
        Pass::Merge,
        Pass::Bypass,
        Pass::ToZero,
        Pass::ToEarlier,
        Pass::ToMov,
        Pass::Prealloc,
        Pass::Inputs,
        Pass::Shrink,
    ];

    /// A short name for progress displays.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Insts => "instructions",
            Pass::Forward => "forward",
            Pass::TermToEnd => "terminators",
            Pass::BrnzNonzero | Pass::BrnzZero => "branches",
            Pass::Merge => "merge-blocks",
            Pass::Bypass => "bypass-blocks",
            Pass::ToZero => "operands-to-zero",
            Pass::ToEarlier => "operands-to-earlier",
            Pass::ToMov => "ops-to-mov",
            Pass::Prealloc => "preallocations",
            Pass::Inputs => "inputs",
            Pass::Shrink => "sizes",
        }
    }

    /// The opportunities of this pass on `p`, deterministically ordered.
    pub fn opportunities(self, p: &Program) -> Vec<Opp> {
        match self {
            Pass::Insts => insts::opportunities(p),
            Pass::Forward => forward::opportunities(p),
            Pass::TermToEnd => cfg::to_end(p),
            Pass::BrnzNonzero => cfg::brnz_to_jmp(p, true),
            Pass::BrnzZero => cfg::brnz_to_jmp(p, false),
            Pass::Merge => cfg::merges(p),
            Pass::Bypass => cfg::bypasses(p),
            Pass::ToZero => operands::to_zero(p),
            Pass::ToEarlier => operands::to_earlier(p),
            Pass::ToMov => operands::to_mov(p),
            Pass::Prealloc => regs::preallocs(p),
            Pass::Inputs => regs::inputs(p),
            Pass::Shrink => regs::shrinks(p),
        }
    }
}

/// Apply `chosen` (opportunities listed on `base`) to a copy of `base`, then
/// drop unreachable blocks and repair undefined uses. `None` when the
/// repair finds no replacement for some use.
pub fn apply(base: &Program, chosen: &[&Opp]) -> Option<Program> {
    let mut p = base.clone();
    let mut dead_insts = BTreeSet::new();
    let mut dead_inputs = BTreeSet::new();
    let forwards: Vec<(usize, usize, usize)> = chosen.iter().filter_map(|o| match o {
        Opp::Forward { block, inst, src } => Some((*block, *inst, *src)),
        _ => None,
    }).collect();
    dead_insts.extend(forward::apply(&mut p, &forwards));
    for o in chosen {
        match o {
            Opp::Operand { site, to } => operands::replace(&mut p, site, to),
            Opp::ToMov { block, inst, src } => operands::make_mov(&mut p, *block, *inst, *src),
            Opp::Prealloc(run) => regs::unpin(&mut p, *run),
            Opp::Shrink { name, to } => regs::shrink(&mut p, name, *to),
            Opp::Inst { block, inst } => {
                dead_insts.insert((*block, *inst));
            }
            Opp::Input(i) => {
                dead_inputs.insert(*i);
            }
            Opp::Term { .. } | Opp::Merge(_) | Opp::Bypass(_) | Opp::Forward { .. } => {}
        }
    }
    insts::remove(&mut p, &dead_insts);
    regs::drop_inputs(&mut p, &dead_inputs);
    for o in chosen {
        match o {
            Opp::Term { block, to } => cfg::set_term(&mut p, block, to),
            Opp::Merge(l) => cfg::merge(&mut p, l),
            Opp::Bypass(l) => cfg::bypass(&mut p, l),
            _ => {}
        }
    }
    cfg::remove_unreachable(&mut p);
    let hint = scope::sizes(base);
    repair::repair(&mut p, &hint).then_some(p)
}
