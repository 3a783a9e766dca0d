//! The interpreters of schedra: the ground truth that compiler output and
//! verifier claims are checked against. Each is one plain reading of
//! `semantics.md` (`/work/shared/spec/semantics.md` in the contract, the
//! sections named in each module's doc), with one path through every op:
//!
//! - [`source`] executes the source form one instruction at a time over
//!   virtual and physical registers ("Source form").
//! - [`machine`] simulates the machine form cycle by cycle: parallel reads
//!   within a bundle, writes landing after their latency, stalls on
//!   interlocked targets, hazards on non-interlocked ones ("Time in the
//!   machine form").
//! - [`bypass`] simulates the machine form of a target with a bypass
//!   network ("Bypass network").
//! - [`rules`] reads the hardware rules of `targets.md` (slots, pairing,
//!   read ports, registers, the program's end): a machine program that
//!   breaks one does not run, it stops with the rule.
//!
//! All draw every outside word from the same [`world::World`] and give ops
//! their meaning through the same [`exec`] (operands resolved by
//! [`exec::args`], the op carried out by [`exec::execute`]) and [`eval`],
//! and none uses the compiler or the verifier, so a correct machine program
//! and its source produce equal [`Effects`] (and branch traces) for every
//! seed.
//!
//! Fuel: every executed source instruction, machine op and terminator costs
//! one unit; a run that needs more than its fuel stops with
//! [`RunError::OutOfFuel`].
//!
//! Speed comes from structure, not from a second path: a program is
//! decoded once ([`prepare`]: opcodes looked up in a per-target table,
//! virtual registers numbered into dense slots, labels resolved, machine
//! bundles checked) and then run on any number of seeds, and the runs of
//! one [`Context`] reuse each other's buffers. Decoding never fails:
//! whatever cannot be decoded keeps its error until it executes, so a
//! decoded run is exactly [`run`]'s, errors included. `fuzz/examples/
//! interp_digest` prints every run's outcome over the corpus and generated
//! programs, to compare before and after a change.

pub mod bypass;
pub mod effects;
pub mod error;
pub mod eval;
pub mod exec;
pub mod machine;
#[cfg(test)]
mod naive;
#[cfg(test)]
mod robust;
pub mod rules;
pub mod scratch;
pub mod source;
pub mod trace;
pub mod unit;
pub mod words;
pub mod world;

pub use effects::Effects;
pub use error::{Place, RunError};
pub use trace::Trace;
pub use world::World;

use rustc_hash::FxHashMap;
use schedra_ir::{Form, Program};

/// The fuel `schedra run` gives a program when none is named.
pub const DEFAULT_FUEL: u64 = 1_000_000;

/// What a finished run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The effects per channel, in program order per channel.
    pub effects: Effects,
    /// Machine form: cycles from the first issue to the final `end`
    /// inclusive (the cycle of `end` + 1), stalls included. Source form: 0.
    pub cycles: u64,
    /// Machine form on interlocked targets: cycles spent waiting for
    /// pending writes. Otherwise 0.
    pub stalls: u64,
    /// Instructions executed: source instructions or machine ops, plus one
    /// per terminator.
    pub executed: u64,
    /// The branches taken.
    pub trace: Trace,
}

/// Run `program` (either form) on the outside words of `seed`, stopping with
/// [`RunError::OutOfFuel`] after more than `fuel` instructions. Never panics.
pub fn run(program: &Program, seed: u64, fuel: u64) -> Result<Outcome, RunError> {
    prepare(program).run(seed, fuel)
}

/// A program decoded once for running on many seeds: opcodes looked up,
/// virtual registers numbered, labels resolved. Running it gives exactly
/// what [`run`] gives for the same program, seed and fuel (decoding never
/// fails; what cannot be decoded fails when it is executed).
pub enum Prepared<'p> {
    /// A source-form program.
    Source(source::Decoded<'p>),
    /// A machine-form program.
    Machine(machine::Decoded<'p>),
    /// A machine-form program of a target with a bypass network.
    Bypass(bypass::Decoded<'p>),
}

/// Decode `program` for [`Prepared::run`]. A machine program that breaks
/// a hardware rule of its target ([`rules`]) does not run: every run stops
/// with the rule.
pub fn prepare(program: &Program) -> Prepared<'_> {
    match program.form {
        Form::Source => Prepared::Source(source::Decoded::new(program)),
        Form::Machine => match program.target.network {
            Some(net) => Prepared::Bypass(bypass::Decoded::new(program, net)),
            None => Prepared::Machine(machine::Decoded::new(program)),
        },
    }
}

/// [`prepare`] for runs that follow only time and meaning: a machine
/// program that breaks a hardware rule runs as if the hardware allowed it
/// (what a counterexample's replay and tests of timing on partial
/// programs need).
pub fn prepare_ignoring_rules(program: &Program) -> Prepared<'_> {
    match (program.form, program.target.network) {
        (Form::Machine, None) => Prepared::Machine(machine::Decoded::ignoring_rules(program)),
        (Form::Machine, Some(net)) => Prepared::Bypass(bypass::Decoded::ignoring_rules(program, net)),
        (Form::Source, _) => prepare(program),
    }
}

