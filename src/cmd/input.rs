//! Reading a program from a path (`-` = standard input) and reporting bad
//! input as one line, `path:line:col: message`, with exit status 2.

use schedra_ir::{target, Program, Target};
use std::io::Read;

/// Exit status for bad input or usage.
pub const BAD_INPUT: i32 = 2;

/// Print a one-line error (it starts with `path:line:col:` when the message
/// comes from a located error) and return the bad-input status.
pub fn bad(msg: impl std::fmt::Display) -> i32 {
    use std::io::Write;
    // `let _`: a standard error that cannot be written changes nothing.
    let _ = writeln!(std::io::stderr(), "{msg}");
    BAD_INPUT
}

/// Look up `--target NAME`; an unknown name is a usage error (`Err(line)`).
pub fn target_arg(name: Option<&str>) -> Result<Option<&'static Target>, String> {
    match name {
        None => Ok(None),
        Some(n) => target::by_name(n).map(Some).ok_or_else(|| {
            let names: Vec<_> = target::all().iter().map(|t| t.name).collect();
            format!("unknown target `{n}` (known: {})", names.join(", "))
        }),
    }
}

/// Read the bytes of `path` (`-` = standard input).
pub fn read(path: &str) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    let res = if path == "-" {
        std::io::stdin().read_to_end(&mut buf).map(|_| ())
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut buf)).map(|_| ())
    };
    res.map(|_| buf).map_err(|e| format!("{path}:1:1: cannot read file: {e}"))
}

/// Read and parse `path` (either form). `Err` holds the one-line message.
pub fn load(path: &str, default_target: Option<&'static Target>) -> Result<Program, String> {
    let bytes = read(path)?;
    schedra_ir::parse::parse(&bytes, default_target).map_err(|e| e.at(path).to_string())
}

/// Read, parse and validate a source-form program. A machine-form file is
/// bad input here (`Err` with `path:1:1:`), never something for the caller
/// to discover later.
pub fn load_source(path: &str, default_target: Option<&'static Target>) -> Result<Program, String> {
    let p = load(path, default_target)?;
    require_source(path, &p)?;
    schedra_ir::validate::validate(&p).map_err(|e| e.at(path).to_string())?;
    Ok(p)
}

/// `Ok` for a source-form program; for a machine-form one, the one-line
/// bad-input message saying a source was expected.
pub fn require_source(path: &str, p: &Program) -> Result<(), String> {
    match p.form {
        schedra_ir::Form::Source => Ok(()),
        schedra_ir::Form::Machine => Err(format!("{path}:1:1: expected a source-form program, found `form machine`")),
    }
}

/// Resolve `--target`, read and parse `path` (either form), and validate it
/// when it is a source-form program: what `fmt` and `run` accept.
pub fn load_checked(path: &str, target: Option<&str>) -> Result<Program, String> {
    let default = target_arg(target)?;
    let p = load(path, default)?;
    if p.form == schedra_ir::Form::Source {
        schedra_ir::validate::validate(&p).map_err(|e| e.at(path).to_string())?;
    }
    Ok(p)
}

/// `--stage` and `--entry` for commands that take shaders (cli.md "Real shaders").
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ShaderArgs {
    /// The shader's stage (`vertex`, `fragment`, `compute`): for `.glsl`
    /// files, or to choose among entry points.
    #[arg(long)]
    pub stage: Option<String>,
    /// The entry point of a shader with several.
    #[arg(long)]
    pub entry: Option<String>,
}

/// Whether `path` is a shader to lower (by extension) rather than the text format.
pub fn is_shader(path: &str) -> bool {
    schedra_frontend::is_shader_path(path)
}

/// Lower the shader at `path` for `target`: the validated source-form
/// program, parsed back from its printed text, and that text.
pub fn load_shader(path: &str, target: Option<&'static Target>, args: &ShaderArgs) -> Result<(Program, String), String> {
    let Some(target) = target else { return Err(format!("{path}:1:1: a shader needs `--target`")) };
    let stage = match args.stage.as_deref() {
        None => None,
        Some("vertex") => Some(schedra_ir::Stage::Vertex),
        Some("fragment") => Some(schedra_ir::Stage::Fragment),
        Some("compute") => Some(schedra_ir::Stage::Compute),
        Some(other) => return Err(format!("unknown stage `{other}` (known: vertex, fragment, compute)")),
    };
    let bytes = read(path)?;
    let p = schedra_frontend::lower_file(path, &bytes, target, stage, args.entry.as_deref()).map_err(|e| e.with_path(path))?;
    let text = schedra_ir::print::print(&p);
    let lowered = format!("{path} (lowered)");
    let back = schedra_ir::parse::parse(text.as_bytes(), Some(target)).map_err(|e| e.at(&lowered).to_string())?;
    schedra_ir::validate::validate(&back).map_err(|e| e.at(&lowered).to_string())?;
    Ok((back, text))
}

/// A source-form program from `path`: a shader (by extension) lowered for
/// `target`, or a text-format file parsed and validated.
pub fn load_source_or_shader(path: &str, target: Option<&'static Target>, args: &ShaderArgs) -> Result<Program, String> {
    if is_shader(path) {
        return load_shader(path, target, args).map(|(p, _)| p);
    }
    load_source(path, target)
}
