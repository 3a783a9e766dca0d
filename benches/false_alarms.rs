//! The verifier's false-alarm rate (and soundness) on mutated compiler output.
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
//! - differs on a seed, proven: **unsound** (must be 0; exit status 1);
//! - differs, rejected: a true alarm;
//! - same on all seeds, proven: an equivalent mutant, rightly proven;
//! - same on all seeds, rejected with a slot/register/hazard/structure
//!   violation among its violations: justified by a rule;
//! - same on all seeds, rejected only with dataflow/clobber/latency: a
//!   *candidate* false alarm. These are run on 256 more seeds; one that
//!   differs there is wrong on inputs the 8 seeds miss (a true alarm). The
//!   rest are the **false alarms** reported as the rate (some may still be
//!   genuinely wrong on inputs no seed hits; the first few are printed with
//!   their mutation and violation for inspection, and written to
//!   `SCHEDRA_FA_OUT=DIR` as `N.src.ir` / `N.out.s` when set).
//!
//! Run: `cargo bench --bench false_alarms` (SCHEDRA_FA_GENERATED=N generated
//! programs per target, default 40).

use arbitrary::Unstructured;
use schedra_compiler::{compile, Options, Ra, Sched};
use schedra_fuzz::gen::{seed_bytes, GeneratedCase};
use schedra_fuzz::interp::Outcome;
use schedra_fuzz::mutate::{mutate, Mutation};
use schedra_fuzz::oracle::{behaviour_differs, source_outcomes, SOUNDNESS_SEEDS};
use schedra_ir::Program;
use schedra_verify::{verify, Kind, Report, Verdict, VerifyOptions};
use std::collections::BTreeMap;
use std::time::Instant;

/// The class of one mutant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Unsound,
    TrueAlarm,
    EquivalentProven,
    RuleBroken,
    WrongOnMoreSeeds,
    Unexecuted,
    FalseAlarm,
    Unknown,
    InterpPanic,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Unsound => "differs, PROVEN (unsound)",
            Class::TrueAlarm => "differs, rejected (true alarm)",
            Class::EquivalentProven => "same on 8 seeds, proven",
            Class::RuleBroken => "same on 8 seeds, rejected for a slot/register/hazard/structure rule",
            Class::WrongOnMoreSeeds => "same on 8 seeds, rejected (dataflow/clobber/latency), differs on 256 more seeds",
            Class::Unexecuted => "same on 264 seeds, rejected for dataflow/clobber/latency on a path no seed executes",
            Class::FalseAlarm => "same on 264 seeds, rejected only for dataflow/clobber/latency in executed code (false alarm)",
            Class::Unknown => "verdict unknown (solver timeout)",
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

/// Whether every violation is a dataflow, clobber or latency one.
fn only_semantic(r: &Report) -> bool {
    r.violations.iter().all(|v| matches!(v.kind, Kind::Dataflow | Kind::Clobber | Kind::Latency))
}

/// 256 seeds beyond the soundness seeds.
fn more_seeds() -> Vec<u64> {
    (0..256u64).map(|i| 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i + 17)).collect()
}

/// Classify one mutant of `b`.
fn classify(b: &Base, mutant: &Program, m: &Mutation) -> (Class, Option<Report>) {
    let differs = match behaviour_differs(mutant, &SOUNDNESS_SEEDS, &b.outcomes) {
        Ok(d) => d.is_some(),
        Err(_) => return (Class::InterpPanic, None),
    };
    let report = verify(&b.src, mutant, &VerifyOptions::default());
    let class = match (differs, report.verdict) {
        (_, Verdict::Unknown) => Class::Unknown,
        (true, Verdict::Proven) => Class::Unsound,
        (true, Verdict::Violation) => Class::TrueAlarm,
        (false, Verdict::Proven) => Class::EquivalentProven,
        (false, Verdict::Violation) if !only_semantic(&report) => Class::RuleBroken,
        (false, Verdict::Violation) => {
            let seeds = more_seeds();
            let outs = source_outcomes(&b.src, &seeds).ok();
            let wrong = outs.as_ref().and_then(|o| behaviour_differs(mutant, &seeds, o).ok()).flatten().is_some();
            let all: Vec<&Outcome> = b.outcomes.iter().chain(outs.iter().flatten()).collect();
            if wrong {
                Class::WrongOnMoreSeeds
            } else if !covered(b, &all, m, &report) {
                Class::Unexecuted
            } else {
                Class::FalseAlarm
            }
        }
    };
    (class, Some(report))
}

