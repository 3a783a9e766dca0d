//! Shader-db style statistics of a machine-form program.
//!
//! Algorithm: walk the blocks in layout order with a clock, each block
//! costed once from a quiet machine (no write in flight at its start, as
//! the verifier counts), and sum. Each bundle costs one cycle. The target's
//! [`Clock`] decides what a wait costs: on an interlocked clock a bundle
//! first waits until every register it reads (and a `brnz` condition) has
//! landed — those are stall cycles, counted in `cycles`, and as
//! `sfu_stalls` when the awaited write came from an SFU op; on the padded
//! and encoded-waits clocks waits are explicit empty bundles (`nops`; the
//! machine form carries no `wait N` to count), and an empty bundle during
//! which an SFU result is still in flight counts as an SFU stall. Read
//! windows cost nothing. Scratch writes and reads count as spills and fills.
//!
//! Invariant: `instructions` is the number of bundles, `cycles >=
//! instructions`, `nops <= instructions`, and all counts use the target
//! table's true latencies (never the scheduler's assumptions).

use crate::Stats;
use schedra_ir::target::Sem;
use schedra_ir::target::{Clock, OpDesc};
use schedra_ir::{Inst, Operand, Program, Reg, TermKind, Terminator};

/// Account for `inst` (of op `desc`) issuing at `clock`: count a spill
/// store or fill in `st`, record when each register it writes lands (and
/// whether an SFU op wrote it) in `ready`, and extend `sfu_until` to an SFU
/// result's landing cycle.
fn issue(
    desc: &schedra_ir::target::OpDesc,
    inst: &schedra_ir::Inst,
    clock: usize,
    (ready, sfu_until): (&mut Landing, &mut usize),
    st: &mut Stats,
) {
    match desc.sem {
        Sem::ScratchWrite => st.spills += 1,
        Sem::ScratchRead => st.fills += 1,
        _ => {}
    }
    let land = clock + desc.latency as usize;
    match (&inst.dest, desc.dest) {
        (Some(Operand::Phys(p)), _) => p.regs().for_each(|r| ready.set(r, (land, desc.sfu))),
        (None, schedra_ir::target::Dest::Implicit(r)) => ready.set(r, (land, desc.sfu)),
        _ => {}
    }
    if desc.sfu {
        *sfu_until = (*sfu_until).max(land);
    }
}

/// For each register, when its latest write lands and whether an SFU op
/// wrote it (a dense table over register numbers, grown on demand).
#[derive(Default)]
struct Landing(Vec<Option<(usize, bool)>>);

impl Landing {
    fn set(&mut self, r: Reg, v: (usize, bool)) {
        let i = r as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, None);
        }
        if let Some(e) = self.0.get_mut(i) {
            *e = Some(v);
        }
    }
    fn get(&self, r: Reg) -> Option<(usize, bool)> {
        self.0.get(r as usize).copied().flatten()
    }
    /// Forget every write (keeping the table's size).
    fn clear(&mut self) {
        self.0.iter_mut().for_each(|e| *e = None);
    }
}

/// Instructions, cycles, nops, sfu-stalls, spills and fills of `prog` (a
/// machine-form program). `max_live` and `remats` stay 0: the allocator
/// fills them.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn machine_stats(prog: &Program) -> Stats {
    let t = prog.target;
    let mut tally = Tally::default();
    if let Clock::EncodedWaits { .. } = t.clock {
        tally.encoded();
    }
    for b in &prog.blocks {
        tally.block();
        for bundle in b.bundles() {
            let ops = bundle.ops.iter().map(|o| (t.op(&o.inst.opcode), &o.inst));
            match t.clock {
                Clock::EncodedWaits { .. } => tally.timed_bundle(t.wait_timing(), ops, bundle.wait),
                _ => tally.bundle(t.clock, ops),
            }
        }
        tally.end_block(t.clock, &b.term);
    }
    tally.finish()
}

/// [`machine_stats`] gathered while the program is being built: feed the
/// blocks in layout order ([`Tally::block`], one [`Tally::bundle`] per
/// bundle, [`Tally::end_block`]), then [`Tally::finish`].
#[derive(Default)]
pub struct Tally {
    st: Stats,
    clock: usize,
    /// register -> (cycle its latest write lands, written by an SFU op).
    ready: Landing,
    sfu_until: usize,
    /// Encoded-wait targets: issue counts, and the earliest landing cycle
    /// of each texture result in flight in the block (in issue order).
    issue: Option<crate::IssueStats>,
    tex: Vec<usize>,
}

