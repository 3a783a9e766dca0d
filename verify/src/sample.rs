//! Concrete evaluation of terms on sample inputs: a quick refutation before
//! the solver is asked.
//!
//! Each sample assigns a word to every leaf (inputs, uniforms, varyings,
//! symbols: a hash of the leaf and the sample number, mixed with small
//! integers and simple floats) and evaluates the terms with their real
//! meaning: exact integer ops, IEEE-754 single-precision float ops, texture
//! words as a hash of the coordinates. [`Values`] evaluates each term of the
//! arena once, in index order (arguments before uses), so it needs no
//! recursion and a comparison costs O(1) after the table is up to date.
//!
//! The last samples are the exception: there float ops are hash functions
//! (a different one per sample), so their words are not real float results
//! (the counterexample says so).
//!
//! Invariant (why a difference found here is a proof of difference for the
//! solver's encoding too): the evaluation is *one* interpretation of the
//! uninterpreted functions, so terms that evaluate to different words under
//! it are not equal under every interpretation; and integer ops are exact in
//! both. Agreement on the samples proves nothing and leaves the question to
//! the solver.

use crate::smt::{reachable, Counterexample};
use crate::term::{eval_integer, is_integer, Fun, Node, Term, Terms};
use schedra_ir::target::Sem;
use rustc_hash::FxHashMap;
use schedra_ir::Target;

/// Number of samples tried; the last [`HASHED_SAMPLES`] interpret float
/// ops and texture words as hash functions (an arbitrary interpretation of
/// the solver's uninterpreted functions), which tells apart any two
/// non-congruent terms with high probability even where real float
/// arithmetic saturates.
pub const SAMPLES: u64 = 10;
/// How many of the samples are hashed. Each hashed sample keys its hash
/// functions with its own number, so the ops get a *different*
/// interpretation in each: a term built from literals alone (say
/// `fsub(0xfffffff0, 0xfffffff0)`, whose value no leaf varies) then takes
/// a different word in each hashed sample. With one hashed interpretation,
/// `shr(x, c)` for such a constant `c` with `c & 31 = 31` maps almost
/// every `x` to 0, and every difference below it is lost on all samples
/// (campaign case 2372: 74 solver queries, 37 s).
pub const HASHED_SAMPLES: u64 = 4;
const FIRST_HASHED: u64 = SAMPLES - HASHED_SAMPLES;

/// A 64-bit finaliser (splitmix-style): spreads every input bit over the
/// output, so nearby keys and sample numbers give unrelated words.
pub(crate) fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

fn leaf_word(key: u64, sample: u64) -> u32 {
    let h = mix(key ^ mix(sample + 1));
    match sample {
        0 => (h % 7) as u32,
        1 => (0.5 + (h % 4096) as f32 / 1024.0).to_bits(),
        2 => ((h % 4096) as f32 / 256.0 - 8.0).to_bits(),
        3 => h as u32,
        4 => (1.0 + (h % 65536) as f32 / 64.0).to_bits(),
        5 => (0.999 + (h % 2048) as f32 / 1_000_000.0).to_bits(),
        _ => (h >> 7) as u32,
    }
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// The real result of float op `sem` on `a`; an op without a float
/// meaning here hashes its arguments with `skey` ([`sem_key`] of `sem`).
fn float(sem: Sem, skey: u64, a: &[u32]) -> u32 {
    let g = |i: usize| a.get(i).copied().map(f).unwrap_or(0.0);
    let r = match sem {
        Sem::FAdd => g(0) + g(1),
        Sem::FSub => g(0) - g(1),
        Sem::FMul => g(0) * g(1),
        Sem::FMin => g(0).min(g(1)),
        Sem::FMax => g(0).max(g(1)),
        Sem::FMad => g(0) * g(1) + g(2),
        Sem::Recip => 1.0 / g(0),
        Sem::Rsqrt => 1.0 / g(0).sqrt(),
        Sem::Exp2 => g(0).exp2(),
        Sem::Log2 => g(0).log2(),
        Sem::Sin => g(0).sin(),
        Sem::Cos => g(0).cos(),
        _ => return hash_args(skey, a),
    };
    if r.is_nan() {
        f32::NAN.to_bits()
    } else {
        r.to_bits()
    }
}

/// A hash function of the argument words, one function per `key`.
fn hash_args(key: u64, a: &[u32]) -> u32 {
    a.iter().fold(key as u32, |h, x| mix(u64::from(h) << 32 | u64::from(*x)) as u32)
}

fn sem_key(sem: Sem) -> u64 {
    mix(format!("{sem:?}").bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))))
}

