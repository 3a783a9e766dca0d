//! The verifier's false-alarm rate, by replay, and its soundness on
//! mutated compiler output.
//!
//! Bases: every corpus shader (`corpus/*/*.ir`, bugzoo excluded) in the four
//! compiler modes, plus generated programs per target (`schedra_fuzz::gen`,
//! swarm configurations from fixed seeds); a base counts only when it
//! compiles, is proven and behaves like its source on the 8 soundness seeds.
//! Each base gets `SCHEDRA_FA_MUTANTS` (default 8) single mutations from
//! `schedra_fuzz::mutate` (swap bundles, change a source register, drop an
//! op, move an op one bundle earlier, retarget a write). Every mutant is run
//! on `oracle::SOUNDNESS_SEEDS` and verified, and classified:
//!
//! - differs on a seed, proven: **unsound** (must be 0);
//! - rejected, and some counterexample of its violations does not replay
//!   (`schedra_fuzz::replay`: its input words fed to both interpreters make
//!   them behave the same): a **false alarm** (must be 0);
//! - rejected, and every counterexample replays (at least one): a true
//!   alarm, shown by the interpreters;
//! - rejected with no counterexample (rule kinds, timing latencies, effect
//!   counts, values no location holds), split by whether the mutant differs
//!   on the 8 seeds;
//! - proven and the same on the seeds; unknown.
//!
//! The bench exits 1 if any mutant is unsound or a false alarm. The first
//! few are printed (`SCHEDRA_FA_SHOW=N`) with their mutation, violation and
//! replay, and written to `SCHEDRA_FA_OUT=DIR` as `N.src.ir` / `N.out.s`.
//!
//! Run: `cargo bench --bench false_alarms` (SCHEDRA_FA_GENERATED=N generated
//! programs per target, default 40).

use arbitrary::Unstructured;
use schedra_compiler::{compile, Options, Ra, Sched};
use schedra_fuzz::gen::{seed_bytes, GeneratedCase};
use schedra_fuzz::interp::Outcome;
use schedra_fuzz::mutate::{mutate, Mutation};
use schedra_fuzz::oracle::{behaviour_differs, source_outcomes, SOUNDNESS_SEEDS};
use schedra_fuzz::replay::replay_report;
use schedra_ir::Program;
use schedra_verify::{verify, Report, Verdict, VerifyOptions};
use std::collections::BTreeMap;
use std::time::Instant;

/// The class of one mutant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Unsound,
    NotReplayed,
    Replays,
    NoCexDiffers,
    NoCexSame,
    EquivalentProven,
    Unknown,
    InterpPanic,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Unsound => "differs on 8 seeds, PROVEN (unsound)",
            Class::NotReplayed => "rejected, a counterexample does NOT replay (false alarm)",
            Class::Replays => "rejected, every counterexample replays (true alarm)",
            Class::NoCexDiffers => "rejected without a counterexample (rule, timing, effect count), differs on 8 seeds",
            Class::NoCexSame => "rejected without a counterexample (rule, timing, effect count), same on 8 seeds",
            Class::EquivalentProven => "same on 8 seeds, proven",
            Class::Unknown => "verdict unknown",
            Class::InterpPanic => "interpreter panicked (skipped)",
        }
    }
}

/// A proven base case: a source, its compiled output and its outcomes.
struct Base {
    label: String,
    target: &'static str,
    src: Program,
    machine: Program,
    outcomes: Vec<Outcome>,
}

const MODES: [(Ra, Sched); 4] = [(Ra::Split, Sched::TopDown), (Ra::Split, Sched::BottomUp), (Ra::Graph, Sched::TopDown), (Ra::Graph, Sched::BottomUp)];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Compile `src` under `opts`, keep it when proven and equal on the seeds.
fn base(label: String, src: Program, opts: &Options) -> Option<Base> {
    let compiled = compile(&src, opts).ok()?;
    let report = verify(&src, &compiled.program, &VerifyOptions::default());
    if report.verdict != Verdict::Proven {
        return None;
    }
    let outcomes = source_outcomes(&src, &SOUNDNESS_SEEDS).ok()?;
    if behaviour_differs(&compiled.program, &SOUNDNESS_SEEDS, &outcomes).ok()?.is_some() {
        return None;
    }
    Some(Base { label, target: src.target.name, src, machine: compiled.program, outcomes })
}

/// Corpus shaders in all four modes.
fn corpus_bases(rejected: &mut usize) -> Vec<Base> {
    let mut files: Vec<_> = std::fs::read_dir("corpus")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| d.file_name() != "bugzoo")
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ir"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read(&path) else { continue };
        let Ok(src) = schedra_ir::parse::parse(&text, None) else { continue };
        for (ra, sched) in MODES {
            let label = format!("{} --ra {ra:?} --sched {sched:?}", path.display());
            match base(label, src.clone(), &Options { ra, sched, inject: None, stress_regalloc: None, post: Default::default() }) {
                Some(b) => out.push(b),
                None => *rejected += 1,
            }
        }
    }
    out
}

