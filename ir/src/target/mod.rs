//! Target descriptions: each GPU core is data (register file, slots, an
//! opcode table with latencies and read windows, implicit and delayed
//! writes, reserved, payload and input registers, operand-overlap rules, the
//! machine [`Clock`], how a program ends) plus a small [`Rules`] module for
//! what does not fit a table (immediates, r600 read ports and channels,
//! gen8's r127 and end-of-thread payload rules, v3d71's thread-end slots).
//!
//! The compiler schedules and allocates *for* a description; the verifier
//! checks *against* it with its own code; the interpreters execute by the
//! [`Sem`] of each opcode. Generic code reads these fields and asks the
//! rules; it never matches a target's name or an opcode's spelling. A target
//! whose clock and register file work like the existing ones is a module
//! here and a line in [`all`]; one with a new kind of clock or a bypass
//! network instead of a register file also needs the scheduler, verifier and
//! interpreter work that docs/targets.md describes.

use crate::ir::{Imm, Inst, PhysReg, Reg, Stage};

pub mod abi;
pub use clock::{Clock, ReadWindow};

mod clock;
pub mod gen8;
pub mod kepler;
pub mod lima_gp;
pub mod network;
pub mod opcache;
mod optable;
pub mod r600;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod v3d71;

/// Every target schedra knows, in a stable order.
pub fn all() -> &'static [&'static Target] {
    static ALL: [&Target; 5] = [&v3d71::V3D71, &gen8::GEN8, &r600::R600, &kepler::KEPLER, &lima_gp::LIMA_GP];
    &ALL
}

/// The targets the program generator builds programs for, in [`all`]'s
/// order: every target (a bypass-network target's constants are loaded
/// and its cross-block values live in registers; the generator reads both
/// from the description).
pub fn generated() -> &'static [&'static Target] {
    static GENERATED: [&Target; 5] = [&v3d71::V3D71, &gen8::GEN8, &r600::R600, &kepler::KEPLER, &lima_gp::LIMA_GP];
    &GENERATED
}

/// The target with this name (`v3d71`, `gen8`, `r600`, `kepler`, `lima-gp`).
pub fn by_name(name: &str) -> Option<&'static Target> {
    all().iter().copied().find(|t| t.name == name)
}

