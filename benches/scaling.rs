//! Compile + verify scaling on generated straight-line v3d71 shaders of 1k
//! and 10k instructions (the goal: 10k in under 1 s, time(10k)/time(1k) ≤ 12).
//!
//! The programs are built here as source text (no files) by a seeded
//! xorshift: a fragment-shader-like mix of uniform and varying loads,
//! fadd/fmul chains that each extend the previous value with a recent one,
//! SFU ops (recip, rsqrt, exp2, log2), integer ops with small immediates and
//! tile-buffer writes, with the payload W (rf1) read now and then. Operands
//! are at most 12 values old, so register pressure stays moderate and the
//! time measured is the scaling of the algorithms, not of spilling.
//!
//! For each size it prints the best of several runs (wall time, std::time)
//! of `schedra_compiler::compile` and `schedra_verify::verify`, their sum,
//! the verifier's obligation split, a one-run breakdown by phase (pre-RA
//! scheduling, allocation, bundling; verifier structure/slot/hazard rules and
//! the symbolic comparison), and at the end the 10k/1k ratios and whether
//! the goals are met. Exits with status 1 when a program fails to compile
//! or is not proven, so a broken pipeline cannot produce a timing.
//!
//! Run: `cargo bench --bench scaling` (SCHEDRA_SCALING_SIZES=1000,10000,...
//! to choose other sizes; SCHEDRA_SCALING_RUNS=N for the number of runs;
//! SCHEDRA_SCALING_NO_PHASES=1 skips the breakdown, so that under
//! `valgrind --tool=callgrind` every function runs once per size and its
//! inclusive instruction count is the phase's cost).

use schedra_compiler::pipeline::{allocate, bundle, schedule, Source};
use schedra_compiler::{compile, Context, Options};
use schedra_verify::{verify, Verdict, VerifyOptions};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Deterministic xorshift64 stream.
struct Rng(u64);

impl Rng {
    fn below(&mut self, m: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % m.max(1) as u64) as usize
    }
}

/// Source text of a straight-line v3d71 fragment shader of exactly `n`
/// instructions (n ≥ 2), the last of which writes the last value out.
fn shader(n: usize, seed: u64) -> String {
    let mut r = Rng(seed | 1);
    let mut t = format!("shader scale{n}\ntarget v3d71\nstage fragment\ninput %w = $rf1\n\nb0:\n");
    let mut defined = 0usize;
    let mut emitted = 0usize;
    while emitted + 1 < n {
        let last = defined.saturating_sub(1);
        let recent = |r: &mut Rng| if defined == 0 { "%w".to_string() } else { format!("%v{}", defined - 1 - r.below(defined.min(12))) };
        let line = match if defined < 2 { 0 } else { r.below(100) } {
            0..=14 => format!("%v{defined} = ldunif {}", r.below(64)),
            15..=29 => format!("%v{defined} = ldvary {}", r.below(16)),
            30..=49 => format!("%v{defined} = fmul %v{last}, {}", recent(&mut r)),
            50..=64 => format!("%v{defined} = fadd %v{last}, {}", recent(&mut r)),
            65..=69 => format!("%v{defined} = fmul {}, 0.5", recent(&mut r)),
            70..=73 => format!("%v{defined} = fmax {}, {}", recent(&mut r), recent(&mut r)),
            74..=76 => format!("%v{defined} = fmul %v{last}, %w"),
            77..=84 => {
                let sfu = ["recip", "rsqrt", "exp2", "log2"][r.below(4)];
                format!("%v{defined} = {sfu} {}", recent(&mut r))
            }
            85..=89 => format!("%v{defined} = add {}, {}", recent(&mut r), r.below(16)),
            _ => format!("tlbw {}", recent(&mut r)),
        };
        if !line.starts_with("tlbw") {
            defined += 1;
        }
        let _ = writeln!(t, "    {line}");
        emitted += 1;
    }
    let _ = writeln!(t, "    tlbw %v{}\n    end", defined.saturating_sub(1));
    t
}