/// `per_target` generated programs per target, modes in rotation.
fn generated_bases(per_target: usize, rejected: &mut usize) -> Vec<Base> {
    let mut out = Vec::new();
    for target in schedra_ir::target::generated() {
        for i in 0..per_target {
            let data = seed_bytes(0xfa15e ^ (i as u64) << 8 ^ target.name.len() as u64, 4096);
            let mut u = Unstructured::new(&data);
            let Ok(case) = GeneratedCase::for_target(&mut u, target) else { continue };
            let (ra, sched) = MODES[i % 4];
            match base(format!("generated {} #{i}", target.name), case.program, &Options { ra, sched, inject: None, stress_regalloc: None, post: Default::default() }) {
                Some(b) => out.push(b),
                None => *rejected += 1,
            }
        }
    }
    out
}

/// What the replays of one rejected mutant's counterexamples showed.
#[derive(Default)]
struct Replays {
    /// Counterexamples replayed.
    total: usize,
    /// Of those, the ones whose runs differ.
    replayed: usize,
    /// Of those, the ones with leaves no input word fixes.
    unbound: usize,
    /// The first one that does not replay: violation index and outcome.
    failed: Option<(usize, String)>,
}

/// Replay every counterexample of `r` (`schedra_fuzz::replay`).
fn replays(src: &Program, mutant: &Program, r: &Report) -> Replays {
    let mut out = Replays::default();
    for rep in replay_report(src, mutant, r) {
        out.total += 1;
        if r.violations.get(rep.violation).and_then(|v| v.counterexample.as_ref()).is_some_and(|c| !c.unbound.is_empty()) {
            out.unbound += 1;
        }
        if rep.replays() {
            out.replayed += 1;
        } else if out.failed.is_none() {
            let how = match &rep.outcome {
                Ok(_) => "the runs agree on its words".to_string(),
                Err(e) => format!("the source fails on its words: {e}"),
            };
            out.failed = Some((rep.violation, how));
        }
    }
    out
}

/// Classify one mutant of `b`.
fn classify(b: &Base, mutant: &Program, t: &mut Tally) -> (Class, Option<Report>, Option<Replays>) {
    let differs = match behaviour_differs(mutant, &SOUNDNESS_SEEDS, &b.outcomes) {
        Ok(d) => d.is_some(),
        Err(_) => return (Class::InterpPanic, None, None),
    };
    let report = verify(&b.src, mutant, &VerifyOptions::default());
    let (class, reps) = match (differs, report.verdict) {
        (_, Verdict::Unknown) => (Class::Unknown, None),
        (true, Verdict::Proven) => (Class::Unsound, None),
        (false, Verdict::Proven) => (Class::EquivalentProven, None),
        (_, Verdict::Violation) => {
            let reps = replays(&b.src, mutant, &report);
            t.cex += reps.total;
            t.cex_replayed += reps.replayed;
            t.cex_unbound += reps.unbound;
            for v in report.violations.iter().filter(|v| v.counterexample.is_none()) {
                *t.no_cex_kinds.entry(v.kind.as_str()).or_default() += 1;
            }
            let class = match (reps.total, &reps.failed, differs) {
                (_, Some(_), _) => Class::NotReplayed,
                (n, None, _) if n > 0 => Class::Replays,
                (_, None, true) => Class::NoCexDiffers,
                (_, None, false) => Class::NoCexSame,
            };
            (class, Some(reps))
        }
    };
    (class, Some(report), reps)
}

#[derive(Default)]
struct Tally {
    by_class: BTreeMap<Class, usize>,
    by_target: BTreeMap<(&'static str, Class), usize>,
    by_mutation: BTreeMap<(&'static str, Class), usize>,
    mutants: usize,
    shown: usize,
    /// Counterexamples replayed, and of those: replayed (the runs
    /// differ), with unbound leaves.
    cex: usize,
    cex_replayed: usize,
    cex_unbound: usize,
    /// Violations without a counterexample, by kind.
    no_cex_kinds: BTreeMap<&'static str, usize>,
}

impl Tally {
    fn add(&mut self, b: &Base, m: &Mutation, class: Class) {
        self.mutants += 1;
        *self.by_class.entry(class).or_default() += 1;
        *self.by_target.entry((b.target, class)).or_default() += 1;
        *self.by_mutation.entry((m.name(), class)).or_default() += 1;
    }

    fn get(&self, c: Class) -> usize {
        self.by_class.get(&c).copied().unwrap_or(0)
    }
}

/// Print (and optionally save) a non-replaying or an unsound mutant.
fn show(t: &mut Tally, b: &Base, m: &Mutation, mutant: &Program, r: Option<&Report>, reps: Option<&Replays>, class: Class) {
    t.shown += 1;
    let at = reps.and_then(|x| x.failed.as_ref()).map(|(i, _)| *i).unwrap_or(0);
    let v = r.and_then(|r| r.violations.get(at)).map(|v| format!("{} at {} bundle {}: {}", v.kind.as_str(), v.block, v.bundle, v.message)).unwrap_or_default();
    let how = reps.and_then(|x| x.failed.as_ref()).map(|(_, h)| format!("\n      replay: {h}")).unwrap_or_default();
    println!("  [{}] {} — {m}\n      {v}{how}", class.name(), b.label);
    if let Some(dir) = std::env::var_os("SCHEDRA_FA_OUT") {
        let dir = std::path::PathBuf::from(dir);
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(format!("{}.src.ir", t.shown)), schedra_ir::print::print(&b.src));
        let _ = std::fs::write(dir.join(format!("{}.out.s", t.shown)), schedra_ir::print::print(mutant));
    }
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.2}%", 100.0 * a as f64 / b as f64)
    }
}