/// [`run`] ignoring the hardware rules ([`prepare_ignoring_rules`]).
pub fn run_ignoring_rules(program: &Program, seed: u64, fuel: u64) -> Result<Outcome, RunError> {
    prepare_ignoring_rules(program).run(seed, fuel)
}

impl Prepared<'_> {
    /// The first hardware rule a machine program breaks ([`rules::check`]),
    /// whether or not its runs stop with it; `None` for a source program.
    pub fn broken_rule(&self) -> Option<&RunError> {
        match self {
            Prepared::Machine(d) => d.broken(),
            Prepared::Bypass(d) => d.broken(),
            Prepared::Source(_) => None,
        }
    }

    /// Run on the outside words of `seed` with `fuel`, as [`run`] does.
    pub fn run(&self, seed: u64, fuel: u64) -> Result<Outcome, RunError> {
        self.run_in(World::new(seed), fuel)
    }

    /// Run in `world` (a seed and any pinned words) with `fuel`.
    pub fn run_in(&self, world: World, fuel: u64) -> Result<Outcome, RunError> {
        self.run_with(&mut Context::default(), world, fuel)
    }

    /// [`Prepared::run_in`] in the room of `ctx`: the same outcome, without
    /// allocating again what an earlier run in `ctx` allocated.
    pub fn run_with(&self, ctx: &mut Context, world: World, fuel: u64) -> Result<Outcome, RunError> {
        match self {
            Prepared::Source(d) => d.run_with(&mut ctx.source, world, fuel),
            Prepared::Machine(d) => d.run_with(&mut ctx.machine, world, fuel),
            Prepared::Bypass(d) => d.run(world, fuel),
        }
    }
}

/// The buffers runs lend each other (regalloc2's `run_with_ctx` pattern):
/// registers, writes in flight, scratch memory and operand lists of either
/// interpreter. A run in a context gives exactly the outcome of a run
/// without one; only allocations are saved.
#[derive(Default)]
pub struct Context {
    source: source::Buffers,
    machine: machine::Buffers,
}

/// A fuel gauge: counts executed instructions against a limit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fuel {
    used: u64,
    limit: u64,
}

impl Fuel {
    pub(crate) fn new(limit: u64) -> Fuel {
        Fuel { used: 0, limit }
    }
    /// Spend one unit; fails once more than the limit has been spent.
    pub(crate) fn spend(&mut self) -> Result<(), RunError> {
        self.used += 1;
        if self.used > self.limit {
            return Err(RunError::OutOfFuel { fuel: self.limit });
        }
        Ok(())
    }
    pub(crate) fn used(&self) -> u64 {
        self.used
    }
}

/// The number a name spells if it is a plain decimal number below `below`
/// (digits only, no leading zero: `"7"` and `"07"` are different names,
/// so only one of them may take the number).
pub(crate) fn plain_number(name: &str, below: u32) -> Option<u32> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 9 || (b.len() > 1 && b.first() == Some(&b'0')) {
        return None;
    }
    let mut n = 0u32;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(c - b'0');
    }
    (n < below).then_some(n)
}

/// A program's labels resolved: each label's block index (first wins;
/// labels are unique in valid programs) and each block's
/// [`trace::label_hash`]. Labels `b<number>` (the generator's and the
/// compiler's) are found through the dense table `by_number`, any other
/// label through `index`.
pub(crate) struct Labels<'p> {
    by_number: Vec<usize>,
    index: FxHashMap<&'p str, usize>,
    hashes: Vec<u64>,
}

/// No block: an entry of [`Labels::by_number`] not taken.
const NO_BLOCK: usize = usize::MAX;