/// How registers are named in the text format.
#[derive(Clone, Copy, Debug)]
pub enum RegNaming {
    /// `prefix` + decimal index: `rf0`..`rf63`, `g0`..`g127`.
    Numbered(&'static str),
    /// `prefix` + GPR index + `.` + channel: `R0.x`..`R127.w`; register
    /// index = gpr * channels.len() + channel.
    Channels(&'static str, &'static [&'static str]),
}

/// A register file.
#[derive(Clone, Copy, Debug)]
pub struct RegFile {
    /// How registers are spelled.
    pub naming: RegNaming,
    /// Number of registers (channels count separately on r600).
    pub count: u16,
}

impl RegFile {
    /// The name of register `r` without `$` (also for out-of-range indices).
    pub fn name(&self, r: Reg) -> String {
        match self.naming {
            RegNaming::Numbered(p) => format!("{p}{r}"),
            RegNaming::Channels(p, ch) => {
                // cannot fail: every channel-named file has channels (n > 0),
                // and r % n < n indexes one of them.
                let n = ch.len() as u16;
                format!("{p}{}.{}", r / n, ch[(r % n) as usize])
            }
        }
    }
    /// Parse a register name (without `$`). Returns `None` when the name does
    /// not follow the file's naming pattern; an index at or past `count` that
    /// follows the pattern is returned (and is out of range).
    pub fn parse(&self, s: &str) -> Option<Reg> {
        let digits = |d: &str| -> Option<u32> {
            if d.is_empty() || d.len() > 5 || !d.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            d.parse::<u32>().ok()
        };
        match self.naming {
            RegNaming::Numbered(p) => {
                let n = digits(s.strip_prefix(p)?)?;
                Reg::try_from(n).ok()
            }
            RegNaming::Channels(p, ch) => {
                let rest = s.strip_prefix(p)?;
                let (g, c) = rest.split_once('.')?;
                let g = digits(g)?;
                let c = ch.iter().position(|x| *x == c)? as u32;
                Reg::try_from(g * ch.len() as u32 + c).ok()
            }
        }
    }
    /// Whether `r` exists in this file.
    pub fn contains(&self, r: PhysReg) -> bool {
        r.size >= 1 && (r.base as u32 + r.size as u32) <= self.count as u32
    }
}

/// What an opcode computes. The interpreters and the verifier give each of
/// these their own meaning (see `shared/spec/semantics.md`): integer ops are
/// exact 32-bit two's complement, float ops act on IEEE-754 single words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sem {
    /// float a + b
    FAdd,
    /// float a - b
    FSub,
    /// float a * b
    FMul,
    /// float min(a, b)
    FMin,
    /// float max(a, b)
    FMax,
    /// float a * b + c
    FMad,
    /// integer a + b (wrapping)
    Add,
    /// integer a - b (wrapping)
    Sub,
    /// (a & 0xffffff) * (b & 0xffffff), low 32 bits
    UMul24,
    /// a * b, low 32 bits (wrapping)
    Mul,
    /// a & b
    And,
    /// a | b
    Or,
    /// a ^ b
    Xor,
    /// a << (b & 31)
    Shl,
    /// a >> (b & 31), logical
    Shr,
    /// copy a
    Mov,
    /// float 1 / a
    Recip,
    /// float 1 / sqrt(a)
    Rsqrt,
    /// float 2^a
    Exp2,
    /// float log2(a)
    Log2,
    /// float sin(a)
    Sin,
    /// float cos(a)
    Cos,
    /// float floor(a)
    Floor,
    /// float sign(a): 1.0, -1.0 or 0.0 (and 0.0 for NaN)
    Sign,
    /// float -a (the sign bit flipped)
    Neg,
    /// 1.0 if a >= b, else 0.0 (float compare; 0.0 when either is NaN)
    Ge,
    /// 1.0 if a < b, else 0.0 (float compare; 0.0 when either is NaN)
    Lt,
    /// a if c != 0.0 else b, written `select c, a, b`
    Select,
    /// The first part of a complex sequence for `Cx`: an intermediate word
    /// that only [`Sem::Complex1`] can use (see `lima_gp` for the model).
    ComplexImpl(Cx),
    /// The complex sequence's second part (`complex2 x`).
    Complex2,
    /// The complex sequence's join: `complex1 impl, c2, x` yields the
    /// function of x only when `impl` and `c2` were made from that x.
    Complex1,
    /// exp2's preparation of x before its complex sequence.
    PreExp2,
    /// log2's finish after its complex sequence.
    PostLog2,
    /// the uniform whose index is the op's index operand (outside input)
    Uniform,
    /// the constant word given as the op's index operand
    Const,
    /// the varying whose index is the op's index operand (outside input)
    Varying,
    /// texture sample: a function of the coordinate words (outside input),
    /// one word per destination register
    Texture,
    /// read the scratch slot at the op's offset operand (one word per
    /// destination register, consecutive slots)
    ScratchRead,
    /// write the value operand to scratch slots from the offset operand
    ScratchWrite,
    /// an effect on an output channel: the channel's name, and whether the
    /// op's first (index) operand is appended (`export 3` → channel
    /// `export 3`). The remaining register operand's words are the effect.
    Output(&'static str, bool),
    /// thread switch (no dataflow meaning; v3d71 end-of-program marker)
    ThreadSwitch,
    /// a coordinate write to a texture unit (v3d71 `tmut`): the words of
    /// the op's value operand are latched, in order, for the unit's next
    /// lookup
    TexCoord,
    /// the coordinate write that starts a lookup (v3d71 `tmus`): the
    /// lookup's coordinates are the op's value words followed by the
    /// latched ones (which it clears); its texel is [`TEXEL_WORDS`] words,
    /// word k being [`Sem::Texture`]'s word k of those coordinates,
    /// readable from `latency` cycles after issue. Lookups return first in,
    /// first out; every lookup's words are read in the block that starts
    /// it, which ends with no coordinate latched
    TexLookup,
    /// the next word of the oldest lookup of the texture unit (v3d71
    /// `ldtmu`), written to the op's destination
    TexResult,
    /// texture barrier: the next bundle waits until at most N (the op's
    /// index operand) of the unknown-landing ops issued before it are still
    /// in flight (kepler `texbar`); no dataflow meaning
    TexBarrier,
    /// a conditional fragment kill (v3d71 `setmsf.ifnz`, gen8 `halt.nz`,
    /// r600 `killne_int`, kepler `kil.nz`): the fragment is discarded when
    /// a word of the op's value operand (its condition, one word per lane)
    /// is non-zero. It is an ordered effect on the channel
    /// [`DISCARD_CHANNEL`] carrying the condition's words followed by one
    /// more, its place: the number of [`Sem::Output`] effects the thread
    /// made before it. So a discard that is dropped, duplicated, given
    /// another condition or moved across an output is a different run. It
    /// exists only in the fragment stage (the validator rejects it
    /// elsewhere) and has no result.
    Discard,
}

/// The channel a [`Sem::Discard`] records its effect on (no output op of
/// any target uses this name).
pub const DISCARD_CHANNEL: &str = "discard";

/// Words of one texel: what a [`Sem::TexLookup`] returns, one per
/// [`Sem::TexResult`].
pub const TEXEL_WORDS: u32 = 4;

/// The function a complex sequence computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cx {
    /// 1 / x
    Rcp,
    /// 1 / sqrt(x)
    Rsqrt,
    /// 2^x (its sequence reads `preexp2 x`)
    Exp2,
    /// log2(x) (its sequence ends with `postlog2`)
    Log2,
}

impl Cx {
    /// Every complex function, in a stable order.
    pub const ALL: [Cx; 4] = [Cx::Rcp, Cx::Rsqrt, Cx::Exp2, Cx::Log2];
}

impl Sem {
    /// Whether `op a, b` equals `op b, a` for all words.
    pub fn commutative(self) -> bool {
        matches!(
            self,
            Sem::FAdd | Sem::FMul | Sem::FMin | Sem::FMax | Sem::Add | Sem::UMul24 | Sem::Mul | Sem::And | Sem::Or | Sem::Xor
        )
    }
    /// Whether the op reads nothing but its index operand and the outside
    /// world (and so can be rematerialised at any point).
    pub fn is_outside_input(self) -> bool {
        matches!(self, Sem::Uniform | Sem::Const | Sem::Varying)
    }
}

impl Sem {
    /// Whether the op computes on IEEE-754 single words (its type is F32).
    pub fn is_float(self) -> bool {
        matches!(self, Sem::FAdd | Sem::FSub | Sem::FMul | Sem::FMin | Sem::FMax | Sem::FMad | Sem::Recip | Sem::Rsqrt | Sem::Exp2 | Sem::Log2 | Sem::Sin | Sem::Cos)
    }
}

/// The issue class of an opcode, as Mesa's nouveau codegen classes its
/// operations (`OPCLASS_*`): target rules that pair or space ops by kind
/// (kepler's dual issue) read it. Targets without such rules use
/// [`OpClass::Other`] everywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// No class (targets whose rules do not look at classes).
    Other,
    /// Float or integer arithmetic (add, mul, fma).
    Arith,
    /// Minimum and maximum (Mesa's compare class, MIN/MAX only).
    MinMax,
    /// Bitwise logic and shifts.
    Logic,
    /// Integer multiply.
    IMul,
    /// Register copy.
    Mov,
    /// Special-function unit (reciprocal, square root, exp, log, sin, cos).
    Sfu,
    /// A load from a constant, attribute or local memory.
    Load,
    /// Fragment input interpolation.
    Interp,
    /// Texture sample.
    Tex,
    /// Texture barrier.
    TexBar,
    /// A store to an output or to local memory.
    Store,
    /// Control flow, including a fragment kill (Mesa's `OPCLASS_FLOW`):
    /// the op after it in a dual-issued pair might not execute.
    Flow,
}

/// Timing data of a core whose machine form encodes its waits (kepler):
/// each bundle states how many cycles the next one waits, results of
/// unknown-landing ops (textures) arrive inside a window the program
/// cannot know, and barrier ops wait for them. The generic passes read
/// these numbers, never the target's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitClock {
    /// An unknown-landing op issued at cycle c lands at a cycle in
    /// `c + landing.0 ..= c + landing.1`.
    pub landing: (u32, u32),
    /// Two SFU ops issue at least this many cycles apart.
    pub sfu_spacing: u32,
}

