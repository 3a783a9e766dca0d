//! The interface of one entry point on one target: where each scalar
//! component of every stage input and uniform comes from, and in which order
//! and on which channel each output component leaves. It is the contract
//! between the lowering and the independent evaluator ([`crate::check`]):
//! both read inputs and write outputs as this says, and neither shares the
//! other's arithmetic.
//!
//! Algorithm: stage inputs (entry-point arguments, flattened through
//! structs) are ordered by location, built-ins after; uniforms (globals in
//! the uniform address space) by declaration. Components are numbered per
//! kind; register-passed components take the stage's registers in the
//! order the ABI gives (uniforms first or last), each variable aligned.

use crate::error::FrontError;
use crate::types::size_of;
use naga::{Binding, BuiltIn, Handle, Module};
use schedra_ir::target::abi::{Emit, Fetch, StageAbi};
use schedra_ir::{Reg, Stage, Target};

/// Where one input component comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// `d = op N` (the ABI's fetch op).
    Op(&'static str, u32),
    /// The input register.
    Reg(Reg),
}

/// One stage input: an entry argument (or a member of one).
#[derive(Clone, Debug)]
pub struct StageInput {
    /// Argument index.
    pub arg: usize,
    /// First component within the argument's flattened value.
    pub offset: usize,
    /// Its components' sources.
    pub comps: Vec<Source>,
}

/// One output: a member of the entry point's result (or the result).
#[derive(Clone, Debug)]
pub struct StageOutput {
    /// First component within the result's flattened value.
    pub offset: usize,
    /// Number of components.
    pub len: usize,
    /// Output slot (position, or the location's slot).
    pub slot: u32,
}

/// The interface of an entry point on a target.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The stage.
    pub stage: Stage,
    /// The stage's ABI.
    pub abi: StageAbi,
    /// Stage inputs.
    pub inputs: Vec<StageInput>,
    /// Per uniform global: the sources of its components.
    pub uniforms: Vec<(Handle<naga::GlobalVariable>, Vec<Source>)>,
    /// Outputs in the order they are written.
    pub outputs: Vec<StageOutput>,
}

/// The schedra stage of a naga stage.
pub fn stage_of(s: naga::ShaderStage) -> Option<Stage> {
    match s {
        naga::ShaderStage::Vertex => Some(Stage::Vertex),
        naga::ShaderStage::Fragment => Some(Stage::Fragment),
        naga::ShaderStage::Compute => Some(Stage::Compute),
        _ => None,
    }
}

/// Sort key of a binding: locations first by number, then built-ins.
fn binding_key(b: &Binding) -> Result<u32, String> {
    match b {
        Binding::Location { location, .. } => Ok(*location),
        Binding::BuiltIn(BuiltIn::Position { .. }) => Ok(u32::MAX - 1),
        Binding::BuiltIn(other) => Err(format!("built-in {other:?} is not supported")),
    }
}

struct Counter<'a> {
    abi: &'a StageAbi,
    next_reg: u32,
    next_index: [u32; 2],
}

impl Counter<'_> {
    /// Sources for `n` components of a variable of `kind` (0 uniform, 1 input).
    fn take(&mut self, kind: usize, n: usize) -> Result<Vec<Source>, String> {
        let fetch = if kind == 0 { self.abi.uniform } else { self.abi.input };
        match fetch {
            Fetch::Op(op) => {
                let first = self.next_index[kind];
                self.next_index[kind] += n as u32;
                Ok((0..n as u32).map(|i| Source::Op(op, first + i)).collect())
            }
            Fetch::Registers => {
                let a = self.abi.align.max(1) as u32;
                let first = self.next_reg.div_ceil(a) * a;
                let last = first + n as u32;
                if last > self.abi.last_reg as u32 + 1 {
                    return Err(format!("more input components than the target's input registers hold ({last})"));
                }
                self.next_reg = last;
                Ok((first..last).map(|r| Source::Reg(r as Reg)).collect())
            }
        }
    }
}

