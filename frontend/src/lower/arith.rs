//! Scalar arithmetic from the ops a target has. Every function folds
//! immediates (with the interpreters' IEEE single meaning) and otherwise
//! emits ops found by meaning; what a target lacks is built from what it
//! has:
//!
//! - `a - b` without a subtract: `a + b * -1.0`; `-a` is `a * -1.0`;
//!   `|a|` is `max(a, -a)`; `a / b` is `a * recip(b)`;
//! - comparisons produce a [`Cond`], a word that is nonzero exactly when the
//!   comparison holds: `a < b` is `min(a - b, 0.0) + 0.0` (exact: distinct
//!   finite floats never subtract to zero, and `+ 0.0` turns `-0.0` into
//!   `+0.0`); `a != b` is `(a - b) + 0.0`; the others negate or swap these
//!   (so `<=` on a NaN operand answers like `!(b < a)`);
//! - booleans are the floats 0.0 and 1.0; a select is a branch diamond
//!   ([`Builder::branch`]), exact on every word;
//! - `floor(x)`: for |x| < 2^23, `(|x| + 2^23) - 2^23` rounds |x| to an
//!   integer (round to nearest even), the sign is put back and one is
//!   subtracted where that overshot x; larger x (and NaN, inf) are already
//!   integral;
//! - `sin` without a sine op: reduction to [-π, π] by `x - 2π·floor(x/2π + 1/2)`
//!   (2π in two parts), then the odd Taylor polynomial of degree 15
//!   (error below 1e-6 on [-π, π]; the reduced argument is clamped to
//!   [-π, π], so beyond |x| = 2^16, where the reduction loses the phase, the
//!   result stays in [-1, 1]); `cos(x) = sin(x + π/2)`;
//! - `exp(x) = exp2(x·log2 e)`, `log(x) = log2(x)·ln 2`, `pow(x, y) =
//!   exp2(y·log2 x)`, `sqrt(x) = recip(rsqrt(x))`.

use super::builder::{as_f32, fimm, Builder, Val};
use schedra_ir::target::Sem;

/// A truth value: a constant, or a word whose nonzero-ness is the truth
/// (`positive`) or its negation.
#[derive(Clone, Debug)]
pub enum Cond {
    /// Known at lowering time.
    Const(bool),
    /// `word != 0` is the truth when `positive`, its negation otherwise.
    Word(Val, bool),
}

impl Cond {
    /// The negation.
    pub fn negate(self) -> Cond {
        match self {
            Cond::Const(b) => Cond::Const(!b),
            Cond::Word(v, p) => Cond::Word(v, !p),
        }
    }
}

type R = Result<Val, String>;

fn fold2(a: &Val, b: &Val, f: impl Fn(f32, f32) -> f32) -> Option<Val> {
    Some(fimm(f(as_f32(a)?, as_f32(b)?)))
}

/// Canonical NaN like the interpreters.
fn canon(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(0x7fc0_0000)
    } else {
        x
    }
}

fn less(a: f32, b: f32) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && !b.is_sign_negative())
}

fn minnum(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || !less(b, a) {
        a
    } else {
        b
    }
}

fn maxnum(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || !less(a, b) {
        a
    } else {
        b
    }
}

/// `a + b`.
pub fn add(b: &mut Builder, x: Val, y: Val) -> R {
    if let Some(v) = fold2(&x, &y, |p, q| canon(p + q)) {
        return Ok(v);
    }
    b.emit(Sem::FAdd, &[x, y])
}

/// `a * b`.
pub fn mul(b: &mut Builder, x: Val, y: Val) -> R {
    if let Some(v) = fold2(&x, &y, |p, q| canon(p * q)) {
        return Ok(v);
    }
    b.emit(Sem::FMul, &[x, y])
}

/// `min(a, b)` (minNum).
pub fn min(b: &mut Builder, x: Val, y: Val) -> R {
    if let Some(v) = fold2(&x, &y, minnum) {
        return Ok(v);
    }
    b.emit(Sem::FMin, &[x, y])
}

