//! The independent check of the lowering: a small evaluator over naga's IR
//! (its own walk, sharing no code with [`crate::lower`]) runs the shader on
//! the outside words of a seed, as [`schedra_fuzz::interp::World`] draws
//! them for `schedra run`, and its outputs are compared with the effects of
//! the lowered program run by the source interpreter.
//!
//! The evaluator computes in IEEE single precision with Rust's `f32`
//! operations and the built-ins' textbook definitions (`f32::sin`,
//! `powf`), booleans as 0/1 and integers as exact integers, loops and calls
//! as written. Division is `a · (1/b)` with a correctly rounded reciprocal:
//! GLSL allows division 2.5 ULP of error, and texture results are keyed by
//! the exact coordinate bits, so a coordinate computed by a division would
//! otherwise read another texel for a difference in its last bit; for the
//! same reason `sqrt` is `1 / inversesqrt`, the form GLSL's precision rules
//! inherit its error from, and `normalize(x)` is `x · inversesqrt(dot(x, x))`. What it shares with the lowering
//! is only the interface: [`crate::layout`] (which outside word each input
//! component is, which channel each output component goes to) and
//! [`crate::types`] (the scalar order of values). Because the lowering
//! approximates (sine polynomials, `a * recip(b)` for `a / b`, `exp2(y log2
//! x)` for `pow`), outputs are compared with a tolerance ([`close`]).
//!
//! A `discard` ends the evaluator's invocation: its effects are then one
//! discard (condition 1.0, place 0: outputs leave only at the end). The
//! lowered program runs on past its discard (the effects after it are a
//! discarded fragment's), so its run is cut at the first discard whose
//! condition is non-zero before the comparison ([`discarded`]).

use crate::layout::{Layout, Source};
use crate::types::{element, size_of};
use naga::{BinaryOperator as B, Expression as X, Handle, MathFunction as F, Module, Statement as S, TypeInner};
use schedra_fuzz::interp::{Effects, World};
use schedra_ir::target::abi::Emit;
use schedra_ir::target::{Sem, DISCARD_CHANNEL};
use schedra_ir::Target;
use std::collections::HashMap;

/// Most statements the evaluator executes before giving up.
const FUEL: u64 = 1_000_000;

type R<T> = Result<T, String>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Var {
    Local(u32, Handle<naga::LocalVariable>),
    Global(Handle<naga::GlobalVariable>),
}

#[derive(Clone, Debug)]
enum V {
    Val(Vec<f32>),
    Ptr(Var, usize, usize, TypeInner),
    Image,
}

enum Flow {
    Next,
    Break,
    Continue,
    Return(Option<Vec<f32>>),
    /// A `discard` ran: the invocation ends.
    Kill,
}

struct Eval<'a> {
    m: &'a Module,
    info: &'a naga::valid::ModuleInfo,
    layout: &'a Layout,
    target: &'static Target,
    world: World,
    vars: HashMap<Var, Vec<f32>>,
    fuel: u64,
    next_inst: u32,
    /// Whether a `discard` ended the invocation.
    killed: bool,
}

struct Fr<'f> {
    func: &'f naga::Function,
    info: &'f naga::valid::FunctionInfo,
    inst: u32,
    args: Vec<V>,
    vals: HashMap<Handle<naga::Expression>, V>,
    entry: bool,
}

fn word(x: f32) -> u32 {
    x.to_bits()
}

