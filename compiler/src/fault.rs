//! Fault injection: historical scheduler and allocator bugs, reproduced on
//! purpose so that the harness (verifier, fuzzers, reducer) can be measured
//! against them. Each fault is consulted at exactly one decision point — the
//! one it corrupts — and is off unless `--inject NAME` selects it.

/// A named, documented compiler bug that can be switched on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Post-RA scheduler: ldvary's rf0 write is assumed to land with
    /// ldunif's timing (one cycle) instead of two.
    V3dLdvarySameCycle,
    /// Register allocation may keep a temporary in rf0 across an ldunif or
    /// ldvary, whose implicit write destroys it.
    V3dRf0AcrossImplicit,
    /// Thread end: an ALU register write is allowed in the `thrsw` bundle.
    V3dThrswRfWrite,
    /// Post-RA scheduler: SFU results are assumed visible after 1 cycle.
    V3dSfuLatency,
    /// gen8 allocation: the r127 interference is missing for spill fills
    /// (scratch reads, whose header is their own destination).
    Gen8R127SpillFill,
    /// r600 bundler: the group interference check ignores preallocated
    /// (pinned) registers, so a write to a pinned register can move ahead of
    /// a read of its old value.
    R600PinnedWar,
    /// Post-RA scheduler drops write-after-read edges on physical registers.
    SchedIgnoreWar,
    /// Linear scan does not split a live range where a preallocated
    /// register's range begins.
    RaSplitPreallocated,
    /// Spill code uses a scratch register it did not reserve.
    SpillNoReserve,
    /// Post-RA scheduler: removing a placed op from a ready list of four
    /// or more ops, the search does not step past an op of the placed op's
    /// priority when that priority is 0 (an op nothing waits for), so such
    /// an op ahead of it stops the search for good: the compiler loops
    /// forever (without allocating) on those blocks.
    SchedStuckReady,
    /// kepler waits: a pair is formed although the second op reads what
    /// the first writes.
    KeplerDualRaw,
    /// kepler barriers: a texture barrier guards only reads of a texture
    /// destination, not later writes to it.
    KeplerTexWaw,
    /// kepler waits: the wait after a 24-cycle `ld.attr` (or local load)
    /// or a 15-cycle `ipa` is computed from the default latency 9.
    KeplerWaitDefault,
    /// kepler waits: a pair is formed with a `tex` in its first slot.
    KeplerDualAfterTex,
    /// lima-gp scheduler: a move may stand between `complex1` and
    /// `postlog2`.
    LimaPostlog2Move,
    /// lima-gp scheduler: a `schedule_first` node (`preexp2`) can be given a
    /// move before its sequence reads it.
    LimaScheduleFirstMove,
    /// lima-gp scheduler: the complex unit's result may feed the second
    /// source of an add or mul unit (which reads 0 or 1 there).
    LimaComplexSecondSource,
    /// lima-gp scheduler: the stores placed together with a node just made
    /// include stores that depend on it only by a fake (write-after-read)
    /// dependency, and those store the node's value.
    LimaFakeDepChildren,
    /// lima-gp scheduler: a spill made to find room for a node after
    /// another node was already placed speculatively in the instruction
    /// lets the value leave the network before its register store has
    /// landed, so a register load reads the store in flight.
    LimaSpillSpeculative,
}