/// `max(a, b)` (maxNum).
pub fn max(b: &mut Builder, x: Val, y: Val) -> R {
    if let Some(v) = fold2(&x, &y, maxnum) {
        return Ok(v);
    }
    b.emit(Sem::FMax, &[x, y])
}

/// `-a`.
pub fn neg(b: &mut Builder, x: Val) -> R {
    mul(b, x, fimm(-1.0))
}

/// `a - b`.
pub fn sub(b: &mut Builder, x: Val, y: Val) -> R {
    if let Some(v) = fold2(&x, &y, |p, q| canon(p - q)) {
        return Ok(v);
    }
    if b.has(Sem::FSub) {
        return b.emit(Sem::FSub, &[x, y]);
    }
    let n = neg(b, y)?;
    add(b, x, n)
}

/// A one-operand op of meaning `sem` (folded with `f`).
fn unary(b: &mut Builder, sem: Sem, x: Val, f: impl Fn(f32) -> f32) -> R {
    if let Some(p) = as_f32(&x) {
        return Ok(fimm(canon(f(p))));
    }
    b.emit(sem, &[x])
}

/// `1 / a`.
pub fn recip(b: &mut Builder, x: Val) -> R {
    unary(b, Sem::Recip, x, |p| 1.0 / p)
}

/// `1 / sqrt(a)`.
pub fn rsqrt(b: &mut Builder, x: Val) -> R {
    unary(b, Sem::Rsqrt, x, |p| 1.0 / p.sqrt())
}

/// `2^a`.
pub fn exp2(b: &mut Builder, x: Val) -> R {
    unary(b, Sem::Exp2, x, f32::exp2)
}

/// `log2 a`.
pub fn log2(b: &mut Builder, x: Val) -> R {
    unary(b, Sem::Log2, x, f32::log2)
}

/// `a / b` as `a * recip(b)`.
pub fn div(b: &mut Builder, x: Val, y: Val) -> R {
    let r = recip(b, y)?;
    mul(b, x, r)
}

/// `sqrt(a)` as `recip(rsqrt(a))` (exact at 0 and inf).
pub fn sqrt(b: &mut Builder, x: Val) -> R {
    let r = rsqrt(b, x)?;
    recip(b, r)
}

/// `|a|`.
pub fn abs(b: &mut Builder, x: Val) -> R {
    let n = neg(b, x.clone())?;
    max(b, x, n)
}

/// `a < b`.
pub fn lt(b: &mut Builder, x: Val, y: Val) -> Result<Cond, String> {
    if let (Some(p), Some(q)) = (as_f32(&x), as_f32(&y)) {
        return Ok(Cond::Const(p < q));
    }
    let d = sub(b, x, y)?;
    let m = min(b, d, fimm(0.0))?;
    let w = add(b, m, fimm(0.0))?;
    Ok(Cond::Word(w, true))
}

/// `a != b`.
pub fn ne(b: &mut Builder, x: Val, y: Val) -> Result<Cond, String> {
    if let (Some(p), Some(q)) = (as_f32(&x), as_f32(&y)) {
        return Ok(Cond::Const(p != q));
    }
    let d = sub(b, x, y)?;
    let w = add(b, d, fimm(0.0))?;
    Ok(Cond::Word(w, true))
}

/// The condition that a boolean value (0.0 or 1.0) is true.
pub fn truth(v: Val) -> Cond {
    match as_f32(&v) {
        Some(p) => Cond::Const(p != 0.0),
        None => Cond::Word(v, true),
    }
}