/// The word of term `t` under sample `k`; `skey` is [`sem_key`] of the
/// term's operation when it is a non-integer ALU op (unused otherwise).
fn eval_node(terms: &Terms, vals: &[[u32; N]], t: Term, k: u64, skey: u64) -> u32 {
    let ku = k as usize;
    match terms.node(t) {
        Node::Lit(w) => *w,
        Node::Reg(r) => leaf_word(u64::from(*r) | 1 << 40, k),
        Node::Uniform(i, w) => leaf_word(u64::from(*i) << 8 | u64::from(*w) | 2 << 40, k),
        Node::Varying(i, w) => leaf_word(u64::from(*i) << 8 | u64::from(*w) | 3 << 40, k),
        Node::Sym { id, .. } => leaf_word(u64::from(*id) | 4 << 40, k),
        Node::App(fun, args) => {
            let word = |x: &Term| vals.get(x.0 as usize).and_then(|v| v.get(ku)).copied().unwrap_or(0);
            let args = terms.args(*args);
            // The argument words on the stack for the usual few arguments.
            let mut small = [0u32; 8];
            let heap: Vec<u32>;
            let a: &[u32] = match small.get_mut(..args.len()) {
                Some(buf) => {
                    buf.iter_mut().zip(args).for_each(|(w, x)| *w = word(x));
                    buf
                }
                None => {
                    heap = args.iter().map(word).collect();
                    &heap
                }
            };
            match fun {
                Fun::Alu(sem) if is_integer(*sem) => eval_integer(*sem, a).unwrap_or(0),
                Fun::Alu(_) if k >= FIRST_HASHED => hash_args(skey ^ mix(k), a),
                Fun::Alu(sem) => float(*sem, skey, a),
                Fun::Tex(w) => hash_args(u64::from(*w) ^ 0x7e57 ^ mix(k), a),
            }
        }
    }
}

const N: usize = SAMPLES as usize;

/// The sample values of every term of an arena, computed once per term in
/// index order (arguments first) and extended as the arena grows.
#[derive(Default)]
pub struct Values {
    vals: Vec<[u32; N]>,
    /// [`sem_key`] of each operation met so far (it spells the operation,
    /// so it is worth computing once).
    sem_keys: Vec<(Sem, u64)>,
}

impl Values {
    /// Bring the table up to date with the arena.
    fn extend(&mut self, terms: &Terms) {
        for i in self.vals.len()..terms.len() {
            let t = Term(i as u32);
            let skey = match terms.node(t) {
                Node::App(Fun::Alu(sem), _) if !is_integer(*sem) => self.sem_key_of(*sem),
                _ => 0,
            };
            let mut row = [0u32; N];
            for (k, slot) in row.iter_mut().enumerate() {
                *slot = eval_node(terms, &self.vals, t, k as u64, skey);
            }
            self.vals.push(row);
        }
    }

    /// [`sem_key`] of `sem`, computed once per operation.
    fn sem_key_of(&mut self, sem: Sem) -> u64 {
        if let Some(&(_, k)) = self.sem_keys.iter().find(|(s, _)| *s == sem) {
            return k;
        }
        let k = sem_key(sem);
        self.sem_keys.push((sem, k));
        k
    }

