//! Counterexamples as the program's input words.
//!
//! A refuted obligation comes with a word for every leaf of its two terms
//! (from a sample or a solver model). [`confirm`] turns that into a
//! [`Counterexample`] only when the words are real: both terms evaluated
//! exactly ([`crate::ieee`]) from those words differ.
//!
//! The leaves that are program inputs become [`InputWord`]s, the words an
//! interpreter draws from outside the program: `Reg(r)` is input register
//! `r`; word `w` of uniform (varying) `i` is uniform (varying) `i + w`, as
//! `ldunif i` of width 2 reads uniforms `i` and `i + 1`; the junk of a
//! register (scratch slot) at the entry of a first block that nothing jumps
//! back to is that register's (slot's) garbage word; a texture result is the word at its
//! coordinate words. Leaves that name the same input word take the first
//! one's word, so the input words are consistent. Every other leaf (a
//! value at the entry of a later block, a source read before any
//! definition, a scratch slot, junk elsewhere) is *unbound*: the input
//! words alone do not fix it, and it is listed by name.

use crate::smt::Counterexample;
use crate::term::{Node, SymKind, Term, Terms};
use rustc_hash::FxHashMap;
use schedra_ir::Target;
use serde::Serialize;

/// Where an input word comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// An input register's word at program entry.
    Reg,
    /// A uniform (`ldunif index`).
    Uniform,
    /// A varying (`ldvary index`).
    Varying,
    /// A register that is not an input, read before anything writes it.
    Garbage,
    /// A scratch slot read before anything writes it.
    Scratch,
    /// Word `index` of a texture result at the coordinate words `coords`.
    Texture,
    /// How many cycles past its earliest landing the `index`-th result of
    /// unknown landing time of the run (kepler's `tex`, in issue order)
    /// arrives, capped at the target's window ([`landing_words`]).
    Landing,
}

/// One word from outside the program.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct InputWord {
    /// What kind of input.
    pub input: InputKind,
    /// Its register number, uniform or varying index, or texture word.
    pub index: u32,
    /// For a texture result: the coordinate words of the sample.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coords: Vec<u32>,
    /// The word.
    pub word: u32,
}

impl InputWord {
    /// `uniform 3 = 0x3f800000`, `tex 0 at (0x1, 0x2) = 0x5`.
    pub fn describe(&self, target: &Target) -> String {
        match self.input {
            InputKind::Reg => format!("input ${} = {:#x}", target.regs.name(self.index as schedra_ir::Reg), self.word),
            InputKind::Garbage => format!("unwritten ${} = {:#x}", target.regs.name(self.index as schedra_ir::Reg), self.word),
            InputKind::Scratch => format!("unwritten scratch[{}] = {:#x}", self.index, self.word),
            InputKind::Uniform => format!("uniform {} = {:#x}", self.index, self.word),
            InputKind::Varying => format!("varying {} = {:#x}", self.index, self.word),
            InputKind::Landing => format!("unknown-landing result {} delayed {}", self.index, if self.word == u32::MAX { "as long as it can be".to_string() } else { format!("{} cycles", self.word) }),
            InputKind::Texture => {
                let c: Vec<String> = self.coords.iter().map(|w| format!("{w:#x}")).collect();
                format!("texture word {} at ({}) = {:#x}", self.index, c.join(", "), self.word)
            }
        }
    }
}

/// The input word a leaf stands for (kind and index), or `None` when it is
/// unbound. `first_is_entry`: the first block is entered only at program
/// start, so its junk registers are garbage words.
fn input_of(terms: &Terms, t: Term, first_is_entry: bool) -> Option<(InputKind, u32)> {
    match terms.node(t) {
        Node::Reg(r) => Some((InputKind::Reg, u32::from(*r))),
        Node::Uniform(i, w) => Some((InputKind::Uniform, i.wrapping_add(u32::from(*w)))),
        Node::Varying(i, w) => Some((InputKind::Varying, i.wrapping_add(u32::from(*w)))),
        Node::Sym { id, junk: true } => match terms.symbol_key(*id) {
            Some((key, 0)) if first_is_entry && key.kind == SymKind::JunkReg && key.b == 0 => Some((InputKind::Garbage, key.a)),
            Some((key, 0)) if first_is_entry && key.kind == SymKind::JunkSlot => Some((InputKind::Scratch, key.a)),
            _ => None,
        },
        _ => None,
    }
}

