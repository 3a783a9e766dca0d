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

use super::words::Words;
use super::{eval, scratch::Scratch, world::World};
use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem, Sizes};
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
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Channel::Plain(name) => f.write_str(name),
            Channel::Indexed(name, k) => write!(f, "{name} {k}"),
        }
    }
}

impl Channel {
    /// Record an effect of `words` on this channel in `effects`.
    pub fn record(self, effects: &mut super::Effects, words: &[u32]) {
        match self {
            Channel::Plain(name) => effects.push(name, words.to_vec()),
            Channel::Indexed(..) => effects.push(&self.to_string(), words.to_vec()),
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

/// Where a one-word operand of a [`Fast`] op comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastSrc {
    /// A constant (an immediate or index operand).
    Const(u32),
    /// One physical register.
    Reg(schedra_ir::Reg),
    /// A virtual register's slot (source form); it must hold one word when
    /// the op runs, or the op takes the general path.
    Slot(u32),
}

/// An arithmetic op of one-word operands and a one-word result, or a
/// one-word load of an outside input, a constant or a scratch slot by its
/// index (`ldunif 3`, `ldvary 0`, `ldconst 7`, `scratchr 2`), decoded so that running it needs no [`Arg`]
/// list, size checks or [`Action`] dispatch. Made only where [`args`] +
/// [`execute`] would, for one-word operands and a one-word destination,
/// succeed with exactly `Write([w])` for the word `w` that [`Fast::eval`]
/// computes.
#[derive(Clone, Copy, Debug)]
pub struct Fast {
    /// What the op computes.
    pub sem: Sem,
    /// Its operands, `n` of them.
    pub srcs: [FastSrc; MAX_ARITY],
    /// How many operands.
    pub n: usize,
}

impl Fast {
    /// The fast form of `desc` on `srcs` writing one register, if there is
    /// one; `slot(i)` is the slot of operand `i` when it is a virtual
    /// register (`None`: no virtual registers here, as in machine form).
    pub fn plan(desc: &OpDesc, srcs: &[Operand], slot: impl Fn(usize) -> Option<u32>) -> Option<Fast> {
        let n = srcs.len();
        if desc.sizes != Sizes::Uniform || desc.dest == Dest::None || fast_arity(desc.sem) != Some(n) || n != desc.operands.len() || n > MAX_ARITY {
            return None;
        }
        let mut out = [FastSrc::Const(0); MAX_ARITY];
        for (i, o) in out.iter_mut().enumerate().take(n) {
            let (Some(op), Some(kind)) = (srcs.get(i), desc.operands.get(i)) else { return None };
            *o = match (kind, op) {
                (OperandKind::Index | OperandKind::Value, Operand::Imm(imm)) => FastSrc::Const(imm.bits),
                (OperandKind::Index, _) | (OperandKind::Reg, Operand::Imm(_)) | (_, Operand::Label(_)) => return None,
                (_, Operand::Phys(r)) if r.size == 1 => FastSrc::Reg(r.base),
                (_, Operand::Virt(v)) if v.size.is_none_or(|s| s == 1) => FastSrc::Slot(slot(i)?),
                _ => return None,
            };
        }
        Some(Fast { sem: desc.sem, srcs: out, n })
    }

    /// The result word, reading each operand with `word` (`None` from
    /// `word`: not one word here, take the general path), outside inputs
    /// from `world` and scratch slots from `scratch`.
    #[inline]
    pub fn eval(&self, world: &World, scratch: &Scratch, mut word: impl FnMut(FastSrc) -> Option<u32>) -> Option<u32> {
        let [s0, s1, s2] = self.srcs;
        let a = word(s0)?;
        // A load's one operand is its index (`plan` took it from an
        // immediate): what `execute` writes for width 1.
        match self.sem {
            Sem::Uniform => return Some(world.uniform(a)),
            Sem::Varying => return Some(world.varying(a)),
            Sem::Const => return Some(a),
            Sem::ScratchRead => return Some(scratch.read(a)),
            _ => {}
        }
        let b = if self.n > 1 { word(s1)? } else { 0 };
        let c = if self.n > 2 { word(s2)? } else { 0 };
        // `plan` made `n` the sem's arity.
        eval::apply(self.sem, a, b, c)
    }
}

/// An output op of one value operand on a plain channel (`tlbw a`) or a
/// one-word scratch store (`scratchw 2, a`), decoded so that running it
/// needs no [`Arg`] list, size checks or [`Action`] dispatch. Made only
/// where [`args`] + [`execute`] would, for a one-word operand `w`, succeed
/// with exactly `Effect(Channel::Plain(channel), [w])` or
/// `ScratchWrite(slot, [w])`.
#[derive(Clone, Copy, Debug)]
pub struct FastOut {
    /// Where the word goes.
    pub to: Sink,
    /// The operand whose word it is.
    pub src: FastSrc,
}

/// Where a [`FastOut`] word goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// An effect on this plain channel.
    Channel(&'static str),
    /// A store to this scratch slot.
    Scratch(u32),
}

impl FastOut {
    /// The fast form of `desc` on `srcs` with no destination written, if
    /// there is one; `slot` as for [`Fast::plan`].
    pub fn plan(desc: &OpDesc, srcs: &[Operand], slot: impl Fn(usize) -> Option<u32>) -> Option<FastOut> {
        if desc.sizes != Sizes::Uniform || desc.dest != Dest::None {
            return None;
        }
        // The value operand is the last one; a store's index comes first.
        let (to, kind, op) = match (desc.sem, desc.operands, srcs) {
            (Sem::Output(channel, false), [kind], [op]) => (Sink::Channel(channel), kind, op),
            (Sem::ScratchWrite, [OperandKind::Index, kind], [Operand::Imm(at), op]) => (Sink::Scratch(at.bits), kind, op),
            _ => return None,
        };
        let i = srcs.len() - 1;
        let src = match (kind, op) {
            (OperandKind::Value, Operand::Imm(imm)) => FastSrc::Const(imm.bits),
            (OperandKind::Value | OperandKind::Reg, Operand::Phys(r)) if r.size == 1 => FastSrc::Reg(r.base),
            (OperandKind::Value | OperandKind::Reg, Operand::Virt(v)) if v.size.is_none_or(|s| s == 1) => FastSrc::Slot(slot(i)?),
            _ => return None,
        };
        Some(FastOut { to, src })
    }
}

/// The operand count of a [`Fast`] op of `sem`: an arithmetic sem's arity,
/// or 1 (the index) for a load of a uniform, a varying or a constant;
/// `None` for every other sem.
fn fast_arity(sem: Sem) -> Option<usize> {
    match sem {
        Sem::Uniform | Sem::Varying | Sem::Const | Sem::ScratchRead => Some(1),
        _ => eval::arity(sem),
    }
}

/// Resolve `srcs` against the operand kinds of `desc` into `out` (cleared
/// first), reading register operands with `read`, which is given the
/// operand's position and the operand. Fails on a wrong operand count or
/// kind, or when `read` fails; operands are resolved in order, so the first
/// failing operand is the one reported.
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

fn index(args: &[Arg]) -> Result<u32, String> {
    args.iter()
        .find_map(|a| match a {
            Arg::Index(i) => Some(*i),
            _ => None,
        })
        .ok_or_else(|| "the op has no index operand".to_string())
}

/// The words of the last value operand (an immediate is one word).
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
    fn fast_loads_agree_with_the_general_path() {
        let w = World::new(7);
        for op in ["ldunif", "ldvary", "ldconst", "ldunifrf"] {
            let d = desc("v3d71", op);
            let srcs = [Operand::Imm(Imm::int(5))];
            let f = Fast::plan(d, &srcs, |_| None).expect("a one-word load has a fast form");
            let got = f.eval(&w, &Scratch::new(w.clone()), |s| if let FastSrc::Const(c) = s { Some(c) } else { None });
            let mut a = Vec::new();
            args(d, &srcs, &mut a, |_, _| Ok(Words::one(0))).expect("args");
            assert_eq!(execute(d, &a, 1, &w, &Scratch::new(w.clone())), Ok(Action::Write(Words::one(got.expect("evaluates")))), "{op}");
        }
    }

    #[test]
    fn fast_outputs_agree_with_the_general_path() {
        let w = World::new(3);
        let d = desc("v3d71", "tlbw");
        for (srcs, word) in [(vec![Operand::Phys(PhysReg::one(4))], 77u32), (vec![Operand::Imm(Imm::int(-2))], (-2i32) as u32)] {
            let f = FastOut::plan(d, &srcs, |_| None).expect("a one-word output has a fast form");
            let got = match f.src {
                FastSrc::Const(c) => c,
                _ => 77,
            };
            let mut a = Vec::new();
            args(d, &srcs, &mut a, |_, _| Ok(Words::one(77))).expect("args");
            assert_eq!(f.to, Sink::Channel("tlb"));
            assert_eq!(execute(d, &a, 1, &w, &Scratch::new(w.clone())), Ok(Action::Effect(Channel::Plain("tlb"), Words::one(got))));
            assert_eq!(got, word);
        }
        // Indexed channels, wide operands and non-outputs: no fast form.
        assert!(FastOut::plan(desc("r600", "export"), &[Operand::Imm(Imm::int(3)), Operand::Phys(PhysReg::one(4))], |_| None).is_none());
        assert!(FastOut::plan(d, &[Operand::Phys(PhysReg { base: 4, size: 2 })], |_| None).is_none());
        assert!(FastOut::plan(desc("v3d71", "mov"), &[Operand::Phys(PhysReg::one(4))], |_| None).is_none());
        // A one-word scratch store, and the load that reads it back.
        let store = [Operand::Imm(Imm::int(2)), Operand::Phys(PhysReg::one(4))];
        let f = FastOut::plan(desc("v3d71", "scratchw"), &store, |_| None).expect("a one-word store has a fast form");
        assert_eq!((f.to, f.src), (Sink::Scratch(2), FastSrc::Reg(4)));
        let mut a = Vec::new();
        args(desc("v3d71", "scratchw"), &store, &mut a, |_, _| Ok(Words::one(9))).expect("args");
        assert_eq!(execute(desc("v3d71", "scratchw"), &a, 1, &w, &Scratch::new(w.clone())), Ok(Action::ScratchWrite(2, Words::one(9))));
        let mut sc = Scratch::new(w.clone());
        sc.write(2, &[9]);
        let load = Fast::plan(desc("v3d71", "scratchr"), &[Operand::Imm(Imm::int(2))], |_| None).expect("a one-word scratch load has a fast form");
        assert_eq!(load.eval(&w, &sc, |s| if let FastSrc::Const(c) = s { Some(c) } else { None }), Some(9));
    }

    #[test]
    fn fast_form_agrees_with_the_general_path() {
        let d = desc("v3d71", "fadd");
        let srcs = [Operand::Phys(PhysReg::one(4)), Operand::Imm(Imm::f32(0.5))];
        let f = Fast::plan(d, &srcs, |_| None).expect("one-word fadd has a fast form");
        let x = 1.25f32.to_bits();
        let got = f.eval(&World::new(0), &Scratch::new(World::new(0)), |s| match s {
            FastSrc::Const(c) => Some(c),
            FastSrc::Reg(4) => Some(x),
            _ => None,
        });
        let mut a = Vec::new();
        args(d, &srcs, &mut a, |_, _| Ok(Words::one(x))).expect("args");
        let w = World::new(0);
        assert_eq!(execute(d, &a, 1, &w, &Scratch::new(w.clone())), Ok(Action::Write(Words::one(got.expect("evaluates")))));
        // Not one word, not arithmetic, or not valid as written: no fast form.
        let wide = [Operand::Phys(PhysReg { base: 4, size: 2 }), Operand::Imm(Imm::f32(0.5))];
        assert!(Fast::plan(desc("gen8", "add"), &wide, |_| None).is_none());
        assert!(Fast::plan(desc("v3d71", "ldunif"), &[Operand::Phys(PhysReg::one(1))], |_| None).is_none());
        assert!(Fast::plan(desc("gen8", "send.tex"), &[Operand::Phys(PhysReg::one(1))], |_| None).is_none());
        assert!(Fast::plan(d, &srcs[..1], |_| None).is_none());
        assert!(Fast::plan(d, &[srcs[0].clone(), Operand::Label("b1".into())], |_| None).is_none());
    }
}
