//! IEEE-754 single-precision meaning of terms: exact evaluation, and the
//! solver query that decides an obligation with float ops as real float
//! arithmetic.
//!
//! The solver's main encoding ([`crate::smt`]) takes float ops as
//! uninterpreted functions, so a counterexample it finds may not exist
//! under IEEE arithmetic (`a + b` and `b + a` are different functions
//! there only if the solver is told nothing about commutativity; `x * 1.0`
//! and `x` are different functions). Every counterexample is therefore
//! checked here before it becomes a violation:
//!
//! 1. [`eval`] computes both terms exactly from the counterexample's leaf
//!    words (integer ops exact, float ops in IEEE-754 single precision
//!    rounding to nearest even, NaN results canonical
//!    ([`CANONICAL_NAN`]), texture results as the words the
//!    counterexample gives them per coordinate words). If the two words
//!    differ, the counterexample is real.
//! 2. Otherwise, unless both words are fixed by literals and NaN operands
//!    alone ([`equal_by_fixed_words`]: then they are equal), [`fp_query`]
//!    asks Z3 again with its floating-point theory
//!    for the ops that have an exact encoding here ([`exact_in_fp`]);
//!    `exp2`, `log2`, `sin`, `cos` and the texture words stay
//!    uninterpreted. `unsat` proves the obligation (uninterpreted functions
//!    only weaken what is assumed); a model is evaluated exactly again as in
//!    step 1, and is a counterexample only if the words differ; anything
//!    else is unknown.
//!
//! A caller that needs only "proven equal or not" (the dataflow's
//! location facts) first tries [`differs_somewhere`]: a concrete IEEE-754
//! evaluation under which the two differ means step 2 cannot prove them
//! equal, so Z3 is not asked.
//!
//! The semantics is the one of `semantics.md` (the interpreters' too), in
//! the verifier's own code: `fmin`/`fmax` order -0 below +0 and return the
//! other operand of a NaN, `fmad` rounds the product and the sum
//! separately, `recip` is `1 / a` and `rsqrt` `1 / sqrt(a)` (two
//! roundings), `floor` rounds toward negative, `neg` flips the sign bit,
//! `ge`/`lt` give 1.0 or 0.0 (0.0 on NaN), `select c, a, b` is `a` when
//! `c != 0.0` (a NaN `c` included).

use crate::sample::mix;
use crate::term::{eval_integer, is_integer, Fun, Node, Term, Terms};
use rustc_hash::FxHashMap;
use schedra_ir::target::Sem;
use std::fmt::Write;

/// The word of every NaN result.
pub const CANONICAL_NAN: u32 = 0x7fc0_0000;

fn f(w: u32) -> f32 {
    f32::from_bits(w)
}

fn canon(x: f32) -> u32 {
    if x.is_nan() {
        CANONICAL_NAN
    } else {
        x.to_bits()
    }
}

/// `a` below `b`, with -0 below +0.
fn below(a: f32, b: f32) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && b.is_sign_positive())
}

fn min_max(a: u32, b: u32, max: bool) -> u32 {
    let (x, y) = (f(a), f(b));
    match (x.is_nan(), y.is_nan()) {
        (true, _) => canon(y),
        (_, true) => canon(x),
        _ if max => canon(if below(x, y) { y } else { x }),
        _ => canon(if below(y, x) { y } else { x }),
    }
}

fn flag(b: bool) -> u32 {
    if b {
        1.0f32.to_bits()
    } else {
        0
    }
}