/// The landing words of the unknown-landing results (kepler `tex`) of the
/// machine block runs `runs`, in the order they ran: each result is
/// delayed so that it lands when the verifier's own timeline lands it, at
/// the barrier that covers it ([`crate::symbolic`]: a `texbar` holds its
/// next bundle until the youngest result it covers can land, and every
/// covered result lands then). An interpreter pinned to these delays lands
/// every result at the same cycle, so a read before the barrier sees the
/// old word in both and a write issued while the result was in flight
/// lands before or after it in both alike. A result no barrier covered
/// lands as late as it can (`u32::MAX`). Empty on other targets.
pub fn landing_words<'r>(target: &Target, earliest: u64, runs: impl IntoIterator<Item = &'r crate::symbolic::MachRun>) -> Vec<InputWord> {
    let mut words = Vec::new();
    for run in runs {
        let mut last: Option<(usize, usize)> = None;
        for w in &run.writes {
            if !target.op(w.at.opcode).is_some_and(|d| d.unknown_landing) || last == Some((w.at.bundle, w.at.op)) {
                continue;
            }
            last = Some((w.at.bundle, w.at.op));
            let word = if w.land == u64::MAX { u32::MAX } else { u32::try_from(w.land.saturating_sub(w.issue + earliest)).unwrap_or(u32::MAX - 1) };
            words.push(InputWord { input: InputKind::Landing, index: words.len() as u32, coords: Vec::new(), word });
        }
    }
    words
}

/// The counterexample `leaves` gives for `a` against `b` (in truth when
/// `truth`), if it is real: the leaves' words made consistent per input
/// word, both terms evaluated exactly, and their words differ. `None`
/// when they do not differ or cannot be evaluated exactly.
pub fn confirm(terms: &Terms, target: &Target, a: Term, b: Term, truth: bool, leaves: &FxHashMap<Term, u32>, first_is_entry: bool) -> Option<Counterexample> {
    Cone::of(terms, a, b).confirm(terms, target, truth, leaves, first_is_entry)
}

/// The terms two roots are computed from, sorted by index (arguments
/// before uses): what [`confirm`] evaluates, computed once for all the
/// assignments [`search`] tries.
struct Cone {
    roots: (Term, Term),
    terms: Vec<Term>,
}

impl Cone {
    fn of(terms: &Terms, a: Term, b: Term) -> Cone {
        let mut cone = crate::smt::reachable(terms, &[a, b]);
        cone.sort_unstable();
        Cone { roots: (a, b), terms: cone }
    }

    /// Whether the word of `t` is given rather than computed: a leaf or a
    /// texture result.
    fn is_given(terms: &Terms, t: Term) -> bool {
        !matches!(terms.node(t), Node::Lit(_) | Node::App(crate::term::Fun::Alu(_), _))
    }

    /// [`confirm`] over this cone.
    fn confirm(&self, terms: &Terms, target: &Target, truth: bool, leaves: &FxHashMap<Term, u32>, first_is_entry: bool) -> Option<Counterexample> {
        let mut by_input: FxHashMap<(InputKind, u32), u32> = FxHashMap::default();
        let mut given: Vec<Option<u32>> = vec![None; self.terms.len()];
        for (i, &t) in self.terms.iter().enumerate() {
            if !Cone::is_given(terms, t) {
                continue;
            }
            let word = leaves.get(&t).copied()?;
            given[i] = Some(match terms.node(t) {
                Node::App(crate::term::Fun::Tex(_), _) => word,
                _ => input_of(terms, t, first_is_entry).map_or(word, |key| *by_input.entry(key).or_insert(word)),
            });
        }
        let mut exact = ConeEval { cone: &self.terms, given: &given, words: vec![None; self.terms.len()], textures: FxHashMap::default() };
        let (a, b) = self.roots;
        let (x, y) = (exact.eval(terms, a)?, exact.eval(terms, b)?);
        let differ = if truth { (x == 0) != (y == 0) } else { x != y };
        if !differ {
            return None;
        }
        let (mut named, mut unbound) = (Vec::new(), Vec::new());
        for (&t, word) in self.terms.iter().zip(&given) {
            let (Some(word), false) = (word, matches!(terms.node(t), Node::App(crate::term::Fun::Tex(_), _))) else { continue };
            let name = crate::sample::leaf_name(terms, target, t);
            if input_of(terms, t, first_is_entry).is_none() {
                unbound.push(name.clone());
            }
            named.push((name, *word));
        }
        let mut inputs: Vec<InputWord> = by_input.into_iter().map(|((input, index), word)| InputWord { input, index, coords: Vec::new(), word }).collect();
        inputs.extend(exact.textures.iter().map(|((w, coords), word)| InputWord { input: InputKind::Texture, index: u32::from(*w), coords: coords.clone(), word: *word }));
        inputs.sort_by(|p, q| (p.input, p.index, &p.coords).cmp(&(q.input, q.index, &q.coords)));
        named.truncate(16);
        Some(Counterexample { inputs: named, source: x, machine: y, uninterpreted: false, words: inputs, unbound })
    }
}

/// Exact evaluation over one sorted cone (what [`crate::ieee::Exact`]
/// computes, with the cone's words in a table beside it instead of maps;
/// both evaluate a node with [`crate::ieee::exact_node`]): `given` holds
/// the words of its leaves and texture results. A root is evaluated over
/// its own cone in index order, arguments first, so texture results are
/// met in the order [`crate::ieee::Exact::eval`] meets them.
struct ConeEval<'c> {
    cone: &'c [Term],
    given: &'c [Option<u32>],
    words: Vec<Option<u32>>,
    /// Texture results met so far: (word index, coordinate words) → word.
    textures: FxHashMap<(u8, Vec<u32>), u32>,
}

