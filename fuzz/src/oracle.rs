//! Oracles: each checks one promise of the toolchain on one case and returns
//! `Err(Finding)` when it is broken.
//!
//! - [`compile_ok`] (a): compiling a valid program neither panics nor fails.
//! - [`verify_proves`] (b): the verifier proves the compiler's output.
//! - [`runs_agree`] (c): source and output behave the same on several seeds.
//! - [`check_case`]: (a), (b) and (c) together; when (b) proves but (c)
//!   sees different behaviour, the *verifier* is wrong ([`Kind::Unsound`]).
//! - [`soundness`] (d): a mutated proven output that behaves differently on
//!   some seed must not be proven, and every counterexample the verifier
//!   gives for rejecting it must replay: its input words, fed to both
//!   interpreters ([`crate::replay`]), make them behave differently.
//! - [`rules_agree`] (f): the interpreter's own reading of the hardware
//!   rules and the verifier's agree on every compiled output and every
//!   mutant: when the verifier finds a `slot`, `register` or `hazard`
//!   problem the interpreter stops with a rule of that kind, and when the
//!   interpreter stops with a rule the verifier finds one of its kind.
//! - [`parse_roundtrip`] (e): the parser never panics and `print` ∘ `parse`
//!   is the identity on what it accepts.
//! - [`spills_only_when_needed`] (part of [`check_case`]): no spill code in
//!   the output of a program that never needs more than a quarter of the
//!   registers it may use.
//!
//! Every call into the compiler, verifier, interpreters or parser runs under
//! `catch_unwind`; a panic becomes a finding whose signature is its location
//! and message. Signatures (for deduplication) drop numbers and opcode and
//! register names from messages, so one bug yields one signature however
//! many programs show it.
//!
//! Invariant: an oracle returns `Ok` only when the promise held on the
//! inputs it was given; it never panics itself.

// A `Finding` carries the programs and the report it is about; it is built
// only on the cold path (a broken promise), so its size does not matter.
#![allow(clippy::result_large_err)]

use crate::interp::{self, Outcome};
use crate::mutate::{self, Mutation};
use crate::phase::{self, Phase};
use schedra_compiler::{CompileError, Compiled, Context, Options};
use schedra_ir::{Program, Target};
use schedra_verify::{Report, Verdict, VerifyOptions};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;
use std::time::{Duration, Instant};

/// What kind of promise a finding breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Something panicked (the component is in the rule).
    Panic,
    /// The compiler returned an error on a valid program.
    CompileError,
    /// The verifier rejected the compiler's output (the violation kind is
    /// in the rule); `confirmed` findings also behave differently when run.
    Violation,
    /// The verifier could not decide (solver timeout).
    Unknown,
    /// The verifier proved a program that behaves differently: a verifier
    /// bug.
    Unsound,
    /// A verifier counterexample whose input words make both programs
    /// behave the same: a false claim of the verifier.
    NotReplayed,
    /// Parsing and printing do not round-trip.
    RoundTrip,
    /// A generated source program failed to run (a generator or
    /// interpreter bug).
    SourceRun,
    /// A stage of the case overran its deadline (the stage is the rule):
    /// something loops or takes far too long.
    Timeout,
    /// The interpreter's reading of the hardware rules and the verifier's
    /// disagree on a machine program: one of them is wrong.
    RuleDisagreement,
    /// Correct output that breaks a promise about code quality (the
    /// promise is the rule).
    Quality,
}

impl Kind {
    /// The name used in signatures, directories and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::CompileError => "compile-error",
            Kind::Violation => "violation",
            Kind::Unknown => "unknown",
            Kind::Unsound => "verifier-unsound",
            Kind::NotReplayed => "counterexample-not-replayed",
            Kind::RoundTrip => "roundtrip",
            Kind::SourceRun => "source-run",
            Kind::Timeout => "timeout",
            Kind::RuleDisagreement => "rule-disagreement",
            Kind::Quality => "quality",
        }
    }
}

/// A broken promise with everything needed to reproduce and report it.
#[derive(Clone, Debug)]
pub struct Finding {
    /// What kind of promise.
    pub kind: Kind,
    /// The target's name (`-` when none applies).
    pub target: String,
    /// The normalised rule: violation kind and message shape, or panic
    /// location and message shape.
    pub rule: String,
    /// The full message of the first occurrence.
    pub message: String,
    /// The source program, when there is one.
    pub source: Option<Program>,
    /// The machine program involved (compiler output or mutant).
    pub machine: Option<Program>,
    /// The verifier's report, when there is one.
    pub report: Option<Report>,
    /// The compile options used.
    pub options: Option<Options>,
    /// Whether running the programs showed different behaviour.
    pub run_differs: bool,
}