/// The exact word of ALU op `sem` on `args` (`None` for an op without a
/// meaning here or the wrong number of arguments).
pub fn apply(sem: Sem, args: &[u32]) -> Option<u32> {
    if is_integer(sem) {
        return eval_integer(sem, args);
    }
    let arg = |i: usize| args.get(i).copied();
    let (a, b, c) = (arg(0), arg(1), arg(2));
    let one = |g: fn(f32) -> f32| match args {
        [x] => Some(canon(g(f(*x)))),
        _ => None,
    };
    let two = |g: fn(u32, u32) -> u32| match args {
        [x, y] => Some(g(*x, *y)),
        _ => None,
    };
    match sem {
        Sem::FAdd => two(|x, y| canon(f(x) + f(y))),
        Sem::FSub => two(|x, y| canon(f(x) - f(y))),
        Sem::FMul => two(|x, y| canon(f(x) * f(y))),
        Sem::FMin => two(|x, y| min_max(x, y, false)),
        Sem::FMax => two(|x, y| min_max(x, y, true)),
        Sem::Ge => two(|x, y| flag(f(x) >= f(y))),
        Sem::Lt => two(|x, y| flag(f(x) < f(y))),
        Sem::FMad if args.len() == 3 => Some(canon(f(a?) * f(b?) + f(c?))),
        Sem::Select if args.len() == 3 => Some(if f(a?) != 0.0 { b? } else { c? }),
        Sem::Mov if args.len() == 1 => a,
        Sem::Recip => one(|x| 1.0 / x),
        Sem::Rsqrt => one(|x| 1.0 / x.sqrt()),
        Sem::Exp2 => one(f32::exp2),
        Sem::Log2 => one(f32::log2),
        Sem::Sin => one(f32::sin),
        Sem::Cos => one(f32::cos),
        Sem::Floor => one(f32::floor),
        Sem::Neg => one(|x| -x),
        Sem::Sign => one(|x| if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        }),
        _ => None,
    }
}

/// Exact words of terms: the leaves' words are given, texture results are
/// looked up by their word index and coordinate words.
pub struct Exact<'a> {
    /// The word of each leaf (and of each texture result not yet met).
    pub leaves: &'a FxHashMap<Term, u32>,
    /// Texture results met so far: (word index, coordinate words) → word.
    pub textures: FxHashMap<(u8, Vec<u32>), u32>,
    /// The exact word of every term evaluated so far.
    pub words: FxHashMap<Term, u32>,
}

