//! `schedra compile SRC.ir [-o OUT.s] [--target T] [--sched topdown|bottomup]
//! [--ra split|graph] [--stats] [--inject FAULT|list]`: compile a source-form
//! shader and print the machine program in canonical text (stdout or `-o`).
//!
//! Status: 0 compiled; 1 the compiler could not handle a valid program (one
//! line saying why) or the output file could not be written; 2 bad input or
//! usage (`path:line:col: message`). `--stats` writes shader-db's line to
//! standard error. `--inject list` prints every fault with its target and
//! history and exits 0.

use super::input;
use schedra_compiler::{compile, Fault, Options, Ra, Sched};

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
    /// Pre-RA scheduling direction.
    #[arg(long, value_parser = ["topdown", "bottomup"], default_value = "topdown")]
    pub sched: String,
    /// Register allocation mode.
    #[arg(long, value_parser = ["split", "graph"], default_value = "split")]
    pub ra: String,
    /// Write the shader-db statistics line to standard error.
    #[arg(long)]
    pub stats: bool,
    /// Switch on one named compiler fault (`list` prints them).
    #[arg(long)]
    pub inject: Option<String>,
}

/// One line per fault: name, target, history.
fn fault_list() -> String {
    Fault::all().iter().map(|f| format!("{}\t{}\t{}\n", f.name(), f.target().unwrap_or("any"), f.history())).collect()
}

fn options(args: &Args) -> Result<Options, String> {
    let sched = if args.sched == "bottomup" { Sched::BottomUp } else { Sched::TopDown };
    let ra = if args.ra == "graph" { Ra::Graph } else { Ra::Split };
    let inject = match args.inject.as_deref() {
        None => None,
        Some(n) => Some(Fault::from_name(n).ok_or_else(|| {
            let names: Vec<_> = Fault::all().iter().map(|f| f.name()).collect();
            format!("unknown fault `{n}` (known: {})", names.join(", "))
        })?),
    };
    Ok(Options { sched, ra, inject })
}

/// Run the subcommand; returns the exit status.
pub fn main(args: Args) -> i32 {
    if args.inject.as_deref() == Some("list") {
        print!("{}", fault_list());
        return 0;
    }
    let Some(file) = args.file.as_deref() else { return input::bad("compile: missing SRC.ir (or `--inject list`)") };
    let opts = match options(&args) {
        Ok(o) => o,
        Err(e) => return input::bad(e),
    };
    let default = match input::target_arg(args.target.as_deref()) {
        Ok(t) => t,
        Err(e) => return input::bad(e),
    };
    let src = match input::load_source(file, default) {
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
        None => {
            print!("{text}");
            0
        }
    }
}