impl Finding {
    /// A finding of `kind` on `target` with its normalised `rule` and full
    /// `message`, and no programs yet.
    pub fn new(kind: Kind, target: &str, rule: String, message: String) -> Finding {
        Finding { kind, target: target.to_string(), rule, message, source: None, machine: None, report: None, options: None, run_differs: false }
    }
    /// The deduplication key: kind, target and normalised rule. Two
    /// findings with one signature are taken to be the same bug.
    pub fn signature(&self) -> String {
        format!("{}/{}: {}", self.kind.as_str(), self.target, self.rule)
    }
    /// The violation kind for violations (`latency`, `clobber`, ...),
    /// otherwise the finding kind: the `kind` of `schedra fuzz --json`.
    pub fn kind_name(&self) -> String {
        match (&self.kind, &self.report) {
            (Kind::Violation, Some(r)) => r.violations.first().map(|v| v.kind.as_str().to_string()).unwrap_or_else(|| "violation".into()),
            _ => self.kind.as_str().to_string(),
        }
    }
    /// The finding, about `source` and (when given) `machine`.
    pub fn with_programs(mut self, source: &Program, machine: Option<&Program>) -> Finding {
        self.source = Some(source.clone());
        self.machine = machine.cloned();
        self
    }
}

/// The shape of a verifier message, for signatures: the plain words that
/// say which rule is broken, without the registers, values, cycles, terms
/// (anything in parentheses or after `=`), opcodes or labels that differ
/// from program to program. At most 16 words.
pub fn rule_shape(message: &str, target: &Target) -> String {
    let head = message.split("e.g.").next().unwrap_or(message);
    let mut depth = 0usize;
    let mut flat = String::with_capacity(head.len());
    for c in head.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => flat.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = flat
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.')))
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .filter(|w| target.op(w).is_none() || matches!(*w, "and" | "or"))
        .take(16)
        .collect();
    words.join(" ")
}

/// Replace digit runs by `#` and the target's opcode names by `OP`, so that
/// messages about the same rule on different registers, cycles and ops
/// compare equal.
pub fn normalize(message: &str, target: Option<&Target>) -> String {
    let mut out = String::with_capacity(message.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if target.is_some_and(|t| t.op(word).is_some()) {
            out.push_str("OP");
        } else {
            let mut last_digit = false;
            for c in word.chars() {
                if c.is_ascii_digit() {
                    if !last_digit {
                        out.push('#');
                    }
                    last_digit = true;
                } else {
                    out.push(c);
                    last_digit = false;
                }
            }
        }
        word.clear();
    };
    for c in message.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
    static QUIET: RefCell<bool> = const { RefCell::new(false) };
}

/// Install (once per process) a panic hook that records the location and
/// message of each panic for [`guard`], and stays silent for panics that
/// [`guard`] catches; other panics are printed by the previous hook.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_else(|| "?".into());
            let msg = info.payload().downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| info.payload().downcast_ref::<String>().cloned()).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some((at, msg)));
            if !QUIET.with(|q| *q.borrow()) {
                previous(info);
            }
        }));
    });
}

/// Run `f`, turning a panic into a finding of kind [`Kind::Panic`] whose
/// rule is `component`, the panic's location and its normalised message.
pub fn guard<T>(component: &str, target: &Target, f: impl FnOnce() -> T) -> Result<T, Finding> {
    install_panic_hook();
    let was = QUIET.with(|q| std::mem::replace(&mut *q.borrow_mut(), true));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| *q.borrow_mut() = was);
    r.map_err(|_| {
        let (at, msg) = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| ("?".into(), String::new()));
        let rule = format!("{component} panicked at {at}: {}", normalize(&msg, Some(target)));
        Finding::new(Kind::Panic, target.name, rule, format!("{component} panicked at {at}: {msg}"))
    })
}

thread_local! {
    /// This worker thread's compiler buffers, lent to each of its compiles
    /// ([`schedra_compiler::compile_with`]; the result equals a compile
    /// with a new context).
    static CONTEXT: RefCell<Context> = RefCell::new(Context::new());
}

/// [`schedra_compiler::compile`] with this thread's [`CONTEXT`] (a new
/// context when it is lent out).
fn compile_reusing(src: &Program, opts: &Options) -> Result<Compiled, CompileError> {
    CONTEXT.with(|c| match c.try_borrow_mut() {
        Ok(mut ctx) => schedra_compiler::compile_with(&mut ctx, src, opts),
        Err(_) => schedra_compiler::compile(src, opts),
    })
}

/// (a) Compile `src`: no panic, no error.
pub fn compile_ok(src: &Program, opts: &Options) -> Result<Compiled, Finding> {
    let t = src.target;
    phase::enter(Phase::Compile);
    let out = guard("compile", t, || compile_reusing(src, opts)).map_err(|f| {
        // A compile that panicked may have left the buffers mid-use.
        CONTEXT.with(|c| {
            if let Ok(mut ctx) = c.try_borrow_mut() {
                *ctx = Context::new();
            }
        });
        Finding { options: Some(*opts), ..f.with_programs(src, None) }
    })?;
    out.map_err(|e: CompileError| {
        let mut f = Finding::new(Kind::CompileError, t.name, normalize(&e.to_string(), Some(t)), e.to_string()).with_programs(src, None);
        f.options = Some(*opts);
        f
    })
}