impl WaitClock {
    /// No unknown-landing window and no SFU spacing.
    pub const NONE: WaitClock = WaitClock { landing: (0, 0), sfu_spacing: 0 };
}

/// Kind of one operand position of an opcode, in source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// A register value (virtual or physical), or an ALU immediate where the
    /// target's [`Rules::imm_ok`] allows it.
    Value,
    /// A register value only, never an immediate.
    Reg,
    /// An integer constant that is part of the encoding (uniform index,
    /// export index, scratch offset, `ldconst` word): never a register.
    Index,
}

/// Where an op's result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    /// The op writes no register.
    None,
    /// The destination is written as an operand in both forms.
    Explicit,
    /// The source form names a virtual destination; in the machine form the
    /// result stays in the unit that issued it, read through the bypass
    /// network (`^unit.distance`, see [`network`]).
    Unit,
    /// The source form names a virtual destination; the machine form names
    /// none and the result lands in this fixed register.
    Implicit(Reg),
}

/// Operand sizes (in 32-bit registers) the opcode accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizes {
    /// Destination and every register operand have one common size N,
    /// 1 <= N <= the target's `max_alu_size`.
    Uniform,
    /// Fixed sizes: destination size and the size of every register operand.
    Fixed {
        /// Destination size (0 when the op has none).
        dest: u8,
        /// Register operand size.
        src: u8,
    },
    /// Destination of any size 1..=`max_value_size` (scratch reads), or a
    /// register operand of any such size (scratch writes, end-of-thread).
    Any,
}

