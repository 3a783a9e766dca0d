//! A concrete walk of both programs along one path: how a counterexample
//! stated at a later block's entry becomes input words of the program.
//!
//! An obligation of a block other than the program entry is refuted for
//! *some* words at that block's entry (block-entry symbols, register
//! contents the facts do not name). Those words may be unreachable: no
//! input makes the programs arrive there with them. Before such a
//! refutation is reported, [`confirm`] looks for program input words under
//! which the two programs really behave differently.
//!
//! Algorithm: for each candidate assignment of input words (the
//! counterexample's own input words, the rest drawn from a few fixed
//! distributions), walk the source's path from the first block. Each block
//! is evaluated exactly ([`crate::ieee::Exact`]) from its final runs: the
//! source run's entry terms take the concrete words of the source's
//! variables, the machine run's entry terms (registers and scratch slots)
//! the concrete words of the machine's registers and slots — so a wrong
//! fact cannot make the walk agree with itself, it only makes the
//! candidate fail (two entry locations with one term and different words).
//! The block's effects (per channel, in order) and branch conditions (in
//! truth) are compared; the first difference confirms the candidate, and
//! every input word the walk read is the counterexample. The source's
//! condition picks the next block; `end` or [`MAX_VISITS`] block visits
//! end a candidate without a difference, and so does leaving a block with
//! an unknown-landing result in flight that no barrier covered (the runs
//! do not say when it lands among the next block's ops). A machine register whose value
//! expired at a block end (a maximum lifetime) and is read later stops the
//! machine program, as the interpreter does: that is a difference too.
//!
//! Invariant: [`confirm`] returns words only when, evaluated exactly with
//! them, the two programs make different effects or take different
//! branches on the walked path; the interpreters give ops the same
//! meaning (semantics.md), so a replay of those words differs too.

use crate::ieee::Exact;
use crate::smt::{reachable, Counterexample};
use crate::srccode::SrcCode;
use crate::symbolic::{MachRun, SrcRun};
use crate::term::{Fun, Node, Term, Terms};
use crate::witness::{InputKind, InputWord};
use rustc_hash::FxHashMap;
use schedra_ir::Reg;

/// Most block visits of one candidate walk.
pub const MAX_VISITS: usize = 2048;

/// Number of candidate input assignments tried.
pub const CANDIDATES: u64 = 8;

/// What the walk needs of the verification: per source block its final
/// runs (when reachable) and its successors (the `brnz` non-zero target
/// first).
pub struct Program<'a> {
    /// The terms of the runs.
    pub terms: &'a Terms,
    /// The machine program.
    pub machine: &'a schedra_ir::Program,
    /// Per source block, the machine block of the same label.
    pub mach_of: &'a [Option<usize>],
    /// The source decoded (its variable numbers).
    pub code: &'a SrcCode,
    /// Per block, the source and machine runs from the final entry facts.
    pub runs: &'a [Option<(SrcRun, MachRun)>],
    /// The earliest landing of an unknown-landing result after its issue
    /// (the target's, as the machine code was decoded with).
    pub earliest_landing: u64,
    /// Per block, its successor blocks.
    pub succs: &'a [Vec<usize>],
    /// Variable number of every input register's source variable, with
    /// the register (the source's state at program entry).
    pub inputs: &'a [(u32, Reg)],
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The word candidate `c` gives the input `key`: small integers, zero,
/// "nice" floats (as shader inputs are) or raw bits.
fn draw(key: (InputKind, u32, u64), c: u64) -> u32 {
    let h = mix(mix(key.0 as u64 ^ mix(u64::from(key.1) ^ mix(key.2))) ^ c);
    let bits = (h >> 32) as u32;
    match (c, h & 7) {
        (0, _) => 1 + (bits & 7),
        (1, _) => (1.0 + (bits & 0xff) as f32 / 256.0).to_bits(),
        (_, 0) => 0,
        (_, 1) => 1 + (bits & 15),
        (_, 2) => bits,
        _ => {
            let m = (bits & 0xff) as f32;
            let e = ((bits >> 8) & 7) as i32 - 3;
            let sign = if bits & 0x800 != 0 { -1.0 } else { 1.0 };
            (sign * (1.0 + m / 256.0) * 2f32.powi(e)).to_bits()
        }
    }
}