/// The effects shader entry point `ep` of `module` has on the seed's world,
/// as the target's ABI writes them.
pub fn evaluate(module: &Module, info: &naga::valid::ModuleInfo, ep: usize, layout: &Layout, target: &'static Target, seed: u64) -> R<Effects> {
    let e = &module.entry_points[ep];
    let mut ev = Eval { m: module, info, layout, target, world: World::new(seed), vars: HashMap::new(), fuel: FUEL, next_inst: 0, killed: false };
    for (g, gv) in module.global_variables.iter() {
        if gv.space == naga::AddressSpace::Private {
            let v = match gv.init {
                Some(h) => ev.gconst(h)?,
                None => vec![0.0; size_of(module, &module.types[gv.ty].inner)],
            };
            ev.vars.insert(Var::Global(g), v);
        }
    }
    let mut fr = Fr { func: &e.function, info: info.get_entry_point(ep), inst: 0, args: Vec::new(), vals: HashMap::new(), entry: true };
    let out = ev.run(&mut fr)?.unwrap_or_default();
    if ev.killed {
        // Outputs leave only when the entry point returns, so a discarded
        // invocation made none: the discard's place is 0.
        let mut fx = Effects::new();
        fx.push(DISCARD_CHANNEL, vec![word(1.0), 0]);
        return Ok(fx);
    }
    ev.effects(&out)
}

impl<'a> Eval<'a> {
    fn input(&self, s: Source) -> f32 {
        let w = match s {
            Source::Reg(r) => self.world.input_reg(r),
            Source::Op(op, n) => match self.target.op(op).map(|o| o.sem) {
                Some(Sem::Varying) => self.world.varying(n),
                _ => self.world.uniform(n),
            },
        };
        f32::from_bits(w)
    }

    fn effects(&self, out: &[f32]) -> R<Effects> {
        let mut fx = Effects::new();
        let chan = |op: &str| match self.target.op(op).map(|o| o.sem) {
            Some(Sem::Output(c, _)) => Ok(c),
            _ => Err(format!("the ABI's output op `{op}` is not an output")),
        };
        let comp = |o: &crate::layout::StageOutput, k: usize| out.get(o.offset + k).copied().ok_or_else(|| "output out of range".to_string());
        match self.layout.abi.output {
            Emit::PerScalar(op) => {
                let c = chan(op)?;
                for o in &self.layout.outputs {
                    for k in 0..o.len {
                        fx.push(c, vec![word(comp(o, k)?)]);
                    }
                }
            }
            Emit::Indexed { op, .. } => {
                let c = chan(op)?;
                for o in &self.layout.outputs {
                    for k in 0..o.len {
                        fx.push(&format!("{c} {}", o.slot), vec![word(comp(o, k)?)]);
                    }
                }
            }
            Emit::Components { op, .. } => {
                let c = chan(op)?;
                for o in &self.layout.outputs {
                    for k in 0..o.len {
                        fx.push(&format!("{c} {}", o.slot as usize + k), vec![word(comp(o, k)?)]);
                    }
                }
            }
            Emit::Payload { op, .. } => {
                let c = chan(op)?;
                let mut all = Vec::new();
                for o in &self.layout.outputs {
                    for k in 0..o.len {
                        all.push(word(comp(o, k)?));
                    }
                }
                fx.push(c, all);
            }
        }
        Ok(fx)
    }

    fn run(&mut self, fr: &mut Fr<'a>) -> R<Option<Vec<f32>>> {
        for (h, lv) in fr.func.local_variables.iter() {
            let v = match lv.init {
                Some(i) => self.value(fr, i)?,
                None => vec![0.0; size_of(self.m, &self.m.types[lv.ty].inner)],
            };
            self.vars.insert(Var::Local(fr.inst, h), v);
        }
        match self.block(fr, &fr.func.body)? {
            Flow::Return(v) => Ok(v),
            _ => Ok(None),
        }
    }

