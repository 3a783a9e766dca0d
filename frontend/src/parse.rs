//! Reading a shader file into a validated naga module: the language from the
//! file's extension (`.wgsl`, `.spv`, `.vert` `.frag` `.comp` `.glsl`), GLSL
//! ES 1.00 first rewritten by [`crate::glsl_es`], and every parser or
//! validator error turned into one [`FrontError`] at the line and column of
//! the file the user wrote.
//!
//! Invariant: [`parse`] never panics; on success the module has passed
//! naga's validator, so every expression has a resolved type in the
//! returned [`naga::valid::ModuleInfo`].

use crate::error::FrontError;
use crate::glsl_es;
use schedra_ir::Stage;

/// The languages a shader file can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// WGSL text.
    Wgsl,
    /// SPIR-V binary.
    Spirv,
    /// GLSL text (desktop 450, or ES 1.00 rewritten).
    Glsl,
}

/// The language and (for GLSL) the stage a file extension names.
pub fn lang_of(path: &str) -> Option<(Lang, Option<Stage>)> {
    let ext = std::path::Path::new(path).extension()?.to_str()?;
    Some(match ext {
        "wgsl" => (Lang::Wgsl, None),
        "spv" => (Lang::Spirv, None),
        "vert" => (Lang::Glsl, Some(Stage::Vertex)),
        "frag" => (Lang::Glsl, Some(Stage::Fragment)),
        "comp" => (Lang::Glsl, Some(Stage::Compute)),
        "glsl" => (Lang::Glsl, None),
        _ => return None,
    })
}

/// A validated module with its type information.
pub struct Parsed {
    /// The module.
    pub module: naga::Module,
    /// The validator's analysis (types of every expression).
    pub info: naga::valid::ModuleInfo,
    /// Maps a byte span of the parsed text to (line, col) in the user's file.
    pub source: SourceMap,
}

/// What is needed to turn a naga span into a location in the user's file.
pub struct SourceMap {
    /// The text naga parsed (empty for SPIR-V).
    pub text: String,
    /// The ES rewrite, when one was applied.
    pub rewrite: Option<glsl_es::Rewrite>,
}

impl SourceMap {
    /// The 1-based (line, col) of a naga span in the user's file (1:1 when
    /// the span is unknown).
    pub fn locate(&self, span: naga::Span) -> (u32, u32) {
        if self.text.is_empty() || span == naga::Span::UNDEFINED {
            return (1, 1);
        }
        let r = span.to_range().unwrap_or(0..0);
        if r.start > self.text.len() {
            return (1, 1);
        }
        let loc = span.location(&self.text);
        let (line, col) = (loc.line_number.max(1), loc.line_position.max(1));
        match &self.rewrite {
            Some(rw) => (line, rw.original(line, col)),
            None => (line, col),
        }
    }
}

/// Macros defined for GLSL ES shaders: glmark2 defines its "or default"
/// precision macros when it builds its shaders; precision means nothing to
/// the lowering, so they expand to nothing.
pub const ES_DEFINES: [(&str, &str); 2] = [("MEDIUMP_OR_DEFAULT", ""), ("HIGHP_OR_DEFAULT", "")];

fn glsl_stage(s: Stage) -> naga::ShaderStage {
    match s {
        Stage::Vertex => naga::ShaderStage::Vertex,
        Stage::Fragment => naga::ShaderStage::Fragment,
        Stage::Compute => naga::ShaderStage::Compute,
    }
}

/// Parse and validate the shader file `path` holding `bytes` (the language
/// from its extension, the stage from `stage` or the extension). A GLSL ES
/// shader that does not parse as it is, and that glmark2 completes at run
/// time, is parsed with glmark2's additions ([`crate::glmark2`]); a
/// template whose placeholders nothing fills is a located error.
pub fn parse_file(path: &str, bytes: &[u8], stage: Option<Stage>) -> Result<Parsed, FrontError> {
    let (lang, ext_stage) = lang_of(path).ok_or_else(|| FrontError::at(1, 1, "not a shader file extension (.wgsl .spv .vert .frag .comp .glsl)".into()))?;
    let stage = stage.or(ext_stage);
    let plain = parse(lang, bytes, stage);
    let (Err(first), Lang::Glsl, Ok(text)) = (&plain, lang, std::str::from_utf8(bytes)) else { return plain };
    if !glsl_es::is_es(text) {
        return plain;
    }
    match crate::glmark2::additions(path, text)? {
        Some(done) => parse_with(lang, done.text.as_bytes(), stage, &done.defines),
        None => match crate::glmark2::placeholder(text) {
            Some((at, ph)) => {
                let line = text[..at].matches('\n').count() as u32 + 1;
                let col = text[..at].rfind('\n').map_or(at, |n| at - n - 1) as u32 + 1;
                Err(FrontError::at(line, col, format!("`{ph}` is a template placeholder its host program fills at run time; no substitution is known for this file")))
            }
            None => Err(first.clone()),
        },
    }
}

/// Parse and validate `bytes` as `lang`. GLSL needs a stage (`stage`).
pub fn parse(lang: Lang, bytes: &[u8], stage: Option<Stage>) -> Result<Parsed, FrontError> {
    parse_with(lang, bytes, stage, &[])
}