/// The layout of entry point `ep` of `module` on `target`.
pub fn layout(module: &Module, ep: &naga::EntryPoint, target: &'static Target) -> Result<Layout, FrontError> {
    let err = |m: String| FrontError::at(1, 1, m);
    let stage = stage_of(ep.stage).ok_or_else(|| err("unsupported shader stage".into()))?;
    let abi = target.abi.ok_or_else(|| err(format!("target {} has no shader ABI", target.name)))?;
    let sabi = match stage {
        Stage::Vertex => abi.vertex,
        Stage::Fragment => abi.fragment,
        Stage::Compute => None,
    }
    .ok_or_else(|| err(format!("target {} does not run {} shaders", target.name, stage.as_str())))?;
    // stage inputs
    let mut ins: Vec<(u32, usize, usize, usize)> = Vec::new(); // key, arg, offset, len
    for (ai, arg) in ep.function.arguments.iter().enumerate() {
        let inner = &module.types[arg.ty].inner;
        match (&arg.binding, inner) {
            (Some(b), _) => ins.push((binding_key(b).map_err(err)?, ai, 0, size_of(module, inner))),
            (None, naga::TypeInner::Struct { members, .. }) => {
                let mut off = 0;
                for m in members {
                    let n = size_of(module, &module.types[m.ty].inner);
                    let b = m.binding.as_ref().ok_or_else(|| err("an input struct member without a binding".into()))?;
                    ins.push((binding_key(b).map_err(err)?, ai, off, n));
                    off += n;
                }
            }
            (None, _) => return Err(err("an entry-point argument without a binding".into())),
        }
    }
    ins.sort_by_key(|x| x.0);
    let uniforms: Vec<(Handle<naga::GlobalVariable>, usize)> = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == naga::AddressSpace::Uniform)
        .map(|(h, g)| (h, size_of(module, &module.types[g.ty].inner)))
        .collect();
    let mut c = Counter { abi: &sabi, next_reg: sabi.first_reg as u32, next_index: [0, 0] };
    let mut inputs = Vec::new();
    let mut unis = Vec::new();
    let mut do_inputs = |c: &mut Counter| -> Result<(), String> {
        for &(_, arg, offset, n) in &ins {
            inputs.push(StageInput { arg, offset, comps: c.take(1, n)? });
        }
        Ok(())
    };
    if sabi.uniforms_first {
        for &(h, n) in &uniforms {
            unis.push((h, c.take(0, n).map_err(err)?));
        }
        do_inputs(&mut c).map_err(err)?;
    } else {
        do_inputs(&mut c).map_err(err)?;
        for &(h, n) in &uniforms {
            unis.push((h, c.take(0, n).map_err(err)?));
        }
    }
    let outputs = outputs(module, ep, stage, &sabi).map_err(err)?;
    Ok(Layout { stage, abi: sabi, inputs, uniforms: unis, outputs })
}

fn outputs(module: &Module, ep: &naga::EntryPoint, stage: Stage, abi: &StageAbi) -> Result<Vec<StageOutput>, String> {
    let Some(res) = &ep.function.result else { return Ok(Vec::new()) };
    let inner = &module.types[res.ty].inner;
    let mut outs: Vec<(u32, usize, usize)> = Vec::new();
    let mut push = |b: &Binding, off: usize, n: usize| -> Result<(), String> {
        let key = match b {
            Binding::Location { location, .. } => *location,
            Binding::BuiltIn(BuiltIn::Position { .. }) if stage == Stage::Vertex => u32::MAX,
            Binding::BuiltIn(BuiltIn::PointSize) => return Ok(()),
            Binding::BuiltIn(other) => return Err(format!("output built-in {other:?} is not supported")),
        };
        outs.push((key, off, n));
        Ok(())
    };
    match (&res.binding, inner) {
        (Some(b), _) => push(b, 0, size_of(module, inner))?,
        (None, naga::TypeInner::Struct { members, .. }) => {
            let mut off = 0;
            for m in members {
                let n = size_of(module, &module.types[m.ty].inner);
                if let Some(b) = &m.binding {
                    push(b, off, n)?;
                }
                off += n;
            }
        }
        (None, _) => return Err("an entry-point result without a binding".into()),
    }
    // position first, then by location
    outs.sort_by_key(|&(k, _, _)| if k == u32::MAX { (0, 0) } else { (1, k) });
    let slot = |k: u32| match abi.output {
        Emit::Indexed { position, first_location, .. } => {
            if k == u32::MAX {
                position
            } else {
                first_location + k
            }
        }
        Emit::Components { position, first_location, .. } => {
            if k == u32::MAX {
                position
            } else {
                first_location + 4 * k
            }
        }
        _ => k,
    };
    Ok(outs.into_iter().map(|(k, offset, len)| StageOutput { offset, len, slot: slot(k) }).collect())
}