/// Verify `machine` against `src` without panicking; the report.
pub fn verify_guarded(src: &Program, machine: &Program, vopts: &VerifyOptions) -> Result<Report, Finding> {
    phase::enter(Phase::Verify);
    guard("verify", src.target, || schedra_verify::verify(src, machine, vopts)).map_err(|f| f.with_programs(src, Some(machine)))
}

/// (b) The verifier proves `machine` against `src`.
pub fn verify_proves(src: &Program, machine: &Program, vopts: &VerifyOptions) -> Result<Report, Finding> {
    let report = verify_guarded(src, machine, vopts)?;
    match report.verdict {
        Verdict::Proven => Ok(report),
        Verdict::Unknown => {
            let f = Finding::new(Kind::Unknown, src.target.name, "solver timeout".into(), "the verifier could not decide".into());
            Err(Finding { report: Some(report), ..f.with_programs(src, Some(machine)) })
        }
        Verdict::Violation => {
            let (rule, message) = match report.violations.first() {
                Some(v) => (format!("{}: {}", v.kind.as_str(), rule_shape(&v.message, src.target)), format!("{} at {} bundle {}: {}", v.kind.as_str(), v.block, v.bundle, v.message)),
                None => ("violation".into(), "violation".into()),
            };
            let f = Finding::new(Kind::Violation, src.target.name, rule, message);
            Err(Finding { report: Some(report), ..f.with_programs(src, Some(machine)) })
        }
    }
}

/// Run `p` on `seed` without panicking.
pub fn run_guarded(p: &Program, seed: u64, fuel: u64) -> Result<Result<Outcome, interp::RunError>, Finding> {
    phase::enter(Phase::Run);
    guard("interp", p.target, || interp::run(p, seed, fuel))
}

/// Fuel for a source run (generated programs need far less).
pub const SOURCE_FUEL: u64 = 200_000;

/// `p` decoded once for many runs ([`interp::prepare`]), without panicking.
pub fn prepare_guarded(p: &Program) -> Result<interp::Prepared<'_>, Finding> {
    phase::enter(Phase::Run);
    guard("interp", p.target, || interp::prepare(p))
}

/// `p` decoded for runs that ignore the hardware rules
/// ([`interp::prepare_ignoring_rules`]), without panicking.
pub fn prepare_ignoring_rules_guarded(p: &Program) -> Result<interp::Prepared<'_>, Finding> {
    phase::enter(Phase::Run);
    guard("interp", p.target, || interp::prepare_ignoring_rules(p))
}

/// Run the decoded `p` on `seed` without panicking.
pub fn run_prepared(p: &Program, prepared: &interp::Prepared, seed: u64, fuel: u64) -> Result<Result<Outcome, interp::RunError>, Finding> {
    run_prepared_in(p, prepared, &mut interp::Context::default(), seed, fuel)
}

/// [`run_prepared`] in the buffers of `ctx` (the same outcome).
fn run_prepared_in(p: &Program, prepared: &interp::Prepared, ctx: &mut interp::Context, seed: u64, fuel: u64) -> Result<Result<Outcome, interp::RunError>, Finding> {
    guard("interp", p.target, || prepared.run_with(ctx, interp::World::new(seed), fuel))
}

/// The source program's outcomes on `seeds`; a source that fails to run is
/// a [`Kind::SourceRun`] finding (the generator or interpreter is wrong).
pub fn source_outcomes(src: &Program, seeds: &[u64]) -> Result<Vec<Outcome>, Finding> {
    let prepared = prepare_guarded(src)?;
    source_outcomes_prepared(src, &prepared, seeds)
}

/// [`source_outcomes`] with `src` already decoded ([`prepare_guarded`]).
pub fn source_outcomes_prepared(src: &Program, prepared: &interp::Prepared, seeds: &[u64]) -> Result<Vec<Outcome>, Finding> {
    let mut outs = Vec::with_capacity(seeds.len());
    let mut ctx = interp::Context::default();
    for &seed in seeds {
        match run_prepared_in(src, prepared, &mut ctx, seed, SOURCE_FUEL)? {
            Ok(o) => outs.push(o),
            Err(e) => {
                let rule = normalize(&e.to_string(), Some(src.target));
                return Err(Finding::new(Kind::SourceRun, src.target.name, rule, format!("seed {seed}: {e}")).with_programs(src, None));
            }
        }
    }
    Ok(outs)
}

