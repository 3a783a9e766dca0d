//! `schedra lower SHADER --target T [--stage S] [--entry NAME] [-o OUT.ir]`:
//! lower a shader (WGSL, SPIR-V, GLSL) to the target's source form and print
//! it (cli.md "Real shaders").
//!
//! Status: 0 lowered; 2 bad input or usage: the shader does not parse or
//! validate, or uses what the lowering or the target does not support (one
//! line `path:line:col: message`).

use super::{input, out};

/// Arguments of `schedra lower`.
#[derive(clap::Args)]
pub struct Args {
    /// The shader (`.wgsl .spv .vert .frag .comp .glsl`).
    pub file: String,
    /// The target to lower for.
    #[arg(long)]
    pub target: String,
    /// `--stage`, `--entry`.
    #[command(flatten)]
    pub shader: input::ShaderArgs,
    /// Write the source form here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<String>,
}

/// Run the subcommand; returns the exit status.
pub fn main(args: Args) -> i32 {
    let target = match input::target_arg(Some(&args.target)) {
        Ok(t) => t,
        Err(e) => return input::bad(e),
    };
    let (p, text) = match input::load_shader(&args.file, target, &args.shader) {
        Ok(x) => x,
        Err(e) => return input::bad(e),
    };
    let _ = p;
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
