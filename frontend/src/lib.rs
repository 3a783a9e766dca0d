//! schedra's front end: shaders as people write them (WGSL, SPIR-V, GLSL
//! 450 and GLSL ES 1.00) parsed and validated by naga, then lowered to a
//! target's source form.
//!
//! Why naga with a rewrite for ES 1.00: naga (pure Rust, part of wgpu)
//! parses and type-checks WGSL, SPIR-V and GLSL 440–460 into one typed IR,
//! so one lowering serves all three languages. It rejects GLSL ES 1.00 as
//! glmark2 and kmscube write it only for spellings (`attribute`,
//! `varying`, `gl_FragColor`, `texture2D`, combined samplers, uniforms
//! without bindings, precision), which [`glsl_es`] rewrites line for line;
//! a second GLSL parser would duplicate naga's type checking, and the C++
//! alternatives (glslang, shaderc) cannot emit SPIR-V for ES 1.00 either.
//!
//! Modules: [`parse`] (file → validated naga module), [`glsl_es`] (the ES
//! 1.00 → GLSL 450 rewrite), [`glmark2`] (the constants and template
//! code glmark2 adds to its shaders at run time), [`layout`] (the entry point's interface on a
//! target's ABI), [`lower`] (naga IR → source form), [`types`] (types as
//! scalar lists), [`check`] (the independent evaluator the lowering is
//! compared with), [`error`] (located errors).

#![warn(missing_docs)]

pub mod check;
pub mod error;
pub mod glmark2;
pub mod glsl_es;
pub mod layout;
pub mod lower;
pub mod parse;
mod quiet;
pub mod types;

pub use error::FrontError;

use schedra_ir::{Program, Stage, Target};

/// Whether `path` names a shader by its extension (see [`parse::lang_of`]).
pub fn is_shader_path(path: &str) -> bool {
    parse::lang_of(path).is_some()
}

/// Parse, validate and lower the shader `bytes` read from `path` for
/// `target`. `stage` overrides the stage of the extension (GLSL) and
/// selects among entry points (WGSL, SPIR-V) together with `entry`.
pub fn lower_file(path: &str, bytes: &[u8], target: &'static Target, stage: Option<Stage>, entry: Option<&str>) -> Result<Program, FrontError> {
    let stage = stage.or(parse::lang_of(path).and_then(|(_, s)| s));
    let parsed = parse::parse_file(path, bytes, stage)?;
    let name = std::path::Path::new(path).file_name().and_then(|s| s.to_str()).map(|s| s.replace(|c: char| !(c.is_ascii_alphanumeric() || c == '_'), "_"));
    let req = lower::Request { entry, stage, name };
    lower::lower(&parsed, target, &req)
}
