//! `schedra compile SRC.ir [-o OUT.s] [--target T] [--sched topdown|bottomup]
//! [--ra split|graph] [--stats] [--inject FAULT|list]`: compile a source-form
//! shader and print the machine program in canonical text (stdout or `-o`).
//!
//! Status: 0 compiled; 1 the compiler could not handle a valid program (one
//! line saying why) or the output file could not be written; 2 bad input or
//! usage (`path:line:col: message`). `--stats` writes shader-db's line to
//! standard error. `--inject list` prints every fault with its target and
//! history and exits 0.

use super::{input, out};
use schedra_compiler::{compile, Fault};

/// Arguments of `schedra compile`.
#[derive(clap::Args)]
pub struct Args {
    /// The source-form program (`-` for standard input).
    pub file: Option<String>,
    /// Write the machine program here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<String>,
    /// Target for a file without a `target` line.
    #[arg(long)]
    pub target: Option<String>,
    /// `--sched`, `--ra`, `--inject` (`--inject list` prints the faults).
    #[command(flatten)]
    pub compiler: super::flags::CompilerFlags,
    /// Write the shader-db statistics line to standard error.
    #[arg(long)]
    pub stats: bool,
    /// `--stage`, `--entry` for shader files.
    #[command(flatten)]
    pub shader: input::ShaderArgs,
}

/// One line per fault: name, target, history, and `hangs` for the faults
/// that make the compiler loop forever ([`Fault::hangs`]).
fn fault_list() -> String {
    let hangs = |f: Fault| if Fault::hangs().contains(&f) { "\thangs" } else { "" };
    Fault::every().map(|f| format!("{}\t{}\t{}{}\n", f.name(), f.target().unwrap_or("any"), f.history(), hangs(f))).collect()
}

/// Run the subcommand; returns the exit status.
pub fn main(args: Args) -> i32 {
    if args.compiler.inject.as_deref() == Some("list") {
        return out::finish(out::text(&fault_list()), 0);
    }
    let Some(file) = args.file.as_deref() else { return input::bad("compile: missing SRC.ir (or `--inject list`)") };
    let opts = match args.compiler.options() {
        Ok(o) => o,
        Err(e) => return input::bad(e),
    };
    let default = match input::target_arg(args.target.as_deref()) {
        Ok(t) => t,
        Err(e) => return input::bad(e),
    };
    let src = match input::load_source_or_shader(file, default, &args.shader) {
        Ok(p) => p,
        Err(e) => return input::bad(e),
    };
    let compiled = match compile(&src, &opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return 1;
        }
    };
    let text = schedra_ir::print::print(&compiled.program);
    if args.stats {
        let name = src.name.clone().unwrap_or_else(|| file.to_string());
        eprintln!("{}", compiled.stats.shader_db_line(&name, src.target.name));
    }
    match &args.output {
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {path}: cannot write: {e}");
                1
            }
        },
        None => out::finish(out::text(&text), 0),
    }
}
