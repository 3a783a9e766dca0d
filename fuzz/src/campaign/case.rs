//! One fuzz case: from (campaign seed, case index) to a generated program,
//! compile options, the oracles run on it and what they found.
//!
//! Determinism: everything about case `k` (target, bytes, configuration,
//! compile options, run seeds, mutation) is a function of the campaign seed
//! and `k` alone, so a campaign with a given seed explores the same cases
//! in the same order whatever the number of threads.

#![allow(clippy::result_large_err)] // see oracle.rs: findings are the cold path

use super::seeded;
use crate::gen::{self, Features};
use crate::mutate;
use crate::oracle::{self, Finding, Kind};
use arbitrary::Unstructured;
use schedra_compiler::{Fault, Options, Post, Ra, Sched};
use schedra_ir::target::Clock;
use schedra_ir::{Program, Target};
use schedra_verify::VerifyOptions;

/// Bytes of generator input per case.
pub const CASE_BYTES: usize = 16 * 1024;

/// The seeds source and output are run on in oracle (c).
pub fn run_seeds(case_seed: u64) -> [u64; 2] {
    [case_seed, case_seed.rotate_left(17) ^ 0x5eed]
}

/// How one case is checked.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// The fault injected into the compiler, if any.
    pub inject: Option<Fault>,
    /// Verifier options.
    pub vopts: VerifyOptions,
    /// Also check verifier soundness on every `soundness_every`-th case.
    pub soundness_every: u64,
    /// Also check the parser round trip on every `roundtrip_every`-th case.
    pub roundtrip_every: u64,
}

impl Plan {
    /// The plan `schedra fuzz` uses: soundness on every 4th case, the
    /// round trip on every 16th.
    pub fn campaign(inject: Option<Fault>, vopts: VerifyOptions) -> Plan {
        Plan { inject, vopts, soundness_every: 4, roundtrip_every: 16 }
    }
}

/// A case's seed: the campaign seed mixed with the case index.
pub fn case_seed(seed: u64, index: u64) -> u64 {
    gen::seed_of(&[seed.to_le_bytes(), index.to_le_bytes()].concat())
}

/// What one case produced.
pub struct CaseResult {
    /// The generator features it exercised.
    pub features: Features,
    /// The first broken promise, with the compile options and run seeds
    /// needed to reproduce it.
    pub finding: Option<(Finding, [u64; 2])>,
}

/// The register counts `--stress-regalloc` is drawn from.
pub const STRESS_REGS: [u16; 8] = [2, 3, 4, 5, 6, 8, 12, 16];

/// The compile options case bytes choose (all four modes get exercised).
/// One byte decides everything: bits 0–1 the modes, and when bits 2–3 are
/// both set (a quarter of the cases) `--stress-regalloc` with a count from
/// [`STRESS_REGS`] (bits 4–6), so small programs reach spill code.
pub fn options(u: &mut Unstructured, inject: Option<Fault>) -> Options {
    let b = u.arbitrary::<u8>().unwrap_or(0);
    let stress_regalloc = (b & 0b1100 == 0b1100).then(|| STRESS_REGS[((b >> 4) & 7) as usize]);
    Options { sched: if b & 1 == 0 { Sched::TopDown } else { Sched::BottomUp }, ra: if b & 2 == 0 { Ra::Split } else { Ra::Graph }, inject, stress_regalloc, post: if b & 0x80 != 0 { Post::Peephole } else { Post::List } }
}

/// [`options`] for `target`: the post-RA mode is drawn only on a target
/// that has two (encoded waits); elsewhere it stays `--post list`, which
/// is all those targets have.
pub fn options_for(u: &mut Unstructured, inject: Option<Fault>, target: &Target) -> Options {
    let o = options(u, inject);
    match target.clock {
        Clock::EncodedWaits { .. } => o,
        _ => Options { post: Post::List, ..o },
    }
}

/// Generate and check case `index` of the campaign `seed` on `target`.
pub fn run_case(seed: u64, index: u64, target: &'static Target, plan: &Plan) -> CaseResult {
    run_case_timed(seed, index, target, plan, None, &mut oracle::StageTimes::default())
}

/// Bytes a case's compile options and swarm configuration take at most
/// (27 today), with room: see [`gen::SeedStream::draw`].
const HEADER_HINT: usize = 64;

/// Bytes a soundness mutation takes at most (a few), with room.
const MUTATION_HINT: usize = 64;

