//! `schedra reduce CASE.ir [--target T] [--test 'CMD {}'] [-o MIN.ir]
//! [--inject FAULT] [--sched S] [--ra R] [--stress-regalloc N]`: shrink a failing source program
//! while it keeps failing the same way (or while `--test` exits 0), print the
//! reduced program (standard output, or `-o`) and a unified diff against the
//! original plus a summary on standard error.
//!
//! Bad input (unreadable, unparsable, invalid, or not failing at the start)
//! is one line and status 2; the reduction is bounded by `--max-tests`, so
//! the command always ends.

use super::{input, out};
use schedra_fuzz::reduce::interesting::{Check, Failure, Oracle, SameFailure};
use schedra_fuzz::reduce::{self, command::CommandTest, report, ReduceError, ReduceOptions};
use schedra_verify::VerifyOptions;
use schedra_ir::print::print;
use std::io::IsTerminal;
use std::time::Duration;

/// Arguments of `schedra reduce`.
#[derive(clap::Args)]
pub struct Args {
    /// The failing source program (`-` for standard input).
    pub case: String,
    /// Target for a file without a `target` line.
    #[arg(long)]
    pub target: Option<String>,
    /// Interestingness command: `{}` is replaced by the candidate's path;
    /// exit status 0 means "still interesting" (instead of "fails the same way").
    #[arg(long, value_name = "CMD {}")]
    pub test: Option<String>,
    /// Write the reduced program here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "MIN.ir")]
    pub output: Option<String>,
    /// The compiler options (`--sched`, `--ra`, `--inject`,
    /// `--stress-regalloc`) used when checking for the same failure.
    #[command(flatten)]
    pub compiler: super::flags::CompilerFlags,
    /// What decides "fails the same way": the verifier, running source and
    /// output on seeds, or both.
    #[arg(long, value_parser = ["verify", "run", "both"], default_value = "verify")]
    pub oracle: String,
    /// Most interestingness tests to run.
    #[arg(long, default_value_t = 20_000)]
    pub max_tests: usize,
    /// Kill a `--test` command after this many milliseconds (counts as not
    /// interesting); also the verifier's per-query solver timeout.
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Do not print the diff.
    #[arg(long)]
    pub no_diff: bool,
}

/// Run the subcommand; returns the exit status (0 reduced, 2 bad input).
pub fn main(args: Args) -> i32 {
    let default = match input::target_arg(args.target.as_deref()) {
        Ok(t) => t,
        Err(e) => return input::bad(e),
    };
    let prog = match input::load_source(&args.case, default) {
        Ok(p) => p,
        Err(e) => return input::bad(e),
    };
    let mut pred = match predicate(&args, &prog) {
        Ok(p) => p,
        Err(e) => return input::bad(e),
    };
    let opts = ReduceOptions { max_tests: args.max_tests.max(1), ..ReduceOptions::default() };
    let mut display = report::Display::new(std::io::stderr().is_terminal(), opts.max_tests);
    let result = reduce::reduce_with_progress(&prog, &mut *pred, &opts, &mut |p| display.update(p));
    display.finish();
    let reduced = match result {
        Ok(r) => r,
        Err(ReduceError::NotInteresting) => return input::bad(format!("{}: {}", args.case, not_interesting(&args))),
        Err(e) => return input::bad(format!("{}: {e}", args.case)),
    };
    let text = print(&reduced.program);
    if let Err(e) = write_output(args.output.as_deref(), &text) {
        return input::bad(e);
    }
    if !args.no_diff {
        let out_name = args.output.as_deref().unwrap_or("reduced");
        eprint!("{}", report::unified_diff(&print(&prog), &text, &args.case, out_name));
    }
    let more = if reduced.truncated { " (stopped at a limit)" } else { "" };
    eprintln!("{}{more}", report::summary(reduced.original_instructions, reduced.final_instructions, reduced.tests_run));
    0
}

/// An interestingness predicate.
type Predicate = Box<dyn FnMut(&schedra_ir::Program) -> bool>;

/// The predicate: the `--test` command, or "fails the same way".
fn predicate(args: &Args, prog: &schedra_ir::Program) -> Result<Predicate, String> {
    if let Some(cmd) = &args.test {
        let t = CommandTest::new(cmd, Duration::from_millis(args.timeout_ms.max(1))).map_err(|e| format!("--test: {e}"))?;
        return Ok(Box::new(move |p| t.is_interesting(p)));
    }
    let check = check(args)?;
    let Some(same) = SameFailure::of(prog, &check) else {
        return Err(format!("{}: {}", args.case, not_interesting(args)));
    };
    let own = if same.requires_own() { " (and proven without the fault)" } else { "" };
    eprintln!("reduce: keeping the failure {}{own}", one_line(&same.expected));
    Ok(Box::new(move |p| same.is_interesting(p)))
}

/// The first line of a failure, for the user.
fn one_line(f: &Failure) -> String {
    let first = f.message.lines().next().unwrap_or("");
    format!("{} [{}]: {first}", f.kind, f.rule)
}

/// Compiler, verifier and oracle settings from the arguments.
fn check(args: &Args) -> Result<Check, String> {
    let options = args.compiler.options()?;
    let oracle = match args.oracle.as_str() {
        "run" => Oracle::Run,
        "both" => Oracle::Both,
        _ => Oracle::Verify,
    };
    let verify = VerifyOptions { timeout_ms: args.timeout_ms.max(1) };
    Ok(Check { options, verify, oracle, ..Check::default() })
}

/// Why the input was rejected, in the user's terms.
fn not_interesting(args: &Args) -> String {
    match &args.test {
        Some(cmd) => format!("the test command does not succeed on the input (`{cmd}` must exit 0 on it)"),
        None => match &args.compiler.inject {
            Some(f) => format!("the program does not fail (it compiles with --inject {f} and the oracle finds nothing), so there is nothing to reduce"),
            None => "the program does not fail (it compiles and the oracle finds nothing), so there is nothing to reduce".to_string(),
        },
    }
}

/// Write `text` to `path`, or to standard output when `path` is `None`.
fn write_output(path: Option<&str>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{p}:1:1: cannot write file: {e}")),
        None => out::text(text).map_err(|e| format!("error: cannot write standard output: {e}")),
    }
}