/// One row of a target's opcode table.
#[derive(Clone, Copy, Debug)]
pub struct OpDesc {
    /// The opcode as spelled in both forms.
    pub name: &'static str,
    /// What it computes.
    pub sem: Sem,
    /// Operand positions in source order (not counting the destination).
    pub operands: &'static [OperandKind],
    /// Where the result goes.
    pub dest: Dest,
    /// Operand sizes.
    pub sizes: Sizes,
    /// Slots the op may issue in.
    pub slots: &'static [&'static str],
    /// Cycles from issue until the result is visible (a write issued at c
    /// is readable at c + latency). 0 for ops without a result.
    pub latency: u32,
    /// Uses the special-function unit (v3d71 SFU, r600 transcendental).
    pub sfu: bool,
    /// A `send` whose message header is its own destination: its source and
    /// destination overlap (gen8's r127 rule applies).
    pub header_is_dest: bool,
    /// Exists only in the machine form (`thrsw`, `texbar`).
    pub machine_only: bool,
    /// The latest distance (cycles from issue) at which the result may still
    /// be read; `None`: until it is overwritten. See [`OpDesc::window`].
    pub lifetime: Option<u32>,
    /// How the destination may overlap the register sources.
    pub overlap: Overlap,
    /// The issue class (read by target rules that pair ops by kind).
    pub class: OpClass,
    /// The result lands at a time the program cannot know, inside the
    /// target's [`WaitClock::landing`] window; `latency` is its earliest
    /// landing. Only barrier ops ([`Sem::TexBarrier`]) make it safe to use.
    pub unknown_landing: bool,
}

impl OpDesc {
    /// The distances from issue at which the op's result may be read: from
    /// its latency on (the write lands), until its lifetime ends.
    pub const fn window(&self) -> ReadWindow {
        ReadWindow { min: self.latency, max: self.lifetime }
    }
}

/// How an op's destination may overlap its register sources (only runs of
/// more than one register can overlap in part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// A destination run of more than one register is equal to or disjoint
    /// from every register source; a partial overlap is not encodable (gen8
    /// ALU regioning). The compiler keeps such destinations away from the
    /// sources' registers; `Rules::op_regs_ok` reports a partial overlap.
    NoPartial,
    /// Any overlap is allowed (gen8 message sends, scratch access).
    Any,
}