    fn block(&mut self, fr: &mut Fr<'a>, b: &'a naga::Block) -> R<Flow> {
        for st in b.iter() {
            self.fuel = self.fuel.checked_sub(1).ok_or("out of fuel")?;
            let f = self.stmt(fr, st)?;
            if !matches!(f, Flow::Next) {
                return Ok(f);
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&mut self, fr: &mut Fr<'a>, st: &'a S) -> R<Flow> {
        match st {
            S::Emit(r) => {
                for h in r.clone() {
                    let v = self.expr(fr, h)?;
                    fr.vals.insert(h, v);
                }
            }
            S::Block(b) => return self.block(fr, b),
            S::If { condition, accept, reject } => {
                let c = self.value(fr, *condition)?;
                return self.block(fr, if c.first().is_some_and(|x| *x != 0.0) { accept } else { reject });
            }
            S::Loop { body, continuing, break_if } => loop {
                self.fuel = self.fuel.checked_sub(1).ok_or("out of fuel")?;
                match self.block(fr, body)? {
                    Flow::Break => return Ok(Flow::Next),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    Flow::Kill => return Ok(Flow::Kill),
                    _ => {}
                }
                match self.block(fr, continuing)? {
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    Flow::Kill => return Ok(Flow::Kill),
                    _ => {}
                }
                if let Some(h) = break_if {
                    if self.value(fr, *h)?.first().is_some_and(|x| *x != 0.0) {
                        return Ok(Flow::Next);
                    }
                }
            },
            S::Break => return Ok(Flow::Break),
            S::Continue => return Ok(Flow::Continue),
            S::Kill => {
                self.killed = true;
                return Ok(Flow::Kill);
            }
            S::Return { value } => {
                let v = match value {
                    Some(h) => Some(self.value(fr, *h)?),
                    None => None,
                };
                return Ok(Flow::Return(v));
            }
            S::Store { pointer, value } => {
                let p = self.expr_cached(fr, *pointer)?;
                let val = self.value(fr, *value)?;
                let V::Ptr(var, off, len, _) = p else { return Err("store through a non-pointer".into()) };
                let slot = self.vars.get_mut(&var).ok_or("store to an unknown variable")?;
                slot.get_mut(off..off + len).ok_or("store out of range")?.copy_from_slice(val.get(..len).ok_or("short store")?);
            }
            S::Call { function, arguments, result } => {
                let mut args = Vec::new();
                for a in arguments {
                    args.push(self.expr_cached(fr, *a)?);
                }
                self.next_inst += 1;
                let f = &self.m.functions[*function];
                let mut sub = Fr { func: f, info: &self.info[*function], inst: self.next_inst, args, vals: HashMap::new(), entry: false };
                let r = self.run(&mut sub)?;
                if self.killed {
                    return Ok(Flow::Kill);
                }
                if let Some(h) = result {
                    fr.vals.insert(*h, V::Val(r.unwrap_or_default()));
                }
            }
            _ => return Err("unsupported statement".into()),
        }
        Ok(Flow::Next)
    }

    fn expr_cached(&mut self, fr: &mut Fr<'a>, h: Handle<naga::Expression>) -> R<V> {
        match fr.vals.get(&h) {
            Some(v) => Ok(v.clone()),
            None => self.expr(fr, h),
        }
    }

    fn value(&mut self, fr: &mut Fr<'a>, h: Handle<naga::Expression>) -> R<Vec<f32>> {
        match self.expr_cached(fr, h)? {
            V::Val(v) => Ok(v),
            _ => Err("a pointer used as a value".into()),
        }
    }

    fn gconst(&self, h: Handle<naga::Expression>) -> R<Vec<f32>> {
        let m = self.m;
        Ok(match &m.global_expressions[h] {
            X::Literal(l) => vec![lit(l)],
            X::Constant(c) => self.gconst(m.constants[*c].init)?,
            X::ZeroValue(t) => vec![0.0; size_of(m, &m.types[*t].inner)],
            X::Compose { components, .. } => {
                let mut v = Vec::new();
                for c in components {
                    v.extend(self.gconst(*c)?);
                }
                v
            }
            X::Splat { size, value } => {
                let x = self.gconst(*value)?;
                vec![x.first().copied().unwrap_or(0.0); *size as usize]
            }
            _ => return Err("unsupported constant".into()),
        })
    }

    fn ty(&self, fr: &Fr, h: Handle<naga::Expression>) -> TypeInner {
        fr.info[h].ty.inner_with(&self.m.types).clone()
    }

    fn expr(&mut self, fr: &mut Fr<'a>, h: Handle<naga::Expression>) -> R<V> {
        let m = self.m;
        let val = |v: Vec<f32>| Ok(V::Val(v));
        match &fr.func.expressions[h] {
            X::Literal(l) => val(vec![lit(l)]),
            X::Constant(c) => val(self.gconst(m.constants[*c].init)?),
            X::ZeroValue(t) => val(vec![0.0; size_of(m, &m.types[*t].inner)]),
            X::Compose { components, .. } => {
                let mut v = Vec::new();
                for c in components {
                    v.extend(self.value(fr, *c)?);
                }
                val(v)
            }
            X::Splat { size, value } => {
                let x = self.value(fr, *value)?;
                val(vec![x.first().copied().unwrap_or(0.0); *size as usize])
            }
            X::Swizzle { size, vector, pattern } => {
                let v = self.value(fr, *vector)?;
                val(pattern.iter().take(*size as usize).map(|c| v.get(*c as usize).copied().unwrap_or(0.0)).collect())
            }
            X::AccessIndex { base, index } => self.index(fr, *base, *index as usize),
            X::Access { base, index } => {
                let i = self.value(fr, *index)?.first().copied().unwrap_or(0.0);
                self.index(fr, *base, i.max(0.0) as usize)
            }
            X::FunctionArgument(i) => {
                if fr.entry {
                    let mut comps: Vec<(usize, Source)> = self.layout.inputs.iter().filter(|x| x.arg == *i as usize).flat_map(|x| x.comps.iter().enumerate().map(move |(k, s)| (x.offset + k, *s))).collect();
                    comps.sort_by_key(|c| c.0);
                    return val(comps.into_iter().map(|(_, s)| self.input(s)).collect());
                }
                fr.args.get(*i as usize).cloned().ok_or_else(|| "argument out of range".into())
            }
            X::GlobalVariable(g) => {
                let gv = &m.global_variables[*g];
                let ty = m.types[gv.ty].inner.clone();
                match gv.space {
                    naga::AddressSpace::Handle => Ok(V::Image),
                    naga::AddressSpace::Uniform => {
                        if !self.vars.contains_key(&Var::Global(*g)) {
                            let srcs = self.layout.uniforms.iter().find(|(x, _)| x == g).map(|(_, s)| s.clone()).unwrap_or_default();
                            let v = srcs.into_iter().map(|s| self.input(s)).collect();
                            self.vars.insert(Var::Global(*g), v);
                        }
                        Ok(V::Ptr(Var::Global(*g), 0, size_of(m, &ty), ty))
                    }
                    _ => Ok(V::Ptr(Var::Global(*g), 0, size_of(m, &ty), ty)),
                }
            }
            X::LocalVariable(l) => {
                let ty = m.types[fr.func.local_variables[*l].ty].inner.clone();
                Ok(V::Ptr(Var::Local(fr.inst, *l), 0, size_of(m, &ty), ty))
            }
            X::Load { pointer } => {
                let V::Ptr(var, off, len, _) = self.expr_cached(fr, *pointer)? else { return Err("load of a non-pointer".into()) };
                let all = self.vars.get(&var).ok_or("load of an unknown variable")?;
                val(all.get(off..off + len).ok_or("load out of range")?.to_vec())
            }
            X::ImageSample { coordinate, .. } => {
                let c = self.value(fr, *coordinate)?;
                let bits: Vec<u32> = c.iter().map(|x| x.to_bits()).collect();
                val((0..4).map(|k| f32::from_bits(self.world.texture(&bits, k))).collect())
            }
            X::Unary { op, expr } => {
                let v = self.value(fr, *expr)?;
                val(match op {
                    naga::UnaryOperator::Negate => v.iter().map(|x| -x).collect(),
                    naga::UnaryOperator::LogicalNot => v.iter().map(|x| f32::from(u8::from(*x == 0.0))).collect(),
                    _ => return Err("bitwise not".into()),
                })
            }
            X::Binary { op, left, right } => self.binary(fr, *op, *left, *right).map(V::Val),
            X::Select { condition, accept, reject } => {
                let c = self.value(fr, *condition)?;
                let a = self.value(fr, *accept)?;
                let r = self.value(fr, *reject)?;
                val(a.iter().zip(&r).enumerate().map(|(i, (x, y))| if c.get(i).or(c.first()).is_some_and(|t| *t != 0.0) { *x } else { *y }).collect())
            }
            X::Relational { fun, argument } => {
                let v = self.value(fr, *argument)?;
                val(vec![match fun {
                    naga::RelationalFunction::All => f32::from(u8::from(v.iter().all(|x| *x != 0.0))),
                    _ => f32::from(u8::from(v.iter().any(|x| *x != 0.0))),
                }])
            }
            X::Math { fun, arg, arg1, arg2, .. } => {
                let a = self.value(fr, *arg)?;
                let b = match arg1 {
                    Some(x) => self.value(fr, *x)?,
                    None => Vec::new(),
                };
                let c = match arg2 {
                    Some(x) => self.value(fr, *x)?,
                    None => Vec::new(),
                };
                let ty = self.ty(fr, *arg);
                val(math(*fun, &a, &b, &c, &ty)?)
            }
            X::As { expr, kind, .. } => {
                let v = self.value(fr, *expr)?;
                val(match kind {
                    naga::ScalarKind::Sint | naga::ScalarKind::Uint => v.iter().map(|x| x.trunc()).collect(),
                    naga::ScalarKind::Bool => v.iter().map(|x| f32::from(u8::from(*x != 0.0))).collect(),
                    _ => v,
                })
            }
            X::CallResult(_) => fr.vals.get(&h).cloned().ok_or_else(|| "call result before the call".into()),
            _ => Err("unsupported expression".into()),
        }
    }

    fn index(&mut self, fr: &mut Fr<'a>, base: Handle<naga::Expression>, i: usize) -> R<V> {
        let m = self.m;
        let bt = self.ty(fr, base);
        match self.expr_cached(fr, base)? {
            V::Ptr(var, off, _, ty) => {
                let (o, l) = element(m, &ty, i).ok_or("index out of range")?;
                let et = crate::types::element_type(m, &ty, i).ok_or("index of a non-aggregate")?;
                Ok(V::Ptr(var, off + o, l, et))
            }
            V::Val(v) => {
                let (o, l) = element(m, &bt, i).ok_or("index out of range")?;
                Ok(V::Val(v.get(o..o + l).ok_or("index out of range")?.to_vec()))
            }
            V::Image => Err("index of a texture".into()),
        }
    }

    fn binary(&mut self, fr: &mut Fr<'a>, op: B, l: Handle<naga::Expression>, r: Handle<naga::Expression>) -> R<Vec<f32>> {
        let (lt, rt) = (self.ty(fr, l), self.ty(fr, r));
        let int = matches!(lt.scalar_kind(), Some(naga::ScalarKind::Sint | naga::ScalarKind::Uint));
        let a = self.value(fr, l)?;
        let b = self.value(fr, r)?;
        if op == B::Multiply {
            let (am, bm) = (matches!(lt, TypeInner::Matrix { .. }), matches!(rt, TypeInner::Matrix { .. }));
            let (ar, ac) = crate::types::shape(&lt);
            let (br, bc) = crate::types::shape(&rt);
            if am || bm {
                if a.len() != ar * ac || b.len() != br * bc {
                    return Err("a matrix product of values of the wrong size".into());
                }
                if am && matches!(rt, TypeInner::Scalar(_)) || bm && matches!(lt, TypeInner::Scalar(_)) {
                    let (mtx, s) = if am { (&a, b[0]) } else { (&b, a[0]) };
                    return Ok(mtx.iter().map(|x| x * s).collect());
                }
                // general product of an (ar x ac) by a (br x bc) matrix
                let (ar, ac, br, bc) = if !am { (1, ar, br, bc) } else if !bm { (ar, ac, br, 1) } else { (ar, ac, br, bc) };
                if ac != br {
                    return Err("matrix shapes do not agree".into());
                }
                let at = |i: usize, k: usize| a[k * ar + i];
                let btm = |k: usize, j: usize| b[j * br + k];
                let mut out = Vec::new();
                for j in 0..bc {
                    for i in 0..ar {
                        let mut s = 0.0f32;
                        for k in 0..ac {
                            s += at(i, k) * btm(k, j);
                        }
                        out.push(s);
                    }
                }
                return Ok(out);
            }
        }
        let n = a.len().max(b.len());
        let g = |v: &[f32], i: usize| if v.len() == 1 { v[0] } else { v.get(i).copied().unwrap_or(0.0) };
        let t = |c: bool| f32::from(u8::from(c));
        Ok((0..n)
            .map(|i| {
                let (x, y) = (g(&a, i), g(&b, i));
                match op {
                    B::Add => x + y,
                    B::Subtract => x - y,
                    B::Multiply => x * y,
                    B::Divide if int => (x / y).trunc(),
                    B::Divide => x * (1.0 / y),
                    B::Modulo => x - y * (x / y).trunc(),
                    B::Less => t(x < y),
                    B::LessEqual => t(x <= y),
                    B::Greater => t(x > y),
                    B::GreaterEqual => t(x >= y),
                    B::Equal => t(x == y),
                    B::NotEqual => t(x != y),
                    B::LogicalAnd => t(x != 0.0 && y != 0.0),
                    B::LogicalOr => t(x != 0.0 || y != 0.0),
                    _ => f32::NAN,
                }
            })
            .collect())
    }
}

fn lit(l: &naga::Literal) -> f32 {
    use naga::Literal as L;
    match *l {
        L::F32(x) => x,
        L::F64(x) | L::AbstractFloat(x) => x as f32,
        L::I32(x) => x as f32,
        L::U32(x) => x as f32,
        L::I64(x) | L::AbstractInt(x) => x as f32,
        L::U64(x) => x as f32,
        L::Bool(b) => f32::from(u8::from(b)),
        L::F16(x) => f32::from(x),
    }
}

fn dotp(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Beyond this magnitude `sin` and `cos` are undefined (NaN) here: GLSL
/// bounds their error only on [-π, π], and a single-precision reduction to
/// that range (the lowering's, on targets without a sine op) keeps the
/// argument's phase only while the multiple of 2π is exact (k < 2^16).
const TRIG_RANGE: f32 = 65536.0;

/// `min` that keeps a NaN (an undefined result stays undefined; GLSL
/// leaves `min` of a NaN undefined).
fn nan_min(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else {
        x.min(y)
    }
}

/// `max` that keeps a NaN.
fn nan_max(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else {
        x.max(y)
    }
}

/// `sqrt(x)` as `1 / inversesqrt(x)`, the form GLSL's precision rules
/// give it (its error is inherited from it), with correctly rounded steps:
/// like division, so that a texture coordinate computed through a square
/// root has the bits the lowering gives it.
fn sqrt(x: f32) -> f32 {
    1.0 / (1.0 / x.sqrt())
}

/// GLSL's built-ins by their definitions (`normalize(x)` as
/// `x · inversesqrt(dot(x, x))`, `sqrt` as [`sqrt`]).
fn math(fun: F, a: &[f32], b: &[f32], c: &[f32], ty: &TypeInner) -> R<Vec<f32>> {
    let n = a.len();
    let at = |v: &[f32], i: usize| if v.len() == 1 { v[0] } else { v.get(i).copied().unwrap_or(0.0) };
    let map = |f: &dyn Fn(f32) -> f32| a.iter().map(|x| f(*x)).collect::<Vec<f32>>();
    let map2 = |f: &dyn Fn(f32, f32) -> f32| (0..n).map(|i| f(a[i], at(b, i))).collect::<Vec<f32>>();
    let len = |v: &[f32]| sqrt(dotp(v, v));
    Ok(match fun {
        F::Abs => map(&f32::abs),
        F::Min => map2(&nan_min),
        F::Max => map2(&nan_max),
        F::Clamp => (0..n).map(|i| nan_min(nan_max(a[i], at(b, i)), at(c, i))).collect(),
        F::Saturate => map(&|x| x.clamp(0.0, 1.0)),
        F::Sin => map(&|x| if x.abs() > TRIG_RANGE { f32::NAN } else { x.sin() }),
        F::Cos => map(&|x| if x.abs() > TRIG_RANGE { f32::NAN } else { x.cos() }),
        F::Asin => map(&f32::asin),
        F::Acos => map(&f32::acos),
        F::Floor => map(&f32::floor),
        F::Ceil => map(&f32::ceil),
        F::Trunc => map(&f32::trunc),
        F::Round => map(&|x| (x + 0.5).floor()),
        F::Fract => map(&|x| x - x.floor()),
        F::Exp => map(&f32::exp),
        F::Exp2 => map(&f32::exp2),
        F::Log => map(&f32::ln),
        F::Log2 => map(&f32::log2),
        // undefined (NaN) for x < 0, and for x = 0 with y <= 0 (GLSL)
        F::Pow => map2(&|x, y| if x < 0.0 || (x == 0.0 && y <= 0.0) { f32::NAN } else { x.powf(y) }),
        F::Sqrt => map(&sqrt),
        F::InverseSqrt => map(&|x| 1.0 / x.sqrt()),
        F::Sign => map(&|x| if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { x }),
        F::Radians => map(&f32::to_radians),
        F::Degrees => map(&f32::to_degrees),
        F::Fma => (0..n).map(|i| a[i] * at(b, i) + at(c, i)).collect(),
        F::Dot => vec![dotp(a, b)],
        F::Length => vec![len(a)],
        F::Distance => vec![len(&(0..n).map(|i| a[i] - at(b, i)).collect::<Vec<_>>())],
        F::Normalize => {
            let r = 1.0 / dotp(a, a).sqrt();
            map(&|x| x * r)
        }
        F::Cross if n == 3 && b.len() == 3 => vec![a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]],
        F::Reflect => {
            let d = dotp(b, a);
            (0..n).map(|i| a[i] - 2.0 * d * at(b, i)).collect()
        }
        F::Refract => {
            let (d, eta) = (dotp(b, a), at(c, 0));
            let k = 1.0 - eta * eta * (1.0 - d * d);
            if k < 0.0 {
                vec![0.0; n]
            } else {
                (0..n).map(|i| eta * a[i] - (eta * d + sqrt(k)) * at(b, i)).collect()
            }
        }
        F::FaceForward => {
            if dotp(c, b) < 0.0 {
                a.to_vec()
            } else {
                map(&|x| -x)
            }
        }
        F::Mix => (0..n).map(|i| a[i] * (1.0 - at(c, i)) + at(b, i) * at(c, i)).collect(),
        F::Step => (0..b.len()).map(|i| if b[i] < at(a, i) { 0.0 } else { 1.0 }).collect(),
        F::SmoothStep => (0..c.len())
            .map(|i| {
                let t = ((c[i] - at(a, i)) / (at(b, i) - at(a, i))).clamp(0.0, 1.0);
                t * t * (3.0 - 2.0 * t)
            })
            .collect(),
        F::Transpose => {
            let (rows, cols) = crate::types::shape(ty);
            if a.len() != rows * cols {
                return Err("a transpose of a value of the wrong size".into());
            }
            (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))).map(|(r, c)| a[c * rows + r]).collect()
        }
        other => return Err(format!("built-in {other:?}")),
    })
}

