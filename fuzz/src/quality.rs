//! Code quality on a fixed sample, shader-db style: the totals a compiler
//! engineer compares before and after a change, and the comparison.
//!
//! The sample is every corpus shader of each generated target plus
//! [`GENERATED`] programs drawn from fixed seeds and [`WIDE`] long
//! straight-line ones, each compiled in the four
//! `--sched`/`--ra` modes, with and without `--stress-regalloc 4`. The
//! totals (instructions, cycles, spills, fills, moves, failed compiles and
//! max-live) are kept per target and mode, so a change that helps one mode
//! cannot hide one that hurts another.
//!
//! Invariant: [`measure`] is a function of the compiler and the corpus
//! alone (no time limit, no threads), so two runs on one tree give the same
//! totals, and [`regressions`] compares them with a committed baseline
//! (`fuzz/tests/quality-baseline.tsv`): a total that grew is a regression,
//! one that shrank an improvement to record by rewriting the baseline.

use crate::gen::{self, GeneratedCase};
use crate::oracle;
use arbitrary::Unstructured;
use schedra_compiler::{Options, Ra, Sched};
use schedra_ir::Target;
use std::collections::BTreeMap;
use std::path::Path;

/// Generated programs per target in the sample.
pub const GENERATED: u64 = 24;

/// Wide programs per target in the sample: one long straight-line block of
/// independent ops ([`wide`]), where dozens of ops are ready at once, so
/// that the scheduler's ready-list ranking and windows change the totals.
pub const WIDE: u64 = 4;

/// The configuration of the sample's wide programs: the longest body,
/// no control flow, operands rarely the newest value.
fn wide() -> gen::Config {
    gen::Config { max_insts: gen::config::MAX_INSTS as u16, branches: false, loops: false, max_depth: 0, chain_bias: 0, ..gen::Config::default() }
}

/// Summed statistics of one (target, mode) cell of the sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Instructions (bundles on VLIW targets).
    pub instructions: usize,
    /// Cycles along the issue order.
    pub cycles: usize,
    /// Spilled values.
    pub spills: usize,
    /// Fills.
    pub fills: usize,
    /// Bypass-network moves (lima-gp).
    pub moves: usize,
    /// Programs that did not compile.
    pub failed: usize,
    /// The most values live at once in each program's scheduled order
    /// (shader-db's max-live), summed: what the schedulers' register-
    /// pressure modes are for.
    pub max_live: usize,
}

impl Totals {
    const NAMES: [&'static str; 7] = ["instructions", "cycles", "spills", "fills", "moves", "failed", "max-live"];

    fn values(&self) -> [usize; 7] {
        [self.instructions, self.cycles, self.spills, self.fills, self.moves, self.failed, self.max_live]
    }

    fn from_values(v: [usize; 7]) -> Totals {
        Totals { instructions: v[0], cycles: v[1], spills: v[2], fills: v[3], moves: v[4], failed: v[5], max_live: v[6] }
    }
}

/// The sample's totals, keyed `target/sched/ra[/stress4]`.
pub type Sample = BTreeMap<String, Totals>;

/// The compile options of the sample's eight modes, each with its key suffix.
fn modes() -> Vec<(String, Options)> {
    let mut out = Vec::new();
    for (sname, sched) in [("topdown", Sched::TopDown), ("bottomup", Sched::BottomUp)] {
        for (rname, ra) in [("split", Ra::Split), ("graph", Ra::Graph)] {
            for stress in [None, Some(4)] {
                let key = format!("{sname}/{ra}{}", if stress.is_some() { "/stress4" } else { "" }, ra = rname);
                out.push((key, Options { sched, ra, stress_regalloc: stress, ..Options::default() }));
            }
        }
    }
    out
}

/// The sample's source programs for `target`: its corpus shaders (sorted
/// by file name) then [`GENERATED`] programs from seeds 0, 1, ...
fn programs(corpus: &Path, target: &'static Target) -> Result<Vec<schedra_ir::Program>, String> {
    let dir = corpus.join(target.name);
    let mut files: Vec<_> = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "ir")).collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        out.push(schedra_ir::parse::parse(&text, Some(target)).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    for seed in 0..GENERATED {
        let bytes = gen::seed_bytes(seed, crate::campaign::case::CASE_BYTES);
        let case = GeneratedCase::for_target(&mut Unstructured::new(&bytes), target).map_err(|e| format!("{}: generated program {seed}: {e}", target.name))?;
        out.push(case.program);
    }
    for seed in 0..WIDE {
        let bytes = gen::seed_bytes(seed, crate::campaign::case::CASE_BYTES);
        let (program, _) = gen::generate_with_features(&mut Unstructured::new(&bytes), target, &wide()).map_err(|e| format!("{}: wide program {seed}: {e}", target.name))?;
        out.push(program);
    }
    Ok(out)
}