/// [`run_case`], with the generator configuration `fixed` instead of the
/// swarm configuration the case bytes choose (the throughput bench's
/// ~50-instruction programs) when given, adding the time each stage took
/// to `times`.
///
/// The case's [`CASE_BYTES`] bytes are made only as far as they are read
/// ([`gen::SeedStream`]): options, configuration, program and mutation are
/// exactly what reading `seed_bytes(case_seed, CASE_BYTES)` in that order
/// gives.
pub fn run_case_timed(seed: u64, index: u64, target: &'static Target, plan: &Plan, fixed: Option<&gen::Config>, times: &mut oracle::StageTimes) -> CaseResult {
    let start = std::time::Instant::now();
    let cs = case_seed(seed, index);
    let mut bytes = gen::SeedStream::new(cs, CASE_BYTES);
    let (opts, case) = draw(&mut bytes, target, plan, fixed);
    times.generate += start.elapsed();
    let Some((program, features)) = case else {
        return CaseResult { features: Features::default(), finding: None };
    };
    let seeds = run_seeds(cs);
    let finding = check(&program, &opts, plan, index, &mut bytes, &seeds, times).err().map(|f| (f, seeds));
    CaseResult { features, finding }
}

/// [`run_case_timed`] for a campaign with seed programs: a seeded case
/// ([`seeded::is_seeded`]) checks a seed for `target`, mutated as its
/// bytes say ([`seeded::program`]), after drawing its compile options as a
/// generated case does; every other case is generated.
pub fn run_case_from(seed: u64, index: u64, target: &'static Target, plan: &Plan, seeds: &[Program], times: &mut oracle::StageTimes) -> CaseResult {
    if !seeded::is_seeded(index, seeds, target) {
        return run_case_timed(seed, index, target, plan, None, times);
    }
    let start = std::time::Instant::now();
    let cs = case_seed(seed, index);
    let run = run_seeds(cs);
    let mut bytes = gen::SeedStream::new(cs, CASE_BYTES);
    let (opts, program) = draw_seeded(&mut bytes, target, plan, seeds, &run);
    times.generate += start.elapsed();
    let Some(program) = program else {
        return CaseResult { features: Features::default(), finding: None };
    };
    let finding = check(&program, &opts, plan, index, &mut bytes, &run, times).err().map(|f| (f, run));
    CaseResult { features: Features::default(), finding }
}

/// The compile options and the mutated seed program of a seeded case.
fn draw_seeded(bytes: &mut gen::SeedStream, target: &'static Target, plan: &Plan, seeds: &[Program], run: &[u64]) -> (Options, Option<Program>) {
    let opts = bytes.draw(HEADER_HINT, |u| options_for(u, plan.inject, target));
    let program = bytes.draw(MUTATION_HINT * seeded::MAX_MUTATIONS as usize, |u| seeded::program(u, seeds, target, run));
    (opts, program.map(|(p, _)| p))
}

/// The compile options and the program (with its features) that `bytes`
/// give first; no program when the generator gives up on them.
fn draw(bytes: &mut gen::SeedStream, target: &'static Target, plan: &Plan, fixed: Option<&gen::Config>) -> (Options, Option<(Program, Features)>) {
    let (opts, config) = bytes.draw(HEADER_HINT, |u| {
        let opts = options_for(u, plan.inject, target);
        (opts, fixed.map_or_else(|| gen::Config::swarm(u), |c| Ok(c.clone())))
    });
    let case = config.and_then(|cfg| bytes.draw(cfg.byte_hint(), |u| gen::generate_with_features(u, target, &cfg)));
    (opts, case.ok())
}

/// Case `index` of the campaign `seed` on `target` as [`run_case`]
/// generates it: its program, compile options and run seeds (`None` when
/// the generator gave up on its bytes). For a case that never finished,
/// so that what it was stuck on can be saved and reduced.
pub fn regenerate(seed: u64, index: u64, target: &'static Target, plan: &Plan) -> Option<(Program, Options, [u64; 2])> {
    regenerate_from(seed, index, target, plan, &[])
}

/// [`regenerate`] for a campaign with seed programs ([`run_case_from`]).
pub fn regenerate_from(seed: u64, index: u64, target: &'static Target, plan: &Plan, seeds: &[Program]) -> Option<(Program, Options, [u64; 2])> {
    let cs = case_seed(seed, index);
    if seeded::is_seeded(index, seeds, target) {
        let run = run_seeds(cs);
        let mut bytes = gen::SeedStream::new(cs, CASE_BYTES);
        let (opts, program) = draw_seeded(&mut bytes, target, plan, seeds, &run);
        return program.map(|p| (p, opts, run));
    }
    let mut bytes = gen::SeedStream::new(cs, CASE_BYTES);
    let (opts, case) = draw(&mut bytes, target, plan, None);
    case.map(|(p, _)| (p, opts, run_seeds(cs)))
}