/// The input words one walk has read, and how it gives words to the
/// inputs it has not read yet.
struct Inputs<'c> {
    given: &'c FxHashMap<(InputKind, u32), u32>,
    candidate: u64,
    read: FxHashMap<(InputKind, u32), u32>,
    /// Texture results read: (word, coordinate words) → word.
    textures: FxHashMap<(u8, Vec<u32>), u32>,
}

impl Inputs<'_> {
    fn word(&mut self, kind: InputKind, index: u32) -> u32 {
        let (given, c) = (self.given, self.candidate);
        *self.read.entry((kind, index)).or_insert_with(|| given.get(&(kind, index)).copied().unwrap_or_else(|| draw((kind, index, 0), c)))
    }
}

/// Concrete state of one side between blocks: `None` for a location
/// whose word the walk could not compute (reading it fails the walk).
#[derive(Clone, Default)]
struct State {
    vars: FxHashMap<u32, Option<u32>>,
    regs: FxHashMap<Reg, Option<u32>>,
    slots: FxHashMap<u32, Option<u32>>,
    /// Registers whose value outlived its maximum lifetime (the machine
    /// stops when it reads one).
    expired: rustc_hash::FxHashSet<Reg>,
    /// The effects so far per channel, in order.
    effects: FxHashMap<String, Vec<Vec<u32>>>,
}

impl State {
    /// Whether the effects of the two sides so far can still be the same
    /// (`done`: the runs ended, so they must be equal).
    fn agrees(&self, other: &State, done: bool) -> bool {
        let empty = Vec::new();
        self.effects.keys().chain(other.effects.keys()).all(|ch| {
            let (a, b) = (self.effects.get(ch).unwrap_or(&empty), other.effects.get(ch).unwrap_or(&empty));
            let n = a.len().min(b.len());
            a.get(..n) == b.get(..n) && (!done || a.len() == b.len())
        })
    }
}

/// The input word a leaf is at the program's start, if it is one.
fn input_leaf(terms: &Terms, t: Term) -> Option<(InputKind, u32)> {
    match terms.node(t) {
        Node::Reg(r) => Some((InputKind::Reg, u32::from(*r))),
        Node::Uniform(i, w) => Some((InputKind::Uniform, i.wrapping_add(u32::from(*w)))),
        Node::Varying(i, w) => Some((InputKind::Varying, i.wrapping_add(u32::from(*w)))),
        _ => None,
    }
}

/// An exact evaluation of `roots`: entry terms pre-set to `seed` words
/// (a conflict — one term, two words — fails), inputs from `inputs`,
/// texture results through the walk's table. A root that cannot be
/// evaluated (it reads something that is no input) has no word.
fn evaluate(terms: &Terms, roots: &[Term], seed: &[(Term, u32)], inputs: &mut Inputs) -> Option<FxHashMap<Term, u32>> {
    let mut words: FxHashMap<Term, u32> = FxHashMap::default();
    for &(t, w) in seed {
        if *words.entry(t).or_insert(w) != w {
            return None;
        }
    }
    let mut leaves: FxHashMap<Term, u32> = FxHashMap::default();
    let mut cone = reachable(terms, roots);
    cone.sort_unstable();
    for &t in &cone {
        if words.contains_key(&t) {
            continue;
        }
        match terms.node(t) {
            Node::Lit(_) | Node::App(Fun::Alu(_), _) => {}
            Node::App(Fun::Tex(w), _) => {
                leaves.insert(t, draw((InputKind::Texture, u32::from(*w), u64::from(t.0)), inputs.candidate));
            }
            _ => {
                if let Some((kind, index)) = input_leaf(terms, t) {
                    leaves.insert(t, inputs.word(kind, index));
                }
            }
        }
    }
    let mut exact = Exact::new(&leaves);
    exact.words = words;
    exact.textures = std::mem::take(&mut inputs.textures);
    for r in roots {
        let _ = exact.eval(terms, *r);
    }
    inputs.textures = exact.textures;
    Some(exact.words)
}

