//! The meaning of one op, shared by both interpreters: given the op's
//! description and its operand words, what it does ([`Action`]).
//!
//! Each interpreter resolves operands its own way (the source interpreter
//! from virtual and physical registers at once; the machine simulator from
//! the register file at issue) through [`args`], and then applies the
//! returned [`Action`] its own way (at once, or as a delayed write).
//!
//! Rules: `Index` operands must be immediates (their bits); `Reg` operands
//! must be registers; `Value` operands are either. An arithmetic op of width
//! N (its destination's size) works word by word; an immediate operand
//! applies to every word, a register operand must have exactly N words.
//! Outside inputs of width N take consecutive indices (`index + i`); a
//! texture result's word i is `world.texture(coordinate words, i)`; scratch
//! reads and writes use consecutive slots from the offset. An effect carries
//! the words of the op's last value operand; a discard's effect
//! ([`Sem::Discard`]) also carries its place, the number of output effects
//! before it in the run ([`Channel::record`]).
//!
//! Invariant: nothing here panics; every malformed op is an `Err(sentence)`.

use super::words::Words;
use super::{eval, scratch::Scratch, world::World};
use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem, Sizes, DISCARD_CHANNEL};
use schedra_ir::Operand;
use std::fmt;

/// One resolved operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An encoding constant (uniform index, offset, export number, constant).
    Index(u32),
    /// An immediate value operand: applies to every word.
    Imm(u32),
    /// A register value: its words.
    Words(Words),
}

/// The output channel an effect goes to (`tlb`, `rt`, `export 3`), kept
/// unformatted until the effect is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A channel with a fixed name.
    Plain(&'static str),
    /// A numbered channel: name and number (`export 3`).
    Indexed(&'static str, u32),
    /// A fragment discard ([`Sem::Discard`]): recorded on
    /// [`DISCARD_CHANNEL`] with its place among the outputs appended.
    Discard,
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Channel::Plain(name) => f.write_str(name),
            Channel::Indexed(name, k) => write!(f, "{name} {k}"),
            Channel::Discard => f.write_str(DISCARD_CHANNEL),
        }
    }
}

impl Channel {
    /// Record an effect of `words` on this channel in `effects`. A
    /// discard's entry is its condition words followed by the number of
    /// output effects recorded before it.
    pub fn record(self, effects: &mut super::Effects, words: &[u32]) {
        match self {
            Channel::Plain(name) => effects.push(name, words.to_vec()),
            Channel::Indexed(..) => effects.push(&self.to_string(), words.to_vec()),
            Channel::Discard => {
                let place = effects.outputs() as u32;
                effects.push(DISCARD_CHANNEL, words.iter().copied().chain([place]).collect());
            }
        }
    }
}

/// What executing an op does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write these words to the op's destination.
    Write(Words),
    /// An effect on a channel, carrying these words.
    Effect(Channel, Words),
    /// Store these words in scratch from this slot.
    ScratchWrite(u32, Words),
    /// Write these words to the texture unit's coordinates.
    TexCoord(Words),
    /// Start a texture lookup with these first coordinate words.
    TexLookup(Words),
    /// Write the texture unit's next result word to the op's destination.
    TexResult,
    /// Nothing observable (thread switch).
    Nothing,
}

/// Resolve `srcs` against the operand kinds of `desc` into `out` (cleared
/// first), reading register operands with `read`, which is given the
/// operand's position and the operand. Fails on a wrong operand count or
/// kind, or when `read` fails; operands are resolved in order, so the first
/// failing operand is the one reported.
#[inline]
pub fn args(desc: &OpDesc, srcs: &[Operand], out: &mut Vec<Arg>, mut read: impl FnMut(usize, &Operand) -> Result<Words, String>) -> Result<(), String> {
    out.clear();
    if srcs.len() != desc.operands.len() {
        return Err(format!("`{}` takes {} operands, found {}", desc.name, desc.operands.len(), srcs.len()));
    }
    for (i, (op, kind)) in srcs.iter().zip(desc.operands).enumerate() {
        out.push(match (kind, op) {
            (OperandKind::Index, Operand::Imm(imm)) => Arg::Index(imm.bits),
            (OperandKind::Index, _) => return Err(format!("operand {} of `{}` must be an integer constant", i + 1, desc.name)),
            (OperandKind::Value, Operand::Imm(imm)) => Arg::Imm(imm.bits),
            (OperandKind::Reg, Operand::Imm(_)) => return Err(format!("operand {} of `{}` must be a register", i + 1, desc.name)),
            (_, Operand::Label(l)) => return Err(format!("operand {} of `{}` is the label `{l}`, not a register", i + 1, desc.name)),
            (_, reg) => Arg::Words(read(i, reg)?),
        });
    }
    Ok(())
}

