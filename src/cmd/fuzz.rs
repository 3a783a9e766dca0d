//! `schedra fuzz [--target T|all] [--time 30s|8h] [--seed S] [--jobs N]
//! [--out DIR] [--inject FAULT] [--seeds DIR] [--json]`: generate valid
//! programs (and, with `--seeds`, mutate the programs of DIR: real shaders
//! lowered by the front end), compile, verify and run them until the time
//! is spent (Ctrl-C ends it cleanly),
//! writing each new finding once to `--out` (see
//! `schedra_fuzz::campaign`). `--decode ARTIFACT` instead turns a libFuzzer
//! artifact of the cargo-fuzz targets into the `.ir` program it stands for
//! and prints it. `--merge DIR... --out OUT` folds the work directories of
//! several campaigns into OUT (one directory per signature, the smallest
//! reproducer of each; see `schedra_fuzz::campaign::merge`).
//!
//! Status: 0 when the campaign finished (whatever it found); 2 for bad
//! usage or an unusable work directory.

use super::out;
use schedra_compiler::Fault;
use schedra_fuzz::campaign::{self, CampaignOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `schedra fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// Target to fuzz (`v3d71`, `gen8`, `r600`, `kepler`, `lima-gp`) or
    /// `all` (default: all, or the injected fault's target).
    #[arg(long)]
    pub target: Option<String>,
    /// How long to run: `30s`, `10m`, `8h` or plain seconds.
    #[arg(long, default_value = "30s")]
    pub time: String,
    /// Campaign seed: the same seed generates the same cases.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads, 1 to 4 × the cores (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Work directory for findings; existing findings there are kept and
    /// not reported again.
    #[arg(long, default_value = "fuzz-out")]
    pub out: PathBuf,
    /// Switch on one of the compiler's documented faults.
    #[arg(long)]
    pub inject: Option<String>,
    /// End with one JSON object on standard output.
    #[arg(long)]
    pub json: bool,
    /// Do not reduce findings (no min.ir).
    #[arg(long)]
    pub no_reduce: bool,
    /// Time limit in milliseconds for each verification (the output and every soundness mutant); running out makes that verdict unknown.
    #[arg(long, default_value_t = 2000)]
    pub timeout_ms: u64,
    /// Write seed inputs for the cargo-fuzz targets into `DIR/<target>/`
    /// (generated cases, and every text under corpus/, the spec examples in
    /// corpus/spec included, for parse_roundtrip), and exit.
    #[arg(long, value_name = "DIR")]
    pub write_corpus: Option<PathBuf>,
    /// Print the program a libFuzzer artifact stands for, and exit.
    #[arg(long, value_name = "ARTIFACT")]
    pub decode: Option<PathBuf>,
    /// How long generating, compiling or parsing one case may take (running
    /// twice as long; verifying 60 times as long, at least 60s) before the
    /// case is a `timeout` finding and its thread is replaced.
    #[arg(long, default_value = "1s")]
    pub stage_timeout: String,
    /// Fold these campaigns' work directories into `--out` (deduplicated by
    /// signature, keeping the smallest reproducer of each), and exit.
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub merge: Vec<PathBuf>,
    /// Start every other case from a program of DIR, mutated: its shaders
    /// (`.wgsl .spv .vert .frag .comp`) lowered for each fuzzed target that
    /// runs them, and its `.ir` source programs.
    #[arg(long, value_name = "DIR")]
    pub seeds: Option<PathBuf>,
    /// Internal: the child process of a hang reduction ("STAGE OPTIONS":
    /// compile or verify the programs read from standard input).
    #[arg(long, hide = true, value_name = "STAGE OPTIONS")]
    pub serve_hang: Option<String>,
}

/// Parse `500ms`, `30s`, `10m`, `8h`, `2d` or plain seconds.
pub fn parse_time(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit() && *c != '.') {
        Some((i, _)) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num.parse().ok()?;
    let mult = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    };
    // `try_from`: a time too long for a Duration is a usage error, not a panic.
    Duration::try_from_secs_f64(n * mult).ok()
}

fn usage(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    2
}

/// Run the subcommand; returns the exit status.
pub fn main(args: Args) -> i32 {
    if let Some(path) = &args.decode {
        return decode(path);
    }
    if let Some(dir) = &args.write_corpus {
        return write_corpus(dir);
    }
    if let Some(spec) = &args.serve_hang {
        return serve_hang(spec, args.timeout_ms);
    }
    if !args.merge.is_empty() {
        return merge(&args.merge, &args.out, args.json);
    }
    let opts = match campaign_options(&args) {
        Ok(o) => o,
        Err(msg) => return usage(&msg),
    };
    let summary = match campaign::run(opts) {
        Ok(s) => s,
        Err(e) => return usage(&e.to_string()),
    };
    let written = if args.json { out::line(&summary.to_json()) } else { out::text(&summary_text(&summary)) };
    out::finish(written, 0)
}

/// `--write-corpus DIR`: seed inputs for the cargo-fuzz targets.
fn write_corpus(dir: &Path) -> i32 {
    match schedra_fuzz::entry::write_corpus(dir, &[PathBuf::from("corpus")], 64) {
        Ok(n) => {
            eprintln!("wrote {n} seed inputs under {}", dir.display());
            0
        }
        Err(e) => usage(&format!("{}: {e}", dir.display())),
    }
}

/// The campaign the flags describe; `Err` is the usage message for a bad
/// `--time`, `--inject` or `--target`.
fn campaign_options(args: &Args) -> Result<CampaignOptions, String> {
    let time = parse_time(&args.time).ok_or_else(|| format!("--time {}: expected 30s, 10m, 8h or seconds", args.time))?;
    let inject = match args.inject.as_deref() {
        None => None,
        Some(n) => Some(Fault::from_name(n).ok_or_else(|| {
            let names: Vec<&str> = Fault::every().map(|f| f.name()).collect();
            format!("--inject {n}: unknown fault; known: {}", names.join(", "))
        })?),
    };
    let targets = match (args.target.as_deref(), inject.and_then(|f| f.target())) {
        (Some("all"), _) | (None, None) => schedra_ir::target::generated().to_vec(),
        (None, Some(t)) | (Some(t), _) => vec![schedra_ir::target::by_name(t).ok_or_else(|| format!("--target {t}: unknown target"))?],
    };
    let jobs = jobs(args.jobs, cores())?;
    let stage = parse_time(&args.stage_timeout)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("--stage-timeout {}: expected a positive time such as 1s or 500ms", args.stage_timeout))?;
    let seeds = match &args.seeds {
        Some(dir) => seed_programs(dir, &targets)?,
        None => Vec::new(),
    };
    Ok(CampaignOptions {
        seeds,
        targets,
        time,
        seed: args.seed,
        jobs,
        out: args.out.clone(),
        inject,
        progress: true,
        terminal: std::io::stderr().is_terminal(),
        reduce: !args.no_reduce,
        timeout_ms: args.timeout_ms,
        deadlines: schedra_fuzz::phase::Deadlines::with_stage(stage),
        exe: std::env::current_exe().ok(),
    })
}

/// `--seeds DIR`: every shader of DIR lowered for each of `targets` that
/// runs it (a shader a target cannot take is left out for that target),
/// and every `.ir` source program of DIR for a fuzzed target. `Err` when
/// DIR cannot be read, holds an unusable `.ir` file, or gives no seed.
fn seed_programs(dir: &Path, targets: &[&'static schedra_ir::Target]) -> Result<Vec<schedra_ir::Program>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("--seeds {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    paths.sort();
    let mut seeds = Vec::new();
    let mut refused = 0usize;
    for path in &paths {
        let name = path.to_string_lossy().to_string();
        if schedra_frontend::is_shader_path(&name) {
            let bytes = std::fs::read(path).map_err(|e| format!("{name}:1:1: cannot read file: {e}"))?;
            for &t in targets {
                match schedra_frontend::lower_file(&name, &bytes, t, None, None) {
                    Ok(p) if schedra_ir::validate::validate(&p).is_ok() => seeds.push(p),
                    _ => refused += 1,
                }
            }
        } else if path.extension().is_some_and(|x| x == "ir") {
            let p = super::input::load_source(&name, None)?;
            if targets.iter().any(|t| std::ptr::eq(*t, p.target)) {
                seeds.push(p);
            }
        }
    }
    if seeds.is_empty() {
        return Err(format!("--seeds {}: no shader or source program there lowers for the fuzzed targets", dir.display()));
    }
    eprintln!("fuzz: {} seed programs from {} ({refused} shader and target pairs not lowered)", seeds.len(), dir.display());
    Ok(seeds)
}

/// `--serve-hang "STAGE OPTIONS"`: the child of a hang reduction
/// (`schedra_fuzz::reduce::hang`).
fn serve_hang(spec: &str, timeout_ms: u64) -> i32 {
    use schedra_fuzz::reduce::interesting::Check;
    use schedra_fuzz::phase::Phase;
    let (stage, line) = spec.split_once(' ').unwrap_or((spec, ""));
    let stage = match stage {
        "compile" => Phase::Compile,
        "verify" => Phase::Verify,
        s => return usage(&format!("--serve-hang: unknown stage {s}")),
    };
    let options = match campaign::parse_options_line(line) {
        Ok(o) => o,
        Err(e) => return usage(&format!("--serve-hang: {e}")),
    };
    let check = Check { options, verify: schedra_verify::VerifyOptions { timeout_ms }, ..Check::default() };
    schedra_fuzz::reduce::hang::die_with_parent();
    schedra_fuzz::oracle::install_panic_hook();
    let stdin = std::io::stdin();
    let r = schedra_fuzz::reduce::hang::serve(stage, &check, &mut stdin.lock(), &mut std::io::stdout().lock());
    i32::from(r.is_err())
}

/// `--merge DIR... --out OUT`.
fn merge(dirs: &[PathBuf], out: &Path, json: bool) -> i32 {
    match campaign::merge::merge(dirs, out) {
        Ok(r) => {
            let text = if json {
                serde_json::to_string(&r).unwrap_or_default()
            } else {
                format!("merged {} finding directories into {}: {} signatures, {} copied", r.read, out.display(), r.signatures, r.copied)
            };
            out::finish(out::line(&text), 0)
        }
        Err(e) => usage(&e.to_string()),
    }
}

/// The machine's cores (1 when the system cannot say).
fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Most workers per core `--jobs` accepts: more only share the same cores
/// (each worker holds its own solver context and memory).
const JOBS_PER_CORE: usize = 4;

/// The worker count for `--jobs` on a machine with `cores` cores: all cores
/// by default; `Err` (a usage message) for 0 or more than
/// [`JOBS_PER_CORE`] × `cores`.
fn jobs(asked: Option<usize>, cores: usize) -> Result<usize, String> {
    let max = cores.max(1).saturating_mul(JOBS_PER_CORE);
    match asked {
        None => Ok(cores.max(1)),
        Some(0) => Err("--jobs 0: expected at least one worker".to_string()),
        Some(n) if n > max => Err(format!("--jobs {n}: at most {max} workers ({JOBS_PER_CORE} × the {cores} cores of this machine)")),
        Some(n) => Ok(n),
    }
}

/// The human summary: totals, features, one line per new finding.
fn summary_text(s: &campaign::Summary) -> String {
    let stop = if s.interrupted { " (interrupted)" } else { "" };
    let mut t = format!("fuzz: {} execs in {:.1}s ({:.0}/s){stop}, {} new findings, {} already known\n", s.execs, s.time_s, s.execs_per_sec, s.findings.len(), s.resumed);
    t += &format!("features: {}\n", s.features.join(" "));
    for f in &s.findings {
        t += &format!("  {} [{} instructions, after {:.1}s] {}\n", f.signature, f.minimized_instructions, f.found_s, f.dir);
    }
    if !s.findings.is_empty() {
        t += &format!("root causes: {} (of {} signatures)\n", s.distinct_root_causes, s.distinct_signatures);
        for g in &s.root_causes {
            let min = g.minimized_instructions.map(|n| format!(", reduced to {n} instructions")).unwrap_or_default();
            t += &format!("  {}: {} signatures, {} cases{min} {}\n", g.cause, g.signatures.len(), g.cases, g.dir);
        }
    }
    if let Some(w) = &s.first_finding_window {
        t += &format!("execs around the first finding: {} in the {:.1}s before, {} in the {:.1}s after\n", w.execs_before, w.before_s, w.execs_after, w.after_s);
    }
    if s.stalled > 0 {
        t += &format!("stalled: {} threads abandoned past a stage deadline\n", s.stalled);
    }
    t
}

/// `--decode`: print the source program of a cargo-fuzz artifact.
fn decode(path: &Path) -> i32 {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return usage(&format!("{}: {e}", path.display())),
    };
    match schedra_fuzz::entry::decode(&bytes) {
        Some(text) => out::finish(out::text(&text), 0),
        None => usage(&format!("{}: not an input of schedra's fuzz targets", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_time("8h"), Some(Duration::from_secs(8 * 3600)));
        assert_eq!(parse_time("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_time("1.5m"), Some(Duration::from_secs(90)));
        assert_eq!(parse_time("soon"), None);
        assert_eq!(parse_time("3x"), None);
        assert_eq!(parse_time("99999999999999999999999h"), None);
        assert_eq!(parse_time("0s"), Some(Duration::ZERO));
        assert_eq!(parse_time("500ms"), Some(Duration::from_millis(500)));
    }

    #[test]
    fn jobs_are_bounded() {
        assert_eq!(jobs(None, 2), Ok(2));
        assert_eq!(jobs(None, 0), Ok(1));
        assert_eq!(jobs(Some(1), 2), Ok(1));
        assert_eq!(jobs(Some(8), 2), Ok(8));
        assert!(jobs(Some(9), 2).is_err_and(|m| m.starts_with("--jobs 9: at most 8 workers")));
        assert!(jobs(Some(0), 2).is_err_and(|m| m.contains("at least one")));
        assert!(jobs(Some(usize::MAX), usize::MAX).is_ok());
    }
}
