//! `schedra run FILE [--seed S] [--fuel N] [--json] [--target T]`: interpret
//! a program of either form on the outside words drawn from `--seed` and
//! print its effects, one per line, `<channel> 0x%08x...`, grouped by
//! channel in channel-name order, program order within a channel (cli.md).
//! A source and a correct machine program print the same lines for the same
//! seed.
//!
//! Status: 0 when the program ran to `end`; 1 when it ran out of fuel or hit
//! a runtime error (a hazard, a broken hardware rule of targets.md, an
//! unknown opcode, an op that cannot execute),
//! with one line on standard error; 2 for bad input (one line
//! `path:line:col: message`). `--json` prints one object:
//! `{"effects":[{"channel":..,"words":[..]}],"cycles":N,"stalls":N,"executed":N}`.

use super::{input, out};
use schedra_fuzz::interp::{self, Outcome};

/// Arguments of `schedra run`.
#[derive(clap::Args)]
pub struct Args {
    /// The program to run, either form (`-` for standard input).
    pub file: String,
    /// Seed of the outside inputs (uniforms, varyings, textures, input registers).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stop with status 1 after more than this many instructions.
    #[arg(long, default_value_t = interp::DEFAULT_FUEL)]
    pub fuel: u64,
    /// Print one JSON object instead of effect lines.
    #[arg(long)]
    pub json: bool,
    /// Target for a file without a `target` line.
    #[arg(long)]
    pub target: Option<String>,
}

/// Run the subcommand; returns the exit status (0 ran, 1 fuel or runtime
/// error, 2 bad input).
pub fn main(args: Args) -> i32 {
    let p = match input::load_checked(&args.file, args.target.as_deref()) {
        Ok(p) => p,
        Err(e) => return input::bad(e),
    };
    match interp::run(&p, args.seed, args.fuel) {
        Ok(o) if args.json => out::finish(out::line(&json(&o).to_string()), 0),
        Ok(o) => out::finish(out::text(&o.effects.to_string()), 0),
        Err(e) => {
            eprintln!("error: {}: {e}", args.file);
            1
        }
    }
}

/// The `--json` object of a finished run.
fn json(o: &Outcome) -> serde_json::Value {
    let effects: Vec<serde_json::Value> =
        o.effects.iter().map(|(channel, words)| serde_json::json!({ "channel": channel, "words": words })).collect();
    serde_json::json!({
        "effects": effects,
        "cycles": o.cycles,
        "stalls": o.stalls,
        "executed": o.executed,
    })
}