/// Whether the lowered program's word `b` agrees with the evaluator's `a`:
/// equal, within a relative (and, near zero, absolute) tolerance of 2^-9,
/// or anything where the evaluator's result is NaN (undefined: GLSL leaves
/// `pow` of a negative base undefined, and a NaN input makes every result
/// it reaches NaN).
pub fn close(a: u32, b: u32) -> bool {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    a == b || x.is_nan() || (x.is_finite() && y.is_finite() && (x - y).abs() <= 2f32.powi(-9) * 1f32.max(x.abs()).max(y.abs())) || (x.is_infinite() && x == y)
}

/// Compare the evaluator's effects with the lowered program's: `Err` names
/// the first disagreement; `Ok` counts the words compared where the
/// evaluator's result is defined (not NaN).
pub fn compare(expected: &Effects, got: &Effects) -> Result<usize, String> {
    let mut defined = 0;
    for (ch, es) in &expected.channels {
        let gs = got.channels.get(ch).ok_or_else(|| format!("no effects on channel {ch}"))?;
        if gs.len() != es.len() {
            return Err(format!("channel {ch}: {} effects, expected {}", gs.len(), es.len()));
        }
        for (i, (e, g)) in es.iter().zip(gs).enumerate() {
            // A discard's words (condition, place) are exact, not floats.
            let exact = ch == DISCARD_CHANNEL;
            if e.len() != g.len() || e.iter().zip(g).any(|(a, b)| if exact { a != b } else { !close(*a, *b) }) {
                return Err(format!("channel {ch} effect {i}: {g:08x?}, expected {e:08x?}"));
            }
            defined += e.iter().filter(|w| !f32::from_bits(**w).is_nan()).count();
        }
    }
    if got.channels.keys().any(|k| !expected.channels.contains_key(k)) {
        return Err("effects on a channel the shader does not write".into());
    }
    Ok(defined)
}