/// Compile the sample for every target of `targets` and sum its statistics
/// (a compile error or panic counts as failed; [`oracle::compile_ok`]).
/// `corpus` is the repository's `corpus/` directory.
pub fn measure(corpus: &Path, targets: &[&'static Target]) -> Result<Sample, String> {
    let mut sample = Sample::new();
    for &t in targets {
        let progs = programs(corpus, t)?;
        for (suffix, opts) in modes() {
            let cell = sample.entry(format!("{}/{suffix}", t.name)).or_default();
            for p in &progs {
                match oracle::compile_ok(p, &opts) {
                    Ok(c) => {
                        cell.instructions += c.stats.instructions;
                        cell.cycles += c.stats.cycles;
                        cell.spills += c.stats.spills;
                        cell.fills += c.stats.fills;
                        cell.moves += c.stats.moves;
                        cell.max_live += c.stats.max_live;
                    }
                    Err(_) => cell.failed += 1,
                }
            }
        }
    }
    Ok(sample)
}

/// The baseline file's text: a header, then one line per cell.
pub fn print(sample: &Sample) -> String {
    let mut out = format!("# cell\t{}\n", Totals::NAMES.join("\t"));
    for (key, t) in sample {
        let vals: Vec<String> = t.values().iter().map(|v| v.to_string()).collect();
        out.push_str(&format!("{key}\t{}\n", vals.join("\t")));
    }
    out
}

/// Parse [`print`]'s text; a malformed line is an error naming its number.
pub fn parse(text: &str) -> Result<Sample, String> {
    let mut sample = Sample::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let nums: Option<Vec<usize>> = fields.get(1..).map(|f| f.iter().map(|x| x.parse().ok()).collect()).unwrap_or(None);
        match (fields.first(), nums.and_then(|v| <[usize; 7]>::try_from(v).ok())) {
            (Some(key), Some(v)) => {
                sample.insert(key.to_string(), Totals::from_values(v));
            }
            _ => return Err(format!("line {}: expected a cell name and {} counts", n + 1, Totals::NAMES.len())),
        }
    }
    Ok(sample)
}

/// How `now` compares with `base`: the regressions (a total that grew, or
/// a cell missing from `now`) and the improvements (a total that shrank, or
/// a new cell), each as one line.
pub fn regressions(base: &Sample, now: &Sample) -> (Vec<String>, Vec<String>) {
    let (mut worse, mut better) = (Vec::new(), Vec::new());
    for (key, b) in base {
        let Some(n) = now.get(key) else {
            worse.push(format!("{key}: not measured"));
            continue;
        };
        for ((name, bv), nv) in Totals::NAMES.iter().zip(b.values()).zip(n.values()) {
            let line = format!("{key}: {name} {bv} -> {nv}");
            match nv.cmp(&bv) {
                std::cmp::Ordering::Greater => worse.push(line),
                std::cmp::Ordering::Less => better.push(line),
                std::cmp::Ordering::Equal => {}
            }
        }
    }
    better.extend(now.keys().filter(|k| !base.contains_key(*k)).map(|k| format!("{k}: new cell")));
    (worse, better)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(cycles: usize) -> Totals {
        Totals { instructions: 10, cycles, spills: 1, fills: 2, moves: 0, failed: 0, max_live: 3 }
    }

    #[test]
    fn print_and_parse_round_trip() {
        let s: Sample = [("v3d71/topdown/split".to_string(), cell(40)), ("r600/bottomup/graph/stress4".to_string(), cell(7))].into();
        assert_eq!(parse(&print(&s)), Ok(s));
        assert!(parse("v3d71/topdown/split\t1\t2\n").is_err());
    }

    #[test]
    fn a_grown_total_is_a_regression_and_a_shrunk_one_an_improvement() {
        let base: Sample = [("a".to_string(), cell(40)), ("b".to_string(), cell(40))].into();
        let now: Sample = [("a".to_string(), cell(41)), ("b".to_string(), cell(39)), ("c".to_string(), cell(1))].into();
        let (worse, better) = regressions(&base, &now);
        assert_eq!(worse, vec!["a: cycles 40 -> 41".to_string()]);
        assert_eq!(better, vec!["b: cycles 40 -> 39".to_string(), "c: new cell".to_string()]);
        let (worse, _) = regressions(&base, &Sample::new());
        assert_eq!(worse.len(), 2);
    }

    #[test]
    fn the_sample_is_the_same_twice() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let t = schedra_ir::target::by_name("r600").expect("r600 is a target");
        let a = measure(&corpus, &[t]).expect("the sample compiles");
        assert_eq!(a.len(), 8);
        assert!(a.values().any(|c| c.spills > 0), "stress4 reaches spill code: {a:?}");
        assert_eq!(measure(&corpus, &[t]), Ok(a));
    }
}