/// Whether `machine` behaves like the source outcomes `expect` (one per
/// seed of `seeds`): `None` if so, else a sentence saying how it differs.
pub fn behaviour_differs(machine: &Program, seeds: &[u64], expect: &[Outcome]) -> Result<Option<String>, Finding> {
    let prepared = prepare_guarded(machine)?;
    behaviour_differs_prepared(machine, &prepared, seeds, expect)
}

/// [`behaviour_differs`] with `machine` already decoded.
fn behaviour_differs_prepared(machine: &Program, prepared: &interp::Prepared, seeds: &[u64], expect: &[Outcome]) -> Result<Option<String>, Finding> {
    let mut ctx = interp::Context::default();
    for (&seed, want) in seeds.iter().zip(expect) {
        let fuel = want.executed.saturating_mul(4).saturating_add(10_000);
        match run_prepared_in(machine, prepared, &mut ctx, seed, fuel)? {
            Err(e) => return Ok(Some(format!("seed {seed}: the machine program fails: {e}"))),
            Ok(got) if got.effects != want.effects => {
                return Ok(Some(format!("seed {seed}: effects differ\nsource:\n{}machine:\n{}", want.effects, got.effects)));
            }
            Ok(got) if got.trace != want.trace => return Ok(Some(format!("seed {seed}: branches differ"))),
            Ok(_) => {}
        }
    }
    Ok(None)
}

/// (c) `machine` behaves like `src` on `seeds`.
pub fn runs_agree(src: &Program, machine: &Program, seeds: &[u64]) -> Result<(), Finding> {
    let expect = source_outcomes(src, seeds)?;
    match behaviour_differs(machine, seeds, &expect)? {
        None => Ok(()),
        Some(how) => {
            let mut f = Finding::new(Kind::Violation, src.target.name, "run: behaviour differs (verifier not consulted)".into(), how).with_programs(src, Some(machine));
            f.run_differs = true;
            Err(f)
        }
    }
}

/// What [`check_case`] learned about a case that broke no promise.
#[derive(Clone, Debug)]
pub struct Passed {
    /// The compiler's output.
    pub compiled: Compiled,
    /// The verifier's report (proven).
    pub report: Report,
    /// The source outcomes, one per seed.
    pub outcomes: Vec<Outcome>,
}

/// Wall-clock time per stage of [`check_case_timed`], summed over calls
/// (what the throughput bench reports).
#[derive(Clone, Copy, Debug, Default)]
pub struct StageTimes {
    /// Generating the program (filled in by the caller that generates).
    pub generate: Duration,
    /// Compiling it.
    pub compile: Duration,
    /// Verifying the output.
    pub verify: Duration,
    /// Running source and output on every seed (decoding included).
    pub run: Duration,
    /// The soundness oracle (d), on the cases that have it (filled in by
    /// the caller that runs it).
    pub soundness: Duration,
    /// The round-trip oracle (e), on the cases that have it (likewise).
    pub roundtrip: Duration,
}

/// (a) + (b) + (c): compile, verify and run `src` on `seeds`. A proof
/// contradicted by the runs is a [`Kind::Unsound`] finding (a verifier
/// bug); a violation is reported with `run_differs` set when the runs
/// confirm it.
pub fn check_case(src: &Program, opts: &Options, vopts: &VerifyOptions, seeds: &[u64]) -> Result<Passed, Finding> {
    check_case_timed(src, opts, vopts, seeds, &mut StageTimes::default())
}

/// [`check_case`], adding the time each stage took to `times`.
pub fn check_case_timed(src: &Program, opts: &Options, vopts: &VerifyOptions, seeds: &[u64], times: &mut StageTimes) -> Result<Passed, Finding> {
    check_case_keeping(src, opts, vopts, seeds, times).map(|(passed, _)| passed)
}