impl Labels<'_> {
    /// The number of a label `b<number>` below the table's bound.
    fn number(&self, label: &str) -> Option<usize> {
        let digits = label.strip_prefix('b')?;
        plain_number(digits, self.by_number.len() as u32).map(|n| n as usize)
    }
    /// The block labelled `label` (the first, if several are).
    fn get(&self, label: &str) -> Option<usize> {
        match self.number(label) {
            Some(n) => self.by_number.get(n).copied().filter(|&i| i != NO_BLOCK),
            None => self.index.get(label).copied(),
        }
    }
}

/// Resolve the labels of `p`.
pub(crate) fn label_map(p: &Program) -> Labels<'_> {
    let bound = (2 * p.blocks.len() + 16).min(1 << 20);
    let mut labels = Labels { by_number: vec![NO_BLOCK; bound], index: FxHashMap::default(), hashes: Vec::with_capacity(p.blocks.len()) };
    for (i, b) in p.blocks.iter().enumerate() {
        match labels.number(&b.label) {
            Some(n) => {
                if let Some(slot) = labels.by_number.get_mut(n).filter(|s| **s == NO_BLOCK) {
                    *slot = i;
                }
            }
            None => {
                labels.index.entry(b.label.as_str()).or_insert(i);
            }
        }
        labels.hashes.push(trace::label_hash(&b.label));
    }
    labels
}

/// The blocks a terminator can pass control to, resolved once per program:
/// `jmp`'s target in `first`; `brnz`'s nonzero target in `first` and zero
/// target in `second`. `None` where no block has the label.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Exits {
    first: Option<usize>,
    second: Option<usize>,
    /// [`trace::label_hash`] of the `first` and `second` labels (where
    /// they resolve; an unresolved label is never traced).
    hashes: [u64; 2],
}

impl Exits {
    /// Resolve the labels of `term` with `labels`.
    pub(crate) fn of(term: &schedra_ir::Terminator, labels: &Labels) -> Exits {
        use schedra_ir::TermKind;
        let find = |l: &schedra_ir::SmolStr| labels.get(l);
        // The block a label resolves to carries that very label.
        let hash = |i: Option<usize>| i.and_then(|i| labels.hashes.get(i)).copied().unwrap_or(0);
        let (first, second) = match &term.kind {
            TermKind::End => return Exits::default(),
            TermKind::Jmp(l) => (find(l), None),
            TermKind::Brnz { nonzero, zero, .. } => (find(nonzero), find(zero)),
        };
        Exits { first, second, hashes: [hash(first), hash(second)] }
    }
}

/// Where control goes after `term` given its condition word (`None` for
/// terminators without one) and its resolved `exits`: the successor's index
/// (a block carrying the label) and the label's [`trace::label_hash`], or
/// `None` at `end`. An
/// unknown label is [`RunError::Malformed`] at `at`.
pub(crate) fn successor(term: &schedra_ir::Terminator, cond: Option<u32>, exits: Exits, at: impl Fn() -> Place) -> Result<Option<(usize, u64)>, RunError> {
    use schedra_ir::TermKind;
    let (label, index, hash) = match (&term.kind, cond) {
        (TermKind::End, _) => return Ok(None),
        (TermKind::Jmp(l), _) => (l, exits.first, exits.hashes[0]),
        (TermKind::Brnz { nonzero, zero, .. }, c) => {
            if c.unwrap_or(0) != 0 {
                (nonzero, exits.first, exits.hashes[0])
            } else {
                (zero, exits.second, exits.hashes[1])
            }
        }
    };
    match index {
        Some(i) => Ok(Some((i, hash))),
        None => Err(RunError::Malformed { at: at(), message: format!("no block is labelled `{label}`") }),
    }
}

