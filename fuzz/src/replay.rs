//! Replaying a verifier counterexample on the interpreters: the
//! cross-check of every value claim the verifier makes.
//!
//! A counterexample's input words ([`schedra_verify::witness::InputWord`])
//! are pinned in the world of both runs ([`crate::interp::world::Pins`]);
//! every word it does not give is drawn from [`REPLAY_SEED`]. The source
//! and the machine program run on that world, and the first effect that
//! differs is reported: channels in name order, effects in program order
//! within a channel (the order `schedra run` prints them), then the branch
//! traces; a machine program that stops with an error differs too.
//!
//! Invariant: [`replay`] reports a [`Difference`] only when the two runs
//! really behave differently on exactly these words.

use crate::interp::world::{Pins, World};
use crate::interp::{self, Effects, Outcome, RunError};
use schedra_ir::Program;
use schedra_verify::witness::{InputKind, InputWord};
use schedra_verify::Report;
use std::fmt;

/// The seed of every word a counterexample does not pin.
pub const REPLAY_SEED: u64 = 0;

/// Fuel of the source run of a replay.
pub const REPLAY_FUEL: u64 = interp::DEFAULT_FUEL;

/// The pins that make a world give exactly `words`.
pub fn pins(words: &[InputWord]) -> Pins {
    let mut p = Pins::default();
    for w in words {
        let reg = schedra_ir::Reg::try_from(w.index).ok();
        match (w.input, reg) {
            (InputKind::Reg, Some(r)) => {
                p.input_regs.insert(r, w.word);
            }
            (InputKind::Garbage, Some(r)) => {
                p.garbage_regs.insert(r, w.word);
            }
            (InputKind::Scratch, _) => {
                p.garbage_scratch.insert(w.index, w.word);
            }
            (InputKind::Uniform, _) => {
                p.uniforms.insert(w.index, w.word);
            }
            (InputKind::Varying, _) => {
                p.varyings.insert(w.index, w.word);
            }
            (InputKind::Texture, _) => {
                p.textures.insert((w.coords.clone(), w.index), w.word);
            }
            (InputKind::Landing, _) => {
                p.landings.insert(u64::from(w.index), w.word);
            }
            (InputKind::Reg | InputKind::Garbage, None) => {}
        }
    }
    p
}

/// The first way two runs on the same words differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// Effect `index` (0-based, program order) on `channel`: the words of
    /// each side, `None` for a side that made fewer effects there.
    Effect {
        /// The channel.
        channel: String,
        /// Which of the channel's effects.
        index: usize,
        /// The source's words.
        source: Option<Vec<u32>>,
        /// The machine's words.
        machine: Option<Vec<u32>>,
    },
    /// The same effects, but the branches taken differ.
    Branches,
    /// The machine program stops with an error.
    MachineFails(String),
}

fn words(w: &Option<Vec<u32>>) -> String {
    match w {
        Some(w) => w.iter().map(|x| format!("{x:#010x}")).collect::<Vec<_>>().join(" "),
        None => "nothing".into(),
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Effect { channel, index, source, machine } => {
                write!(f, "effect {index} on `{channel}`: the source writes {}, the machine {}", words(source), words(machine))
            }
            Difference::Branches => f.write_str("the effects agree but the branches taken differ"),
            Difference::MachineFails(e) => write!(f, "the machine program fails: {e}"),
        }
    }
}

/// The first effect that differs between `a` (source) and `b` (machine):
/// channels in name order, effects in program order within one.
pub fn first_difference(a: &Effects, b: &Effects) -> Option<Difference> {
    let mut names: Vec<&String> = a.channels.keys().chain(b.channels.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let (x, y) = (a.channels.get(name.as_str()), b.channels.get(name.as_str()));
        let n = x.map_or(0, Vec::len).max(y.map_or(0, Vec::len));
        for i in 0..n {
            let (p, q) = (x.and_then(|v| v.get(i)), y.and_then(|v| v.get(i)));
            if p != q {
                return Some(Difference::Effect { channel: name.clone(), index: i, source: p.cloned(), machine: q.cloned() });
            }
        }
    }
    None
}

