//! Lowering of a validated naga module to a target's source-form program.
//!
//! Algorithm: the entry point's body is walked statement by statement.
//! Every value becomes a list of scalar operands in the order of
//! [`crate::types`]; variables (function locals and private globals) live in
//! an environment from variable to its current scalars, so a store emits no
//! code and a load reads the environment (the source form is not SSA, but
//! every register the lowering defines is written once, except the merge
//! registers written once on each side of a join). At a conditional whose
//! condition is not known the environment is forked, each side lowered into
//! its own block, and every variable component that differs is merged by a
//! move on each side into one fresh register. Conditions known at lowering
//! time (constants fold, [`arith`]) take one side only; loops are unrolled
//! that way, so a loop whose exit is not decided by constants (within
//! [`MAX_ITERATIONS`]) is an error, as are `break`/`continue`/`return`
//! under a condition not known at lowering time. Calls are inlined (each
//! inlined instance has its own locals). Stage inputs, uniforms, texture
//! samples and outputs go through the target's ABI table
//! ([`schedra_ir::target::abi`]) as laid out by [`crate::layout`].
//!
//! `discard` is the target's fragment discard ([`schedra_ir::target::Sem::
//! Discard`]) under the condition 1.0, in the block the lowering is in (so
//! `if (c) discard;` is a branch to a block holding it); the rest of the
//! naga block after it is not lowered, and the program runs on from there
//! as if it had ended: the fragment is discarded, so whatever it outputs
//! afterwards is never seen. A target without the op rejects `discard` at
//! its location.
//!
//! Booleans are the floats 0.0 and 1.0 and integers are floats too (exact
//! below 2^24): every target here has float arithmetic and none has integer
//! comparisons. Bitwise integer operations are unsupported.

pub mod arith;
pub mod builder;
mod math;

use crate::error::FrontError;
use crate::layout::{self, Layout, Source};
use crate::parse::Parsed;
use crate::types::{element, pointee, size_of};
use arith::Cond;
use builder::{fimm, Builder, Val};
use naga::{BinaryOperator as B, Expression as X, Handle, Module, ScalarKind, Statement as S, TypeInner};
use schedra_ir::target::abi::{TexAbi, TexUnit, Texture};
use schedra_ir::{Form, Input, Operand, PhysReg, Program, Reg, Stage, Target, VirtReg};
use std::collections::HashMap;

/// The most iterations a loop is unrolled to.
pub const MAX_ITERATIONS: usize = 256;
/// The most instructions a lowered program may have (unrolling and
/// inlining stop with an error beyond it).
pub const MAX_INSTRUCTIONS: usize = 200_000;
/// The deepest call nesting inlined.
const MAX_DEPTH: u32 = 32;

/// What to lower.
#[derive(Clone, Debug, Default)]
pub struct Request<'a> {
    /// The entry point's name (needed when there are several).
    pub entry: Option<&'a str>,
    /// The stage the caller expects (checked against the entry point's).
    pub stage: Option<Stage>,
    /// The program's `shader` name.
    pub name: Option<String>,
}

/// The entry point `req` selects.
pub fn entry_index(module: &Module, req: &Request) -> Result<usize, FrontError> {
    let eps = &module.entry_points;
    let ok_stage = |ep: &naga::EntryPoint| req.stage.is_none() || layout::stage_of(ep.stage) == req.stage;
    let found: Vec<usize> = (0..eps.len()).filter(|&i| req.entry.is_none_or(|n| eps[i].name == n) && ok_stage(&eps[i])).collect();
    match (found.as_slice(), req.entry) {
        ([i], _) => Ok(*i),
        ([], Some(n)) => Err(FrontError::at(1, 1, format!("no entry point `{n}`{}", req.stage.map_or(String::new(), |s| format!(" for the {} stage", s.as_str()))))),
        ([], None) => Err(FrontError::at(1, 1, "the shader has no entry point for this stage".into())),
        (_, _) => {
            let names: Vec<&str> = found.iter().map(|&i| eps[i].name.as_str()).collect();
            Err(FrontError::at(1, 1, format!("several entry points ({}); choose one with --entry", names.join(", "))))
        }
    }
}

/// Lower the selected entry point of `parsed` for `target`.
pub fn lower(parsed: &Parsed, target: &'static Target, req: &Request) -> Result<Program, FrontError> {
    let m = &parsed.module;
    let ei = entry_index(m, req)?;
    let ep = &m.entry_points[ei];
    let lay = layout::layout(m, ep, target)?;
    let mut lw = Lower {
        m,
        b: Builder::new(target),
        layout: lay,
        env: HashMap::new(),
        src: &parsed.source,
        fetched: HashMap::new(),
        inputs: Vec::new(),
        instances: 0,
        depth: 0,
        outputs: None,
        loc: (1, 1),
    };
    let fr = Frame { func: &ep.function, info: parsed.info.get_entry_point(ei), inst: 0, args: Vec::new(), exprs: HashMap::new(), result: None, returns: Vec::new(), entry: true };
    let info = &parsed.info;
    let out = lw.run(fr, info);
    let loc = lw.loc;
    out.map_err(|msg| FrontError::at(loc.0, loc.1, msg))?;
    let stage = lw.layout.stage;
    let inputs = std::mem::take(&mut lw.inputs);
    let blocks = lw.b.finish();
    Ok(Program {
        name: req.name.clone(),
        target,
        stage,
        form: Form::Source,
        inputs: inputs.into_iter().map(|(v, r)| Input { vreg: Some(v), reg: PhysReg::one(r), span: Default::default() }).collect(),
        blocks,
    })
}