/// The seed words of a machine run's entry: every register and slot it
/// reads or overwrites, from the machine's state (a register or slot not
/// written yet holds its input word or its garbage word).
fn machine_seed(m: &MachRun, st: &State, inputs: &mut Inputs, input_regs: &[(u32, Reg)]) -> Option<Vec<(Term, u32)>> {
    let mut seed = Vec::new();
    for (r, t) in m.entry.iter() {
        if st.expired.contains(&r) {
            continue;
        }
        let w = match st.regs.get(&r) {
            Some(w) => (*w)?,
            None if input_regs.iter().any(|(_, x)| *x == r) => inputs.word(InputKind::Reg, u32::from(r)),
            None => inputs.word(InputKind::Garbage, u32::from(r)),
        };
        seed.push((t, w));
    }
    for (s, t) in m.entry_slots.iter() {
        let w = match st.slots.get(&s) {
            Some(w) => (*w)?,
            None => inputs.word(InputKind::Scratch, s),
        };
        seed.push((t, w));
    }
    Some(seed)
}

/// What one block visit found.
enum Visit {
    /// The two sides differ here.
    Differs,
    /// They agree; the next block (`None` at the end).
    Next(Option<usize>),
}

/// Evaluate block `b` from the two states; update them to its exit.
/// `None` when the block cannot be evaluated from them.
fn visit(p: &Program, b: usize, src: &mut State, mach: &mut State, inputs: &mut Inputs) -> Option<Visit> {
    let (s, m) = p.runs.get(b)?.as_ref()?;
    let terms = p.terms;
    // Source: entry terms from the source's variables (a variable not
    // defined on the path leaves its entry term without a word).
    let sseed: Vec<(Term, u32)> = s.entry.iter().filter_map(|(v, t)| Some((*t, (*src.vars.get(&p.code.ix(v)?)?)?))).collect();
    let var_terms: Vec<(u32, Term)> = (0..p.code.universe_len() as u32).filter_map(|i| s.exit.get(i).map(|t| (i, t))).collect();
    let mut sroots: Vec<Term> = s.effects.iter().flat_map(|e| e.words.iter().copied()).collect();
    sroots.extend(s.cond);
    sroots.extend(var_terms.iter().map(|(_, t)| *t));
    let sw = evaluate(terms, &sroots, &sseed, inputs)?;
    // Machine: entry terms from the machine's registers and slots.
    let mseed = machine_seed(m, mach, inputs, p.inputs)?;
    let mut mroots: Vec<Term> = m.effects.iter().flat_map(|e| e.words.iter().copied()).collect();
    mroots.extend(m.cond.map(|c| c.0));
    mroots.extend(m.regs.iter().map(|(_, t)| t));
    mroots.extend(m.mem.iter().map(|(_, t)| t));
    if !mach.expired.is_empty() {
        let cone: rustc_hash::FxHashSet<Term> = reachable(terms, &mroots).into_iter().collect();
        if m.entry.iter().any(|(r, t)| mach.expired.contains(&r) && cone.contains(&t)) {
            return Some(Visit::Differs);
        }
    }
    let mw = evaluate(terms, &mroots, &mseed, inputs)?;
    let word = |w: &FxHashMap<Term, u32>, t: &Term| w.get(t).copied();
    // Effects per channel, in order, after the earlier blocks' ones.
    for e in &s.effects {
        let w: Vec<u32> = e.words.iter().map(|t| word(&sw, t)).collect::<Option<_>>()?;
        src.effects.entry(e.channel.to_string()).or_default().push(w);
    }
    for e in &m.effects {
        let w: Vec<u32> = e.words.iter().map(|t| word(&mw, t)).collect::<Option<_>>()?;
        mach.effects.entry(e.channel.to_string()).or_default().push(w);
    }
    if !src.agrees(mach, false) {
        return Some(Visit::Differs);
    }
    let scond = match s.cond {
        Some(t) => Some(word(&sw, &t)? != 0),
        None => None,
    };
    let mcond = match m.cond {
        Some((t, _)) => Some(word(&mw, &t)? != 0),
        None => None,
    };
    if scond.is_some() && mcond.is_some() && scond != mcond {
        return Some(Visit::Differs);
    }
    // Exit states.
    for (i, t) in &var_terms {
        src.vars.insert(*i, word(&sw, t));
    }
    for (r, t) in m.regs.iter() {
        let expired = matches!(terms.node(t), Node::Sym { id, junk: true } if terms.symbol_key(*id).is_some_and(|(k, _)| k.kind == crate::term::SymKind::JunkReg && k.b == 1));
        if expired {
            mach.expired.insert(r);
            mach.regs.remove(&r);
        } else {
            mach.expired.remove(&r);
            mach.regs.insert(r, word(&mw, &t));
        }
    }
    for (k, t) in m.mem.iter() {
        mach.slots.insert(k, word(&mw, &t));
    }
    let succs = p.succs.get(b)?;
    let next = match (scond, succs.len()) {
        (_, 0) => None,
        (Some(false), n) if n >= 2 => succs.get(1).copied(),
        _ => succs.first().copied(),
    };
    Some(Visit::Next(next))
}