/// [`check_case_timed`], also returning the decoded source, so that
/// further checks of the same source ([`soundness_prepared`]) need not
/// decode it again.
pub fn check_case_keeping<'s>(src: &'s Program, opts: &Options, vopts: &VerifyOptions, seeds: &[u64], times: &mut StageTimes) -> Result<(Passed, interp::Prepared<'s>), Finding> {
    let t0 = Instant::now();
    let compiled = compile_ok(src, opts);
    let t1 = Instant::now();
    times.compile += t1 - t0;
    let compiled = compiled?;
    let prepared = prepare_guarded(src);
    let outcomes = prepared.as_ref().map_err(Finding::clone).and_then(|p| source_outcomes_prepared(src, p, seeds));
    let t2 = Instant::now();
    times.run += t2 - t1;
    let (prepared, outcomes) = (prepared?, outcomes?);
    let verdict = verify_proves(src, &compiled.program, vopts);
    let t3 = Instant::now();
    times.verify += t3 - t2;
    let machine = prepare_guarded(&compiled.program);
    let differs = machine.as_ref().map_err(Finding::clone).and_then(|m| behaviour_differs_prepared(&compiled.program, m, seeds, &outcomes));
    times.run += t3.elapsed();
    let (machine, differs) = (machine?, differs?);
    let with_opts = |mut f: Finding| {
        f.options = Some(*opts);
        f
    };
    // A proven output breaks no rule the verifier knows.
    match &verdict {
        Ok(report) => rules_agree_given(src, &compiled.program, &machine, &report.violations),
        Err(_) => rules_agree(src, &compiled.program, &machine),
    }
    .map_err(with_opts)?;
    match (verdict, differs) {
        (Ok(report), None) => {
            spills_only_when_needed(src, opts, &compiled).map_err(with_opts)?;
            Ok((Passed { compiled, report, outcomes }, prepared))
        }
        (Ok(report), Some(how)) => {
            let mut f = Finding::new(Kind::Unsound, src.target.name, "compiler output proven but behaves differently".into(), how).with_programs(src, Some(&compiled.program));
            f.report = Some(report);
            f.run_differs = true;
            Err(with_opts(f))
        }
        (Err(mut f), differs) => {
            f.run_differs = differs.is_some();
            if let Some(how) = differs {
                f.message = format!("{}\n(confirmed by running: {how})", f.message);
            }
            Err(with_opts(f))
        }
    }
}

/// The registers `src`'s values may need at once, at most: the most values
/// live at one point (`max_live`, from the compiler's statistics) times the
/// widest value, plus every register the program names itself
/// (preallocated registers, which the allocator must work around).
fn demand_bound(src: &Program, max_live: usize) -> usize {
    let mut widest = 1usize;
    let mut named = std::collections::BTreeSet::new();
    for i in src.blocks.iter().flat_map(|b| b.insts()) {
        for o in i.dest.iter().chain(&i.srcs) {
            match o {
                schedra_ir::Operand::Virt(v) => widest = widest.max(usize::from(v.size.unwrap_or(1))),
                schedra_ir::Operand::Phys(p) => named.extend(p.regs()),
                _ => {}
            }
        }
    }
    max_live.saturating_mul(widest).saturating_add(named.len())
}

/// The allocator spills only when it must: when [`demand_bound`] of `src`
/// is at most a quarter of the registers the allocator may hand out (the
/// target's allocatable registers, or `--stress-regalloc N`'s N), three
/// quarters of them are free at every point, so `compiled` has no spill,
/// fill or rematerialisation. A campaign's correctness oracles cannot see
/// an allocator that spills needlessly; this one can. Targets with a
/// bypass network (no register allocator) are not judged.
pub fn spills_only_when_needed(src: &Program, opts: &Options, compiled: &Compiled) -> Result<(), Finding> {
    let st = &compiled.stats;
    // A bypass-network target's "spills" move values out of the network
    // into registers by design; only the register allocator is judged.
    if st.spills + st.fills + st.remats == 0 || src.target.network.is_some() {
        return Ok(());
    }
    let allocatable = src.target.rules.allocatable(src.stage).len();
    let regs = opts.stress_regalloc.map_or(allocatable, |n| allocatable.min(usize::from(n)));
    let demand = demand_bound(src, st.max_live);
    if demand.saturating_mul(4) > regs {
        return Ok(());
    }
    let rule = "spill code where at most a quarter of the registers are ever needed".to_string();
    let detail = format!("{} spills, {} fills, {} remats with at most {demand} of {regs} registers needed", st.spills, st.fills, st.remats);
    Err(Finding::new(Kind::Quality, src.target.name, rule, detail).with_programs(src, Some(&compiled.program)))
}

/// The seeds mutants are run on (d).
pub const SOUNDNESS_SEEDS: [u64; 8] = [0, 1, 2, 3, 0x5eed, 0xdead_beef, 0x1234_5678_9abc, u64::MAX];

/// (d) Mutate the proven output `machine` of `src` with bytes from `u`; if
/// the mutant behaves differently on any of [`SOUNDNESS_SEEDS`], the
/// verifier must not prove it. Returns the mutation tried, if any.
pub fn soundness(src: &Program, machine: &Program, u: &mut arbitrary::Unstructured, vopts: &VerifyOptions) -> Result<Option<Mutation>, Finding> {
    soundness_of(src, mutate::mutate(machine, u), vopts)
}

/// (d) for a mutant already made ([`mutate::mutate`] of a proven output of
/// `src`, or `None` when there was none): what [`soundness`] checks.
pub fn soundness_of(src: &Program, mutant: Option<(Program, Mutation)>, vopts: &VerifyOptions) -> Result<Option<Mutation>, Finding> {
    let Some(mutant) = mutant else { return Ok(None) };
    let prepared = prepare_guarded(src)?;
    soundness_prepared(src, &prepared, Some(mutant), vopts)
}

