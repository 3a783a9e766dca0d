//! The built-in functions and matrix products on component lists, built
//! from the scalar operations of [`super::arith`]. Vectors are component
//! lists, matrices column-major (component `c * rows + r` is row r of
//! column c); a scalar argument beside a vector is broadcast. Sums (dot
//! products, matrix products) add left to right.

use super::arith;
use super::builder::{fimm, Builder, Val};
use crate::types::shape;
use naga::{MathFunction as F, TypeInner};

type R<T> = Result<T, String>;

fn bcast(v: &[Val], n: usize) -> Vec<Val> {
    if v.len() == 1 {
        vec![v[0].clone(); n]
    } else {
        v.to_vec()
    }
}

fn map1(b: &mut Builder, a: Vec<Val>, f: fn(&mut Builder, Val) -> R<Val>) -> R<Vec<Val>> {
    a.into_iter().map(|x| f(b, x)).collect()
}

fn map2(b: &mut Builder, a: Vec<Val>, c: &[Val], f: fn(&mut Builder, Val, Val) -> R<Val>) -> R<Vec<Val>> {
    let c = bcast(c, a.len());
    a.into_iter().zip(c).map(|(x, y)| f(b, x, y)).collect()
}

/// `a · c`.
pub fn dot(b: &mut Builder, a: &[Val], c: &[Val]) -> R<Val> {
    let mut acc: Option<Val> = None;
    for (x, y) in a.iter().zip(c) {
        let p = arith::mul(b, x.clone(), y.clone())?;
        acc = Some(match acc {
            None => p,
            Some(s) => arith::add(b, s, p)?,
        });
    }
    acc.ok_or_else(|| "dot of empty vectors".into())
}

fn scale(b: &mut Builder, v: &[Val], s: &Val) -> R<Vec<Val>> {
    v.iter().map(|x| arith::mul(b, x.clone(), s.clone())).collect()
}

fn vsub(b: &mut Builder, a: &[Val], c: &[Val]) -> R<Vec<Val>> {
    a.iter().zip(c).map(|(x, y)| arith::sub(b, x.clone(), y.clone())).collect()
}

fn length(b: &mut Builder, a: &[Val]) -> R<Val> {
    let d = dot(b, a, a)?;
    arith::sqrt(b, d)
}

fn need(v: Option<Vec<Val>>) -> R<Vec<Val>> {
    v.ok_or_else(|| "a built-in called with too few arguments".into())
}