/// Best wall time of `runs` calls of `f` (at least one), and the last result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let (mut best, mut out) = once(&mut f);
    for _ in 1..runs.max(1) {
        let (t, v) = once(&mut f);
        best = best.min(t);
        out = v;
    }
    (best, out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Time of one call of `f`.
fn once<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

/// One size's measurements.
struct Row {
    n: usize,
    compile: Duration,
    verify: Duration,
}

/// Measure one size; `Err` says why the pipeline failed.
fn measure(n: usize, runs: usize) -> Result<Row, String> {
    let text = shader(n, 0x5eed_0000 + n as u64);
    let (parse_t, parsed) = once(|| schedra_ir::parse::parse(text.as_bytes(), None));
    let src = parsed.map_err(|e| format!("generated program does not parse: {e}"))?;
    let opts = Options::default();
    let (compile_t, compiled) = best(runs, || compile(&src, &opts));
    let compiled = compiled.map_err(|e| format!("compile failed: {e}"))?;
    let vopts = VerifyOptions::default();
    let (verify_t, report) = best(runs, || verify(&src, &compiled.program, &vopts));
    let o = &report.obligations;
    println!(
        "{n:>6} insts  compile {:>9.1} ms  verify {:>9.1} ms  total {:>9.1} ms  ({} bundles, {} spills; parse {:.1} ms)",
        ms(compile_t),
        ms(verify_t),
        ms(compile_t + verify_t),
        compiled.stats.instructions,
        compiled.stats.spills,
        ms(parse_t)
    );
    println!("{n:>6} insts  obligations {} = {} syntactic + {} smt + {} unknown; verdict {:?}", o.total, o.syntactic, o.smt, o.unknown, report.verdict);
    if report.verdict != Verdict::Proven {
        let first = report.violations.first().map(|v| format!("{:?} at {} bundle {}: {}", v.kind, v.block, v.bundle, v.message));
        return Err(format!("not proven: {}", first.unwrap_or_default()));
    }
    if std::env::var_os("SCHEDRA_SCALING_NO_PHASES").is_none() {
        phases(n, &src, &compiled.program, &opts);
    }
    Ok(Row { n, compile: compile_t, verify: verify_t })
}

/// One-run breakdown of where the time goes, phase by phase.
fn phases(n: usize, src: &schedra_ir::Program, machine: &schedra_ir::Program, opts: &Options) {
    let Ok(source) = Source::new(src) else { return };
    let mut ctx = Context::new();
    let (pre_t, pre) = once(|| schedule(&mut ctx, &source, opts));
    let (ra_t, alloc) = once(|| allocate(&source, &pre, opts));
    let bundle_t = match alloc {
        Ok(a) => once(|| bundle(&mut ctx, &source, a, opts)).0,
        Err(_) => Duration::ZERO,
    };
    let (rules_t, _) = once(|| (schedra_verify::rules::structure(src, machine), schedra_verify::rules::bundles(machine), schedra_verify::rules::hazards(machine)));
    let (cmp_t, _) = once(|| schedra_verify::compare::check(src, machine, VerifyOptions::default().timeout_ms));
    println!(
        "{n:>6} insts  phases: sched_pre {:.1} ms, regalloc {:.1} ms, bundle {:.1} ms | rules {:.1} ms, compare {:.1} ms",
        ms(pre_t),
        ms(ra_t),
        ms(bundle_t),
        ms(rules_t),
        ms(cmp_t)
    );
}

fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(name) {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).filter(|&n| n >= 2).collect(),
        Err(_) => default.to_vec(),
    }
}

fn main() {
    let sizes = env_list("SCHEDRA_SCALING_SIZES", &[1_000, 10_000]);
    let runs = std::env::var("SCHEDRA_SCALING_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(3usize).max(1);
    println!("compile+verify scaling, straight-line v3d71, best of {runs} runs (wall time; shared machine: compare ratios)");
    let mut rows = Vec::new();
    let mut failed = false;
    for &n in &sizes {
        match measure(n, runs) {
            Ok(row) => rows.push(row),
            Err(e) => {
                println!("{n:>6} insts  FAILED: {e}");
                failed = true;
            }
        }
    }
    let (Some(small), Some(large)) = (rows.iter().find(|r| r.n == 1_000), rows.iter().find(|r| r.n == 10_000)) else {
        std::process::exit(i32::from(failed));
    };
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64().max(1e-9);
    let total = ratio(small.compile + small.verify, large.compile + large.verify);
    println!("ratio 10k/1k: compile {:.1}, verify {:.1}, total {total:.1}", ratio(small.compile, large.compile), ratio(small.verify, large.verify));
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let under = large.compile + large.verify < Duration::from_secs(1);
    println!("goal 10k under 1 s: {} ({:.0} ms); goal ratio <= 12: {} ({total:.1})", verdict(under), ms(large.compile + large.verify), verdict(total <= 12.0));
    std::process::exit(i32::from(failed));
}