impl Tally {
    /// Start a block: each block is costed from a quiet machine, like the
    /// verifier's per-block cycle count.
    pub fn block(&mut self) {
        self.ready.clear();
        self.sfu_until = 0;
        self.tex.clear();
    }

    /// Count issue statistics (a target with encoded waits), even for a
    /// program with no bundle.
    pub fn encoded(&mut self) {
        self.issue.get_or_insert_default();
    }

    /// Account for one bundle of a target with encoded waits (`clock`):
    /// it costs one cycle plus its `wait` (stall cycles, SFU stalls while
    /// an SFU result is in flight); a barrier (`texbar N`) holds the next
    /// bundle until at most N texture results are in flight, each taken to
    /// land at its earliest cycle. Counts single ops (`issued1`) and pairs
    /// (`issued2`).
    pub fn timed_bundle<'a>(
        &mut self,
        clock: &schedra_ir::target::WaitClock,
        ops: impl Iterator<Item = (Option<&'a OpDesc>, &'a Inst)> + Clone,
        wait: u8,
    ) {
        let mut issue = self.issue.unwrap_or_default();
        match ops.clone().count() {
            0 => {}
            1 => issue.issued1 += 1,
            _ => issue.issued2 += 1,
        }
        let issued = self.clock;
        // An encoded-waits clock never stalls a bundle; its wait follows.
        self.bundle(Clock::EncodedWaits { max: u8::MAX }, ops.clone());
        let mut barrier = None;
        for (desc, inst) in ops {
            let Some(d) = desc else { continue };
            if d.unknown_landing {
                self.tex.push(issued + clock.landing.0 as usize);
            }
            if d.sem == Sem::TexBarrier {
                let level = inst.srcs.first().and_then(Operand::imm).map_or(0, |i| i.bits as usize);
                barrier = Some(level);
            }
        }
        let wait = usize::from(wait);
        self.st.sfu_stalls += wait.min(self.sfu_until.saturating_sub(self.clock));
        self.clock += wait;
        issue.stall_cycles += wait;
        if let Some(n) = barrier {
            let flying: Vec<usize> = self.tex.iter().copied().filter(|&l| l > issued).collect();
            let must = flying.len().saturating_sub(n);
            if let Some(&until) = must.checked_sub(1).and_then(|i| flying.get(i)) {
                if until > self.clock {
                    issue.stall_cycles += until - self.clock;
                    self.clock = until;
                }
            }
        }
        self.issue = Some(issue);
    }

    /// Account for one bundle holding `ops` (each op's description, if the
    /// target has one, and its instruction). The order of the ops does not
    /// matter: no two ops of a legal bundle write one register.
    pub fn bundle<'a>(
        &mut self,
        machine: Clock,
        ops: impl Iterator<Item = (Option<&'a OpDesc>, &'a Inst)> + Clone,
    ) {
        self.st.instructions += 1;
        if ops.clone().next().is_none() {
            self.st.nops += 1;
            if self.clock < self.sfu_until {
                self.st.sfu_stalls += 1;
            }
        }
        if stalls(machine) {
            let reads = ops
                .clone()
                .flat_map(|(_, i)| i.srcs.iter())
                .filter_map(Operand::phys)
                .flat_map(|p| p.regs());
            self.clock = wait_for(&self.ready, reads, self.clock, &mut self.st);
        }
        for (desc, inst) in ops {
            if let Some(desc) = desc {
                let state = (&mut self.ready, &mut self.sfu_until);
                issue(desc, inst, self.clock, state, &mut self.st);
            }
        }
        self.clock += 1;
    }

    /// End a block with terminator `term` (on an interlocked clock the
    /// terminator waits for a `brnz` condition).
    pub fn end_block(&mut self, machine: Clock, term: &Terminator) {
        if let (
            true,
            TermKind::Brnz {
                cond: Operand::Phys(p),
                ..
            },
        ) = (stalls(machine), &term.kind)
        {
            self.clock = wait_for(&self.ready, p.regs(), self.clock, &mut self.st);
        }
    }

    /// The statistics of everything fed so far.
    pub fn finish(mut self) -> Stats {
        self.st.cycles = self.clock;
        self.st.issue = self.issue;
        self.st
    }
}