/// Lower `parsed`'s entry point for `target`, run it on `seed` with the
/// source interpreter and compare with the evaluator ([`compare`]'s count).
pub fn check(parsed: &crate::parse::Parsed, target: &'static Target, req: &crate::lower::Request, seed: u64) -> R<usize> {
    let ei = crate::lower::entry_index(&parsed.module, req).map_err(|e| e.to_string())?;
    let layout = crate::layout::layout(&parsed.module, &parsed.module.entry_points[ei], target).map_err(|e| e.to_string())?;
    let p = crate::lower::lower(parsed, target, req).map_err(|e| e.to_string())?;
    let run = schedra_fuzz::interp::source::run(&p, World::new(seed), schedra_fuzz::interp::DEFAULT_FUEL).map_err(|e| format!("the lowered program failed to run: {e:?}"))?;
    let expected = evaluate(&parsed.module, &parsed.info, ei, &layout, target, seed)?;
    compare(&expected, &discarded(&run.effects, &expected))
}

/// What of a lowered run's effects a fragment leaves (compared with the
/// evaluator's): discards whose condition words are all zero discard
/// nothing and are dropped; from the first that discards on, the fragment
/// is gone, so only that discard and the outputs made before it remain
/// (its place says how many; per channel they are the first ones, up to
/// as many as `expected` has there).
pub fn discarded(got: &Effects, expected: &Effects) -> Effects {
    let Some(ds) = got.channels.get(DISCARD_CHANNEL) else { return got.clone() };
    let live = |d: &Vec<u32>| d.split_last().is_some_and(|(_, cond)| cond.iter().any(|w| *w != 0));
    let mut out = Effects::new();
    let Some(kill) = ds.iter().find(|d| live(d)) else {
        for (ch, es) in got.channels.iter().filter(|(ch, _)| ch.as_str() != DISCARD_CHANNEL) {
            for e in es {
                out.push(ch, e.clone());
            }
        }
        return out;
    };
    let place = kill.last().copied().unwrap_or(0) as usize;
    let mut kept = 0;
    for (ch, es) in got.channels.iter().filter(|(ch, _)| ch.as_str() != DISCARD_CHANNEL) {
        let before = expected.channels.get(ch).map_or(0, Vec::len).min(es.len()).min(place.saturating_sub(kept));
        for e in es.iter().take(before) {
            out.push(ch, e.clone());
        }
        kept += before;
    }
    out.push(DISCARD_CHANNEL, kill.clone());
    out
}