/// What one replay found.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The source run.
    pub source: Outcome,
    /// The machine run (an error when it failed).
    pub machine: Result<Outcome, RunError>,
    /// The first difference, if the runs differ.
    pub difference: Option<Difference>,
}

/// Run `src` and `machine` on `words` (everything else from
/// [`REPLAY_SEED`]) and compare them. An error when the source itself
/// does not run (then nothing can be compared).
pub fn replay(src: &Program, machine: &Program, words: &[InputWord]) -> Result<Replayed, RunError> {
    let world = World::pinned(REPLAY_SEED, pins(words));
    let source = interp::prepare(src).run_in(world.clone(), REPLAY_FUEL)?;
    let fuel = source.executed.saturating_mul(4).saturating_add(10_000);
    // A counterexample is about time and meaning: the machine runs even
    // where it breaks a hardware rule (the rules are checked apart).
    let ran = interp::prepare_ignoring_rules(machine).run_in(world, fuel);
    let difference = match &ran {
        Err(e) => Some(Difference::MachineFails(e.to_string())),
        Ok(m) => first_difference(&source.effects, &m.effects).or_else(|| (m.trace != source.trace).then_some(Difference::Branches)),
    };
    Ok(Replayed { source, machine: ran, difference })
}

/// The replay of one violation of a report.
#[derive(Clone, Debug)]
pub struct ViolationReplay {
    /// Index of the violation in the report.
    pub violation: usize,
    /// What the runs showed: the first difference (`None`: they agree), or
    /// the source run's error.
    pub outcome: Result<Option<Difference>, String>,
}

impl ViolationReplay {
    /// Whether the counterexample replays: the runs differ on its words.
    pub fn replays(&self) -> bool {
        matches!(self.outcome, Ok(Some(_)))
    }
}

/// Replay every violation of `report` that carries a counterexample.
pub fn replay_report(src: &Program, machine: &Program, report: &Report) -> Vec<ViolationReplay> {
    report
        .violations
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let cex = v.counterexample.as_ref()?;
            let outcome = replay(src, machine, &cex.words).map(|r| r.difference).map_err(|e| e.to_string());
            Some(ViolationReplay { violation: i, outcome })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Program {
        schedra_ir::parse::parse(text.as_bytes(), None).expect("the test program parses")
    }

    #[test]
    fn pinned_words_reach_both_interpreters_and_the_first_difference_is_named() {
        let src = parse("target v3d71\nb0:\n    %a = ldunif 0\n    %b = ldunif 1\n    %c = fadd %a, %b\n    tlbw %c\n    end\n");
        // The machine adds uniform 0 to itself instead of to uniform 1.
        let mach = parse("target v3d71\nform machine\nb0:\n    { sig: ldunif 0 }\n    { add: mov $rf1, $rf0 ; sig: ldunif 1 }\n    { add: fadd $rf2, $rf1, $rf1 }\n    { add: tlbw $rf2 ; sig: thrsw }\n    { }\n    { }\n    end\n");
        let w = |index, word| InputWord { input: InputKind::Uniform, index, coords: vec![], word };
        let same = replay(&src, &mach, &[w(0, 1.0f32.to_bits()), w(1, 1.0f32.to_bits())]).expect("runs");
        assert_eq!(same.difference, None, "equal uniforms hide the fault");
        let differ = replay(&src, &mach, &[w(0, 1.0f32.to_bits()), w(1, 2.0f32.to_bits())]).expect("runs");
        let want = Difference::Effect { channel: "tlb".into(), index: 0, source: Some(vec![3.0f32.to_bits()]), machine: Some(vec![2.0f32.to_bits()]) };
        assert_eq!(differ.difference, Some(want));
    }
}