/// A variable's identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Root {
    Local(u32, Handle<naga::LocalVariable>),
    Private(Handle<naga::GlobalVariable>),
    Uniform(Handle<naga::GlobalVariable>),
}

/// Part of a variable.
#[derive(Clone, Debug)]
struct Place {
    root: Root,
    offset: usize,
    len: usize,
    ty: TypeInner,
}

/// What an expression evaluates to.
#[derive(Clone, Debug)]
enum Ev {
    Val(Vec<Val>),
    Cond(Vec<Cond>),
    Place(Place),
    Image,
    Sampler,
}

enum Flow {
    Normal,
    Break,
    Continue,
    /// `return` here: the state is live, the result in `Frame::result`.
    Return,
    /// Every path has returned (its edges are in `Frame::returns`).
    Returned,
}

struct Frame<'f> {
    func: &'f naga::Function,
    info: &'f naga::valid::FunctionInfo,
    inst: u32,
    args: Vec<Ev>,
    exprs: HashMap<Handle<naga::Expression>, Ev>,
    result: Option<Vec<Val>>,
    /// Returns taken under conditions: (end block, environment, result).
    returns: Vec<(usize, Env, Vec<Val>)>,
    entry: bool,
}

type Env = HashMap<Root, Vec<Val>>;
type R<T> = Result<T, String>;

struct Lower<'a> {
    m: &'a Module,
    b: Builder,
    layout: Layout,
    env: Env,
    src: &'a crate::parse::SourceMap,
    fetched: HashMap<Source, Val>,
    inputs: Vec<(VirtReg, Reg)>,
    instances: u32,
    depth: u32,
    outputs: Option<Vec<Val>>,
    loc: (u32, u32),
}

impl<'a> Lower<'a> {
    fn run(&mut self, mut fr: Frame<'a>, info: &'a naga::valid::ModuleInfo) -> R<()> {
        for (g, gv) in self.m.global_variables.iter() {
            if gv.space == naga::AddressSpace::Private {
                let v = self.initial(&Root::Private(g))?;
                self.env.insert(Root::Private(g), v);
            }
        }
        self.locals(&mut fr)?;
        let body = &fr.func.body;
        let flow = self.block(&mut fr, body, info)?;
        self.outputs = self.finish_function(&mut fr, flow)?;
        self.write_outputs()
    }

    /// Every local of a function instance starts with its initialiser (or zero).
    fn locals(&mut self, fr: &mut Frame<'a>) -> R<()> {
        for (h, lv) in fr.func.local_variables.iter() {
            let init = match lv.init {
                Some(ih) => self.value(fr, ih)?,
                None => vec![fimm(0.0); size_of(self.m, &self.m.types[lv.ty].inner)],
            };
            self.env.insert(Root::Local(fr.inst, h), init);
        }
        Ok(())
    }

    fn at(&mut self, span: naga::Span) {
        if span != naga::Span::UNDEFINED {
            self.loc = self.src.locate(span);
            self.b.span = schedra_ir::Span::new(self.loc.0, self.loc.1);
        }
    }

    // ---- statements ----

