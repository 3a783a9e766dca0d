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
//! the words of the op's last value operand.
//!
//! Invariant: nothing here panics; every malformed op is an `Err(sentence)`.

use super::{eval, scratch::Scratch, world::World};
use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem, Sizes};
use schedra_ir::Operand;

/// One resolved operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An encoding constant (uniform index, offset, export number, constant).
    Index(u32),
    /// An immediate value operand: applies to every word.
    Imm(u32),
    /// A register value: its words.
    Words(Vec<u32>),
}

/// What executing an op does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write these words to the op's destination.
    Write(Vec<u32>),
    /// An effect on a channel, carrying these words.
    Effect(String, Vec<u32>),
    /// Store these words in scratch from this slot.
    ScratchWrite(u32, Vec<u32>),
    /// Nothing observable (thread switch).
    Nothing,
}

/// Resolve `srcs` against the operand kinds of `desc`, reading register
/// operands with `read`. Fails on a wrong operand count or kind.
pub fn args(desc: &OpDesc, srcs: &[Operand], mut read: impl FnMut(&Operand) -> Result<Vec<u32>, String>) -> Result<Vec<Arg>, String> {
    if srcs.len() != desc.operands.len() {
        return Err(format!("`{}` takes {} operands, found {}", desc.name, desc.operands.len(), srcs.len()));
    }
    srcs.iter()
        .zip(desc.operands)
        .enumerate()
        .map(|(i, (op, kind))| match (kind, op) {
            (OperandKind::Index, Operand::Imm(imm)) => Ok(Arg::Index(imm.bits)),
            (OperandKind::Index, _) => Err(format!("operand {} of `{}` must be an integer constant", i + 1, desc.name)),
            (OperandKind::Value, Operand::Imm(imm)) => Ok(Arg::Imm(imm.bits)),
            (OperandKind::Reg, Operand::Imm(_)) => Err(format!("operand {} of `{}` must be a register", i + 1, desc.name)),
            (_, Operand::Label(l)) => Err(format!("operand {} of `{}` is the label `{l}`, not a register", i + 1, desc.name)),
            (_, reg) => read(reg).map(Arg::Words),
        })
        .collect()
}

fn index(args: &[Arg]) -> Result<u32, String> {
    args.iter()
        .find_map(|a| match a {
            Arg::Index(i) => Some(*i),
            _ => None,
        })
        .ok_or_else(|| "the op has no index operand".to_string())
}

/// The words of the last value operand (an immediate is one word).
fn last_value(args: &[Arg]) -> Result<Vec<u32>, String> {
    match args.iter().rev().find(|a| !matches!(a, Arg::Index(_))) {
        Some(Arg::Words(w)) => Ok(w.clone()),
        Some(Arg::Imm(b)) => Ok(vec![*b]),
        _ => Err("the op has no value operand".to_string()),
    }
}

/// Word by word: word i of each operand (immediates broadcast).
fn arithmetic(sem: Sem, args: &[Arg], width: usize) -> Result<Vec<u32>, String> {
    for a in args {
        if let Arg::Words(w) = a {
            if w.len() != width {
                return Err(format!("a {}-register operand in a {width}-register op", w.len()));
            }
        }
    }
    let mut out = Vec::with_capacity(width);
    let mut words = Vec::with_capacity(args.len());
    for i in 0..width {
        words.clear();
        for a in args {
            words.push(match a {
                Arg::Imm(b) | Arg::Index(b) => *b,
                Arg::Words(w) => w.get(i).copied().unwrap_or(0),
            });
        }
        out.push(eval::word(sem, &words).ok_or_else(|| format!("wrong operand count for {sem:?}"))?);
    }
    Ok(out)
}

/// Check the operand sizes the opcode's table row demands: a fixed-size op
/// has its fixed destination and operand sizes; a uniform-size op with a
/// destination has every register operand as wide as the destination.
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