/// [`soundness_of`] with `src` already decoded ([`check_case_keeping`]).
pub fn soundness_prepared(src: &Program, prepared: &interp::Prepared, mutant: Option<(Program, Mutation)>, vopts: &VerifyOptions) -> Result<Option<Mutation>, Finding> {
    let Some((mutant, mutation)) = mutant else { return Ok(None) };
    // The mutant runs as time and meaning make it behave, rules aside; its
    // rules are checked against the verifier's on their own.
    let decoded = prepare_ignoring_rules_guarded(&mutant)?;
    rules_agree(src, &mutant, &decoded)?;
    let expect = source_outcomes_prepared(src, prepared, &SOUNDNESS_SEEDS)?;
    let Some(how) = behaviour_differs_prepared(&mutant, &decoded, &SOUNDNESS_SEEDS, &expect)? else { return Ok(Some(mutation)) };
    let report = verify_guarded(src, &mutant, vopts)?;
    if report.verdict == Verdict::Violation {
        replays_hold(src, &mutant, &report, &mutation)?;
    }
    if report.verdict != Verdict::Proven {
        return Ok(Some(mutation));
    }
    let rule = format!("mutant ({}) proven but behaves differently", mutation.name());
    let mut f = Finding::new(Kind::Unsound, src.target.name, rule, format!("{mutation}: {how}")).with_programs(src, Some(&mutant));
    f.report = Some(report);
    f.run_differs = true;
    Err(f)
}

/// (f) The interpreter's reading of the hardware rules (`decoded`'s
/// [`interp::Prepared::broken_rule`]) and the verifier's (its `slot`,
/// `register` and `hazard` checks of `machine`) agree: both find nothing,
/// or the interpreter stops with a rule of a kind the verifier finds. A
/// disagreement is a [`Kind::RuleDisagreement`] finding. Targets whose
/// rules the interpreter does not read ([`interp::rules::family`]) are
/// not checked.
pub fn rules_agree(src: &Program, machine: &Program, decoded: &interp::Prepared) -> Result<(), Finding> {
    let t = machine.target;
    if interp::rules::family(t).is_none() {
        return Ok(());
    }
    let verifier = guard("verify", t, || {
        let mut v = schedra_verify::rules::bundles(machine);
        v.extend(schedra_verify::rules::hazards(machine));
        if let Some(net) = t.network {
            v.extend(schedra_verify::network::rules(machine, net));
        }
        v
    })
    .map_err(|f| f.with_programs(src, Some(machine)))?;
    rules_agree_given(src, machine, decoded, &verifier)
}

/// [`rules_agree`] where the verifier's violations of `machine` are known
/// (`verifier`, of any kinds; empty for a proven program, which breaks no
/// rule).
pub fn rules_agree_given(src: &Program, machine: &Program, decoded: &interp::Prepared, verifier: &[schedra_verify::Violation]) -> Result<(), Finding> {
    let t = machine.target;
    if interp::rules::family(t).is_none() {
        return Ok(());
    }
    let verifier: Vec<&schedra_verify::Violation> = verifier.iter().filter(|v| rule_kind(v.kind).is_some()).collect();
    let interp_rule = match decoded.broken_rule() {
        Some(interp::RunError::Rule { kind, at, message }) => Some((*kind, at, message)),
        _ => None,
    };
    let agree = match interp_rule {
        None => verifier.is_empty(),
        Some((kind, ..)) => verifier.iter().any(|v| rule_kind(v.kind) == Some(kind)),
    };
    if agree {
        return Ok(());
    }
    let (rule, message) = match (interp_rule, verifier.first()) {
        (Some((kind, at, message)), _) => {
            let found: Vec<&str> = verifier.iter().map(|v| v.kind.as_str()).collect();
            (format!("interpreter stops with a {kind} rule: {}; verifier finds {}", rule_shape(message, t), if found.is_empty() { "none".to_string() } else { found.join(", ") }), format!("the interpreter stops at {at}: {kind} rule: {message}; the verifier finds [{}]", found.join(", ")))
        }
        (None, Some(v)) => (format!("verifier finds {}: {}; interpreter runs", v.kind.as_str(), rule_shape(&v.message, t)), format!("the verifier finds {} at {} bundle {}: {}; the interpreter breaks no rule", v.kind.as_str(), v.block, v.bundle, v.message)),
        (None, None) => return Ok(()),
    };
    Err(Finding::new(Kind::RuleDisagreement, t.name, rule, message).with_programs(src, Some(machine)))
}

/// The interpreter's rule kind of a verifier violation kind, for the three
/// kinds both check.
fn rule_kind(kind: schedra_verify::Kind) -> Option<interp::rules::RuleKind> {
    use interp::rules::RuleKind;
    match kind {
        schedra_verify::Kind::Slot => Some(RuleKind::Slot),
        schedra_verify::Kind::Register => Some(RuleKind::Register),
        schedra_verify::Kind::Hazard => Some(RuleKind::Hazard),
        _ => None,
    }
}