/// `c ? a : b` for whole values (component lists), as one branch diamond.
pub fn select(b: &mut Builder, c: Cond, a: Vec<Val>, e: Vec<Val>) -> Result<Vec<Val>, String> {
    let (w, pos) = match c {
        Cond::Const(t) => return Ok(if t { a } else { e }),
        Cond::Word(w, p) => (w, p),
    };
    if a == e {
        return Ok(a);
    }
    let (nz, z) = b.branch(w)?;
    let (ta, te) = if pos { (nz, z) } else { (z, nz) };
    let join = b.block();
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.into_iter().zip(e) {
        if x == y {
            out.push(x);
            continue;
        }
        let d = b.vreg();
        b.mov_into(ta, &d, x)?;
        b.mov_into(te, &d, y)?;
        out.push(schedra_ir::Operand::Virt(d));
    }
    b.jump(ta, join);
    b.jump(te, join);
    b.cur = join;
    Ok(out)
}

/// One scalar select.
pub fn select1(b: &mut Builder, c: Cond, x: Val, y: Val) -> R {
    let v = select(b, c, vec![x], vec![y])?;
    v.into_iter().next().ok_or_else(|| "empty select".to_string())
}

/// A boolean value (1.0 or 0.0) from a condition.
pub fn boolean(b: &mut Builder, c: Cond) -> R {
    select1(b, c, fimm(1.0), fimm(0.0))
}

const TWO23: f32 = 8_388_608.0;

/// `floor(x)`.
pub fn floor(b: &mut Builder, x: Val) -> R {
    if let Some(p) = as_f32(&x) {
        return Ok(fimm(canon(p.floor())));
    }
    let ax = abs(b, x.clone())?;
    let t = add(b, ax.clone(), fimm(TWO23))?;
    let t = sub(b, t, fimm(TWO23))?;
    let nt = neg(b, t.clone())?;
    let negative = lt(b, x.clone(), fimm(0.0))?;
    let r = select1(b, negative, nt, t)?;
    let over = lt(b, x.clone(), r.clone())?;
    let r1 = sub(b, r.clone(), fimm(1.0))?;
    let r = select1(b, over, r1, r)?;
    let small = lt(b, ax, fimm(TWO23))?;
    select1(b, small, r, x)
}

/// `x - floor(x)`.
pub fn fract(b: &mut Builder, x: Val) -> R {
    let f = floor(b, x.clone())?;
    sub(b, x, f)
}

/// `ceil(x) = -floor(-x)`.
pub fn ceil(b: &mut Builder, x: Val) -> R {
    let n = neg(b, x)?;
    let f = floor(b, n)?;
    neg(b, f)
}

/// `trunc(x)`: floor toward zero.
pub fn trunc(b: &mut Builder, x: Val) -> R {
    let ax = abs(b, x.clone())?;
    let f = floor(b, ax)?;
    let nf = neg(b, f.clone())?;
    let negative = lt(b, x, fimm(0.0))?;
    select1(b, negative, nf, f)
}

/// `x - y * floor(x / y)`.
pub fn fmod(b: &mut Builder, x: Val, y: Val) -> R {
    let q = div(b, x.clone(), y.clone())?;
    let f = floor(b, q)?;
    let p = mul(b, y, f)?;
    sub(b, x, p)
}

/// `sign(x)`: 1, -1, or x itself for ±0 and NaN.
pub fn sign(b: &mut Builder, x: Val) -> R {
    let pos = lt(b, fimm(0.0), x.clone())?;
    let negc = lt(b, x.clone(), fimm(0.0))?;
    let inner = select1(b, negc, fimm(-1.0), x)?;
    select1(b, pos, fimm(1.0), inner)
}

