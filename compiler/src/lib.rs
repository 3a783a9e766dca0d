//! schedra's compiler: a real backend for the targets of `schedra-ir`.
//!
//! [`compile`] runs one pipeline ([`pipeline`]), each stage in its own
//! folder, each returning a value a test can inspect, all sharing one
//! [`Context`] of reusable buffers:
//!
//! 1. validate and resolve (`source_ids`: opcodes and virtual-register
//!    names numbered once, for validation and every later stage);
//! 2. `schedule/` — the pre-RA list scheduler (top-down critical path with
//!    a register-pressure mode, or bottom-up) over the dependency graph of
//!    `depgraph` (RAW, WAR, WAW on virtual and physical registers, implicit
//!    writes, output and memory order): each block's new order;
//! 3. `allocate/` — register allocation on its own form (`ra_ir`):
//!    `liveness`, `interference`, `color` (Chaitin–Briggs), `linear_scan`
//!    (per block, preallocated registers fixed, splitting), `spill`
//!    (spill/fill and rematerialisation), the two modes and the spill loop
//!    in `allocate/mod.rs`: a function whose every location is physical;
//! 4. `bundle/` — `lower` turns the allocated ops into machine ops,
//!    `schedule` list-schedules them into the target's bundles (latencies,
//!    delayed writes), `phys_live` answers which physical registers are
//!    live out of a block (for copy forwarding), the thread end is placed
//!    and `stats` tallies the shader-db statistics; on a target with
//!    encoded waits (kepler) `waits` then inserts the texture barriers and
//!    computes each bundle's `wait` (with `--post peephole`, nouveau's
//!    dual-issue peephole on the allocated order replaces the list
//!    scheduler).
//!
//! A target with a bypass network (lima-gp) has its own integrated
//! scheduler in `network/` in place of stages 2–4. `cfg` (successors, bit
//! sets, the backward fixpoint) and `inline` (short inline lists) serve
//! every stage.
//!
//! The allocated program — a source-form [`Program`] whose operands are
//! all physical registers or immediates, spill code inserted as the
//! target's scratch ops — is the allocation's inspection view
//! ([`pipeline::Allocation::into_allocated`]); the bundler lowers straight
//! from the allocator's form, and [`pipeline::bundle_program`] bundles an
//! allocated program written out by hand.

#![warn(missing_docs)]

pub(crate) mod allocate;
pub(crate) mod bundle;
mod context;
pub(crate) mod depgraph;
pub(crate) mod fault;
pub(crate) mod inline;
pub(crate) mod network;
pub mod pipeline;
pub(crate) mod schedule;
pub(crate) mod source_ids;
pub(crate) mod waits;
#[cfg(test)]
mod test_corpus;

use schedra_ir::Program;

pub use context::Context;
pub use fault::Fault;

/// Direction of the pre-RA list scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sched {
    /// Top-down, critical-path priority, register-pressure mode near the limit.
    #[default]
    TopDown,
    /// Bottom-up.
    BottomUp,
}

/// Register allocation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ra {
    /// Graph colouring for cross-block values, then per-block linear scan with
    /// preallocated registers fixed and live-range splitting (seed 000).
    #[default]
    Split,
    /// Chaitin–Briggs colouring of everything with precoloured nodes.
    Graph,
}

/// The post-RA mode on a target with encoded waits (kepler).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Post {
    /// The post-RA list scheduler forms the pairs; waits and barriers are
    /// computed from the result.
    #[default]
    List,
    /// No list scheduling: the allocated order, with neighbours made
    /// pairable by moving a later op up (nouveau's `PostRADualIssue`
    /// peephole, seed 001); waits and barriers as for `List`.
    Peephole,
}

/// Compiler options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Pre-RA scheduling direction.
    pub sched: Sched,
    /// Allocation mode.
    pub ra: Ra,
    /// A fault to inject, if any.
    pub inject: Option<Fault>,
    /// `--stress-regalloc N` (LLVM's `-stress-regalloc`): allocate from only
    /// the N highest-numbered allocatable registers, to reach spill code with
    /// small programs. Pinned registers are unaffected. When the program
    /// cannot be allocated in N registers, [`compile`] doubles N until it
    /// can (at worst the whole file), so a valid program never fails for it.
    pub stress_regalloc: Option<u16>,
    /// The post-RA mode (only targets with encoded waits have two).
    pub post: Post,
}