/// Execute `desc` on `args`; `width` is the size of its destination (the
/// number of words a result has). Reads scratch but does not change it.
/// Fails when the sizes do not fit the opcode (see `check_sizes`).
pub fn execute(desc: &OpDesc, args: &[Arg], width: usize, world: &World, scratch: &Scratch) -> Result<Action, String> {
    check_sizes(desc, args, width)?;
    let seq = |f: &dyn Fn(u32) -> u32| (0..width as u32).map(f).collect::<Vec<u32>>();
    Ok(match desc.sem {
        Sem::Uniform => {
            let k = index(args)?;
            Action::Write(seq(&|i| world.uniform(k.wrapping_add(i))))
        }
        Sem::Varying => {
            let k = index(args)?;
            Action::Write(seq(&|i| world.varying(k.wrapping_add(i))))
        }
        Sem::Const => {
            let k = index(args)?;
            Action::Write(seq(&|_| k))
        }
        Sem::Texture => {
            let coords = last_value(args)?;
            Action::Write(seq(&|i| world.texture(&coords, i)))
        }
        Sem::ScratchRead => {
            let k = index(args)?;
            Action::Write(seq(&|i| scratch.read(k.wrapping_add(i))))
        }
        Sem::ScratchWrite => Action::ScratchWrite(index(args)?, last_value(args)?),
        Sem::Output(name, indexed) => {
            let channel = if indexed { format!("{name} {}", index(args)?) } else { name.to_string() };
            Action::Effect(channel, last_value(args)?)
        }
        Sem::ThreadSwitch => Action::Nothing,
        sem => Action::Write(arithmetic(sem, args, width)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::target::by_name;
    use schedra_ir::{Imm, PhysReg};

    fn desc(target: &str, op: &str) -> &'static OpDesc {
        by_name(target).and_then(|t| t.op(op)).expect("op in table")
    }

    #[test]
    fn immediates_broadcast_over_words() {
        let d = desc("gen8", "add");
        let a = vec![Arg::Words(vec![1.0f32.to_bits(), 2.0f32.to_bits()]), Arg::Imm(0.5f32.to_bits())];
        let w = World::new(0);
        let got = execute(d, &a, 2, &w, &Scratch::new(w));
        assert_eq!(got, Ok(Action::Write(vec![1.5f32.to_bits(), 2.5f32.to_bits()])));
    }

    #[test]
    fn fixed_sizes_are_enforced() {
        let t = desc("gen8", "send.tex");
        let w = World::new(0);
        let s = Scratch::new(w);
        assert!(execute(t, &[Arg::Words(vec![1, 2])], 2, &w, &s).is_err());
        assert!(execute(t, &[Arg::Words(vec![1])], 4, &w, &s).is_err());
        assert!(execute(t, &[Arg::Words(vec![1, 2])], 4, &w, &s).is_ok());
    }

    #[test]
    fn size_mismatch_is_an_error() {
        let d = desc("gen8", "add");
        let a = vec![Arg::Words(vec![1, 2]), Arg::Words(vec![1])];
        let w = World::new(0);
        assert!(execute(d, &a, 2, &w, &Scratch::new(w)).is_err());
    }

    #[test]
    fn export_channel_carries_its_index() {
        let d = desc("r600", "export");
        let srcs = [Operand::Imm(Imm::int(3)), Operand::Phys(PhysReg::one(4))];
        let a = args(d, &srcs, |_| Ok(vec![42])).expect("args");
        let w = World::new(0);
        assert_eq!(execute(d, &a, 0, &w, &Scratch::new(w)), Ok(Action::Effect("export 3".into(), vec![42])));
    }

    #[test]
    fn operand_kinds_are_checked() {
        let d = desc("v3d71", "ldunif");
        assert!(args(d, &[Operand::Phys(PhysReg::one(1))], |_| Ok(vec![0])).is_err());
        assert!(args(d, &[], |_| Ok(vec![0])).is_err());
        let t = desc("gen8", "send.tex");
        assert!(args(t, &[Operand::Imm(Imm::int(1))], |_| Ok(vec![0])).is_err());
    }

    #[test]
    fn texture_and_uniforms_come_from_the_world() {
        let w = World::new(5);
        let s = Scratch::new(w);
        let t = desc("gen8", "send.tex");
        let got = execute(t, &[Arg::Words(vec![7, 8])], 4, &w, &s);
        assert_eq!(got, Ok(Action::Write((0..4).map(|i| w.texture(&[7, 8], i)).collect())));
        let u = desc("v3d71", "ldunif");
        assert_eq!(execute(u, &[Arg::Index(2)], 1, &w, &s), Ok(Action::Write(vec![w.uniform(2)])));
    }
}
