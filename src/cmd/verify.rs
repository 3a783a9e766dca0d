//! `schedra verify SRC.ir [OUT.s] [--target T] [--json] [--timeout-ms N]
//! [--replay] [--sched S] [--ra R] [--inject FAULT]`:
//! prove that a machine program implements a source program (cli.md).
//!
//! With two files the machine program is verified as given, whoever produced
//! it; with one the source is compiled (`schedra_compiler::compile` with the
//! options of `--sched`, `--ra` and `--inject`) and the result verified. The compiled program is printed
//! and parsed back so that diagnostics point at lines of a real text.
//!
//! Status: 0 proven, 1 violation (or the compiler failed), 2 bad input (a
//! source that does not parse or validate, a machine file that does not
//! parse: one line `path:line:col: message`), 3 unknown (solver timeout).
//! Human output by default (the offending lines of both files); `--json`
//! prints the one JSON object of cli.md.
//!
//! `--replay` feeds each counterexample's input words to both interpreters
//! (`schedra_fuzz::replay`) and shows the first effect that differs: one
//! line per replayed violation after the human report, or a `replay`
//! object in each replayed violation of the JSON. The verdict and the
//! status stay the verifier's.

use super::{input, out};
use schedra_fuzz::replay::{replay_report, Difference, ViolationReplay};
use schedra_ir::{Program, Target};
use schedra_verify::{render_human, verify, Report, VerifyOptions};

/// Arguments of `schedra verify`.
#[derive(clap::Args)]
pub struct Args {
    /// The source-form program (`-` for standard input).
    pub src: String,
    /// The machine-form program; when absent, SRC is compiled and the result verified.
    pub out: Option<String>,
    /// Target for files without a `target` line.
    #[arg(long)]
    pub target: Option<String>,
    /// Print one JSON object instead of the human report.
    #[arg(long)]
    pub json: bool,
    /// Time limit in milliseconds for the whole verification, solver queries included (running out makes the verdict unknown, exit 3; never proven).
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Run both programs on each counterexample's input words and show the first effect that differs.
    #[arg(long)]
    pub replay: bool,
    /// How to compile SRC when no OUT is given.
    #[command(flatten)]
    pub compiler: super::flags::CompilerFlags,
    /// `--stage`, `--entry` for a shader SRC.
    #[command(flatten)]
    pub shader: input::ShaderArgs,
}

/// The text of `path`; bytes that are not UTF-8 are bad input located at
/// the first invalid byte (as the parser reports them), never replaced.
fn read_text(path: &str) -> Result<String, String> {
    let bytes = input::read(path)?;
    String::from_utf8(bytes).map_err(|e| match schedra_ir::lex::utf8(e.as_bytes()) {
        Err(located) => located.at(path).to_string(),
        Ok(_) => format!("{path}:1:1: invalid UTF-8; expected UTF-8 text"), // cannot happen: from_utf8 just failed
    })
}

fn parse(path: &str, text: &str, default: Option<&'static Target>) -> Result<Program, String> {
    schedra_ir::parse::parse(text.as_bytes(), default).map_err(|e| e.at(path).to_string())
}

/// The machine program to verify and its text: the given file, or the
/// compiled source printed and parsed back.
fn machine(args: &Args, src: &Program, default: Option<&'static Target>) -> Result<(String, String, Program), (i32, String)> {
    if let Some(out) = &args.out {
        let text = read_text(out).map_err(|e| (input::BAD_INPUT, e))?;
        let p = parse(out, &text, default.or(Some(src.target))).map_err(|e| (input::BAD_INPUT, e))?;
        return Ok((out.clone(), text, p));
    }
    let opts = args.compiler.options().map_err(|e| (input::BAD_INPUT, e))?;
    let compiled = schedra_compiler::compile(src, &opts)
        .map_err(|e| (1, format!("{}: the compiler failed: {e}", args.src)))?;
    let text = schedra_ir::print::print(&compiled.program);
    let path = format!("{} (compiled)", args.src);
    match parse(&path, &text, Some(src.target)) {
        Ok(p) => Ok((path, text, p)),
        Err(_) => Ok((path, text, compiled.program)),
    }
}