#[inline]
fn index(args: &[Arg]) -> Result<u32, String> {
    args.iter()
        .find_map(|a| match a {
            Arg::Index(i) => Some(*i),
            _ => None,
        })
        .ok_or_else(|| "the op has no index operand".to_string())
}

/// The words of the last value operand (an immediate is one word).
#[inline]
fn last_value(args: &[Arg]) -> Result<Words, String> {
    match args.iter().rev().find(|a| !matches!(a, Arg::Index(_))) {
        Some(Arg::Words(w)) => Ok(w.clone()),
        Some(Arg::Imm(b)) => Ok(Words::one(*b)),
        _ => Err("the op has no value operand".to_string()),
    }
}

/// The most operands an arithmetic op takes (`fmad`).
const MAX_ARITY: usize = 3;

/// Word by word: word i of each operand (immediates broadcast).
#[inline]
fn arithmetic(sem: Sem, args: &[Arg], width: usize) -> Result<Words, String> {
    for a in args {
        if let Arg::Words(w) = a {
            if w.len() != width {
                return Err(format!("a {}-register operand in a {width}-register op", w.len()));
            }
        }
    }
    let mut out = Words::new();
    let mut words = [0u32; MAX_ARITY];
    for i in 0..width {
        // More operands than any arithmetic op takes: `eval::word` would
        // refuse them, so refuse them the same way without a buffer.
        let Some(buf) = words.get_mut(..args.len()) else { return Err(format!("wrong operand count for {sem:?}")) };
        for (slot, a) in buf.iter_mut().zip(args) {
            *slot = match a {
                Arg::Imm(b) | Arg::Index(b) => *b,
                Arg::Words(w) => w.get(i).copied().unwrap_or(0),
            };
        }
        out.push(eval::word(sem, buf).ok_or_else(|| format!("wrong operand count for {sem:?}"))?);
    }
    Ok(out)
}

/// Check the operand sizes the opcode's table row demands: a fixed-size op
/// has its fixed destination and operand sizes; a uniform-size op with a
/// destination has every register operand as wide as the destination.
#[inline]
fn check_sizes(desc: &OpDesc, args: &[Arg], width: usize) -> Result<(), String> {
    let (want_dest, want_src) = match desc.sizes {
        Sizes::Fixed { dest, src } => ((dest > 0).then_some(dest as usize), Some(src as usize)),
        Sizes::Uniform if desc.dest != Dest::None => (Some(width), Some(width)),
        _ => (None, None),
    };
    if let Some(d) = want_dest.filter(|&d| d != width) {
        return Err(format!("`{}` writes {d} registers, not {width}", desc.name));
    }
    for a in args {
        if let (Arg::Words(w), Some(n)) = (a, want_src) {
            if w.len() != n {
                return Err(format!("`{}` takes {n}-register operands, not {}", desc.name, w.len()));
            }
        }
    }
    Ok(())
}

/// `width` words, word i being `f(i)`.
fn seq(width: usize, f: impl Fn(u32) -> u32) -> Words {
    Words::from_fn(width, f)
}