/// Every counterexample of `report` (a rejection of `mutant`, made by
/// `mutation` from a proven output of `src`) replays
/// ([`crate::replay::replay_report`]); one that does not is a
/// [`Kind::NotReplayed`] finding naming the violation and its words.
pub fn replays_hold(src: &Program, mutant: &Program, report: &Report, mutation: &Mutation) -> Result<(), Finding> {
    phase::enter(Phase::Run);
    let replays = guard("replay", src.target, || crate::replay::replay_report(src, mutant, report)).map_err(|f| f.with_programs(src, Some(mutant)))?;
    let Some(r) = replays.iter().find(|r| !r.replays()) else { return Ok(()) };
    let Some(v) = report.violations.get(r.violation) else { return Ok(()) };
    let how = match &r.outcome {
        Ok(_) => "both programs behave the same on its words".to_string(),
        Err(e) => format!("the source fails on its words: {e}"),
    };
    let words: Vec<String> = v.counterexample.iter().flat_map(|c| c.words.iter()).map(|w| w.describe(src.target)).collect();
    let rule = format!("mutant ({}) rejected for {} with a counterexample that does not replay", mutation.name(), v.kind.as_str());
    let msg = format!("{mutation}: {} at {} bundle {}: {}; words [{}]: {how}", v.kind.as_str(), v.block, v.bundle, v.message, words.join(", "));
    let mut f = Finding::new(Kind::NotReplayed, src.target.name, rule, msg).with_programs(src, Some(mutant));
    f.report = Some(report.clone());
    Err(f)
}

/// (e) Parse `text`: no panic (parser or validator); when it parses,
/// printing and parsing again gives the same program, and printing is a
/// fixpoint. When printing reproduces `text` exactly (the campaign's
/// case, which prints its programs), that alone settles both.
pub fn parse_roundtrip(text: &[u8]) -> Result<(), Finding> {
    parse_roundtrip_of(None, text)
}

/// (e) for `text = print(source)`: what [`parse_roundtrip(text)`] checks.
/// When the parsed program equals `source` up to spans, printing it would
/// give `text` again (`Program::normalized` documents that programs equal
/// up to spans print the same text), so it is not printed a second time.
///
/// [`parse_roundtrip(text)`]: parse_roundtrip
pub fn parse_roundtrip_printed(source: &Program, text: &[u8]) -> Result<(), Finding> {
    parse_roundtrip_of(Some(source), text)
}

fn parse_roundtrip_of(source: Option<&Program>, text: &[u8]) -> Result<(), Finding> {
    phase::enter(Phase::Parse);
    let t = schedra_ir::target::all()[0];
    let parsed = guard("parse", t, || schedra_ir::parse::parse(text, None))?;
    let Ok(p) = parsed else { return Ok(()) };
    let _valid = guard("validate", p.target, || schedra_ir::validate::validate(&p))?;
    if source.is_some_and(|s| same_up_to_spans(&p, s)) {
        return Ok(());
    }
    let printed = guard("print", p.target, || schedra_ir::print::print(&p))?;
    if printed.as_bytes() == text {
        // `text` is already printed form: parsing `printed` again would
        // give `p` itself (the parser is a function of its input), and
        // printing that would give `printed`, so both checks hold.
        return Ok(());
    }
    let again = guard("parse", p.target, || schedra_ir::parse::parse(printed.as_bytes(), None))?;
    let fail = |rule: &str, msg: String| Err(Finding::new(Kind::RoundTrip, p.target.name, rule.to_string(), msg).with_programs(&p, None));
    match again {
        Err(e) => fail("printed program does not parse", format!("{e}\n{printed}")),
        Ok(q) if !q.same_as(&p) => fail("parse(print(p)) differs from p", printed),
        Ok(q) => {
            let twice = schedra_ir::print::print(&q);
            if twice != printed {
                return fail("print is not a fixpoint", format!("{printed}\n---\n{twice}"));
            }
            Ok(())
        }
    }
}