/// Run the subcommand; returns the exit status (0 proven, 1 violation,
/// 2 bad input, 3 unknown).
pub fn main(args: Args) -> i32 {
    let default = match input::target_arg(args.target.as_deref()) {
        Ok(t) => t,
        Err(e) => return input::bad(e),
    };
    if args.src == "-" && args.out.as_deref() == Some("-") {
        return input::bad("verify: `-` (standard input) can stand for one of the two files only");
    }
    let (src, src_text) = if input::is_shader(&args.src) {
        match input::load_shader(&args.src, default, &args.shader) {
            Ok(x) => x,
            Err(e) => return input::bad(e),
        }
    } else {
        let src_text = match read_text(&args.src) {
            Ok(t) => t,
            Err(e) => return input::bad(e),
        };
        match parse(&args.src, &src_text, default) {
            Ok(p) => (p, src_text),
            Err(e) => return input::bad(e),
        }
    };
    if let Err(e) = input::require_source(&args.src, &src) {
        return input::bad(e);
    }
    if let Err(e) = schedra_ir::validate::validate(&src) {
        return input::bad(e.at(&args.src));
    }
    let (mach_path, mach_text, mach) = match machine(&args, &src, default) {
        Ok(m) => m,
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            return code;
        }
    };
    let report = verify(&src, &mach, &VerifyOptions { timeout_ms: args.timeout_ms });
    let replays = if args.replay { replay_report(&src, &mach, &report) } else { Vec::new() };
    let written = if args.json {
        out::line(&json_with_replays(&report, &replays))
    } else {
        let mut text = render_human(&report, &args.src, &src_text, &mach_path, &mach_text);
        if args.replay {
            text.push_str(&replay_lines(&report, &replays));
        }
        out::text(&text)
    };
    out::finish(written, report.exit_status())
}

/// One line per replayed violation: where it is and what the runs showed.
fn replay_lines(report: &Report, replays: &[ViolationReplay]) -> String {
    if replays.is_empty() {
        return "replay: no violation carries a counterexample\n".into();
    }
    let mut out = String::new();
    for r in replays {
        let Some(v) = report.violations.get(r.violation) else { continue };
        let what = match &r.outcome {
            Ok(Some(d)) => format!("replays: {d}"),
            Ok(None) => "does not replay: both programs behave the same on its words".into(),
            Err(e) => format!("does not replay: the source fails on its words: {e}"),
        };
        out.push_str(&format!("replay of {} at {} bundle {} (line {}): {what}\n", v.kind.as_str(), v.block, v.bundle, v.line));
    }
    out
}

/// The JSON object of `verify --json`, each replayed violation with a
/// `replay` object: `replays` (whether the runs differ), `difference` (the
/// first difference in words, or null), and for an effect `channel`,
/// `index`, `source` and `machine` (the words, null for a missing effect).
fn json_with_replays(report: &Report, replays: &[ViolationReplay]) -> String {
    if replays.is_empty() {
        return report.to_json();
    }
    let Ok(mut v) = serde_json::to_value(report) else { return report.to_json() };
    for r in replays {
        let Some(slot) = v.get_mut("violations").and_then(|x| x.get_mut(r.violation)).and_then(|x| x.as_object_mut()) else { continue };
        let mut obj = serde_json::Map::new();
        obj.insert("replays".into(), r.replays().into());
        match &r.outcome {
            Ok(d) => {
                obj.insert("difference".into(), d.as_ref().map(|d| d.to_string()).into());
                if let Some(Difference::Effect { channel, index, source, machine }) = d {
                    obj.insert("channel".into(), channel.clone().into());
                    obj.insert("index".into(), (*index).into());
                    obj.insert("source".into(), source.clone().into());
                    obj.insert("machine".into(), machine.clone().into());
                }
            }
            Err(e) => {
                obj.insert("difference".into(), serde_json::Value::Null);
                obj.insert("error".into(), e.clone().into());
            }
        }
        slot.insert("replay".into(), obj.into());
    }
    serde_json::to_string(&v).unwrap_or_else(|_| report.to_json())
}