    fn get(&self, t: Term) -> [u32; N] {
        self.vals.get(t.0 as usize).copied().unwrap_or([0; N])
    }

    /// Whether some sample tells `a` and `b` apart (no counterexample built).
    pub fn differ(&mut self, terms: &Terms, a: Term, b: Term) -> bool {
        self.extend(terms);
        self.get(a) != self.get(b)
    }

    /// The samples under which `a` and `b` differ (or, with `truth`, under
    /// which exactly one of them is zero), in sample order.
    pub fn differing(&mut self, terms: &Terms, a: Term, b: Term, truth: bool) -> Vec<usize> {
        self.extend(terms);
        let (va, vb) = (self.get(a), self.get(b));
        (0..N).filter(|&k| if truth { (va[k] == 0) != (vb[k] == 0) } else { va[k] != vb[k] }).collect()
    }

    /// The words sample `k` gives the leaves and texture results of the
    /// terms `roots` (what [`crate::witness::confirm`] evaluates from).
    pub fn assignment(&mut self, terms: &Terms, roots: &[Term], k: usize) -> FxHashMap<Term, u32> {
        self.extend(terms);
        reachable(terms, roots)
            .into_iter()
            .filter(|t| !matches!(terms.node(*t), Node::Lit(_) | Node::App(Fun::Alu(_), _)))
            .map(|t| (t, self.get(t).get(k).copied().unwrap_or(0)))
            .collect()
    }

    /// A sample under which `a` and `b` differ (or, with `truth`, under
    /// which exactly one of them is zero), as a counterexample naming the
    /// leaves, with the sample's words (not checked by exact evaluation;
    /// [`Values::assignment`] and [`crate::witness::confirm`] do that).
    pub fn find_difference(&mut self, terms: &Terms, target: &Target, a: Term, b: Term, truth: bool) -> Option<Counterexample> {
        let k = self.differing(terms, a, b, truth).into_iter().next()?;
        let mut leaves: Vec<Term> = reachable(terms, &[a, b]).into_iter().filter(|t| !matches!(terms.node(*t), Node::App(..) | Node::Lit(_))).collect();
        leaves.sort();
        let inputs = leaves.into_iter().take(16).map(|t| (leaf_name(terms, target, t), self.get(t)[k])).collect();
        let (va, vb) = (self.get(a), self.get(b));
        Some(Counterexample { inputs, source: va[k], machine: vb[k], uninterpreted: k as u64 >= FIRST_HASHED, words: Vec::new(), unbound: Vec::new() })
    }
}

/// The name a leaf has in counterexamples (the same as in the solver).
pub fn leaf_name(terms: &Terms, target: &Target, t: Term) -> String {
    match terms.node(t) {
        Node::Reg(r) => format!("${}", target.regs.name(*r)),
        _ => terms.show(t, 40),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::target::by_name;

    #[test]
    fn finds_integer_and_float_differences_but_not_equalities() {
        let target = by_name("v3d71").expect("v3d71");
        let mut t = Terms::new();
        let a = t.intern(Node::Uniform(0, 0));
        let b = t.intern(Node::Varying(1, 0));
        let (one, two) = (t.lit(1), t.lit(2));
        let add = t.app(Fun::Alu(Sem::Add), vec![a, a]);
        let shl1 = t.app(Fun::Alu(Sem::Shl), vec![a, one]);
        let shl2 = t.app(Fun::Alu(Sem::Shl), vec![a, two]);
        let mut v = Values::default();
        assert!(v.find_difference(&t, target, add, shl1, false).is_none());
        let cex = v.find_difference(&t, target, add, shl2, false).expect("differ");
        assert_ne!(cex.source, cex.machine);
        let x = t.app(Fun::Alu(Sem::FSub), vec![a, b]);
        let y = t.app(Fun::Alu(Sem::FSub), vec![b, a]);
        assert!(v.find_difference(&t, target, x, y, false).is_some());
        assert!(v.find_difference(&t, target, x, x, true).is_none());
    }
}
