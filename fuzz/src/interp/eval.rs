//! The meaning of each arithmetic [`Sem`] on 32-bit words (one word of a
//! value; multi-register values apply it word by word, see `exec`).
//!
//! Integer ops are exact two's complement (wrapping); shifts mask their count
//! with 31. Float ops act on the words' IEEE-754 single meaning with Rust's
//! `f32` arithmetic (round to nearest even, denormals kept); `fmad` is
//! unfused (`a * b` rounded, then `+ c`). Every NaN result is canonicalised
//! to [`CANONICAL_NAN`], so no result depends on NaN payloads. `fmin`/`fmax`
//! are IEEE minNum/maxNum with -0 < +0, written out so that they are exactly
//! commutative (a NaN operand yields the other operand).
//!
//! Invariant: [`word`] is a pure, total function: same sem and arguments,
//! same word; it never panics.

use schedra_ir::target::lima_gp::complex;
use schedra_ir::target::{Cx, Sem};

/// The word every NaN result becomes.
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

/// `a < b` in the total order used by min/max: numeric, and -0 below +0.
fn less(a: f32, b: f32) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && !b.is_sign_negative())
}

/// minNum: the smaller operand; a NaN operand yields the other one.
fn fmin(a: f32, b: f32) -> u32 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => canon(b),
        (_, true) => canon(a),
        _ => canon(if less(b, a) { b } else { a }),
    }
}

/// maxNum: the larger operand; a NaN operand yields the other one.
fn fmax(a: f32, b: f32) -> u32 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => canon(b),
        (_, true) => canon(a),
        _ => canon(if less(a, b) { b } else { a }),
    }
}

/// 1.0 or 0.0.
fn flag(b: bool) -> u32 {
    if b {
        1.0f32.to_bits()
    } else {
        0
    }
}

/// sign: 1.0 above zero, -1.0 below, 0.0 for zeros and NaN.
fn sign(a: f32) -> u32 {
    if a > 0.0 {
        1.0f32.to_bits()
    } else if a < 0.0 {
        (-1.0f32).to_bits()
    } else {
        0
    }
}

/// `complex1 a, b, c` in the model of `schedra_ir::target::lima_gp::complex`:
/// the function whose `impl` made `a` from `c` (with `b = complex2 c`),
/// exp2 undoing its `preexp2`, log2 leaving the word `postlog2` finishes;
/// a garbage word when the parts do not match.
fn complex1(a: u32, b: u32, c: u32) -> u32 {
    match complex::joined(a, b, c) {
        Some(Cx::Rcp) => canon(1.0 / f(c)),
        Some(Cx::Rsqrt) => canon(1.0 / f(c).sqrt()),
        Some(Cx::Exp2) => canon(f(complex::unpre(c)).exp2()),
        Some(Cx::Log2) => complex::log_raw(canon(f(c).log2())),
        None => complex::garbage(a, b, c),
    }
}

/// How many word arguments an arithmetic sem takes, or `None` if `sem` is
/// not a pure word operation (outside inputs, memory, effects).
pub fn arity(sem: Sem) -> Option<usize> {
    use Sem::*;
    match sem {
        FAdd | FSub | FMul | FMin | FMax | Add | Sub | UMul24 | Mul | And | Or | Xor | Shl | Shr | Ge | Lt => Some(2),
        FMad | Select | Complex1 => Some(3),
        Mov | Recip | Rsqrt | Exp2 | Log2 | Sin | Cos | Floor | Sign | Neg | ComplexImpl(_) | Complex2 | PreExp2 | PostLog2 => Some(1),
        Uniform | Const | Varying | Texture | ScratchRead | ScratchWrite | Output(..) | Discard | ThreadSwitch | TexBarrier | TexCoord | TexLookup | TexResult => None,
    }
}

/// One word of an arithmetic op: `args` holds one word per operand, in
/// operand order. Returns `None` when `sem` is not arithmetic or `args` has
/// the wrong length.
#[inline]
pub fn word(sem: Sem, args: &[u32]) -> Option<u32> {
    if arity(sem) != Some(args.len()) {
        return None;
    }
    let a = *args.first()?;
    let b = args.get(1).copied().unwrap_or(0);
    let c = args.get(2).copied().unwrap_or(0);
    apply(sem, a, b, c)
}