impl<'a> Exact<'a> {
    /// An evaluation from the leaf (and texture) words `leaves`.
    pub fn new(leaves: &'a FxHashMap<Term, u32>) -> Exact<'a> {
        Exact { leaves, textures: FxHashMap::default(), words: FxHashMap::default() }
    }

    /// The exact word of `root` (`None` when a leaf has no word or an op
    /// has no exact meaning). Iterative: the cone is evaluated in index
    /// order, arguments first.
    pub fn eval(&mut self, terms: &Terms, root: Term) -> Option<u32> {
        let mut todo: Vec<Term> = crate::smt::reachable(terms, &[root]).into_iter().filter(|t| !self.words.contains_key(t)).collect();
        todo.sort_unstable();
        for t in todo {
            let w = self.node(terms, t)?;
            self.words.insert(t, w);
        }
        self.words.get(&root).copied()
    }

    fn node(&mut self, terms: &Terms, t: Term) -> Option<u32> {
        let Exact { leaves, textures, words } = self;
        exact_node(terms, t, |x| words.get(&x).copied(), textures, || leaves.get(&t).copied())
    }
}

/// The exact word of term `t` from the words of its arguments
/// (`word_of`), the texture results met so far (`textures`, which a new
/// one joins) and `given`, asked only for the word of a leaf or of a
/// texture result not met yet. `None` when a word is missing or an op has
/// no exact meaning.
pub(crate) fn exact_node(terms: &Terms, t: Term, word_of: impl Fn(Term) -> Option<u32>, textures: &mut FxHashMap<(u8, Vec<u32>), u32>, given: impl FnOnce() -> Option<u32>) -> Option<u32> {
    match terms.node(t) {
        Node::Lit(w) => Some(*w),
        Node::App(fun, args) => {
            let vals: Vec<u32> = terms.args(*args).iter().map(|a| word_of(*a)).collect::<Option<_>>()?;
            match fun {
                Fun::Alu(sem) => apply(*sem, &vals),
                Fun::Tex(w) => {
                    let key = (*w, vals);
                    if let Some(v) = textures.get(&key) {
                        return Some(*v);
                    }
                    let v = given()?;
                    textures.insert(key, v);
                    Some(v)
                }
            }
        }
        _ => given(),
    }
}

/// Whether an op is encoded exactly by [`fp_query`] (the others are
/// uninterpreted functions there).
pub fn exact_in_fp(sem: Sem) -> bool {
    is_integer(sem) || matches!(sem, Sem::FAdd | Sem::FSub | Sem::FMul | Sem::FMin | Sem::FMax | Sem::FMad | Sem::Recip | Sem::Rsqrt | Sem::Floor | Sem::Neg | Sem::Sign | Sem::Ge | Sem::Lt | Sem::Select | Sem::Mov)
}

/// The SMT-LIB text of "`a` and `b` differ (in truth, when `truth`)"
/// with float ops in Z3's floating-point theory: one constant `tN` per
/// term `N` of the cone. Also the cone's leaves and texture results, whose
/// model words a counterexample needs.
pub fn fp_query(terms: &Terms, a: Term, b: Term, truth: bool) -> (String, Vec<Term>) {
    let mut cone = crate::smt::reachable(terms, &[a, b]);
    cone.sort_unstable();
    let mut s = String::from(
        "(define-fun f ((x (_ BitVec 32))) Float32 ((_ to_fp 8 24) x))\n\
         (define-fun w ((y Float32)) (_ BitVec 32) (ite (fp.isNaN y) #x7fc00000 (fp.to_ieee_bv y)))\n\
         (define-fun flag ((c Bool)) (_ BitVec 32) (ite c #x3f800000 #x00000000))\n\
         (define-fun below ((x Float32) (y Float32)) Bool (or (fp.lt x y) (and (fp.isZero x) (fp.isZero y) (fp.isNegative x) (fp.isPositive y))))\n",
    );
    let mut free = Vec::new();
    let mut ufs: Vec<String> = Vec::new();
    for &t in &cone {
        let _ = writeln!(s, "(declare-const t{} (_ BitVec 32))", t.0);
        let Node::App(fun, args) = terms.node(t) else {
            if let Node::Lit(w) = terms.node(t) {
                let _ = writeln!(s, "(assert (= t{} #x{w:08x}))", t.0);
            } else {
                free.push(t);
            }
            continue;
        };
        let args: Vec<String> = terms.args(*args).iter().map(|x| format!("t{}", x.0)).collect();
        let expr = match fun {
            Fun::Alu(sem) if exact_in_fp(*sem) => encode(*sem, &args),
            _ => None,
        };
        let expr = expr.unwrap_or_else(|| {
            if matches!(fun, Fun::Tex(_)) {
                free.push(t);
            }
            let name = format!("uf_{}_{}", crate::term::fun_name(*fun), args.len());
            if !ufs.contains(&name) {
                let dom = vec!["(_ BitVec 32)"; args.len()].join(" ");
                let _ = writeln!(s, "(declare-fun {name} ({dom}) (_ BitVec 32))");
                ufs.push(name.clone());
            }
            if args.is_empty() {
                name
            } else {
                format!("({name} {})", args.join(" "))
            }
        });
        let _ = writeln!(s, "(assert (= t{} {expr}))", t.0);
    }
    let (x, y) = (format!("t{}", a.0), format!("t{}", b.0));
    if truth {
        let _ = writeln!(s, "(assert (not (= (= {x} #x00000000) (= {y} #x00000000))))");
    } else {
        let _ = writeln!(s, "(assert (not (= {x} {y})))");
    }
    (s, free)
}

/// The word `t` takes for every input and every meaning of the functions
/// [`fp_query`] leaves uninterpreted, where the IEEE-754 meaning of the
/// ops it encodes ([`apply`]) fixes one: literals, ops of such words, and
/// the results a NaN operand decides alone (`fadd`, `fsub`, `fmul` and
/// `fmad` of a NaN are NaN, `ge`/`lt` of a NaN are 0.0), `select` of a
/// fixed condition picking a fixed word, and `and` with 0 and `or` with
/// all ones. `None`: the word may vary.
pub fn fixed_word(terms: &Terms, t: Term) -> Option<u32> {
    let mut cone = crate::smt::reachable(terms, &[t]);
    cone.sort_unstable();
    let mut words: FxHashMap<Term, Option<u32>> = FxHashMap::default();
    for &u in &cone {
        let w = match terms.node(u) {
            Node::Lit(w) => Some(*w),
            Node::App(Fun::Alu(sem), xs) if encoded(*sem, terms.args(*xs).len()) => {
                let vals: Vec<Option<u32>> = terms.args(*xs).iter().map(|x| words.get(x).copied().flatten()).collect();
                fixed_result(*sem, &vals)
            }
            _ => None,
        };
        words.insert(u, w);
    }
    words.get(&t).copied().flatten()
}

/// [`fixed_word`] of an op `sem` whose arguments' fixed words are `vals`.
fn fixed_result(sem: Sem, vals: &[Option<u32>]) -> Option<u32> {
    if let Some(all) = vals.iter().copied().collect::<Option<Vec<u32>>>() {
        return apply(sem, &all);
    }
    let nan = |v: &Option<u32>| v.is_some_and(|w| f(w).is_nan());
    match (sem, vals) {
        (Sem::FAdd | Sem::FSub | Sem::FMul, [x, y]) if nan(x) || nan(y) => Some(CANONICAL_NAN),
        (Sem::FMad, [x, y, z]) if nan(x) || nan(y) || nan(z) => Some(CANONICAL_NAN),
        (Sem::Ge | Sem::Lt, [x, y]) if nan(x) || nan(y) => Some(0),
        (Sem::Select, [Some(c), x, y]) => {
            if f(*c) != 0.0 {
                *x
            } else {
                *y
            }
        }
        (Sem::And, [Some(0), _] | [_, Some(0)]) => Some(0),
        (Sem::Or, [Some(u32::MAX), _] | [_, Some(u32::MAX)]) => Some(u32::MAX),
        _ => None,
    }
}

/// Whether `a` and `b` are equal (in truth, when `truth`) for every input
/// because both have a [`fixed_word`] and the two agree: `fp_query(a, b)`
/// is then unsatisfiable. `false` proves nothing.
pub fn equal_by_fixed_words(terms: &Terms, a: Term, b: Term, truth: bool) -> bool {
    let (Some(x), Some(y)) = (fixed_word(terms, a), fixed_word(terms, b)) else { return false };
    if truth {
        (x == 0) == (y == 0)
    } else {
        x == y
    }
}

/// Leaf assignments [`differs_somewhere`] tries.
pub const WITNESS_SAMPLES: u64 = 64;

/// How [`differs_somewhere`] evaluates one term of a cone.
enum Step {
    /// A literal word.
    Lit(u32),
    /// A free constant of [`fp_query`] (leaf or block-entry symbol).
    Free,
    /// An op [`fp_query`] encodes exactly: [`apply`] on the arguments.
    Exact(Sem),
    /// An op [`fp_query`] leaves uninterpreted, keyed by its function's
    /// name and arity (one function per name, as there).
    Uninterpreted(u64),
}

/// Sample `k`'s word for free constant `t`: small integers, simple floats
/// of either sign, floats near 1 (which chains of products keep finite),
/// a few special floats, and arbitrary words in turn.
pub(crate) fn free_word(t: Term, k: u64) -> u32 {
    const SPECIAL: [f32; 8] = [0.0, 1.0, -1.0, 2.0, 0.5, -0.0, f32::INFINITY, -2.0];
    let h = mix(u64::from(t.0) ^ mix(k.wrapping_add(0x9e37_79b9)));
    match k % 8 {
        0 => (h % 5) as u32,
        1 => (0.25 + (h % 4096) as f32 / 512.0).to_bits(),
        2 => ((h % 4096) as f32 / 128.0 - 16.0).to_bits(),
        3 => (0.9 + (h % 4096) as f32 / 20480.0).to_bits(),
        4 => ((h % 4096) as f32 / 1024.0 - 2.0).to_bits(),
        5 => SPECIAL[(h % 8) as usize].to_bits(),
        6 => ((h % 64) as f32).to_bits(),
        _ => (h >> 11) as u32,
    }
}

/// Whether some words of the free constants and some interpretation of
/// the functions [`fp_query`] leaves uninterpreted make `a` and `b` differ
/// (in truth, when `truth`) with every op [`fp_query`] encodes evaluated
/// by [`apply`], the same IEEE-754 meaning. When it says so, `fp_query(a,
/// b)` is satisfiable, so the solver cannot prove the two equal: its
/// answer could only be a counterexample or unknown. Tries
/// [`WITNESS_SAMPLES`] assignments, each with its own hash function for
/// each uninterpreted function; `false` proves nothing.
pub fn differs_somewhere(terms: &Terms, a: Term, b: Term, truth: bool) -> bool {
    let mut cone = crate::smt::reachable(terms, &[a, b]);
    cone.sort_unstable();
    let at: FxHashMap<Term, usize> = cone.iter().enumerate().map(|(i, t)| (*t, i)).collect();
    let mut args: Vec<Vec<usize>> = Vec::with_capacity(cone.len());
    let mut steps: Vec<Step> = Vec::with_capacity(cone.len());
    for &t in &cone {
        let (step, xs) = match terms.node(t) {
            Node::Lit(w) => (Step::Lit(*w), Vec::new()),
            Node::App(fun, xs) => {
                let xs = terms.args(*xs);
                let step = match fun {
                    Fun::Alu(sem) if encoded(*sem, xs.len()) => Step::Exact(*sem),
                    _ => Step::Uninterpreted(name_key(&format!("{}_{}", crate::term::fun_name(*fun), xs.len()))),
                };
                let Some(ix) = xs.iter().map(|x| at.get(x).copied()).collect::<Option<Vec<usize>>>() else { return false };
                (step, ix)
            }
            _ => (Step::Free, Vec::new()),
        };
        steps.push(step);
        args.push(xs);
    }
    let (Some(&ia), Some(&ib)) = (at.get(&a), at.get(&b)) else { return false };
    let mut words = vec![0u32; cone.len()];
    let mut vals: Vec<u32> = Vec::with_capacity(4);
    'samples: for k in 0..WITNESS_SAMPLES {
        for (i, step) in steps.iter().enumerate() {
            vals.clear();
            vals.extend(args[i].iter().map(|&j| words[j]));
            words[i] = match step {
                Step::Lit(w) => *w,
                Step::Free => free_word(cone[i], k),
                Step::Exact(sem) => match apply(*sem, &vals) {
                    Some(w) => w,
                    None => continue 'samples,
                },
                Step::Uninterpreted(key) => (vals.iter().fold(mix(key ^ k), |h, v| mix(h ^ u64::from(*v))) >> 7) as u32,
            };
        }
        let (x, y) = (words[ia], words[ib]);
        if if truth { (x == 0) != (y == 0) } else { x != y } {
            return true;
        }
    }
    false
}