/// Test helper: parse a program text, failing the test on a parse error.
#[cfg(test)]
pub(crate) fn parse_text(text: &str) -> Program {
    match schedra_ir::parse::parse(text.as_bytes(), None) {
        Ok(p) => p,
        Err(e) => panic!("test program does not parse: {e}\n{text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str, file: &str) -> Program {
        let path = format!("{}/../corpus/spec/{name}/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        parse_text(&text)
    }

    fn lines(name: &str, file: &str, seed: u64) -> String {
        match run(&example(name, file), seed, DEFAULT_FUEL) {
            Ok(o) => format!("{}{:?}", o.effects, o.trace),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn a_discard_records_its_condition_and_its_place_among_the_outputs() {
        let src = parse_text("target kepler\nb0:\n %a = ipa 0\n %c = ipa 1\n st.out 0, %a\n kil.nz %c\n st.out 1, %a\n kil.nz %a\n end\n");
        let o = run(&src, 3, DEFAULT_FUEL).expect("runs");
        let w = world::World::new(3);
        let d = o.effects.channels.get(schedra_ir::target::DISCARD_CHANNEL).expect("discards");
        assert_eq!(d, &vec![vec![w.varying(1), 1], vec![w.varying(0), 2]]);
        assert_eq!(o.effects.outputs(), 2);
        // The machine simulator agrees; a discard moved before the output
        // is another run.
        let good = parse_text("target kepler\nform machine\nb0:\n { i0: ipa $r1, 0 }\n { i0: ipa $r2, 1 } wait 14\n { i0: st.out 0, $r1 }\n { i0: kil.nz $r2 }\n { i0: st.out 1, $r1 }\n { i0: kil.nz $r1 }\n end\n");
        assert_eq!(run(&good, 3, DEFAULT_FUEL).expect("runs").effects, o.effects);
        let moved = parse_text("target kepler\nform machine\nb0:\n { i0: ipa $r1, 0 }\n { i0: ipa $r2, 1 } wait 14\n { i0: kil.nz $r2 }\n { i0: st.out 0, $r1 }\n { i0: st.out 1, $r1 }\n { i0: kil.nz $r1 }\n end\n");
        assert_ne!(run(&moved, 3, DEFAULT_FUEL).expect("runs").effects, o.effects);
    }

    #[test]
    fn labels_resolve_as_a_map_would() {
        let p = parse_text("target v3d71\nb0:\n jmp b01\nb01:\n jmp loop\nloop:\n jmp b999999\nb999999:\n jmp b1\nb1:\n jmp b3\nb3:\n end\n");
        let labels = label_map(&p);
        for (i, b) in p.blocks.iter().enumerate() {
            assert_eq!(labels.get(&b.label), Some(i), "{}", b.label);
            assert_eq!(labels.hashes.get(i), Some(&trace::label_hash(&b.label)));
        }
        for missing in ["b2", "b00", "b", "c1", "b4294967296", ""] {
            assert_eq!(labels.get(missing), None, "{missing}");
        }
        assert_eq!((plain_number("12", 13), plain_number("12", 12), plain_number("012", 99), plain_number("0", 1)), (Some(12), None, None, Some(0)));
    }

    #[test]
    fn proven_examples_behave_like_their_sources() {
        for name in ["v3d71-mul", "r600-swap", "gen8-spill", "v3d71-add-as-shl"] {
            for seed in 0..10 {
                let (s, m) = (lines(name, "src.ir", seed), lines(name, "out.s", seed));
                assert!(!s.is_empty() && !s.starts_with("error"), "{name}: {s}");
                assert_eq!(s, m, "{name} seed {seed}");
            }
        }
    }

    #[test]
    fn a_shared_context_changes_no_outcome() {
        let mut ctx = Context::default();
        let mut programs = Vec::new();
        for name in ["v3d71-mul", "r600-swap", "gen8-spill", "v3d71-mul-too-soon", "r600-swap-split"] {
            programs.push(example(name, "src.ir"));
            programs.push(example(name, "out.s"));
        }
        // A scratch store and a wide value, so that what one run leaves in
        // the buffers would show in the next if it were not cleared.
        programs.push(parse_text("target v3d71\ninput %w = $rf1\nb0:\n scratchw 3, %w\n %a = scratchr 3\n tlbw %a\n end\n"));
        programs.push(parse_text("target v3d71\nb0:\n %a = scratchr 3\n tlbw %a\n end\n"));
        for seed in 0..6 {
            for p in &programs {
                let alone = run(p, seed, DEFAULT_FUEL);
                assert_eq!(prepare(p).run_with(&mut ctx, World::new(seed), DEFAULT_FUEL), alone, "seed {seed}");
            }
        }
    }

    #[test]
    fn latency_and_clobber_examples_misbehave() {
        for name in ["v3d71-mul-too-soon", "r600-swap-split"] {
            assert!((0..10).any(|seed| lines(name, "src.ir", seed) != lines(name, "out.s", seed)), "{name}");
        }
    }
}