/// Whether `a` and `b` are equal in everything but spans: a stricter test
/// than `a.same_as(b)` (immediates must agree in their float flag too),
/// without cloning either program. Programs it calls equal print the same
/// text.
fn same_up_to_spans(a: &Program, b: &Program) -> bool {
    let input = |x: &schedra_ir::Input, y: &schedra_ir::Input| x.vreg == y.vreg && x.reg == y.reg;
    let inst = |x: &schedra_ir::Inst, y: &schedra_ir::Inst| x.opcode == y.opcode && x.dest == y.dest && x.srcs == y.srcs;
    let bundle = |x: &schedra_ir::Bundle, y: &schedra_ir::Bundle| x.ops.len() == y.ops.len() && x.ops.iter().zip(&y.ops).all(|(o, q)| o.slot == q.slot && inst(&o.inst, &q.inst));
    let block = |x: &schedra_ir::Block, y: &schedra_ir::Block| {
        x.label == y.label
            && x.term.kind == y.term.kind
            && x.insts().len() == y.insts().len()
            && x.insts().iter().zip(y.insts()).all(|(i, j)| inst(i, j))
            && x.bundles().len() == y.bundles().len()
            && x.bundles().iter().zip(y.bundles()).all(|(i, j)| bundle(i, j))
    };
    a.name == b.name
        && a.target.name == b.target.name
        && a.stage == b.stage
        && a.form == b.form
        && a.inputs.len() == b.inputs.len()
        && a.inputs.iter().zip(&b.inputs).all(|(x, y)| input(x, y))
        && a.blocks.len() == b.blocks.len()
        && a.blocks.iter().zip(&b.blocks).all(|(x, y)| block(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_code_is_a_quality_finding_only_when_registers_were_plenty() {
        let src = schedra_ir::parse::parse(b"target v3d71\nentry:\n    %a = ldunif 0\n    %b = fadd %a, %a\n    tlbw %b\n    end\n", None).expect("parses");
        let mut compiled = schedra_compiler::compile(&src, &Options::default()).expect("compiles");
        assert!(spills_only_when_needed(&src, &Options::default(), &compiled).is_ok(), "no spill code");
        compiled.stats.spills = 1;
        let f = spills_only_when_needed(&src, &Options::default(), &compiled).expect_err("two values, one spill");
        assert_eq!(f.kind, Kind::Quality);
        assert!(f.signature().starts_with("quality/v3d71: spill code"), "{}", f.signature());
        let tight = Options { stress_regalloc: Some(2), ..Options::default() };
        compiled.stats.max_live = 2;
        assert!(spills_only_when_needed(&src, &tight, &compiled).is_ok(), "2 of 2 registers needed: spilling may be necessary");
    }

    #[test]
    fn normalize_drops_numbers_and_opcodes() {
        let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let a = normalize("fmul reads rf0 at cycle 2; ldvary issued at cycle 1 lands at cycle 3", Some(t));
        let b = normalize("fadd reads rf0 at cycle 7; ldvary issued at cycle 6 lands at cycle 8", Some(t));
        assert_eq!(a, b);
        assert!(a.contains("OP reads rf# at cycle #"), "{a}");
    }

    #[test]
    fn rule_shape_keeps_only_the_rule() {
        let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
        let a = rule_shape("`fmul` reads $rf5 = fadd(unif[0], 0x3) at cycle 4, but the source has %3 there; e.g. with unif[0]=1", t);
        let b = rule_shape("`add` reads $rf9 = ?rf9@b2 at cycle 7, but the source has %12 there", t);
        assert_eq!(a, b);
        assert_eq!(a, "reads at cycle but the source has there");
        let c = rule_shape("%4 (= fmax(in1, 0x0)) is live into block b3 but no register or scratch slot holds it", t);
        assert_eq!(c, "is live into block but no register or scratch slot holds it");
    }

    #[test]
    fn guard_turns_panics_into_findings() {
        let t = schedra_ir::target::all()[0];
        let r: Result<(), Finding> = guard("test", t, || panic!("boom 42"));
        let f = r.expect_err("a panic is a finding");
        assert_eq!(f.kind, Kind::Panic);
        assert!(f.rule.contains("boom #") && f.rule.contains("oracle.rs"), "{}", f.rule);
        assert!(guard("test", t, || 1).is_ok());
    }

    #[test]
    fn roundtrip_accepts_examples_and_garbage() {
        let dir = format!("{}/../corpus/spec/v3d71-mul", env!("CARGO_MANIFEST_DIR"));
        for f in ["src.ir", "out.s"] {
            let text = std::fs::read(format!("{dir}/{f}")).expect("example");
            assert!(parse_roundtrip(&text).is_ok());
        }
        assert!(parse_roundtrip(b"target v3d71\nb0:\n %a = = \n").is_ok());
    }

    #[test]
    fn equal_up_to_spans_is_stricter_than_same_as() {
        let dir = format!("{}/../corpus/spec/v3d71-mul", env!("CARGO_MANIFEST_DIR"));
        for f in ["src.ir", "out.s"] {
            let text = std::fs::read(format!("{dir}/{f}")).expect("example");
            let p = schedra_ir::parse::parse(&text, None).expect("parses");
            let printed = schedra_ir::print::print(&p);
            let q = schedra_ir::parse::parse(printed.as_bytes(), None).expect("parses");
            assert!(same_up_to_spans(&p, &q) && p.same_as(&q));
            assert!(parse_roundtrip_printed(&p, printed.as_bytes()).is_ok());
            let mut r = q.clone();
            r.blocks[0].label = schedra_ir::format_smolstr!("{}x", r.blocks[0].label);
            assert!(!same_up_to_spans(&p, &r) && !p.same_as(&r));
        }
    }
}
