//! A bypass network as data: the description of a target whose ALU results
//! are not written to registers but read from the unit that made them, a
//! bounded number of instructions later (lima-gp, the Mali-400 geometry
//! processor). Registers exist beside it, reached through register loads and
//! stores.
//!
//! Model (the contract's `semantics.md`, "Bypass network"): each machine
//! instruction is one bundle; a unit that issues an op at instruction `p`
//! holds its result for reads at instructions `c` with
//! `window.min <= c - p <= window.max`, named by the reader as
//! `^unit.(c - p)`. Nothing is read across a block boundary. A register store
//! issued at instruction `s` is seen by register loads from `s +
//! store_load_latency` on.
//!
//! Invariant: every name in the tables is a slot of the target; every unit
//! that holds a result has a window; windows are given per unit, with
//! per-opcode overrides ([`Network::op_windows`]). Compiler, verifier and
//! interpreters read these tables and never a target's name.

/// Distances (consumer instruction − producer instruction) at which a
/// result can be read: `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadWindow {
    /// Smallest distance.
    pub min: u32,
    /// Largest distance.
    pub max: u32,
}

impl ReadWindow {
    /// Whether a read at distance `d` is inside the window.
    pub fn contains(self, d: u32) -> bool {
        self.min <= d && d <= self.max
    }
}

/// What a unit of one instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// An ALU unit: its result is read through the network.
    Alu,
    /// A load sub-slot: one component of a vector load unit; its result is
    /// read through the network.
    Load,
    /// A store sub-slot: one component of a vector store unit; it reads a
    /// result of its own instruction and makes none.
    Store,
}

/// One unit (slot) of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Unit {
    /// The slot name (`add0`, `reg0.x`, `st.z`).
    pub name: &'static str,
    /// What it does.
    pub kind: UnitKind,
    /// When its results can be read (unused for stores).
    pub window: ReadWindow,
    /// The vector unit a load or store sub-slot belongs to (`reg0`, `st.xy`):
    /// the sub-slots of one group share one index and one kind of access per
    /// instruction. An ALU unit is its own group.
    pub group: &'static str,
    /// The component (0 = x … 3 = w) of a load or store sub-slot.
    pub component: u8,
}

/// An operand position that cannot read a given unit (the hardware reuses
/// that source code for another meaning there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ForbiddenRead {
    /// The unit that cannot be read.
    pub unit: &'static str,
    /// The reading op, or `None` for any op issued in `in_units`.
    pub op: Option<&'static str>,
    /// Units the rule applies to when `op` is `None`.
    pub in_units: &'static [&'static str],
    /// The operand index.
    pub operand: usize,
    /// Why, for messages.
    pub why: &'static str,
}

/// A function computed by a complex sequence, and the ops the sequence is
/// made of: `complex1(imp(x'), complex2(x'), x')` where `x' = pre(x)` when
/// there is a `pre` op, and `post(...)` applied to the result when there is
/// a `post` op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sequence {
    /// The source-form op the sequence implements (`rcp`).
    pub source: &'static str,
    /// The op preparing x, if any (`preexp2`).
    pub pre: Option<&'static str>,
    /// The complex-unit op (`rcp_impl`).
    pub imp: &'static str,
    /// The second part (`complex2`).
    pub second: &'static str,
    /// The join (`complex1`).
    pub join: &'static str,
    /// The op finishing the result, if any (`postlog2`).
    pub post: Option<&'static str>,
}

/// A bypass network (see the module docs).
#[derive(Debug)]
pub struct Network {
    /// Every unit of an instruction, ALU units first in issue order.
    pub units: &'static [Unit],
    /// Opcodes whose results have their own window wherever they issue
    /// (lima-gp `complex1`: exactly 2).
    pub op_windows: &'static [(&'static str, ReadWindow)],
    /// Opcodes whose result a store cannot read directly (a move must come
    /// between), besides every load.
    pub unstorable: &'static [&'static str],
    /// Operand positions that cannot read a given unit.
    pub forbidden_reads: &'static [ForbiddenRead],
    /// The complex sequences.
    pub sequences: &'static [Sequence],
    /// Opcodes that must be placed as early as the rules allow: in the
    /// instruction right before their `join` (Mesa's `schedule_first`).
    pub schedule_first: &'static [&'static str],
    /// Instructions from a register store until a register load of the same
    /// component sees it.
    pub store_load_latency: u32,
    /// Most instructions in a program.
    pub max_instructions: usize,
    /// Most results that can be reachable in the network at once (lima-gp:
    /// 6 units one back + 5 two back = 11).
    pub value_regs: usize,
    /// The opcode that copies a value from unit to unit (`mov`).
    pub mov: &'static str,
    /// The register load and store opcodes (`ld_reg`, `st_reg`).
    pub ld_reg: &'static str,
    /// See [`Network::ld_reg`].
    pub st_reg: &'static str,
}

impl Network {
    /// The unit named `name`.
    pub fn unit(&self, name: &str) -> Option<&'static Unit> {
        self.units.iter().find(|u| u.name == name)
    }
    /// The window of a result of `op` issued in `unit`.
    pub fn window(&self, unit: &Unit, op: &str) -> ReadWindow {
        self.op_windows.iter().find(|(o, _)| *o == op).map_or(unit.window, |(_, w)| *w)
    }
    /// Whether a store can read the result of `op` issued in `unit`
    /// directly.
    pub fn storable(&self, unit: &Unit, op: &str) -> bool {
        unit.kind == UnitKind::Alu && !self.unstorable.contains(&op)
    }
    /// The rule forbidding operand `operand` of `op` issued in `in_unit` to
    /// read `unit`, if there is one.
    pub fn forbidden(&self, op: &str, in_unit: &str, operand: usize, unit: &str) -> Option<&'static ForbiddenRead> {
        self.forbidden_reads.iter().find(|f| {
            f.unit == unit && f.operand == operand && f.op.map_or(f.in_units.contains(&in_unit), |o| o == op)
        })
    }
    /// The sequence whose source op is `op`.
    pub fn sequence(&self, op: &str) -> Option<&'static Sequence> {
        self.sequences.iter().find(|s| s.source == op)
    }
    /// The ALU units, in issue order.
    pub fn alu_units(&self) -> impl Iterator<Item = &'static Unit> {
        self.units.iter().filter(|u| u.kind == UnitKind::Alu)
    }
}