    fn block(&mut self, fr: &mut Frame<'a>, block: &'a naga::Block, info: &'a naga::valid::ModuleInfo) -> R<Flow> {
        for (st, span) in block.span_iter() {
            self.at(*span);
            if self.b.inst_count() > MAX_INSTRUCTIONS {
                return Err(format!("the lowered program exceeds {MAX_INSTRUCTIONS} instructions (loops are unrolled, calls inlined)"));
            }
            match self.stmt(fr, st, info)? {
                // The statements after a `discard` never run.
                Flow::Normal if matches!(st, S::Kill) => return Ok(Flow::Normal),
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, fr: &mut Frame<'a>, st: &'a S, info: &'a naga::valid::ModuleInfo) -> R<Flow> {
        match st {
            S::Emit(range) => {
                for h in range.clone() {
                    self.at(fr.func.expressions.get_span(h));
                    let v = self.expr(fr, h)?;
                    fr.exprs.insert(h, v);
                }
                Ok(Flow::Normal)
            }
            S::Block(b) => self.block(fr, b, info),
            S::If { condition, accept, reject } => {
                let c = self.cond(fr, *condition)?;
                self.branch(fr, c, accept, reject, info)
            }
            S::Loop { body, continuing, break_if } => self.unroll(fr, body, continuing, *break_if, info),
            S::Break => Ok(Flow::Break),
            S::Continue => Ok(Flow::Continue),
            S::Return { value } => {
                let v = match value {
                    Some(h) => Some(self.value(fr, *h)?),
                    None => None,
                };
                fr.result = v;
                Ok(Flow::Return)
            }
            S::Kill => {
                self.b.discard(fimm(1.0))?;
                Ok(Flow::Normal)
            }
            S::Store { pointer, value } => {
                let p = self.place(fr, *pointer)?;
                let v = self.value(fr, *value)?;
                self.store(&p, v)?;
                Ok(Flow::Normal)
            }
            S::Call { function, arguments, result } => {
                let mut args = Vec::with_capacity(arguments.len());
                for a in arguments {
                    args.push(self.expr(fr, *a)?);
                }
                let r = self.call(*function, args, info)?;
                if let Some(h) = result {
                    fr.exprs.insert(*h, Ev::Val(r.unwrap_or_default()));
                }
                Ok(Flow::Normal)
            }
            S::Switch { .. } => Err("`switch` is not supported".into()),
            _ => Err("unsupported statement".into()),
        }
    }

    fn call(&mut self, f: Handle<naga::Function>, args: Vec<Ev>, info: &'a naga::valid::ModuleInfo) -> R<Option<Vec<Val>>> {
        if self.depth >= MAX_DEPTH {
            return Err("calls nested too deeply (recursion?)".into());
        }
        self.instances += 1;
        let func = &self.m.functions[f];
        let mut fr = Frame { func, info: &info[f], inst: self.instances, args, exprs: HashMap::new(), result: None, returns: Vec::new(), entry: false };
        self.depth += 1;
        self.locals(&mut fr)?;
        let flow = self.block(&mut fr, &func.body, info);
        self.depth -= 1;
        self.finish_function(&mut fr, flow?)
    }

    fn branch(&mut self, fr: &mut Frame<'a>, c: Cond, accept: &'a naga::Block, reject: &'a naga::Block, info: &'a naga::valid::ModuleInfo) -> R<Flow> {
        let (w, pos) = match c {
            Cond::Const(true) => return self.block(fr, accept, info),
            Cond::Const(false) => return self.block(fr, reject, info),
            Cond::Word(w, p) => (w, p),
        };
        let (nz, z) = self.b.branch(w)?;
        let (ta, tr) = if pos { (nz, z) } else { (z, nz) };
        let before = self.env.clone();
        let mut live = Vec::new();
        for (start, arm) in [(ta, accept), (tr, reject)] {
            self.env = before.clone();
            self.b.cur = start;
            match self.block(fr, arm, info)? {
                Flow::Normal => live.push((self.b.cur, std::mem::take(&mut self.env), Vec::new())),
                Flow::Return => {
                    let result = fr.result.take().unwrap_or_default();
                    fr.returns.push((self.b.cur, std::mem::take(&mut self.env), result));
                }
                Flow::Returned => {}
                Flow::Break | Flow::Continue => return Err("`break` or `continue` under a condition not known at compile time (the lowering unrolls loops)".into()),
            }
        }
        match live.len() {
            0 => Ok(Flow::Returned),
            1 => {
                let (b, env, _) = live.pop().ok_or("no live side")?;
                self.b.cur = b;
                self.env = env;
                Ok(Flow::Normal)
            }
            _ => {
                let (env, _) = self.merge(live)?;
                self.env = env;
                Ok(Flow::Normal)
            }
        }
    }

    /// Join the edges (end block, environment, values): one new block, each
    /// variable component and value component that differs between edges
    /// moved into one fresh register on every edge. The join is current.
    fn merge(&mut self, edges: Vec<(usize, Env, Vec<Val>)>) -> R<(Env, Vec<Val>)> {
        let join = self.b.block();
        let first = edges.first().ok_or("a join without edges")?;
        let mut env = Env::new();
        let roots: Vec<Root> = first.1.keys().filter(|r| edges.iter().all(|e| e.1.contains_key(*r))).cloned().collect();
        let mut lists: Vec<(Option<Root>, Vec<Vec<Val>>)> = roots.into_iter().map(|r| (Some(r.clone()), edges.iter().map(|e| e.1[&r].clone()).collect())).collect();
        lists.push((None, edges.iter().map(|e| e.2.clone()).collect()));
        let mut values = Vec::new();
        for (root, sides) in lists {
            let n = sides.iter().map(Vec::len).min().unwrap_or(0);
            let mut out = Vec::with_capacity(n);
            for k in 0..n {
                let x = sides[0][k].clone();
                if sides.iter().all(|s| s[k] == x) {
                    out.push(x);
                    continue;
                }
                let d = self.b.vreg();
                for (e, s) in edges.iter().zip(&sides) {
                    self.b.mov_into(e.0, &d, s[k].clone())?;
                }
                out.push(Operand::Virt(d));
            }
            match root {
                Some(r) => {
                    env.insert(r, out);
                }
                None => values = out,
            }
        }
        for e in &edges {
            self.b.jump(e.0, join);
        }
        self.b.cur = join;
        Ok((env, values))
    }

    /// The end of a function instance: the returns taken under conditions
    /// and the fall-through (`flow`) joined into one block.
    fn finish_function(&mut self, fr: &mut Frame<'a>, flow: Flow) -> R<Option<Vec<Val>>> {
        match flow {
            Flow::Normal | Flow::Return => {}
            Flow::Returned => {}
            Flow::Break | Flow::Continue => return Err("`break` or `continue` outside a loop".into()),
        }
        if fr.returns.is_empty() {
            return Ok(fr.result.take());
        }
        let mut edges = std::mem::take(&mut fr.returns);
        if !matches!(flow, Flow::Returned) {
            edges.push((self.b.cur, std::mem::take(&mut self.env), fr.result.take().unwrap_or_default()));
        }
        let has_value = edges.iter().any(|e| !e.2.is_empty());
        let (env, values) = self.merge(edges)?;
        self.env = env;
        Ok(has_value.then_some(values))
    }

    fn unroll(&mut self, fr: &mut Frame<'a>, body: &'a naga::Block, cont: &'a naga::Block, break_if: Option<Handle<naga::Expression>>, info: &'a naga::valid::ModuleInfo) -> R<Flow> {
        for _ in 0..MAX_ITERATIONS {
            match self.block(fr, body, info)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return => return Ok(Flow::Return),
                Flow::Returned => return Ok(Flow::Returned),
                Flow::Normal | Flow::Continue => {}
            }
            match self.block(fr, cont, info)? {
                Flow::Return => return Ok(Flow::Return),
                Flow::Returned => return Ok(Flow::Returned),
                _ => {}
            }
            if let Some(h) = break_if {
                match self.cond(fr, h)? {
                    Cond::Const(true) => return Ok(Flow::Normal),
                    Cond::Const(false) => {}
                    Cond::Word(..) => return Err("a loop whose exit is not known at compile time".into()),
                }
            }
        }
        Err(format!("a loop that does not end within {MAX_ITERATIONS} iterations at compile time"))
    }

    // ---- variables ----

    fn initial(&mut self, root: &Root) -> R<Vec<Val>> {
        match root {
            Root::Private(g) => {
                let gv = &self.m.global_variables[*g];
                match gv.init {
                    Some(h) => self.gconst(h),
                    None => Ok(vec![fimm(0.0); size_of(self.m, &self.m.types[gv.ty].inner)]),
                }
            }
            Root::Local(..) | Root::Uniform(_) => Err("internal: a variable without a value".into()),
        }
    }

    fn read(&mut self, p: &Place) -> R<Vec<Val>> {
        if let Root::Uniform(g) = p.root {
            let (_, srcs) = self.layout.uniforms.iter().find(|(h, _)| *h == g).cloned().ok_or("a uniform outside the layout")?;
            // a uniform load is an emitted expression: its uses are in this
            // block or blocks it dominates, so an index op may load it here
            let mut out = Vec::with_capacity(p.len);
            for i in p.offset..p.offset + p.len {
                let s = srcs.get(i).copied().ok_or_else(|| "uniform component out of range".to_string())?;
                out.push(match s {
                    Source::Op(op, n) => self.b.load_here(op, n),
                    Source::Reg(_) => self.fetch(s),
                });
            }
            return Ok(out);
        }
        if !self.env.contains_key(&p.root) {
            let init = self.initial(&p.root)?;
            self.env.insert(p.root.clone(), init);
        }
        let all = self.env.get(&p.root).ok_or("a variable without a value")?;
        all.get(p.offset..p.offset + p.len).map(<[Val]>::to_vec).ok_or_else(|| "access out of range".into())
    }

    fn store(&mut self, p: &Place, v: Vec<Val>) -> R<()> {
        if matches!(p.root, Root::Uniform(_)) {
            return Err("a store to a uniform".into());
        }
        if !self.env.contains_key(&p.root) {
            let init = self.initial(&p.root)?;
            self.env.insert(p.root.clone(), init);
        }
        let all = self.env.get_mut(&p.root).ok_or("a variable without a value")?;
        let dst = all.get_mut(p.offset..p.offset + p.len).ok_or("store out of range")?;
        if dst.len() != v.len() {
            return Err("store of a value of the wrong size".into());
        }
        dst.clone_from_slice(&v);
        Ok(())
    }

    /// An outside input, fetched once per program.
    fn fetch(&mut self, s: Source) -> Val {
        if let Some(v) = self.fetched.get(&s) {
            return v.clone();
        }
        let v = match s {
            Source::Op(op, n) => self.b.prelude_load(op, n),
            Source::Reg(r) => {
                let d = self.b.vreg();
                self.inputs.push((d.clone(), r));
                Operand::Virt(d)
            }
        };
        self.fetched.insert(s, v.clone());
        v
    }

    // ---- expressions ----

    fn ty(&self, fr: &Frame, h: Handle<naga::Expression>) -> TypeInner {
        fr.info[h].ty.inner_with(&self.m.types).clone()
    }

    fn is_int(&self, fr: &Frame, h: Handle<naga::Expression>) -> bool {
        matches!(self.ty(fr, h).scalar_kind(), Some(ScalarKind::Sint | ScalarKind::Uint))
    }

    /// The value of `h` as scalars (conditions materialised as 0.0 / 1.0).
    fn value(&mut self, fr: &mut Frame<'a>, h: Handle<naga::Expression>) -> R<Vec<Val>> {
        match self.get(fr, h)? {
            Ev::Val(v) => Ok(v),
            Ev::Cond(cs) => cs.into_iter().map(|c| arith::boolean(&mut self.b, c)).collect(),
            Ev::Place(_) | Ev::Image | Ev::Sampler => Err("a pointer or texture used as a value".into()),
        }
    }

    /// The condition `h` (a scalar boolean).
    fn cond(&mut self, fr: &mut Frame<'a>, h: Handle<naga::Expression>) -> R<Cond> {
        match self.get(fr, h)? {
            Ev::Cond(mut cs) if cs.len() == 1 => cs.pop().ok_or_else(|| "empty condition".into()),
            Ev::Val(v) if v.len() == 1 => Ok(arith::truth(v[0].clone())),
            _ => Err("a condition that is not a scalar boolean".into()),
        }
    }

    fn place(&mut self, fr: &mut Frame<'a>, h: Handle<naga::Expression>) -> R<Place> {
        match self.get(fr, h)? {
            Ev::Place(p) => Ok(p),
            _ => Err("expected a pointer".into()),
        }
    }

    /// Evaluated value of `h`: memoised for expressions outside `Emit`.
    fn get(&mut self, fr: &mut Frame<'a>, h: Handle<naga::Expression>) -> R<Ev> {
        if let Some(v) = fr.exprs.get(&h) {
            return Ok(v.clone());
        }
        let v = self.expr(fr, h)?;
        if !fr.func.expressions[h].needs_pre_emit() {
            // expressions evaluated at Emit are memoised there
            return Ok(v);
        }
        fr.exprs.insert(h, v.clone());
        Ok(v)
    }

    /// A constant from the module's global expressions.
    fn gconst(&mut self, h: Handle<naga::Expression>) -> R<Vec<Val>> {
        let m = self.m;
        match &m.global_expressions[h] {
            X::Literal(l) => Ok(vec![literal(l)?]),
            X::Constant(c) => self.gconst(m.constants[*c].init),
            X::ZeroValue(t) => Ok(vec![fimm(0.0); size_of(m, &m.types[*t].inner)]),
            X::Compose { components, .. } => {
                let mut out = Vec::new();
                for c in components {
                    out.extend(self.gconst(*c)?);
                }
                Ok(out)
            }
            X::Splat { size, value } => {
                let v = self.gconst(*value)?;
                Ok(v.iter().cycle().take(*size as usize).cloned().collect())
            }
            _ => Err("an unsupported constant expression".into()),
        }
    }

    fn expr(&mut self, fr: &mut Frame<'a>, h: Handle<naga::Expression>) -> R<Ev> {
        let m = self.m;
        let e = &fr.func.expressions[h];
        let vals = |v: Vec<Val>| Ok(Ev::Val(v));
        match e {
            X::Literal(l) => vals(vec![literal(l)?]),
            X::Constant(c) => vals(self.gconst(m.constants[*c].init)?),
            X::ZeroValue(t) => vals(vec![fimm(0.0); size_of(m, &m.types[*t].inner)]),
            X::Compose { components, .. } => {
                let mut out = Vec::new();
                for c in components {
                    out.extend(self.value(fr, *c)?);
                }
                vals(out)
            }
            X::Splat { size, value } => {
                let v = self.value(fr, *value)?;
                vals(v.iter().cycle().take(*size as usize).cloned().collect())
            }
            X::Swizzle { size, vector, pattern } => {
                let v = self.value(fr, *vector)?;
                pattern.iter().take(*size as usize).map(|c| v.get(*c as usize).cloned().ok_or_else(|| "swizzle out of range".to_string())).collect::<R<Vec<_>>>().map(Ev::Val)
            }
            X::AccessIndex { base, index } => self.access(fr, *base, *index as usize),
            X::Access { base, index } => {
                let i = self.value(fr, *index)?;
                match i.first().and_then(builder::as_f32) {
                    Some(k) if k >= 0.0 && k.fract() == 0.0 => self.access(fr, *base, k as usize),
                    _ => Err("an index not known at compile time (dynamic indexing is not supported)".into()),
                }
            }
            X::FunctionArgument(i) => {
                if fr.entry {
                    return self.stage_input(*i as usize).map(Ev::Val);
                }
                fr.args.get(*i as usize).cloned().ok_or_else(|| "argument out of range".into())
            }
            X::GlobalVariable(g) => {
                let gv = &m.global_variables[*g];
                let ty = m.types[gv.ty].inner.clone();
                match gv.space {
                    naga::AddressSpace::Uniform => Ok(Ev::Place(Place { root: Root::Uniform(*g), offset: 0, len: size_of(m, &ty), ty })),
                    naga::AddressSpace::Private | naga::AddressSpace::Function => Ok(Ev::Place(Place { root: Root::Private(*g), offset: 0, len: size_of(m, &ty), ty })),
                    naga::AddressSpace::Handle => match ty {
                        TypeInner::Sampler { .. } => Ok(Ev::Sampler),
                        _ => Ok(Ev::Image),
                    },
                    _ => Err(format!("global variables in {:?} space are not supported", gv.space)),
                }
            }
            X::LocalVariable(l) => {
                let lv = &fr.func.local_variables[*l];
                let ty = m.types[lv.ty].inner.clone();
                let root = Root::Local(fr.inst, *l);
                Ok(Ev::Place(Place { root, offset: 0, len: size_of(m, &ty), ty }))
            }
            X::Load { pointer } => {
                let p = self.place(fr, *pointer)?;
                vals(self.read(&p)?)
            }
            X::ImageSample { coordinate, array_index: None, offset: None, depth_ref: None, gather: None, .. } => {
                let c = self.value(fr, *coordinate)?;
                vals(self.sample(c)?)
            }
            X::ImageSample { .. } => Err("only plain 2D texture samples are supported".into()),
            X::Unary { op, expr } => {
                let ev = self.get(fr, *expr)?;
                match (op, ev) {
                    (naga::UnaryOperator::LogicalNot, Ev::Cond(cs)) => Ok(Ev::Cond(cs.into_iter().map(Cond::negate).collect())),
                    (naga::UnaryOperator::LogicalNot, Ev::Val(v)) => Ok(Ev::Cond(v.into_iter().map(|x| arith::truth(x).negate()).collect())),
                    (naga::UnaryOperator::Negate, _) => {
                        let v = self.value(fr, *expr)?;
                        vals(v.into_iter().map(|x| arith::neg(&mut self.b, x)).collect::<R<_>>()?)
                    }
                    _ => Err("bitwise operators are not supported".into()),
                }
            }
            X::Binary { op, left, right } => self.binary(fr, *op, *left, *right),
            X::Select { condition, accept, reject } => {
                let a = self.value(fr, *accept)?;
                let r = self.value(fr, *reject)?;
                let cs = match self.get(fr, *condition)? {
                    Ev::Cond(cs) => cs,
                    Ev::Val(v) => v.into_iter().map(arith::truth).collect(),
                    _ => return Err("a select condition that is not boolean".into()),
                };
                if cs.len() == 1 {
                    let c = cs.into_iter().next().ok_or("empty condition")?;
                    return vals(arith::select(&mut self.b, c, a, r)?);
                }
                let mut out = Vec::new();
                for ((c, x), y) in cs.into_iter().zip(a).zip(r) {
                    out.push(arith::select1(&mut self.b, c, x, y)?);
                }
                vals(out)
            }
            X::Relational { fun, argument } => {
                let v = self.value(fr, *argument)?;
                match fun {
                    naga::RelationalFunction::All => vals(vec![v.into_iter().try_fold(fimm(1.0), |acc, x| arith::mul(&mut self.b, acc, x))?]),
                    naga::RelationalFunction::Any => vals(vec![v.into_iter().try_fold(fimm(0.0), |acc, x| arith::max(&mut self.b, acc, x))?]),
                    _ => Err(format!("`{fun:?}` is not supported")),
                }
            }
            X::Math { fun, arg, arg1, arg2, .. } => {
                let a = self.value(fr, *arg)?;
                let a1 = match arg1 {
                    Some(x) => Some(self.value(fr, *x)?),
                    None => None,
                };
                let a2 = match arg2 {
                    Some(x) => Some(self.value(fr, *x)?),
                    None => None,
                };
                let ty = self.ty(fr, *arg);
                vals(math::call(&mut self.b, *fun, a, a1, a2, &ty)?)
            }
            X::As { expr, kind, convert } => {
                let from_int = self.is_int(fr, *expr);
                let from_bool = matches!(self.ty(fr, *expr).scalar_kind(), Some(ScalarKind::Bool));
                let ev = self.get(fr, *expr)?;
                match (kind, convert) {
                    (_, None) if from_int && matches!(kind, ScalarKind::Sint | ScalarKind::Uint) => Ok(ev),
                    (_, None) => Err("bit casts are not supported".into()),
                    (ScalarKind::Float, Some(_)) => vals(self.value(fr, *expr)?),
                    (ScalarKind::Sint | ScalarKind::Uint, Some(_)) if from_int || from_bool => vals(self.value(fr, *expr)?),
                    (ScalarKind::Sint | ScalarKind::Uint, Some(_)) => {
                        let v = self.value(fr, *expr)?;
                        vals(v.into_iter().map(|x| arith::trunc(&mut self.b, x)).collect::<R<_>>()?)
                    }
                    (ScalarKind::Bool, Some(_)) => {
                        let v = self.value(fr, *expr)?;
                        Ok(Ev::Cond(v.into_iter().map(|x| arith::ne(&mut self.b, x, fimm(0.0))).collect::<R<_>>()?))
                    }
                    _ => Err("an unsupported conversion".into()),
                }
            }
            X::CallResult(_) => fr.exprs.get(&h).cloned().ok_or_else(|| "a call result used before its call".into()),
            other => Err(format!("unsupported expression {}", expr_name(other))),
        }
    }

    fn access(&mut self, fr: &mut Frame<'a>, base: Handle<naga::Expression>, index: usize) -> R<Ev> {
        let m = self.m;
        let bt = self.ty(fr, base);
        match self.get(fr, base)? {
            Ev::Place(p) => {
                let (off, len) = element(m, &p.ty, index).ok_or("access out of range")?;
                let ty = crate::types::element_type(m, &p.ty, index).ok_or("access of a non-aggregate")?;
                Ok(Ev::Place(Place { root: p.root, offset: p.offset + off, len, ty }))
            }
            Ev::Val(v) => {
                let (off, len) = element(m, &pointee(m, &bt), index).ok_or("access out of range")?;
                v.get(off..off + len).map(|s| Ev::Val(s.to_vec())).ok_or_else(|| "access out of range".into())
            }
            Ev::Cond(cs) => cs.get(index).map(|c| Ev::Cond(vec![c.clone()])).ok_or_else(|| "access out of range".into()),
            _ => Err("access of a texture".into()),
        }
    }

    fn stage_input(&mut self, arg: usize) -> R<Vec<Val>> {
        let ins: Vec<_> = self.layout.inputs.iter().filter(|i| i.arg == arg).cloned().collect();
        let mut comps: Vec<(usize, Source)> = ins.iter().flat_map(|i| i.comps.iter().enumerate().map(move |(k, s)| (i.offset + k, *s))).collect();
        comps.sort_by_key(|c| c.0);
        if comps.iter().enumerate().any(|(k, c)| k != c.0) {
            return Err("an entry-point argument with components outside the layout".into());
        }
        Ok(comps.into_iter().map(|(_, s)| self.fetch(s)).collect())
    }

    fn sample(&mut self, coords: Vec<Val>) -> R<Vec<Val>> {
        let t = self.b.target;
        match t.abi.and_then(|a| a.texture).ok_or_else(|| format!("texture sampling is not supported on target {}", t.name))? {
            Texture::Send(tex) => self.sample_send(tex, coords),
            Texture::Unit(unit) => self.sample_unit(unit, coords),
        }
    }

    /// A texture unit's sample: the coordinates after the first written in
    /// order, the first written by the lookup op, then the texel's words
    /// read one by one.
    fn sample_unit(&mut self, unit: TexUnit, coords: Vec<Val>) -> R<Vec<Val>> {
        let t = self.b.target;
        let find = |name: &str| t.op(name).ok_or_else(|| format!("the ABI's texture op `{name}` is not in the target's table"));
        let (coord, lookup, result) = (find(unit.coord)?, find(unit.lookup)?, find(unit.result)?);
        let operand = |b: &mut Builder, op: &schedra_ir::OpDesc, v: Val| -> R<Val> {
            match v {
                Operand::Imm(imm) if t.rules.imm_ok(op, 0, imm) => Ok(Operand::Imm(imm)),
                v => b.reg(v),
            }
        };
        let Some((first, rest)) = coords.split_first() else { return Err("a texture sample without coordinates".into()) };
        for c in rest {
            let v = operand(&mut self.b, coord, c.clone())?;
            self.b.raw(coord.name, None, vec![v]);
        }
        let v = operand(&mut self.b, lookup, first.clone())?;
        self.b.raw(lookup.name, None, vec![v]);
        let mut out = Vec::new();
        for _ in 0..schedra_ir::target::TEXEL_WORDS {
            let d = self.b.vreg();
            self.b.raw(result.name, Some(Operand::Virt(d.clone())), Vec::new());
            out.push(Operand::Virt(d));
        }
        Ok(out)
    }

    /// A sample by one op over register runs: the coordinates moved into
    /// the ABI's coordinate registers, the texel read from its result
    /// registers.
    fn sample_send(&mut self, tex: TexAbi, coords: Vec<Val>) -> R<Vec<Val>> {
        let t = self.b.target;
        let op = t.op(tex.op).ok_or("the ABI's texture op is not in the target's table")?;
        let (dsize, csize) = match op.sizes {
            schedra_ir::target::Sizes::Fixed { dest, src } => (dest, src),
            _ => (4, coords.len() as u8),
        };
        if coords.len() != csize as usize {
            return Err(format!("a texture sample with {} coordinates; target {} samples with {csize}", coords.len(), t.name));
        }
        for (i, c) in coords.into_iter().enumerate() {
            self.b.move_to(Operand::Phys(PhysReg::one(tex.coord + i as Reg)), c)?;
        }
        let result = PhysReg { base: tex.result, size: dsize };
        self.b.raw(op.name, Some(Operand::Phys(result)), vec![Operand::Phys(PhysReg { base: tex.coord, size: csize })]);
        let mut out = Vec::new();
        for k in 0..dsize as Reg {
            let d = self.b.vreg();
            self.b.move_to(Operand::Virt(d.clone()), Operand::Phys(PhysReg::one(tex.result + k)))?;
            out.push(Operand::Virt(d));
        }
        Ok(out)
    }

    fn binary(&mut self, fr: &mut Frame<'a>, op: B, l: Handle<naga::Expression>, r: Handle<naga::Expression>) -> R<Ev> {
        let (lt, rt) = (self.ty(fr, l), self.ty(fr, r));
        let int = self.is_int(fr, l);
        if matches!(op, B::LogicalAnd | B::LogicalOr) {
            let a = self.value(fr, l)?;
            let c = self.value(fr, r)?;
            let f = if op == B::LogicalAnd { arith::mul } else { arith::max };
            let v = a.into_iter().zip(c).map(|(x, y)| f(&mut self.b, x, y)).collect::<R<_>>()?;
            return Ok(Ev::Val(v));
        }
        let a = self.value(fr, l)?;
        let c = self.value(fr, r)?;
        let b = &mut self.b;
        if op == B::Multiply {
            if let Some(v) = math::matmul(b, &a, &lt, &c, &rt)? {
                return Ok(Ev::Val(v));
            }
        }
        let n = a.len().max(c.len());
        let bc = |v: Vec<Val>| if v.len() == 1 { vec![v[0].clone(); n] } else { v };
        let (a, c) = (bc(a), bc(c));
        let pairs = a.into_iter().zip(c);
        let cmp = |b: &mut Builder, x: Val, y: Val| -> R<Cond> {
            Ok(match op {
                B::Less => arith::lt(b, x, y)?,
                B::Greater => arith::lt(b, y, x)?,
                B::LessEqual => arith::lt(b, y, x)?.negate(),
                B::GreaterEqual => arith::lt(b, x, y)?.negate(),
                B::Equal => arith::ne(b, x, y)?.negate(),
                _ => arith::ne(b, x, y)?,
            })
        };
        match op {
            B::Less | B::Greater | B::LessEqual | B::GreaterEqual | B::Equal | B::NotEqual => {
                let cs = pairs.map(|(x, y)| cmp(b, x, y)).collect::<R<Vec<_>>>()?;
                Ok(Ev::Cond(cs))
            }
            _ => {
                let f = |b: &mut Builder, x: Val, y: Val| -> R<Val> {
                    match op {
                        B::Add => arith::add(b, x, y),
                        B::Subtract => arith::sub(b, x, y),
                        B::Multiply => arith::mul(b, x, y),
                        B::Divide if int => {
                            let q = arith::div(b, x, y)?;
                            arith::trunc(b, q)
                        }
                        B::Divide => arith::div(b, x, y),
                        B::Modulo => {
                            let q = arith::div(b, x.clone(), y.clone())?;
                            let t = arith::trunc(b, q)?;
                            let p = arith::mul(b, y, t)?;
                            arith::sub(b, x, p)
                        }
                        other => Err(format!("operator {other:?} is not supported")),
                    }
                };
                Ok(Ev::Val(pairs.map(|(x, y)| f(b, x, y)).collect::<R<_>>()?))
            }
        }
    }

    // ---- outputs ----

    fn write_outputs(&mut self) -> R<()> {
        use schedra_ir::target::abi::Emit;
        let vals = self.outputs.clone().unwrap_or_default();
        let outs = self.layout.outputs.clone();
        let t = self.b.target;
        match self.layout.abi.output {
            Emit::PerScalar(op) => {
                for o in &outs {
                    for k in 0..o.len {
                        let v = vals.get(o.offset + k).cloned().ok_or("output out of range")?;
                        let v = self.b.reg(v)?;
                        self.b.raw(op, None, vec![v]);
                    }
                }
            }
            Emit::Indexed { op, .. } => {
                for o in &outs {
                    for k in 0..o.len {
                        let v = vals.get(o.offset + k).cloned().ok_or("output out of range")?;
                        let v = self.b.reg(v)?;
                        self.b.raw(op, None, vec![Operand::Imm(schedra_ir::Imm::int(o.slot as i64)), v]);
                    }
                }
            }
            Emit::Components { op, .. } => {
                for o in &outs {
                    for k in 0..o.len {
                        let v = vals.get(o.offset + k).cloned().ok_or("output out of range")?;
                        let v = self.b.reg(v)?;
                        self.b.raw(op, None, vec![Operand::Imm(schedra_ir::Imm::int(i64::from(o.slot) + k as i64)), v]);
                    }
                }
            }
            Emit::Payload { op, first, max } => {
                let all: Vec<Val> = outs.iter().flat_map(|o| (0..o.len).map(move |k| o.offset + k)).map(|i| vals.get(i).cloned().ok_or_else(|| "output out of range".to_string())).collect::<R<_>>()?;
                let cap = (max as usize).min(t.max_value_size as usize);
                if all.is_empty() || all.len() > cap {
                    return Err(format!("{} output components; target {} writes 1 to {cap}", all.len(), t.name));
                }
                for (i, v) in all.iter().enumerate() {
                    self.b.move_to(Operand::Phys(PhysReg::one(first + i as Reg)), v.clone())?;
                }
                self.b.raw(op, None, vec![Operand::Phys(PhysReg { base: first, size: all.len() as u8 })]);
            }
        }
        Ok(())
    }
}

/// A literal as a float word (integers and booleans as floats).
fn literal(l: &naga::Literal) -> R<Val> {
    use naga::Literal as L;
    Ok(fimm(match *l {
        L::F32(x) => x,
        L::F64(x) | L::AbstractFloat(x) => x as f32,
        L::I32(x) => x as f32,
        L::U32(x) => x as f32,
        L::I64(x) | L::AbstractInt(x) => x as f32,
        L::U64(x) => x as f32,
        L::Bool(b) => f32::from(u8::from(b)),
        L::F16(x) => f32::from(x),
    }))
}

fn expr_name(e: &X) -> String {
    let s = format!("{e:?}");
    s.split([' ', '(', '{']).next().unwrap_or("?").to_string()
}

/// Whether a program's stage is one of `target`'s ABI stages.
pub fn supports(target: &Target, stage: Stage) -> bool {
    target.abi.is_some_and(|a| match stage {
        Stage::Vertex => a.vertex.is_some(),
        Stage::Fragment => a.fragment.is_some(),
        Stage::Compute => false,
    })
}