/// The built-in `fun` applied to `a` (of type `ty`) and the further arguments.
pub fn call(b: &mut Builder, fun: F, a: Vec<Val>, a1: Option<Vec<Val>>, a2: Option<Vec<Val>>, ty: &TypeInner) -> R<Vec<Val>> {
    let n = a.len();
    Ok(match fun {
        F::Abs => map1(b, a, arith::abs)?,
        F::Min => map2(b, a, &need(a1)?, arith::min)?,
        F::Max => map2(b, a, &need(a1)?, arith::max)?,
        F::Clamp => {
            let lo = map2(b, a, &need(a1)?, arith::max)?;
            map2(b, lo, &need(a2)?, arith::min)?
        }
        F::Saturate => {
            let lo = map2(b, a, &[fimm(0.0)], arith::max)?;
            map2(b, lo, &[fimm(1.0)], arith::min)?
        }
        F::Sin => map1(b, a, arith::sin)?,
        F::Cos => map1(b, a, arith::cos)?,
        F::Asin => map1(b, a, arith::asin)?,
        F::Acos => map1(b, a, arith::acos)?,
        F::Floor => map1(b, a, arith::floor)?,
        F::Ceil => map1(b, a, arith::ceil)?,
        F::Trunc => map1(b, a, arith::trunc)?,
        F::Fract => map1(b, a, arith::fract)?,
        F::Round => {
            let h = map2(b, a, &[fimm(0.5)], arith::add)?;
            map1(b, h, arith::floor)?
        }
        F::Exp => map1(b, a, arith::exp)?,
        F::Exp2 => map1(b, a, arith::exp2)?,
        F::Log => map1(b, a, arith::ln)?,
        F::Log2 => map1(b, a, arith::log2)?,
        F::Pow => map2(b, a, &need(a1)?, arith::pow)?,
        F::Sqrt => map1(b, a, arith::sqrt)?,
        F::InverseSqrt => map1(b, a, arith::rsqrt)?,
        F::Sign => map1(b, a, arith::sign)?,
        F::Radians => map2(b, a, &[fimm(std::f32::consts::PI / 180.0)], arith::mul)?,
        F::Degrees => map2(b, a, &[fimm(180.0 / std::f32::consts::PI)], arith::mul)?,
        F::Fma => {
            let p = map2(b, a, &need(a1)?, arith::mul)?;
            map2(b, p, &need(a2)?, arith::add)?
        }
        F::Dot => vec![dot(b, &a, &need(a1)?)?],
        F::Length => vec![length(b, &a)?],
        F::Distance => {
            let d = vsub(b, &a, &need(a1)?)?;
            vec![length(b, &d)?]
        }
        F::Normalize => {
            let d = dot(b, &a, &a)?;
            let r = arith::rsqrt(b, d)?;
            scale(b, &a, &r)?
        }
        F::Cross => {
            let c = need(a1)?;
            if n != 3 || c.len() != 3 {
                return Err("cross of vectors that are not 3-component".into());
            }
            let mut out = Vec::new();
            for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                let p = arith::mul(b, a[i].clone(), c[j].clone())?;
                let q = arith::mul(b, a[j].clone(), c[i].clone())?;
                out.push(arith::sub(b, p, q)?);
            }
            out
        }
        F::Reflect => {
            // I - 2 dot(N, I) N
            let nn = need(a1)?;
            let d = dot(b, &nn, &a)?;
            let d2 = arith::mul(b, d, fimm(2.0))?;
            let s = scale(b, &nn, &d2)?;
            vsub(b, &a, &s)?
        }
        F::Refract => {
            // k = 1 - eta^2 (1 - dot(N,I)^2); k < 0 ? 0 : eta I - (eta dot + sqrt k) N
            let nn = need(a1)?;
            let eta = need(a2)?.first().cloned().ok_or("refract without eta")?;
            let d = dot(b, &nn, &a)?;
            let d2 = arith::mul(b, d.clone(), d.clone())?;
            let one_m = arith::sub(b, fimm(1.0), d2)?;
            let e2 = arith::mul(b, eta.clone(), eta.clone())?;
            let t = arith::mul(b, e2, one_m)?;
            let k = arith::sub(b, fimm(1.0), t)?;
            let ed = arith::mul(b, eta.clone(), d)?;
            let sk = arith::sqrt(b, k.clone())?;
            let f = arith::add(b, ed, sk)?;
            let ei = scale(b, &a, &eta)?;
            let fnn = scale(b, &nn, &f)?;
            let r = vsub(b, &ei, &fnn)?;
            let neg = arith::lt(b, k, fimm(0.0))?;
            arith::select(b, neg, vec![fimm(0.0); n], r)?
        }
        F::FaceForward => {
            let i = need(a1)?;
            let nref = need(a2)?;
            let d = dot(b, &nref, &i)?;
            let c = arith::lt(b, d, fimm(0.0))?;
            let neg = map1(b, a.clone(), arith::neg)?;
            arith::select(b, c, a, neg)?
        }
        F::Mix => {
            let y = need(a1)?;
            let t = need(a2)?;
            let t = bcast(&t, n);
            let mut out = Vec::new();
            for ((x, y), t) in a.into_iter().zip(y).zip(t) {
                let d = arith::sub(b, y, x.clone())?;
                let p = arith::mul(b, d, t)?;
                out.push(arith::add(b, x, p)?);
            }
            out
        }
        F::Step => {
            // step(edge, x) = x < edge ? 0 : 1
            let x = need(a1)?;
            let e = bcast(&a, x.len());
            let mut out = Vec::new();
            for (e, x) in e.into_iter().zip(x) {
                let c = arith::lt(b, x, e)?;
                out.push(arith::select1(b, c, fimm(0.0), fimm(1.0))?);
            }
            out
        }
        F::SmoothStep => {
            let e1 = need(a1)?;
            let x = need(a2)?;
            let m = x.len();
            let (e0, e1) = (bcast(&a, m), bcast(&e1, m));
            let mut out = Vec::new();
            for ((e0, e1), x) in e0.into_iter().zip(e1).zip(x) {
                let num = arith::sub(b, x, e0.clone())?;
                let den = arith::sub(b, e1, e0)?;
                let t = arith::div(b, num, den)?;
                let t = arith::max(b, t, fimm(0.0))?;
                let t = arith::min(b, t, fimm(1.0))?;
                let t2 = arith::mul(b, t.clone(), fimm(2.0))?;
                let s = arith::sub(b, fimm(3.0), t2)?;
                let tt = arith::mul(b, t.clone(), t)?;
                out.push(arith::mul(b, tt, s)?);
            }
            out
        }
        F::Transpose => {
            let (rows, cols) = shape(ty);
            if a.len() != rows * cols {
                return Err("a transpose of a value of the wrong size".into());
            }
            let mut out = Vec::new();
            for r in 0..rows {
                for c in 0..cols {
                    out.push(a.get(c * rows + r).cloned().ok_or("transpose out of range")?);
                }
            }
            out
        }
        other => return Err(format!("built-in `{other:?}` is not supported")),
    })
}

/// Matrix products (matrix × vector, vector × matrix, matrix × matrix);
/// `None` when neither side is a matrix.
pub fn matmul(b: &mut Builder, a: &[Val], at: &TypeInner, c: &[Val], ct: &TypeInner) -> R<Option<Vec<Val>>> {
    let am = matches!(at, TypeInner::Matrix { .. });
    let cm = matches!(ct, TypeInner::Matrix { .. });
    let av = matches!(at, TypeInner::Vector { .. });
    let cv = matches!(ct, TypeInner::Vector { .. });
    let (ar, ac) = shape(at);
    let (cr, cc) = shape(ct);
    if a.len() != ar * ac || c.len() != cr * cc {
        return Err("a matrix product of values of the wrong size".into());
    }
    let col = |m: &[Val], rows: usize, j: usize| m[j * rows..(j + 1) * rows].to_vec();
    if am && cv {
        // (M v)_r = sum_c M[c][r] v[c]
        let mut out = Vec::new();
        for r in 0..ar {
            let row: Vec<Val> = (0..ac).map(|k| a[k * ar + r].clone()).collect();
            out.push(dot(b, &row, c)?);
        }
        return Ok(Some(out));
    }
    if av && cm {
        let mut out = Vec::new();
        for j in 0..cc {
            out.push(dot(b, a, &col(c, cr, j))?);
        }
        return Ok(Some(out));
    }
    if am && cm {
        let mut out = Vec::new();
        for j in 0..cc {
            let cj = col(c, cr, j);
            for r in 0..ar {
                let row: Vec<Val> = (0..ac).map(|k| a[k * ar + r].clone()).collect();
                out.push(dot(b, &row, &cj)?);
            }
        }
        return Ok(Some(out));
    }
    Ok(None)
}