/// Execute `desc` on `args`; `width` is the size of its destination (the
/// number of words a result has). Reads scratch but does not change it.
/// Fails when the sizes do not fit the opcode (see `check_sizes`).
#[inline]
pub fn execute(desc: &OpDesc, args: &[Arg], width: usize, world: &World, scratch: &Scratch) -> Result<Action, String> {
    check_sizes(desc, args, width)?;
    Ok(match desc.sem {
        Sem::Uniform => {
            let k = index(args)?;
            Action::Write(seq(width, |i| world.uniform(k.wrapping_add(i))))
        }
        Sem::Varying => {
            let k = index(args)?;
            Action::Write(seq(width, |i| world.varying(k.wrapping_add(i))))
        }
        Sem::Const => {
            let k = index(args)?;
            Action::Write(seq(width, |_| k))
        }
        Sem::Texture => {
            let coords = last_value(args)?;
            Action::Write(seq(width, |i| world.texture(&coords, i)))
        }
        Sem::ScratchRead => {
            let k = index(args)?;
            Action::Write(seq(width, |i| scratch.read(k.wrapping_add(i))))
        }
        Sem::ScratchWrite => Action::ScratchWrite(index(args)?, last_value(args)?),
        Sem::Output(name, indexed) => {
            let channel = if indexed { Channel::Indexed(name, index(args)?) } else { Channel::Plain(name) };
            Action::Effect(channel, last_value(args)?)
        }
        Sem::Discard => Action::Effect(Channel::Discard, last_value(args)?),
        Sem::ThreadSwitch | Sem::TexBarrier => Action::Nothing,
        Sem::TexCoord => Action::TexCoord(last_value(args)?),
        Sem::TexLookup => Action::TexLookup(last_value(args)?),
        Sem::TexResult => Action::TexResult,
        sem => Action::Write(arithmetic(sem, args, width)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::target::by_name;
    use schedra_ir::{Imm, PhysReg};

    fn ws(words: &[u32]) -> Words {
        Words::from(words)
    }

    fn desc(target: &str, op: &str) -> &'static OpDesc {
        by_name(target).and_then(|t| t.op(op)).expect("op in table")
    }

    #[test]
    fn immediates_broadcast_over_words() {
        let d = desc("gen8", "add");
        let a = vec![Arg::Words(ws(&[1.0f32.to_bits(), 2.0f32.to_bits()])), Arg::Imm(0.5f32.to_bits())];
        let w = World::new(0);
        let got = execute(d, &a, 2, &w, &Scratch::new(w.clone()));
        assert_eq!(got, Ok(Action::Write(ws(&[1.5f32.to_bits(), 2.5f32.to_bits()]))));
    }

    #[test]
    fn fixed_sizes_are_enforced() {
        let t = desc("gen8", "send.tex");
        let w = World::new(0);
        let s = Scratch::new(w.clone());
        assert!(execute(t, &[Arg::Words(ws(&[1, 2]))], 2, &w, &s).is_err());
        assert!(execute(t, &[Arg::Words(ws(&[1]))], 4, &w, &s).is_err());
        assert!(execute(t, &[Arg::Words(ws(&[1, 2]))], 4, &w, &s).is_ok());
    }

    #[test]
    fn size_mismatch_is_an_error() {
        let d = desc("gen8", "add");
        let a = vec![Arg::Words(ws(&[1, 2])), Arg::Words(ws(&[1]))];
        let w = World::new(0);
        assert!(execute(d, &a, 2, &w, &Scratch::new(w.clone())).is_err());
    }

    #[test]
    fn export_channel_carries_its_index() {
        let d = desc("r600", "export");
        let srcs = [Operand::Imm(Imm::int(3)), Operand::Phys(PhysReg::one(4))];
        let mut a = Vec::new();
        args(d, &srcs, &mut a, |_, _| Ok(Words::one(42))).expect("args");
        let wd = World::new(0);
        let got = execute(d, &a, 0, &wd, &Scratch::new(wd.clone()));
        assert_eq!(got, Ok(Action::Effect(Channel::Indexed("export", 3), Words::one(42))));
        assert_eq!(Channel::Indexed("export", 3).to_string(), "export 3");
    }

    #[test]
    fn operand_kinds_are_checked() {
        let d = desc("v3d71", "ldunif");
        let mut out = Vec::new();
        assert!(args(d, &[Operand::Phys(PhysReg::one(1))], &mut out, |_, _| Ok(Words::one(0))).is_err());
        assert!(args(d, &[], &mut out, |_, _| Ok(Words::one(0))).is_err());
        let t = desc("gen8", "send.tex");
        assert!(args(t, &[Operand::Imm(Imm::int(1))], &mut out, |_, _| Ok(Words::one(0))).is_err());
    }

    #[test]
    fn texture_and_uniforms_come_from_the_world() {
        let w = World::new(5);
        let s = Scratch::new(w.clone());
        let t = desc("gen8", "send.tex");
        let got = execute(t, &[Arg::Words(ws(&[7, 8]))], 4, &w, &s);
        assert_eq!(got, Ok(Action::Write((0..4).map(|i| w.texture(&[7, 8], i)).collect())));
        let u = desc("v3d71", "ldunif");
        assert_eq!(execute(u, &[Arg::Index(2)], 1, &w, &s), Ok(Action::Write(Words::one(w.uniform(2)))));
    }

    #[test]
    fn one_word_loads_outputs_and_stores() {
        let w = World::new(7);
        let mut sc = Scratch::new(w.clone());
        sc.write(5, &[99]);
        let run = |target: &str, op: &str, srcs: &[Operand], reg: u32, width: usize, sc: &Scratch| {
            let d = desc(target, op);
            let mut a = Vec::new();
            args(d, srcs, &mut a, |_, _| Ok(Words::one(reg))).expect("args");
            execute(d, &a, width, &w, sc)
        };
        let five = [Operand::Imm(Imm::int(5))];
        assert_eq!(run("v3d71", "ldunif", &five, 0, 1, &sc), Ok(Action::Write(Words::one(w.uniform(5)))));
        assert_eq!(run("v3d71", "ldunifrf", &five, 0, 1, &sc), Ok(Action::Write(Words::one(w.uniform(5)))));
        assert_eq!(run("v3d71", "ldvary", &five, 0, 1, &sc), Ok(Action::Write(Words::one(w.varying(5)))));
        assert_eq!(run("v3d71", "ldconst", &five, 0, 1, &sc), Ok(Action::Write(Words::one(5))));
        assert_eq!(run("v3d71", "scratchr", &five, 0, 1, &sc), Ok(Action::Write(Words::one(99))));
        assert_eq!(run("v3d71", "scratchr", &[Operand::Imm(Imm::int(6))], 0, 1, &sc), Ok(Action::Write(Words::one(w.garbage_scratch(6)))));
        assert_eq!(run("v3d71", "tlbw", &[Operand::Phys(PhysReg::one(4))], 77, 1, &sc), Ok(Action::Effect(Channel::Plain("tlb"), Words::one(77))));
        assert_eq!(run("v3d71", "tlbw", &[Operand::Imm(Imm::int(-2))], 0, 1, &sc), Ok(Action::Effect(Channel::Plain("tlb"), Words::one((-2i32) as u32))));
        let store = [Operand::Imm(Imm::int(2)), Operand::Phys(PhysReg::one(4))];
        assert_eq!(run("v3d71", "scratchw", &store, 9, 1, &sc), Ok(Action::ScratchWrite(2, Words::one(9))));
        let x = 1.25f32.to_bits();
        let fadd = [Operand::Phys(PhysReg::one(4)), Operand::Imm(Imm::f32(0.5))];
        assert_eq!(run("v3d71", "fadd", &fadd, x, 1, &sc), Ok(Action::Write(Words::one(1.75f32.to_bits()))));
        // Operands of the wrong kind or count are refused before executing.
        let mut a = Vec::new();
        assert!(args(desc("v3d71", "fadd"), &fadd[..1], &mut a, |_, _| Ok(Words::one(0))).is_err());
        assert!(args(desc("v3d71", "fadd"), &[fadd[0].clone(), Operand::Label("b1".into())], &mut a, |_, _| Ok(Words::one(0))).is_err());
    }
}