/// How the final block of a program ends, beyond its `end` terminator.
#[derive(Clone, Copy, Debug)]
pub enum ProgramEnd {
    /// `end` alone ends the program.
    Plain,
    /// The op of this name ends the thread: it is the last op of every block
    /// that ends the program and appears nowhere else (gen8 `send.eot`).
    LastOp(&'static str),
    /// The machine-only op `marker` ends the thread: it sits in the final
    /// block, followed by exactly `delay_slots` bundles, and no op of those
    /// bundles reads or writes a register of `untouchable` (v3d71: `thrsw`,
    /// 2 delay slots, the fragment payload rf2-rf3). The ops each bundle
    /// may hold beyond that are `Rules::end_slot_ok`.
    Marker {
        /// The marker op's name in the opcode table.
        marker: &'static str,
        /// Bundles that follow the marker's bundle.
        delay_slots: usize,
        /// Registers no op of a delay slot may read or write.
        untouchable: &'static [Reg],
    },
}

/// A target: one GPU core's model.
pub struct Target {
    /// Short name used in `target` lines and on the command line.
    pub name: &'static str,
    /// One line describing the real core.
    pub summary: &'static str,
    /// The register file.
    pub regs: RegFile,
    /// What a read sees of a write that has not landed, and how waits are
    /// made (see [`Clock`]).
    pub clock: Clock,
    /// The timing of a [`Clock::EncodedWaits`] machine form that the clock
    /// does not carry (unknown-landing window, SFU spacing); every real
    /// target has it exactly when its clock is `EncodedWaits`. `None`: no
    /// unknown-landing ops and no SFU spacing ([`Target::wait_timing`]).
    pub waits: Option<&'static WaitClock>,
    /// Slot names of a bundle, in printing order.
    pub slots: &'static [&'static str],
    /// Stage when a program names none.
    pub default_stage: Stage,
    /// The opcode table.
    pub ops: &'static [OpDesc],
    /// Largest register run an ALU operand may span.
    pub max_alu_size: u8,
    /// Largest value (virtual register) size.
    pub max_value_size: u8,
    /// Registers that may be read but never written (gen8 g0–g1).
    pub reserved: &'static [Reg],
    /// Registers written implicitly by some ops; a source program may not
    /// name them (v3d71 rf0).
    pub implicit_regs: &'static [Reg],
    /// Registers that hold payload inputs at entry, per stage (a stage not
    /// listed has none).
    pub payload: &'static [(Stage, &'static [Reg])],
    /// Registers where a default-stage program's inputs arrive, in order
    /// (the payload, then attribute registers): what generated programs
    /// declare as inputs.
    pub inputs: &'static [PhysReg],
    /// How a program ends.
    pub end: ProgramEnd,
    /// The target's rules that do not fit the tables.
    pub rules: &'static (dyn Rules + Sync),
    /// The shader ABI the front end lowers stage inputs and outputs
    /// through; `None` for a target without one.
    pub abi: Option<&'static abi::Abi>,
    /// The bypass network, on a target whose ALU results are read from the
    /// units that made them rather than from registers (lima-gp); `None`
    /// on register-file targets.
    pub network: Option<&'static network::Network>,
    /// Name → position in [`Target::ops`], built on the first [`Target::op`]
    /// call (a target is `static`, so once per process).
    pub op_index: OpIndex,
}

/// A lazily built map from opcode name to its first row in a target's
/// opcode table (`optable`); it only speeds up [`Target::op`] and never
/// changes its answer.
#[derive(Debug, Default)]
pub struct OpIndex(std::sync::OnceLock<optable::Table>);

impl OpIndex {
    /// An empty index (filled on first use).
    pub const fn new() -> OpIndex {
        OpIndex(std::sync::OnceLock::new())
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.name)
    }
}