impl Fault {
    /// Every fault that miscompiles, in a stable order: compiling under any
    /// of them terminates (with a wrong program, on some inputs).
    pub fn all() -> &'static [Fault] {
        use Fault::*;
        &[
            V3dLdvarySameCycle,
            V3dRf0AcrossImplicit,
            V3dThrswRfWrite,
            V3dSfuLatency,
            Gen8R127SpillFill,
            R600PinnedWar,
            SchedIgnoreWar,
            RaSplitPreallocated,
            SpillNoReserve,
            KeplerDualRaw,
            KeplerTexWaw,
            KeplerWaitDefault,
            KeplerDualAfterTex,
            LimaPostlog2Move,
            LimaScheduleFirstMove,
            LimaComplexSecondSource,
            LimaFakeDepChildren,
            LimaSpillSpeculative,
        ]
    }
    /// Every fault that makes the compiler loop forever on some inputs:
    /// only a harness with deadlines (`schedra fuzz` runs cases under a
    /// supervisor) can use them.
    pub fn hangs() -> &'static [Fault] {
        &[Fault::SchedStuckReady]
    }
    /// Every fault: [`Fault::all`], then [`Fault::hangs`].
    pub fn every() -> impl Iterator<Item = Fault> {
        Fault::all().iter().chain(Fault::hangs()).copied()
    }
    /// The `--inject` name.
    pub fn name(self) -> &'static str {
        use Fault::*;
        match self {
            V3dLdvarySameCycle => "v3d-ldvary-same-cycle",
            V3dRf0AcrossImplicit => "v3d-rf0-across-implicit",
            V3dThrswRfWrite => "v3d-thrsw-rf-write",
            V3dSfuLatency => "v3d-sfu-latency",
            Gen8R127SpillFill => "gen8-r127-spill-fill",
            R600PinnedWar => "r600-pinned-war",
            SchedIgnoreWar => "sched-ignore-war",
            RaSplitPreallocated => "ra-split-preallocated",
            SpillNoReserve => "spill-no-reserve",
            SchedStuckReady => "sched-stuck-ready",
            KeplerDualRaw => "kepler-dual-raw",
            KeplerTexWaw => "kepler-tex-waw",
            KeplerWaitDefault => "kepler-wait-default",
            KeplerDualAfterTex => "kepler-dual-after-tex",
            LimaPostlog2Move => "lima-postlog2-move",
            LimaScheduleFirstMove => "lima-schedule-first-move",
            LimaComplexSecondSource => "lima-complex-second-source",
            LimaFakeDepChildren => "lima-fake-dep-children",
            LimaSpillSpeculative => "lima-spill-speculative",
        }
    }
    /// The target whose programs the fault corrupts (`None`: any target).
    pub fn target(self) -> Option<&'static str> {
        use Fault::*;
        match self {
            V3dLdvarySameCycle | V3dRf0AcrossImplicit | V3dThrswRfWrite | V3dSfuLatency => {
                Some("v3d71")
            }
            Gen8R127SpillFill => Some("gen8"),
            R600PinnedWar => Some("r600"),
            KeplerDualRaw | KeplerTexWaw | KeplerWaitDefault | KeplerDualAfterTex => Some("kepler"),
            LimaPostlog2Move | LimaScheduleFirstMove | LimaComplexSecondSource | LimaFakeDepChildren | LimaSpillSpeculative => Some("lima-gp"),
            SchedIgnoreWar | RaSplitPreallocated | SpillNoReserve | SchedStuckReady => None,
        }
    }
    /// Whether the fault corrupts programs of target `t` (a fault of no
    /// particular target corrupts every target's).
    pub fn applies_to(self, t: &schedra_ir::Target) -> bool {
        self.target().is_none_or(|name| name == t.name)
    }
    /// The history the fault reproduces (see `shared/seeds/` and
    /// `shared/research/hardware.md`).
    pub fn history(self) -> &'static str {
        use Fault::*;
        match self {
            V3dLdvarySameCycle => "Mesa v3d: ldvary writes rf0 one cycle later than ldunif; qpu_schedule.c must refuse reading rf0 one cycle after ldvary",
            V3dRf0AcrossImplicit => "Mesa v3d: RA must make temps that live across an ldvary/ldunif avoid rf0 (vir_register_allocate.c)",
            V3dThrswRfWrite => "Mesa v3d: the thread-end instruction may not write the register file from the ALUs (qpu_validate.c)",
            V3dSfuLatency => "Mesa v3d: SFU results take 2 cycles; reading after 1 sees the old register (sfu-stalls in shader-db)",
            Gen8R127SpillFill => "Mesa i965 (seed 002): r127 must not be a send's return address when src and dest overlap; the fix missed spill fills, found by a piglit crash",
            R600PinnedWar => "Mesa r600/sb (seed 004, fdo#71944): post-scheduler regmap missed write-after-read on values pinned to registers before scheduling",
            SchedIgnoreWar => "Classic post-RA scheduler bug: anti-dependencies dropped after allocation, so a write overtakes a read of the old value",
            RaSplitPreallocated => "Mesa lima gpir (seed 000): linear scan must split a live range where a preallocated register's range begins",
            SpillNoReserve => "Mesa lima gpir (seed 000): spill code needs an extra register reserved in the regions where spills happen",
            SchedStuckReady => "Classic list-scheduler hang: a ready-list removal whose cursor stalls on a priority tie, so the placed op is never removed and the scheduler spins (a compiler that loops forever, for the harness's deadlines)",
            KeplerDualRaw => "Mesa nouveau canDualIssue (nv50_ir_target_nvc0.cpp): not if the second instruction reads what the first writes",
            KeplerTexWaw => "Mesa nouveau insertTextureBarriers (nv50_ir_lowering_nvc0.cpp): the first uses of a tex result include writes, to guard write-after-write",
            KeplerWaitDefault => "Mesa nouveau getLatency: LINTERP/PINTERP 15, non-const LOAD/VFETCH 24, everything else 9 (\"TODO: better values\")",
            KeplerDualAfterTex => "Mesa nouveau canDualIssue: not after a TEXTURE or FLOW instruction (\"the 2nd instruction isn't necessarily executed\")",
            LimaPostlog2Move => "Mesa lima gpir (seed 000): no move may stand between complex1 and postlog2; place_move() must rewrite the postlog2 as a move in every case",
            LimaScheduleFirstMove => "Mesa lima gpir (seed 000): a schedule_first node (preexp2) was still given a move, which broke exp() tests",
            LimaComplexSecondSource => "Mesa lima gpir (seed 000): the scheduler forgot that the second source of add0, add1, mul0 and mul1 cannot be the complex unit: that source code means 0 or 1 there (can_use_complex)",
            LimaFakeDepChildren => "Mesa lima gpir (seed 000): when a node is scheduled its children are tried with it, but not the nodes that depend on it only by a fake dependency",
            LimaSpillSpeculative => "Mesa lima gpir (seed 000, fixing 54434fe670): give up on spilling once another node was speculatively scheduled; a spill made after it read a register one instruction before the 3-cycle store latency had passed",
        }
    }
    /// The fault with this `--inject` name.
    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::every().find(|f| f.name() == name)
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