/// Whether [`fp_query`] encodes `sem` with `arity` arguments exactly.
fn encoded(sem: Sem, arity: usize) -> bool {
    exact_in_fp(sem) && encode(sem, &vec![String::new(); arity]).is_some()
}

/// A hash of an uninterpreted function's name (FNV-1a).
fn name_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The SMT-LIB expression of exact op `sem` on argument constants.
fn encode(sem: Sem, a: &[String]) -> Option<String> {
    let bv = |op: &str| match a {
        [x, y] => Some(format!("({op} {x} {y})")),
        _ => None,
    };
    let m24 = "#x00ffffff";
    let m5 = "#x0000001f";
    let fp2 = |op: &str| match a {
        [x, y] => Some(format!("(w ({op} RNE (f {x}) (f {y})))")),
        _ => None,
    };
    let fp1 = |body: &dyn Fn(&str) -> String| match a {
        [x] => Some(body(&format!("(f {x})"))),
        _ => None,
    };
    let minmax = |max: bool| match a {
        [x, y] => {
            let pick = if max { format!("(ite (below (f {x}) (f {y})) {y} {x})") } else { format!("(ite (below (f {y}) (f {x})) {y} {x})") };
            Some(format!("(ite (fp.isNaN (f {x})) (w (f {y})) (ite (fp.isNaN (f {y})) (w (f {x})) {pick}))"))
        }
        _ => None,
    };
    match sem {
        Sem::Add => bv("bvadd"),
        Sem::Sub => bv("bvsub"),
        Sem::Mul => bv("bvmul"),
        Sem::And => bv("bvand"),
        Sem::Or => bv("bvor"),
        Sem::Xor => bv("bvxor"),
        Sem::UMul24 => match a {
            [x, y] => Some(format!("(bvmul (bvand {x} {m24}) (bvand {y} {m24}))")),
            _ => None,
        },
        Sem::Shl => match a {
            [x, y] => Some(format!("(bvshl {x} (bvand {y} {m5}))")),
            _ => None,
        },
        Sem::Shr => match a {
            [x, y] => Some(format!("(bvlshr {x} (bvand {y} {m5}))")),
            _ => None,
        },
        Sem::Mov => match a {
            [x] => Some(x.clone()),
            _ => None,
        },
        Sem::FAdd => fp2("fp.add"),
        Sem::FSub => fp2("fp.sub"),
        Sem::FMul => fp2("fp.mul"),
        Sem::FMin => minmax(false),
        Sem::FMax => minmax(true),
        Sem::FMad => match a {
            [x, y, z] => Some(format!("(w (fp.add RNE (fp.mul RNE (f {x}) (f {y})) (f {z})))")),
            _ => None,
        },
        Sem::Ge => match a {
            [x, y] => Some(format!("(flag (fp.geq (f {x}) (f {y})))")),
            _ => None,
        },
        Sem::Lt => match a {
            [x, y] => Some(format!("(flag (fp.lt (f {x}) (f {y})))")),
            _ => None,
        },
        Sem::Select => match a {
            [c, x, y] => Some(format!("(ite (fp.eq (f {c}) (_ +zero 8 24)) {y} {x})")),
            _ => None,
        },
        Sem::Recip => fp1(&|x| format!("(w (fp.div RNE ((_ to_fp 8 24) #x3f800000) {x}))")),
        Sem::Rsqrt => fp1(&|x| format!("(w (fp.div RNE ((_ to_fp 8 24) #x3f800000) (fp.sqrt RNE {x})))")),
        Sem::Floor => fp1(&|x| format!("(w (fp.roundToIntegral RTN {x}))")),
        Sem::Neg => match a {
            [x] => Some(format!("(ite (fp.isNaN (f {x})) #x7fc00000 (bvxor {x} #x80000000))")),
            _ => None,
        },
        Sem::Sign => fp1(&|x| format!("(ite (fp.gt {x} (_ +zero 8 24)) #x3f800000 (ite (fp.lt {x} (_ +zero 8 24)) #xbf800000 #x00000000))")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_words_follow_the_float_rules() {
        let (one, two, nan, pz, nz) = (1.0f32.to_bits(), 2.0f32.to_bits(), f32::NAN.to_bits() | 1, 0u32, 0x8000_0000u32);
        assert_eq!(apply(Sem::FAdd, &[one, one]), Some(two));
        assert_eq!(apply(Sem::FMin, &[pz, nz]), Some(nz));
        assert_eq!(apply(Sem::FMax, &[nz, pz]), Some(pz));
        assert_eq!(apply(Sem::FMin, &[nan, one]), Some(one));
        assert_eq!(apply(Sem::FMul, &[nan, one]), Some(CANONICAL_NAN));
        assert_eq!(apply(Sem::Neg, &[one]), Some((-1.0f32).to_bits()));
        assert_eq!(apply(Sem::Select, &[nan, one, two]), Some(one));
        assert_eq!(apply(Sem::Select, &[nz, one, two]), Some(two));
        assert_eq!(apply(Sem::Ge, &[nan, one]), Some(0));
        assert_eq!(apply(Sem::Floor, &[(-1.5f32).to_bits()]), Some((-2.0f32).to_bits()));
        assert_eq!(apply(Sem::Add, &[u32::MAX, 2]), Some(1));
        assert_eq!(apply(Sem::FAdd, &[one]), None);
    }

    #[test]
    fn nan_operands_fix_words_and_decide_equality() {
        let mut t = Terms::new();
        let (x, y) = (t.intern(Node::Uniform(0, 0)), t.intern(Node::Uniform(1, 0)));
        let nan = t.lit(0xffff_ffff);
        let (xn, ny) = (t.app(Fun::Alu(Sem::FMul), vec![x, nan]), t.app(Fun::Alu(Sem::FMul), vec![nan, y]));
        assert_eq!(fixed_word(&t, xn), Some(CANONICAL_NAN));
        assert!(equal_by_fixed_words(&t, xn, ny, false), "both NaN for every input");
        let mad = t.app(Fun::Alu(Sem::FMad), vec![x, y, xn]);
        assert_eq!(fixed_word(&t, mad), Some(CANONICAL_NAN));
        let ge = t.app(Fun::Alu(Sem::Ge), vec![ny, x]);
        assert_eq!(fixed_word(&t, ge), Some(0));
        let (two, minus_one) = (t.lit(2.0f32.to_bits()), t.lit((-1.0f32).to_bits()));
        let one = t.app(Fun::Alu(Sem::FAdd), vec![two, minus_one]);
        assert!(equal_by_fixed_words(&t, one, two, true), "1.0 and 2.0 are both true");
        assert!(!equal_by_fixed_words(&t, one, two, false));
        let picked = t.app(Fun::Alu(Sem::Select), vec![one, two, x]);
        assert_eq!(fixed_word(&t, picked), Some(2.0f32.to_bits()));
        // Nothing about a word that varies: fmin of a NaN is the other
        // operand, x * 1.0 is x only for non-NaN x, exp2 is uninterpreted.
        let unit = t.lit(1.0f32.to_bits());
        let (lo, times_one) = (t.app(Fun::Alu(Sem::FMin), vec![x, nan]), t.app(Fun::Alu(Sem::FMul), vec![x, unit]));
        assert_eq!((fixed_word(&t, lo), fixed_word(&t, times_one)), (None, None));
        let e = t.app(Fun::Alu(Sem::Exp2), vec![two]);
        assert_eq!(fixed_word(&t, e), None, "exp2 is uninterpreted in the float query");
        assert!(!equal_by_fixed_words(&t, x, x, false), "no fixed word, no claim");
    }

    #[test]
    fn concrete_differences_are_found_and_identities_are_not_refuted() {
        let mut t = Terms::new();
        let (x, y) = (t.intern(Node::Uniform(0, 0)), t.intern(Node::Uniform(1, 0)));
        let (xy, yx) = (t.app(Fun::Alu(Sem::FSub), vec![x, y]), t.app(Fun::Alu(Sem::FSub), vec![y, x]));
        assert!(differs_somewhere(&t, xy, yx, false));
        let (s, r) = (t.app(Fun::Alu(Sem::FAdd), vec![x, y]), t.app(Fun::Alu(Sem::FAdd), vec![y, x]));
        assert!(!differs_somewhere(&t, s, r, false), "IEEE addition commutes");
        let m = t.app(Fun::Alu(Sem::FMax), vec![xy, xy]);
        assert!(!differs_somewhere(&t, m, xy, false), "fmax(z, z) is z for a computed z");
        // Uninterpreted functions: any function of the argument words.
        let (ex, ey) = (t.app(Fun::Alu(Sem::Exp2), vec![x]), t.app(Fun::Alu(Sem::Exp2), vec![y]));
        assert!(differs_somewhere(&t, ex, ey, false));
        let ex2 = t.app(Fun::Alu(Sem::Exp2), vec![x]);
        assert!(!differs_somewhere(&t, ex, ex2, false));
        let one = t.lit(1.0f32.to_bits());
        let (gx, gy) = (t.app(Fun::Alu(Sem::Ge), vec![x, one]), t.app(Fun::Alu(Sem::Ge), vec![one, x]));
        assert!(differs_somewhere(&t, gx, gy, true), "x >= 1 and 1 >= x disagree in truth for x = 2");
    }

    #[test]
    fn texture_results_are_functions_of_their_coordinate_words() {
        let mut t = Terms::new();
        let (u, v) = (t.intern(Node::Uniform(0, 0)), t.intern(Node::Uniform(1, 0)));
        let (x, y) = (t.app(Fun::Tex(0), vec![u]), t.app(Fun::Tex(0), vec![v]));
        let leaves: FxHashMap<Term, u32> = [(u, 5), (v, 5), (x, 1), (y, 2)].into_iter().collect();
        let mut e = Exact::new(&leaves);
        assert_eq!((e.eval(&t, x), e.eval(&t, y)), (Some(1), Some(1)), "equal coordinates, equal result");
    }
}