/// [`word`] for an arithmetic `sem` whose arity is already known to be
/// right: its operands `a`, `b`, `c` in order, the ones past its arity
/// ignored. `None` when `sem` is not arithmetic.
pub fn apply(sem: Sem, a: u32, b: u32, c: u32) -> Option<u32> {
    use Sem::*;
    Some(match sem {
        FAdd => canon(f(a) + f(b)),
        FSub => canon(f(a) - f(b)),
        FMul => canon(f(a) * f(b)),
        FMin => fmin(f(a), f(b)),
        FMax => fmax(f(a), f(b)),
        FMad => canon(f(a) * f(b) + f(c)), // Rust never contracts this into an fma
        Add => a.wrapping_add(b),
        Sub => a.wrapping_sub(b),
        UMul24 => (a & 0x00ff_ffff).wrapping_mul(b & 0x00ff_ffff),
        Mul => a.wrapping_mul(b),
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        Shl => a << (b & 31),
        Shr => a >> (b & 31),
        Mov => a,
        Recip => canon(1.0 / f(a)),
        Rsqrt => canon(1.0 / f(a).sqrt()),
        Exp2 => canon(f(a).exp2()),
        Log2 => canon(f(a).log2()),
        Sin => canon(f(a).sin()),
        Cos => canon(f(a).cos()),
        Floor => canon(f(a).floor()),
        Sign => sign(f(a)),
        Neg => canon(-f(a)),
        Ge => flag(f(a) >= f(b)),
        Lt => flag(f(a) < f(b)),
        Select => {
            if f(a) != 0.0 {
                b
            } else {
                c
            }
        }
        ComplexImpl(fun) => complex::imp(fun, a),
        Complex2 => complex::second(a),
        PreExp2 => complex::pre(a),
        PostLog2 => complex::post(a),
        Complex1 => complex1(a, b, c),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn integer_ops_wrap() {
        assert_eq!(word(Sem::Add, &[u32::MAX, 2]), Some(1));
        assert_eq!(word(Sem::Sub, &[0, 1]), Some(u32::MAX));
        assert_eq!(word(Sem::UMul24, &[0x0100_0003, 0xff00_0005]), Some(15));
        assert_eq!(word(Sem::Xor, &[0b1100, 0b1010]), Some(0b0110));
    }

    #[test]
    fn shifts_mask_their_count() {
        assert_eq!(word(Sem::Shl, &[1, 33]), Some(2));
        assert_eq!(word(Sem::Shr, &[0x8000_0000, 31]), Some(1));
        assert_eq!(word(Sem::Shr, &[0x8000_0000, 32]), Some(0x8000_0000));
        // a + a == a << 1
        for a in [0u32, 1, 0x7fff_ffff, 0xdead_beef] {
            assert_eq!(word(Sem::Add, &[a, a]), word(Sem::Shl, &[a, 1]));
        }
    }

    #[test]
    fn float_ops_use_ieee_single() {
        assert_eq!(word(Sem::FAdd, &[one(1.5), one(2.25)]), Some(one(3.75)));
        assert_eq!(word(Sem::FMul, &[one(-2.0), one(0.5)]), Some(one(-1.0)));
        assert_eq!(word(Sem::FMad, &[one(2.0), one(3.0), one(1.0)]), Some(one(7.0)));
        assert_eq!(word(Sem::Recip, &[one(4.0)]), Some(one(0.25)));
        assert_eq!(word(Sem::Rsqrt, &[one(4.0)]), Some(one(0.5)));
        assert_eq!(word(Sem::Exp2, &[one(3.0)]), Some(one(8.0)));
        assert_eq!(word(Sem::Log2, &[one(8.0)]), Some(one(3.0)));
    }

    #[test]
    fn complex_sequences_compute_only_when_whole() {
        let x = one(4.0);
        let c1 = |f: Cx, x: u32| word(Sem::Complex1, &[complex::imp(f, x), complex::second(x), x]).unwrap();
        assert_eq!(c1(Cx::Rcp, x), one(0.25));
        assert_eq!(c1(Cx::Rsqrt, x), one(0.5));
        let p = word(Sem::PreExp2, &[x]).unwrap();
        assert_eq!(c1(Cx::Exp2, p), one(16.0));
        assert_ne!(c1(Cx::Exp2, x), one(16.0), "exp2 without preexp2");
        let l = c1(Cx::Log2, x);
        assert_eq!(word(Sem::PostLog2, &[l]), Some(one(2.0)));
        assert_ne!(l, one(2.0), "log2 without postlog2");
        let wrong = word(Sem::Complex1, &[complex::imp(Cx::Rcp, x), complex::second(one(2.0)), x]).unwrap();
        assert_ne!(wrong, one(0.25), "complex2 of another x");
        assert_eq!(word(Sem::Select, &[one(0.0), one(1.0), one(2.0)]), Some(one(2.0)));
        assert_eq!(word(Sem::Ge, &[one(1.0), one(1.0)]), Some(one(1.0)));
        assert_eq!(word(Sem::Lt, &[one(1.0), one(1.0)]), Some(0));
    }

    #[test]
    fn nans_are_canonical() {
        assert_eq!(word(Sem::FSub, &[one(f32::INFINITY), one(f32::INFINITY)]), Some(CANONICAL_NAN));
        assert_eq!(word(Sem::Log2, &[one(-1.0)]), Some(CANONICAL_NAN));
        assert_eq!(word(Sem::FAdd, &[0xffff_ffff, one(1.0)]), Some(CANONICAL_NAN));
    }

    #[test]
    fn min_max_are_commutative() {
        let vals = [one(0.0), one(-0.0), one(1.0), one(-3.5), 0x7fc0_0001, 0xff80_0000];
        for &a in &vals {
            for &b in &vals {
                assert_eq!(word(Sem::FMin, &[a, b]), word(Sem::FMin, &[b, a]), "{a:x} {b:x}");
                assert_eq!(word(Sem::FMax, &[a, b]), word(Sem::FMax, &[b, a]), "{a:x} {b:x}");
            }
        }
        assert_eq!(word(Sem::FMin, &[one(0.0), one(-0.0)]), Some(one(-0.0)));
        assert_eq!(word(Sem::FMax, &[0x7fc0_0001, one(2.0)]), Some(one(2.0)));
    }

    #[test]
    fn non_arithmetic_and_wrong_arity_are_none() {
        assert_eq!(word(Sem::Uniform, &[0]), None);
        assert_eq!(word(Sem::FAdd, &[1]), None);
        assert_eq!(word(Sem::Mov, &[]), None);
    }
}