/// Whether the mutated block and every block the primary violation names
/// (where it is reported, and any `block X` in its message) ran on some
/// seed: otherwise the runs could not have seen the difference.
fn covered(b: &Base, runs: &[&Outcome], m: &Mutation, r: &Report) -> bool {
    let mut ran: std::collections::BTreeSet<&str> = runs.iter().flat_map(|o| o.trace.labels.iter().map(|l| &**l)).collect();
    if let Some(entry) = b.src.blocks.first() {
        ran.insert(entry.label.as_str());
    }
    let mut named = vec![mutated_block(m)];
    if let Some(v) = r.violations.first() {
        named.push(v.block.as_str());
        let words: Vec<&str> = v.message.split_whitespace().collect();
        named.extend(words.windows(2).filter(|w| w[0] == "block").map(|w| w[1].trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_')));
    }
    named.iter().all(|l| ran.contains(l))
}

/// The block a mutation changed.
fn mutated_block(m: &Mutation) -> &str {
    match m {
        Mutation::SwapBundles { block, .. } | Mutation::ChangeRegister { block, .. } | Mutation::DropOp { block, .. } | Mutation::MoveEarlier { block, .. } | Mutation::RetargetWrite { block, .. } => block,
    }
}

#[derive(Default)]
struct Tally {
    by_class: BTreeMap<Class, usize>,
    by_target: BTreeMap<(&'static str, Class), usize>,
    by_mutation: BTreeMap<(&'static str, Class), usize>,
    mutants: usize,
    shown: usize,
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

/// Print (and optionally save) a false alarm or an unsound mutant.
fn show(t: &mut Tally, b: &Base, m: &Mutation, mutant: &Program, r: Option<&Report>, class: Class) {
    t.shown += 1;
    let v = r.and_then(|r| r.violations.first()).map(|v| format!("{} at {} bundle {}: {}", v.kind.as_str(), v.block, v.bundle, v.message)).unwrap_or_default();
    println!("  [{}] {} — {m}\n      {v}", class.name(), b.label);
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
        for j in 0..per_base {
            let data = seed_bytes((k as u64) << 16 | j as u64, 64);
            let mut u = Unstructured::new(&data);
            let Some((mutant, m)) = mutate(&b.machine, &mut u) else { continue };
            let (class, report) = classify(b, &mutant, &m);
            t.add(b, &m, class);
            if matches!(class, Class::FalseAlarm | Class::Unsound) && t.shown < show_max {
                show(&mut t, b, &m, &mutant, report.as_ref(), class);
            }
        }
    }
    println!("\n{} mutants in {:.1} s\n", t.mutants, start.elapsed().as_secs_f64());
    println!("| class | mutants | share |\n| --- | ---: | ---: |");
    for (c, n) in &t.by_class {
        println!("| {} | {n} | {} |", c.name(), pct(*n, t.mutants));
    }
    let rejected_same = t.get(Class::RuleBroken) + t.get(Class::WrongOnMoreSeeds) + t.get(Class::Unexecuted) + t.get(Class::FalseAlarm);
    let rejected_all = rejected_same + t.get(Class::TrueAlarm);
    let differs = t.get(Class::Unsound) + t.get(Class::TrueAlarm);
    println!("\nunsound: {} of {differs} behaviour-changing mutants", t.get(Class::Unsound));
    println!(
        "false alarms: {} of {rejected_all} rejections ({}) in executed code, {} more ({}) on paths no seed executes; of {} mutants that behave the same on the 8 seeds, {} are rejected only for dataflow/clobber/latency, {} of those differ on 256 more seeds",
        t.get(Class::FalseAlarm),
        pct(t.get(Class::FalseAlarm), rejected_all),
        t.get(Class::Unexecuted),
        pct(t.get(Class::Unexecuted), rejected_all),
        t.get(Class::EquivalentProven) + rejected_same,
        t.get(Class::WrongOnMoreSeeds) + t.get(Class::Unexecuted) + t.get(Class::FalseAlarm),
        t.get(Class::WrongOnMoreSeeds)
    );
    println!("\nper target (false alarms / rejections, unsound / differing):");
    for target in schedra_ir::target::generated() {
        let g = |c| t.by_target.get(&(target.name, c)).copied().unwrap_or(0);
        let rej = g(Class::TrueAlarm) + g(Class::RuleBroken) + g(Class::WrongOnMoreSeeds) + g(Class::Unexecuted) + g(Class::FalseAlarm);
        let (fa, un) = (g(Class::FalseAlarm), g(Class::Unexecuted));
        println!("  {:<6} false alarms {fa} / {rej} ({}), on unexecuted paths {un} ({}), unsound {} / {}", target.name, pct(fa, rej), pct(un, rej), g(Class::Unsound), g(Class::Unsound) + g(Class::TrueAlarm));
    }
    println!("\nper mutation kind (mutants: class counts):");
    let kinds: std::collections::BTreeSet<&str> = t.by_mutation.keys().map(|(k, _)| *k).collect();
    for k in kinds {
        let row: Vec<String> = t.by_mutation.iter().filter(|((m, _), _)| *m == k).map(|((_, c), n)| format!("{:?} {n}", c)).collect();
        println!("  {k:<16} {}", row.join(", "));
    }
    std::process::exit(i32::from(t.get(Class::Unsound) > 0));
}