impl Target {
    /// The wait timing beyond the clock: [`Target::waits`], or
    /// [`WaitClock::NONE`].
    pub fn wait_timing(&self) -> &'static WaitClock {
        self.waits.unwrap_or(&WaitClock::NONE)
    }
    /// The opcode's description, if the target has it.
    pub fn op(&self, name: &str) -> Option<&'static OpDesc> {
        self.op_index.0.get_or_init(|| optable::Table::of(self.ops)).find(name)
    }
    /// Whether the target has a single slot (machine ops may be written
    /// without braces).
    pub fn single_slot(&self) -> bool {
        self.slots.len() == 1
    }
    /// Registers that hold payload inputs at entry for `stage`.
    pub fn payload(&self, stage: Stage) -> &'static [Reg] {
        self.payload.iter().find(|(s, _)| *s == stage).map_or(&[], |(_, r)| r)
    }
    /// Whether `op` ends the thread and so must be the last op of a block
    /// that ends the program ([`ProgramEnd::LastOp`]).
    pub fn ends_thread(&self, op: &OpDesc) -> bool {
        matches!(self.end, ProgramEnd::LastOp(name) if name == op.name)
    }
    /// The op that ends the thread as the last op of the program
    /// ([`ProgramEnd::LastOp`]), if the target has one in its table.
    pub fn thread_end_op(&self) -> Option<&'static OpDesc> {
        match self.end {
            ProgramEnd::LastOp(name) => self.op(name),
            _ => None,
        }
    }
    /// The end-of-program marker op and its delay-slot count
    /// ([`ProgramEnd::Marker`]), if the target has one in its table.
    pub fn end_marker(&self) -> Option<(&'static OpDesc, usize)> {
        match self.end {
            ProgramEnd::Marker { marker, delay_slots, .. } => self.op(marker).map(|d| (d, delay_slots)),
            _ => None,
        }
    }
    /// Number of bundles that must follow the end-of-program marker in the
    /// final block, or `None` if the target has no end marker.
    pub fn end_delay_slots(&self) -> Option<usize> {
        match self.end {
            ProgramEnd::Marker { delay_slots, .. } => Some(delay_slots),
            _ => None,
        }
    }
    /// Registers no op of an end-of-program delay slot may read or write.
    pub fn end_untouchable(&self) -> &'static [Reg] {
        match self.end {
            ProgramEnd::Marker { untouchable, .. } => untouchable,
            _ => &[],
        }
    }
}