impl Options {
    /// Whether `f` is injected.
    pub fn has(&self, f: Fault) -> bool {
        self.inject == Some(f)
    }
}

/// Shader-db style statistics of one compiled shader.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Instructions (bundles on VLIW targets, ops on single-issue ones).
    pub instructions: usize,
    /// Cycles including stalls and nops, along the straight-line issue order.
    pub cycles: usize,
    /// Values spilled (scratch writes).
    pub spills: usize,
    /// Fills (scratch reads).
    pub fills: usize,
    /// Most values live at once.
    pub max_live: usize,
    /// Empty bundles.
    pub nops: usize,
    /// Cycles lost waiting for SFU results.
    pub sfu_stalls: usize,
    /// Values rematerialised instead of spilled.
    pub remats: usize,
    /// Moves inserted to keep values in a bypass network past their read
    /// window (0, and left out of the JSON, on register-file targets).
    #[serde(skip_serializing_if = "is_zero")]
    pub moves: usize,
    /// Issue counts on a target with encoded waits (kepler); `None` on
    /// other targets.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub issue: Option<IssueStats>,
}

/// How the bundles of a program with encoded waits issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct IssueStats {
    /// Bundles issuing one op (nouveau's `inst_issued1`).
    pub issued1: usize,
    /// Dual-issued pairs (`inst_issued2`).
    pub issued2: usize,
    /// Cycles spent in encoded waits and texture barriers (barriers
    /// counted as if every texture result landed at its earliest).
    pub stall_cycles: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Stats {
    /// The shader-db line of cli.md:
    /// `NAME - TARGET shader: 40 inst, 52 cycles, 0 spills, 0 fills, 17 max-live, 3 nops, ...`.
    pub fn shader_db_line(&self, name: &str, target: &str) -> String {
        let line = format!(
            "{name} - {target} shader: {} inst, {} cycles, {} spills, {} fills, {} max-live, {} nops, {} sfu-stalls, {} remats",
            self.instructions, self.cycles, self.spills, self.fills, self.max_live, self.nops, self.sfu_stalls, self.remats
        );
        let line = match self.issue {
            Some(i) => format!("{line}, {} issued1, {} issued2, {} stall-cycles", i.issued1, i.issued2, i.stall_cycles),
            None => line,
        };
        if self.moves > 0 {
            format!("{line}, {} moves", self.moves)
        } else {
            line
        }
    }
}

/// The result of compiling one shader.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The machine-form program.
    pub program: Program,
    /// Its statistics.
    pub stats: Stats,
}

/// Why the compiler could not compile a valid program.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// The input is not a source-form program.
    #[error("expected a source-form program")]
    NotSource,
    /// The program needs something this compiler cannot do (a reason).
    #[error("cannot compile: {0}")]
    Unsupported(String),
    /// Register allocation failed even with spilling (a reason).
    #[error("register allocation failed: {0}")]
    Allocation(String),
}

/// Compile a source-form program: validate → pre-RA scheduling → register
/// allocation (`opts.ra`) → post-RA scheduling and bundling. The result is a
/// machine-form program meant to behave exactly like `src`, with shader-db
/// statistics (the allocator's spills, fills, remats and max-live filled in).
/// Invalid input is reported as [`CompileError::Unsupported`] with the
/// validator's located message; nothing panics.
pub fn compile(src: &Program, opts: &Options) -> Result<Compiled, CompileError> {
    compile_with(&mut Context::new(), src, opts)
}

/// [`compile`] reusing the buffers of `ctx` (see [`Context`]): the same
/// result, with fewer allocations when one context serves many compiles.
pub fn compile_with(ctx: &mut Context, src: &Program, opts: &Options) -> Result<Compiled, CompileError> {
    let source = pipeline::Source::new(src)?;
    source.validate()?;
    if let Some(net) = src.target.network {
        return network::compile(src, net, opts);
    }
    let scheduled = pipeline::schedule(ctx, &source, opts);
    let allocation = pipeline::allocate(&source, &scheduled, opts)?;
    pipeline::bundle(ctx, &source, allocation, opts)
}