/// Whether a read of a register with a write in flight waits (stall
/// cycles) on `machine`: only on [`Clock::Interlocked`]; the other clocks
/// wait with empty bundles, which are counted as bundles.
fn stalls(machine: Clock) -> bool {
    match machine {
        Clock::Interlocked => true,
        Clock::Padded | Clock::EncodedWaits { .. } => false,
    }
}

/// Advance `clock` until every register in `reads` has landed; count the
/// stall, as SFU stall when an SFU write was awaited.
fn wait_for(
    ready: &Landing,
    reads: impl Iterator<Item = Reg>,
    clock: usize,
    st: &mut Stats,
) -> usize {
    let mut until = clock;
    let mut sfu = false;
    for r in reads {
        if let Some((land, s)) = ready.get(r) {
            if land > until {
                until = land;
                sfu = s;
            }
        }
    }
    if sfu {
        st.sfu_stalls += until - clock;
    }
    until
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::target::{gen8::GEN8, v3d71::V3D71};
    use schedra_ir::{Block, Body, Bundle, Form, Op, PhysReg, Span, Stage, Target};

    fn op(slot: &str, name: &str, dest: Option<PhysReg>, srcs: Vec<PhysReg>) -> Op {
        Op {
            slot: slot.into(),
            inst: Inst {
                opcode: name.into(),
                dest: dest.map(Operand::Phys),
                srcs: srcs.into_iter().map(Operand::Phys).collect(),
                span: Span::default(),
            },
        }
    }
    fn prog(t: &'static Target, bundles: Vec<Vec<Op>>) -> Program {
        let bundles = bundles
            .into_iter()
            .map(|ops| Bundle {
                ops,
                span: Span::default(),
                wait: 0,
            })
            .collect();
        let block = Block {
            label: "b0".into(),
            body: Body::Machine(bundles),
            term: Terminator {
                kind: TermKind::End,
                span: Span::default(),
            },
            span: Span::default(),
        };
        Program {
            name: None,
            target: t,
            stage: Stage::Fragment,
            form: Form::Machine,
            inputs: vec![],
            blocks: vec![block],
        }
    }

    #[test]
    fn every_target_names_each_op_once() {
        // The bundler tallies with each op's own description; the names
        // must find the same one.
        for t in [&V3D71, &GEN8, &schedra_ir::target::r600::R600] {
            for o in t.ops {
                assert!(t.op(o.name).is_some_and(|d| std::ptr::eq(d, o)), "{} {}", t.name, o.name);
            }
        }
    }

    #[test]
    fn v3d_counts_nops_and_sfu_stalls() {
        let r = PhysReg::one;
        let p = prog(
            &V3D71,
            vec![
                vec![op("add", "recip", Some(r(4)), vec![r(1)])],
                vec![],
                vec![op("add", "fadd", Some(r(5)), vec![r(4), r(4)])],
                vec![],
            ],
        );
        let s = machine_stats(&p);
        assert_eq!(
            (s.instructions, s.cycles, s.nops, s.sfu_stalls),
            (4, 4, 2, 1)
        );
    }

    #[test]
    fn only_the_interlocked_clock_stalls() {
        use schedra_ir::target::{testing::with_clock, Clock};
        let r2 = |b| PhysReg { base: b, size: 2 };
        let bundles = || vec![vec![op("alu", "math.rcp", Some(r2(10)), vec![r2(2)])], vec![op("alu", "add", Some(r2(12)), vec![r2(10), r2(2)])]];
        for (clock, cycles) in [(Clock::Interlocked, 23), (Clock::Padded, 2), (Clock::EncodedWaits { max: 31 }, 2)] {
            let s = machine_stats(&prog(with_clock(&GEN8, "gen8-variant", clock), bundles()));
            assert_eq!((s.instructions, s.cycles), (2, cycles), "{clock:?}");
        }
    }

    #[test]
    fn gen8_counts_stalls_in_cycles() {
        let r2 = |b| PhysReg { base: b, size: 2 };
        let p = prog(
            &GEN8,
            vec![
                vec![op("alu", "math.rcp", Some(r2(10)), vec![r2(2)])],
                vec![op("alu", "add", Some(r2(12)), vec![r2(10), r2(2)])],
            ],
        );
        let s = machine_stats(&p);
        // rcp issues at 0 and lands at 22; add waits until 22 and ends at 23.
        assert_eq!(
            (s.instructions, s.cycles, s.nops, s.sfu_stalls),
            (2, 23, 0, 21)
        );
    }
}