fn main() {
    let start = Instant::now();
    let per_base = env_usize("SCHEDRA_FA_MUTANTS", 8);
    let mut rejected = 0usize;
    let mut bases = corpus_bases(&mut rejected);
    let corpus_n = bases.len();
    bases.extend(generated_bases(env_usize("SCHEDRA_FA_GENERATED", 40), &mut rejected));
    println!("false alarms: {corpus_n} corpus bases (shaders x {} modes) + {} generated; {rejected} bases skipped (not proven or not equal on the seeds); {per_base} mutation attempts each", MODES.len(), bases.len() - corpus_n);
    let mut t = Tally::default();
    let show_max = env_usize("SCHEDRA_FA_SHOW", 12);
    for (k, b) in bases.iter().enumerate() {
        if k % 50 == 0 {
            eprintln!("base {k} of {} ({:.0} s)", bases.len(), start.elapsed().as_secs_f64());
        }
        for j in 0..per_base {
            let data = seed_bytes((k as u64) << 16 | j as u64, 64);
            let mut u = Unstructured::new(&data);
            let Some((mutant, m)) = mutate(&b.machine, &mut u) else { continue };
            let (class, report, reps) = classify(b, &mutant, &mut t);
            t.add(b, &m, class);
            if matches!(class, Class::NotReplayed | Class::Unsound) && t.shown < show_max {
                show(&mut t, b, &m, &mutant, report.as_ref(), reps.as_ref(), class);
            }
        }
    }
    println!("\n{} mutants in {:.1} s\n", t.mutants, start.elapsed().as_secs_f64());
    println!("| class | mutants | share |\n| --- | ---: | ---: |");
    for (c, n) in &t.by_class {
        println!("| {} | {n} | {} |", c.name(), pct(*n, t.mutants));
    }
    let rejected = t.get(Class::NotReplayed) + t.get(Class::Replays) + t.get(Class::NoCexDiffers) + t.get(Class::NoCexSame);
    println!("\nunsound: {} of {} mutants that differ on the 8 seeds", t.get(Class::Unsound), t.get(Class::Unsound) + t.by_class.iter().filter(|(c, _)| matches!(c, Class::Replays | Class::NotReplayed | Class::NoCexDiffers)).map(|(_, n)| n).sum::<usize>());
    println!(
        "false alarms by replay: {} of {rejected} rejections ({}) have a counterexample that does not replay; counterexamples replayed: {} of {} ({} with values at a block entry); unknown verdicts: {}",
        t.get(Class::NotReplayed),
        pct(t.get(Class::NotReplayed), rejected),
        t.cex_replayed,
        t.cex,
        t.cex_unbound,
        t.get(Class::Unknown)
    );
    let kinds: Vec<String> = t.no_cex_kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!("violations without a counterexample, by kind: {}", kinds.join(", "));
    println!("\nper target (not replaying / rejections, unknown, unsound):");
    let targets: std::collections::BTreeSet<&str> = t.by_target.keys().map(|(n, _)| *n).collect();
    for name in targets {
        let g = |c| t.by_target.get(&(name, c)).copied().unwrap_or(0);
        let rej = g(Class::NotReplayed) + g(Class::Replays) + g(Class::NoCexDiffers) + g(Class::NoCexSame);
        println!("  {name:<7} not replaying {} / {rej}, unknown {}, unsound {}", g(Class::NotReplayed), g(Class::Unknown), g(Class::Unsound));
    }
    println!("\nper mutation kind (mutants: class counts):");
    let kinds: std::collections::BTreeSet<&str> = t.by_mutation.keys().map(|(k, _)| *k).collect();
    for k in kinds {
        let row: Vec<String> = t.by_mutation.iter().filter(|((m, _), _)| *m == k).map(|((_, c), n)| format!("{:?} {n}", c)).collect();
        println!("  {k:<16} {}", row.join(", "));
    }
    std::process::exit(i32::from(t.get(Class::Unsound) + t.get(Class::NotReplayed) > 0));
}