/// `sin(x)`.
pub fn sin(b: &mut Builder, x: Val) -> R {
    if let Some(p) = as_f32(&x) {
        return Ok(fimm(canon(p.sin())));
    }
    if b.has(Sem::Sin) {
        return b.emit(Sem::Sin, &[x]);
    }
    const INV_2PI: f32 = 0.159_154_94;
    const TWO_PI_HI: f32 = 6.28125;
    const TWO_PI_LO: f32 = 0.001_935_307_2;
    let k = mul(b, x.clone(), fimm(INV_2PI))?;
    let k = add(b, k, fimm(0.5))?;
    let k = floor(b, k)?;
    let hi = mul(b, k.clone(), fimm(TWO_PI_HI))?;
    let r = sub(b, x, hi)?;
    let lo = mul(b, k, fimm(TWO_PI_LO))?;
    let r = sub(b, r, lo)?;
    // past the range where the reduction is exact, keep the result bounded
    let r = max(b, r, fimm(-std::f32::consts::PI))?;
    let r = min(b, r, fimm(std::f32::consts::PI))?;
    let r2 = mul(b, r.clone(), r.clone())?;
    // odd Taylor coefficients 1/(2n+1)!, n = 7 down to 1, Horner in r^2
    let coeffs = [-1.0 / 1_307_674_368_000.0f64, 1.0 / 6_227_020_800.0, -1.0 / 39_916_800.0, 1.0 / 362_880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0];
    let mut p = fimm(coeffs[0] as f32);
    for c in &coeffs[1..] {
        p = mul(b, p, r2.clone())?;
        p = add(b, p, fimm(*c as f32))?;
    }
    p = mul(b, p, r2)?;
    p = mul(b, p, r.clone())?;
    add(b, p, r)
}

/// `cos(x)`.
pub fn cos(b: &mut Builder, x: Val) -> R {
    if let Some(p) = as_f32(&x) {
        return Ok(fimm(canon(p.cos())));
    }
    if b.has(Sem::Cos) {
        return b.emit(Sem::Cos, &[x]);
    }
    let s = add(b, x, fimm(std::f32::consts::FRAC_PI_2))?;
    sin(b, s)
}

/// `asin(x)` by Abramowitz and Stegun 4.4.45 on |x| (absolute error at
/// most 6.8e-5 on [-1, 1]): π/2 − sqrt(1 − |x|)·p(|x|), negated for x < 0.
pub fn asin(b: &mut Builder, x: Val) -> R {
    if let Some(p) = as_f32(&x) {
        return Ok(fimm(canon(p.asin())));
    }
    let a = abs(b, x.clone())?;
    let mut p = fimm(-0.018_729_3);
    for c in [0.074_261_0f32, -0.212_114_4, 1.570_728_8] {
        p = mul(b, p, a.clone())?;
        p = add(b, p, fimm(c))?;
    }
    let rest = sub(b, fimm(1.0), a)?;
    let root = sqrt(b, rest)?;
    let q = mul(b, root, p)?;
    let r = sub(b, fimm(std::f32::consts::FRAC_PI_2), q)?;
    let negative = lt(b, x, fimm(0.0))?;
    let minus = neg(b, r.clone())?;
    select1(b, negative, minus, r)
}

/// `acos(x) = π/2 − asin(x)`.
pub fn acos(b: &mut Builder, x: Val) -> R {
    let s = asin(b, x)?;
    sub(b, fimm(std::f32::consts::FRAC_PI_2), s)
}

/// `pow(x, y) = exp2(y * log2 x)`.
pub fn pow(b: &mut Builder, x: Val, y: Val) -> R {
    let l = log2(b, x)?;
    let m = mul(b, y, l)?;
    exp2(b, m)
}

/// `e^x`.
pub fn exp(b: &mut Builder, x: Val) -> R {
    let m = mul(b, x, fimm(std::f32::consts::LOG2_E))?;
    exp2(b, m)
}

/// `ln x`.
pub fn ln(b: &mut Builder, x: Val) -> R {
    let l = log2(b, x)?;
    mul(b, l, fimm(std::f32::consts::LN_2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_follows_ieee() {
        let t = schedra_ir::target::by_name("r600").expect("r600");
        let mut b = Builder::new(t);
        assert_eq!(as_f32(&floor(&mut b, fimm(-1.5)).unwrap()), Some(-2.0));
        assert_eq!(as_f32(&sub(&mut b, fimm(1.0), fimm(0.25)).unwrap()), Some(0.75));
        assert!(matches!(lt(&mut b, fimm(1.0), fimm(2.0)).unwrap(), Cond::Const(true)));
        assert!(b.finish()[0].insts().is_empty(), "constants fold without code");
    }
}
