//! `schedra fmt FILE`: parse a program (either form; `-` = standard input),
//! validate it when it is in the source form, and print it in canonical
//! form. Bad input is one line `path:line:col: message` and status 2.
//! `fmt` of its own output is the same text.

use super::{input, out};

/// Arguments of `schedra fmt`.
#[derive(clap::Args)]
pub struct Args {
    /// The program to format (`-` for standard input).
    pub file: String,
    /// Target for a file without a `target` line.
    #[arg(long)]
    pub target: Option<String>,
}

/// Run the subcommand; returns the exit status (0 printed, 2 bad input).
pub fn main(args: Args) -> i32 {
    let p = match input::load_checked(&args.file, args.target.as_deref()) {
        Ok(p) => p,
        Err(e) => return input::bad(e),
    };
    out::finish(out::text(&schedra_ir::print::print(&p)), 0)
}