/// Target rules that do not fit a table. Each returns `Err(sentence)`
/// naming what is wrong; the verifier turns that into a located violation of
/// the kind named in the method's doc, and the compiler uses the same
/// predicates as constraints.
pub trait Rules {
    /// Whether `imm` may be source `index` of `op` (Value operands only;
    /// Index operands are encoding constants and always allowed).
    fn imm_ok(&self, op: &OpDesc, index: usize, imm: Imm) -> bool;
    /// The most distinct immediate words one bundle may carry.
    fn max_bundle_imms(&self) -> usize;
    /// Registers the allocator may hand out for `stage` (in preference
    /// order); excludes reserved and implicitly written registers.
    fn allocatable(&self, stage: Stage) -> Vec<Reg>;
    /// Kind `slot`: may `op` with destination `dest` issue in `slot`
    /// (beyond `OpDesc::slots`, e.g. r600's channel rule)?
    fn slot_ok(&self, op: &OpDesc, slot: &str, dest: Option<PhysReg>) -> Result<(), String>;
    /// Kind `slot`: target-specific legality of a whole bundle beyond one op
    /// per slot and the immediate limit (r600 read ports: is there a bank
    /// swizzle for every op of the group?).
    fn bundle_ok(&self, ops: &[(&OpDesc, &Inst)]) -> Result<(), String>;
    /// Kind `register`: target register rules for one machine op (gen8 r127
    /// on overlapping sends, end-of-thread payload range, multi-register
    /// overlap). Source validation also calls it on source instructions, so
    /// it must judge only the physical (`Operand::Phys`) operands and let
    /// virtual ones pass.
    fn op_regs_ok(&self, op: &OpDesc, inst: &Inst) -> Result<(), String>;
    /// Kind `hazard`: may `inst` sit in end-of-program delay slot
    /// `slot_index` (0-based), or in the marker bundle itself when
    /// `slot_index` is `None`? Includes the [`ProgramEnd::Marker`]
    /// `untouchable` registers. Targets without an end marker allow all.
    fn end_slot_ok(&self, op: &OpDesc, inst: &Inst, slot_index: Option<usize>) -> Result<(), String>;
    /// Immediate words at the edges of the target's immediate rule (just
    /// inside and just outside it), for generators to try; default none.
    fn edge_imms(&self) -> &'static [u32] {
        &[]
    }
    /// Kind `slot`: the rules of one instruction that need each op's slot
    /// (`ops` lists description, op and slot): lima-gp's shared opcodes,
    /// load and store units and sub-slots. Default: none.
    fn placed_ok(&self, _ops: &[(&OpDesc, &Inst, &str)]) -> Result<(), String> {
        Ok(())
    }
    /// Whether programs of `stage` exist on this target (lima-gp runs
    /// vertex shaders only); `Err` says why not. Default: every stage.
    fn stage_ok(&self, _stage: Stage) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_end_op_is_in_its_table() {
        for t in all() {
            match t.end {
                ProgramEnd::Plain => {}
                ProgramEnd::LastOp(name) => {
                    let d = t.thread_end_op().unwrap_or_else(|| panic!("{}: no {name}", t.name));
                    assert!(t.ends_thread(d) && d.dest == Dest::None, "{}", t.name);
                }
                ProgramEnd::Marker { marker, delay_slots, untouchable } => {
                    let (d, k) = t.end_marker().unwrap_or_else(|| panic!("{}: no {marker}", t.name));
                    assert!(d.machine_only && !d.slots.is_empty() && k == delay_slots, "{}", t.name);
                    assert!(untouchable.iter().all(|&r| r < t.regs.count), "{}", t.name);
                }
            }
            assert!(t.ops.iter().filter(|d| t.ends_thread(d)).count() <= 1, "{}", t.name);
        }
    }

    #[test]
    fn payload_and_input_registers_exist() {
        // A bypass-network target takes its inputs by attribute loads, not
        // in registers.
        for t in all().iter().filter(|t| t.network.is_some()) {
            assert!(t.inputs.is_empty() && [Stage::Vertex, Stage::Fragment, Stage::Compute].iter().all(|&st| t.payload(st).is_empty()), "{}", t.name);
        }
        for t in generated() {
            for st in [Stage::Vertex, Stage::Fragment, Stage::Compute] {
                assert!(t.payload(st).iter().all(|&r| r < t.regs.count), "{}", t.name);
            }
            assert!(t.inputs.iter().all(|p| t.regs.contains(*p)), "{}", t.name);
            // The payload comes first among the inputs.
            let pay = t.payload(t.default_stage);
            assert!(pay.iter().zip(t.inputs).all(|(&r, p)| *p == PhysReg::one(r)), "{}", t.name);
        }
        // Every core with register inputs lists them; kepler's arrive
        // through `ipa` and `ld.attr`.
        for t in [&gen8::GEN8, &v3d71::V3D71, &r600::R600] {
            assert!(!t.inputs.is_empty(), "{}", t.name);
        }
        assert!(kepler::KEPLER.inputs.is_empty() && kepler::KEPLER.payload.is_empty());
    }

    #[test]
    fn todays_read_windows_start_at_the_latency_and_never_end() {
        for t in all() {
            for d in t.ops {
                assert_eq!(d.window(), ReadWindow { min: d.latency, max: None }, "{} {}", t.name, d.name);
            }
        }
    }

    #[test]
    fn clocks_are_as_the_contract_says() {
        assert_eq!(gen8::GEN8.clock, Clock::Interlocked);
        assert_eq!(v3d71::V3D71.clock, Clock::Padded);
        assert_eq!(r600::R600.clock, Clock::Padded);
        assert_eq!(kepler::KEPLER.clock, Clock::EncodedWaits { max: 31 });
    }

    #[test]
    fn wait_timing_comes_exactly_with_an_encoded_waits_clock() {
        for t in all() {
            assert_eq!(t.waits.is_some(), matches!(t.clock, Clock::EncodedWaits { .. }), "{}", t.name);
        }
    }
}