/// [`parse`] with extra preprocessor macros (name, value) for GLSL ES.
fn parse_with(lang: Lang, bytes: &[u8], stage: Option<Stage>, defines: &[(String, String)]) -> Result<Parsed, FrontError> {
    let text = |b: &[u8]| std::str::from_utf8(b).map(str::to_string).map_err(|e| FrontError::at(1, 1, format!("not UTF-8 text: {e}")));
    let (module, source) = match lang {
        Lang::Wgsl => {
            let t = text(bytes)?;
            match naga::front::wgsl::parse_str(&t) {
                Ok(m) => (m, SourceMap { text: t, rewrite: None }),
                Err(e) => {
                    let (l, c) = e.location(&t).map_or((1, 1), |l| (l.line_number, l.line_position));
                    return Err(FrontError::at(l, c, e.message().to_string()));
                }
            }
        }
        Lang::Spirv => {
            let opts = naga::front::spv::Options { adjust_coordinate_space: false, strict_capabilities: false, block_ctx_dump_prefix: None };
            // naga's SPIR-V parser unwraps on some malformed modules; a
            // panic there is this module's parse error, not the caller's.
            match crate::quiet::catch(|| naga::front::spv::parse_u8_slice(bytes, &opts)) {
                Some(Ok(m)) => (m, SourceMap { text: String::new(), rewrite: None }),
                Some(Err(e)) => return Err(FrontError::at(1, 1, format!("SPIR-V: {e}"))),
                None => return Err(FrontError::at(1, 1, "SPIR-V: malformed module (naga's parser failed on it)".into())),
            }
        }
        Lang::Glsl => {
            let t = text(bytes)?;
            let Some(stage) = stage else { return Err(FrontError::at(1, 1, "a `.glsl` file needs `--stage vertex|fragment|compute`".into())) };
            let rewrite = glsl_es::is_es(&t).then(|| glsl_es::rewrite(&t, stage == Stage::Fragment));
            let parsed_text = rewrite.as_ref().map_or_else(|| t.clone(), |r| r.text.clone());
            let map = SourceMap { text: parsed_text, rewrite };
            let mut fe = naga::front::glsl::Frontend::default();
            let mut opts = naga::front::glsl::Options::from(glsl_stage(stage));
            if map.rewrite.is_some() {
                // glmark2 defines these precision macros before compiling
                for (k, v) in ES_DEFINES {
                    opts.defines.insert(k.to_string(), v.to_string());
                }
                for (k, v) in defines {
                    opts.defines.insert(k.clone(), v.clone());
                }
            }
            match fe.parse(&opts, &map.text) {
                Ok(m) => (m, map),
                Err(errs) => {
                    let first = errs.errors.first();
                    let (l, c) = first.map_or((1, 1), |e| map.locate(e.meta));
                    let msg = first.map_or_else(|| "GLSL parse error".to_string(), |e| e.kind.to_string());
                    return Err(FrontError::at(l, c, msg));
                }
            }
        }
    };
    if let Some(e) = recursion(&module, &source) {
        return Err(e);
    }
    let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    match v.validate(&module) {
        Ok(info) => Ok(Parsed { module, info, source }),
        Err(e) => {
            let (l, c) = e.spans().next().map_or((1, 1), |(s, _)| source.locate(*s));
            Err(FrontError::at(l, c, format!("invalid shader: {}", error_chain(e.as_inner()))))
        }
    }
}

/// A function that calls itself, directly or through others, as an error
/// at its declaration: the lowering inlines every call, which recursion
/// would make endless. (naga's validator rejects such a module too, but a
/// GLSL one with a message about handle order at no useful place.) The call
/// graph is walked with explicit stacks, so no input can overflow ours.
fn recursion(module: &naga::Module, source: &SourceMap) -> Option<FrontError> {
    let calls: Vec<Vec<usize>> = module.functions.iter().map(|(_, f)| callees(&f.body)).collect();
    // 0: not seen, 1: on the current path, 2: finished.
    let mut state = vec![0u8; calls.len()];
    for root in 0..calls.len() {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut path = vec![(root, 0usize)];
        while let Some((f, next)) = path.last_mut() {
            let f = *f;
            let Some(&g) = calls[f].get(*next) else {
                state[f] = 2;
                path.pop();
                continue;
            };
            *next += 1;
            match state.get(g).copied() {
                Some(0) => {
                    state[g] = 1;
                    path.push((g, 0));
                }
                Some(1) => return Some(recursive(module, source, g)),
                _ => {}
            }
        }
    }
    None
}

/// The error naming function `index` as recursive.
fn recursive(module: &naga::Module, source: &SourceMap, index: usize) -> FrontError {
    let found = module.functions.iter().nth(index);
    let name = found.and_then(|(_, f)| f.name.clone()).unwrap_or_else(|| format!("#{index}"));
    let (l, c) = found.map_or((1, 1), |(h, _)| source.locate(module.functions.get_span(h)));
    FrontError::at(l, c, format!("function `{name}` is recursive (calls itself, directly or through others): calls are inlined, so recursion is not supported"))
}

/// The functions a body calls (their indices), nested blocks included.
fn callees(body: &naga::Block) -> Vec<usize> {
    use naga::Statement as S;
    let mut out = Vec::new();
    let mut todo = vec![body];
    while let Some(b) = todo.pop() {
        for st in b.iter() {
            match st {
                S::Call { function, .. } => out.push(function.index()),
                S::Block(inner) => todo.push(inner),
                S::If { accept, reject, .. } => todo.extend([accept, reject]),
                S::Switch { cases, .. } => todo.extend(cases.iter().map(|c| &c.body)),
                S::Loop { body, continuing, .. } => todo.extend([body, continuing]),
                _ => {}
            }
        }
    }
    out
}

/// An error and its sources, joined with `: `.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(x) = cur {
        s.push_str(": ");
        s.push_str(&x.to_string());
        cur = x.source();
    }
    s
}