/// The oracles for one program: (a)+(b)+(c) always, (d) and (e) on some
/// cases; (d)'s mutation reads on from `bytes`.
fn check(src: &Program, opts: &Options, plan: &Plan, index: u64, bytes: &mut gen::SeedStream, seeds: &[u64], times: &mut oracle::StageTimes) -> Result<(), Finding> {
    let (passed, prepared) = oracle::check_case_keeping(src, opts, &plan.vopts, seeds, times)?;
    if plan.roundtrip_every > 0 && index.is_multiple_of(plan.roundtrip_every) {
        let start = std::time::Instant::now();
        let out = &passed.compiled.program;
        let r = oracle::parse_roundtrip_printed(src, schedra_ir::print::print(src).as_bytes()).and_then(|()| oracle::parse_roundtrip_printed(out, schedra_ir::print::print(out).as_bytes()));
        times.roundtrip += start.elapsed();
        r?;
    }
    if plan.soundness_every > 0 && index.is_multiple_of(plan.soundness_every) {
        let start = std::time::Instant::now();
        let mutant = bytes.draw(MUTATION_HINT, |u| mutate::mutate(&passed.compiled.program, u));
        let r = oracle::soundness_prepared(src, &prepared, mutant, &plan.vopts);
        times.soundness += start.elapsed();
        r.map_err(|mut f| {
            f.options = Some(*opts);
            f
        })?;
    }
    Ok(())
}

/// Whether `f` can be reproduced from its source alone (and so reduced):
/// soundness findings depend on a random mutant, unknowns on time.
/// Timeouts are reduced apart, in a child process ([`crate::reduce::hang`]).
pub fn reproducible(f: &Finding) -> bool {
    f.source.is_some() && !matches!(f.kind, Kind::Unknown | Kind::RoundTrip | Kind::Timeout) && !f.rule.starts_with("mutant")
}

/// The signature `src` fails with under (a)+(b)+(c), if it fails.
pub fn signature_of(src: &Program, opts: &Options, vopts: &VerifyOptions, seeds: &[u64]) -> Option<String> {
    oracle::check_case(src, opts, vopts, seeds).err().map(|f| f.signature())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regenerate_gives_the_program_run_case_checked() {
        let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let plan = Plan::campaign(Some(Fault::SchedIgnoreWar), VerifyOptions { timeout_ms: 2000 });
        let (p, opts, seeds) = (0..20).find_map(|k| regenerate(3, k, t, &plan)).expect("some case generates");
        assert_eq!(opts.inject, Some(Fault::SchedIgnoreWar));
        assert!(p.op_count() > 0 && seeds[0] != seeds[1]);
        let k = (0..20).find(|&k| regenerate(3, k, t, &plan).is_some()).expect("index");
        let again = regenerate(3, k, t, &plan).expect("deterministic");
        assert_eq!(schedra_ir::print::print(&again.0), schedra_ir::print::print(&p));
    }

    #[test]
    fn seeded_cases_check_a_mutated_seed_and_regenerate_it() {
        let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let path = format!("{}/../corpus/v3d71/blinn-phong.ir", env!("CARGO_MANIFEST_DIR"));
        let seed = schedra_ir::parse::parse(&std::fs::read(&path).expect("corpus"), None).expect("parses");
        let seeds = vec![seed.clone()];
        let plan = Plan::campaign(Some(Fault::SchedIgnoreWar), VerifyOptions { timeout_ms: 2000 });
        // an odd case starts from the seed, an even one is generated
        let (p, _, _) = regenerate_from(3, 1, t, &plan, &seeds).expect("a seeded case");
        assert_eq!(p.name, seed.name);
        let (g, _, _) = (0..20u64).step_by(2).find_map(|k| regenerate_from(3, k, t, &plan, &seeds)).expect("a generated case");
        assert_eq!(g.name.as_deref(), Some("gen"));
        // the injected fault is found on some seeded case
        let found = (0..40u64).filter(|k| k % 2 == 1).any(|k| run_case_from(3, k, t, &plan, &seeds, &mut oracle::StageTimes::default()).finding.is_some());
        assert!(found, "the injected WAR fault is found on a seeded case");
    }

    #[test]
    fn case_seeds_differ_by_index_and_seed() {
        assert_ne!(case_seed(1, 2), case_seed(1, 3));
        assert_ne!(case_seed(1, 2), case_seed(2, 2));
        assert_eq!(case_seed(5, 9), case_seed(5, 9));
    }
}