/// Every input word a walk read, in kind and index order.
fn words_read(inputs: &Inputs) -> Vec<InputWord> {
    let mut words: Vec<InputWord> = inputs.read.iter().map(|((input, index), word)| InputWord { input: *input, index: *index, coords: Vec::new(), word: *word }).collect();
    words.extend(inputs.textures.iter().map(|((w, coords), word)| InputWord { input: InputKind::Texture, index: u32::from(*w), coords: coords.clone(), word: *word }));
    words.sort_by(|x, y| (x.input, x.index, &x.coords).cmp(&(y.input, y.index, &y.coords)));
    words
}

/// [`words_read`] plus the landing words of the machine blocks visited
/// (`path`: source block indices, the machine's of the same label).
fn all_words(p: &Program, inputs: &Inputs, path: &[usize]) -> Vec<InputWord> {
    let mut w = words_read(inputs);
    let runs = path.iter().filter_map(|b| p.runs.get(*b).and_then(Option::as_ref)).map(|(_, m)| m);
    w.extend(crate::witness::landing_words(p.machine.target, p.earliest_landing, runs));
    w
}

/// Walk candidate `c` from the first block; the input words read when the
/// programs differ on the way.
fn walk(p: &Program, given: &FxHashMap<(InputKind, u32), u32>, c: u64) -> Option<Vec<InputWord>> {
    let mut inputs = Inputs { given, candidate: c, read: FxHashMap::default(), textures: FxHashMap::default() };
    let (mut src, mut mach) = (State::default(), State::default());
    for &(v, r) in p.inputs {
        let w = inputs.word(InputKind::Reg, u32::from(r));
        src.vars.insert(v, Some(w));
    }
    let mut b = 0usize;
    let mut path = Vec::new();
    for _ in 0..MAX_VISITS {
        path.push(b);
        match visit(p, b, &mut src, &mut mach, &mut inputs)? {
            Visit::Differs => return Some(all_words(p, &inputs, &path)),
            Visit::Next(Some(_)) if in_flight_at_end(p, b) => return None,
            Visit::Next(Some(n)) => b = n,
            Visit::Next(None) if src.agrees(&mach, true) => return None,
            Visit::Next(None) => return Some(all_words(p, &inputs, &path)),
        }
    }
    None
}

/// Whether machine block `b`'s run leaves an unknown-landing result in
/// flight at its end (no barrier covered it): when it lands among the next
/// block's ops is not in the run, so a walk cannot follow the machine past
/// it.
fn in_flight_at_end(p: &Program, b: usize) -> bool {
    let Some((_, m)) = p.runs.get(b).and_then(Option::as_ref) else { return false };
    let t = p.machine.target;
    m.writes.iter().any(|w| w.land == u64::MAX && t.op(w.at.opcode).is_some_and(|d| d.unknown_landing))
}

/// Input words under which the programs of `p` behave differently,
/// starting from the input words of `cex` (the rest drawn per candidate):
/// `cex` with those words (and nothing unbound), or `None` when no
/// candidate shows a difference.
pub fn confirm(p: &Program, cex: &Counterexample) -> Option<Counterexample> {
    let given: FxHashMap<(InputKind, u32), u32> = cex.words.iter().filter(|w| !matches!(w.input, InputKind::Texture | InputKind::Landing)).map(|w| ((w.input, w.index), w.word)).collect();
    let none = FxHashMap::default();
    for c in 0..CANDIDATES {
        let g = if c % 2 == 0 { &given } else { &none };
        if let Some(words) = walk(p, g, c) {
            return Some(Counterexample { words, unbound: Vec::new(), ..cex.clone() });
        }
    }
    None
}