impl ConeEval<'_> {
    fn at(&self, t: Term) -> Option<usize> {
        self.cone.binary_search(&t).ok()
    }

    /// The exact word of `root`, a term of the cone (`None` when an op has
    /// no exact meaning).
    fn eval(&mut self, terms: &Terms, root: Term) -> Option<u32> {
        let top = self.at(root)?;
        let mut needed = vec![false; top + 1];
        needed[top] = true;
        for i in (0..=top).rev() {
            if !needed[i] || self.words[i].is_some() {
                continue;
            }
            if let Node::App(_, args) = terms.node(self.cone[i]) {
                for &x in terms.args(*args) {
                    needed[self.at(x)?] = true;
                }
            }
        }
        for i in 0..=top {
            if needed[i] && self.words[i].is_none() {
                let ConeEval { cone, given, words, textures } = self;
                let word_of = |x: Term| cone.binary_search(&x).ok().and_then(|j| words[j]);
                let w = crate::ieee::exact_node(terms, cone[i], word_of, textures, || given[i])?;
                self.words[i] = Some(w);
            }
        }
        self.words[top]
    }
}

/// Assignments [`search`] tries.
pub const SEARCH_SAMPLES: u64 = 64;

/// A counterexample for `a` against `b` (in truth when `truth`) found by
/// exact evaluation alone: [`SEARCH_SAMPLES`] assignments of words to the
/// leaves and texture results of the two terms (the float-friendly mix of
/// [`crate::ieee::free_word`]), each checked as [`confirm`] checks a
/// model. What it returns is as real as a confirmed solver model; `None`
/// proves nothing.
pub fn search(terms: &Terms, target: &Target, a: Term, b: Term, truth: bool, first_is_entry: bool) -> Option<Counterexample> {
    let cone = Cone::of(terms, a, b);
    let free: Vec<Term> = cone.terms.iter().copied().filter(|&t| Cone::is_given(terms, t)).collect();
    let mut leaves: FxHashMap<Term, u32> = FxHashMap::default();
    (0..SEARCH_SAMPLES).find_map(|k| {
        leaves.clear();
        leaves.extend(free.iter().map(|&t| (t, crate::ieee::free_word(t, k))));
        cone.confirm(terms, target, truth, &leaves, first_is_entry)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Fun;
    use schedra_ir::target::{by_name, Sem};

    #[test]
    fn a_float_identity_is_no_counterexample_and_a_real_difference_is() {
        let target = by_name("v3d71").expect("v3d71");
        let mut t = Terms::new();
        let (u, v) = (t.intern(Node::Uniform(0, 1)), t.intern(Node::Uniform(1, 0)));
        let one = t.lit(1.0f32.to_bits());
        let times_one = t.app(Fun::Alu(Sem::FMul), vec![u, one]);
        // The uninterpreted encoding's model may make fmul(u, 1.0) and u
        // different words; exactly they are not.
        let leaves: FxHashMap<Term, u32> = [(u, 1.0f32.to_bits()), (v, 2.0f32.to_bits())].into_iter().collect();
        assert_eq!(confirm(&t, target, times_one, u, false, &leaves, true), None);
        let (x, z) = (t.app(Fun::Alu(Sem::FAdd), vec![u, v]), t.app(Fun::Alu(Sem::FSub), vec![u, v]));
        // uniform 0 word 1 and uniform 1 word 0 are one input word: the
        // first leaf's word is used for both, and 1 - 1 differs from 1 + 1.
        let cex = confirm(&t, target, x, z, false, &leaves, true).expect("a real difference");
        assert_eq!(cex.words, vec![InputWord { input: InputKind::Uniform, index: 1, coords: vec![], word: 1.0f32.to_bits() }]);
        assert_eq!((cex.source, cex.machine), (2.0f32.to_bits(), 0));
        assert!(cex.unbound.is_empty() && !cex.uninterpreted);
    }

    #[test]
    fn evaluation_alone_finds_real_differences_and_no_identity() {
        let target = by_name("v3d71").expect("v3d71");
        let mut t = Terms::new();
        let (u, v) = (t.intern(Node::Uniform(0, 0)), t.intern(Node::Uniform(1, 0)));
        let one = t.lit(1.0f32.to_bits());
        let times_one = t.app(Fun::Alu(Sem::FMul), vec![u, one]);
        assert_eq!(search(&t, target, times_one, u, false, true), None, "u * 1.0 is u");
        let (sum, difference) = (t.app(Fun::Alu(Sem::FAdd), vec![u, v]), t.app(Fun::Alu(Sem::FSub), vec![u, v]));
        let cex = search(&t, target, sum, difference, false, true).expect("u + v and u - v differ");
        assert_ne!(cex.source, cex.machine);
        // The words it gives are a difference by exact evaluation.
        let leaves: FxHashMap<Term, u32> = cex.words.iter().map(|w| (if w.index == 0 { u } else { v }, w.word)).collect();
        assert!(confirm(&t, target, sum, difference, false, &leaves, true).is_some());
    }
}
