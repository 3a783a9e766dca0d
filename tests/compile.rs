//! End-to-end behaviour of `schedra compile` and `schedra_compiler::compile`:
//! every corpus shader and every spec example compiles in all four
//! `--ra` × `--sched` combinations, and the source, the allocated program
//! and the machine program give identical effects and branch traces under
//! the interpreters on 20 seeds. The CLI keeps its statuses and output shapes.

use schedra_compiler::pipeline::{allocate, schedule, Source};
use schedra_compiler::{compile, Context, Options, Ra, Sched};
use schedra_fuzz::interp;
use schedra_ir::Program;
use std::process::Command;

const SEEDS: u64 = 20;
const FUEL: u64 = 2_000_000;

#[path = "support/shaders.rs"]
mod shaders;
use shaders::{load, root, shaders};

fn combos() -> Vec<Options> {
    let mut v = Vec::new();
    for ra in [Ra::Split, Ra::Graph] {
        for sched in [Sched::TopDown, Sched::BottomUp] {
            v.push(Options { sched, ra, inject: None, stress_regalloc: None, post: Default::default() });
        }
    }
    v
}

/// Effects and branch trace of `p` on `seed`, or the error as text.
fn behaviour(p: &Program, seed: u64) -> Result<String, String> {
    interp::run(p, seed, FUEL).map(|o| format!("{:?} {:?}", o.effects, o.trace)).map_err(|e| e.to_string())
}

/// The first seed on which `a` and `b` behave differently.
fn differs(a: &Program, b: &Program) -> Option<String> {
    (0..SEEDS).find_map(|seed| {
        let (x, y) = (behaviour(a, seed), behaviour(b, seed));
        (x != y).then(|| format!("seed {seed}: {x:?} vs {y:?}"))
    })
}

#[test]
fn there_are_shaders_to_compile() {
    assert!(shaders().len() >= 7, "corpus and examples not found under {}", root().display());
}

/// Whether `p`'s target has no scratch memory, so that a value the
/// allocation stage spills only has a home once the target's scheduler
/// places it (lima-gp spills to register components while it schedules):
/// the allocation stage alone cannot print such a program, and the full
/// compile of it is checked by `machine_programs_behave_like_their_sources`.
fn spills_inside_the_scheduler(p: &Program) -> bool {
    !p.target.ops.iter().any(|o| o.sem == schedra_ir::target::Sem::ScratchRead)
}

#[test]
fn allocated_programs_behave_like_their_sources() {
    let mut failures = Vec::new();
    for path in shaders() {
        let src = load(&path);
        for opts in combos() {
            let source = Source::new(&src).expect("source form");
            let scheduled = schedule(&mut Context::new(), &source, &opts);
            match allocate(&source, &scheduled, &opts).and_then(|a| a.into_allocated()) {
                Err(e) if spills_inside_the_scheduler(&src) && e.to_string().contains("no op for ScratchRead") => {}
                Err(e) => failures.push(format!("{} {:?}: {e}", path.display(), opts)),
                Ok(a) => {
                    if let Some(d) = differs(&src, &a.program) {
                        failures.push(format!("{} {:?}: allocated program differs: {d}", path.display(), opts));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn machine_programs_behave_like_their_sources() {
    let mut failures = Vec::new();
    for path in shaders() {
        let src = load(&path);
        for opts in combos() {
            match compile(&src, &opts) {
                Err(e) => failures.push(format!("{} {:?}: {e}", path.display(), opts)),
                Ok(c) => {
                    if let Some(d) = differs(&src, &c.program) {
                        failures.push(format!("{} {:?}: machine program differs: {d}", path.display(), opts));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn spill_pressure_shaders_spill_or_rematerialise() {
    for path in shaders().into_iter().filter(|p| p.file_name().is_some_and(|n| n == "spill-pressure.ir")) {
        let src = load(&path);
        for opts in combos() {
            let c = compile(&src, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(c.stats.spills + c.stats.remats > 0, "{} {:?}: no spills or remats: {:?}", path.display(), opts, c.stats);
            assert!(c.stats.max_live > 0);
        }
    }
}

fn schedra(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).output().expect("run schedra")
}

#[test]
fn cli_compiles_with_stats_and_output_file() {
    let src = root().join("corpus/spec/v3d71-mul/src.ir");
    let out = std::env::temp_dir().join(format!("schedra-compile-{}.s", std::process::id()));
    let o = schedra(&["compile", src.to_str().unwrap_or(""), "-o", out.to_str().unwrap_or(""), "--stats", "--ra", "graph", "--sched", "bottomup"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = String::from_utf8_lossy(&o.stderr);
    assert!(stats.starts_with("uniform_times_varying - v3d71 shader: ") && stats.contains(" inst, ") && stats.contains(" spills, "), "{stats}");
    let text = std::fs::read(&out).expect("output written");
    let machine = schedra_ir::parse::parse(&text, None).expect("output parses");
    assert_eq!(machine.form, schedra_ir::Form::Machine);
    let _ = std::fs::remove_file(out);
}

#[test]
fn cli_bad_input_is_status_2_with_position() {
    let bad = std::env::temp_dir().join(format!("schedra-compile-bad-{}.ir", std::process::id()));
    std::fs::write(&bad, "target v3d71\nb0:\n  %a = fadd %b, 1\n  end\n").expect("write");
    let o = schedra(&["compile", bad.to_str().unwrap_or("")]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{}:3:", bad.display())), "{err}");
    let o = schedra(&["compile", bad.to_str().unwrap_or(""), "--inject", "no-such-fault"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_file(bad);
}

#[test]
fn cli_inject_list_names_every_fault() {
    let o = schedra(&["compile", "--inject", "list"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    for f in schedra_compiler::Fault::all() {
        assert!(text.lines().any(|l| l.starts_with(f.name()) && l.contains(f.history())), "{} missing", f.name());
    }
}

/// A straight-line shader with `n` values live at once (a chain, then all
/// folded in reverse): more than the registers of any target when `n` is
/// large. `gen8` values are SIMD16 (`:2`).
fn pressure_program(target: &str, n: usize) -> Program {
    let mut s = format!("target {target}\n");
    let (sz, def0, def1, fin) = match target {
        "gen8" => (":2", "%v0:2 = mov $g2:2".to_string(), "%v1:2 = add %v0, 1.0".to_string(), "send.eot %acc"),
        "r600" => ("", "%v0 = mov $R1.x".to_string(), "%v1 = add %v0, 1.0".to_string(), "export 0, %acc"),
        _ => ("", "%v0 = ldvary 0".to_string(), "%v1 = ldvary 1".to_string(), "tlbw %acc"),
    };
    if target == "gen8" {
        s.push_str("input %in:2 = $g2:2\n");
    }
    if target == "r600" {
        s.push_str("stage vertex\ninput %in = $R1.x\n");
    }
    s.push_str("b0:\n");
    s.push_str(&format!("  {}\n  {}\n", def0.replace("$g2:2", "%in").replace("$R1.x", "%in"), def1));
    let op = "add";
    for i in 2..n {
        s.push_str(&format!("  %v{i}{sz} = {op} %v{}, %v{}\n", i - 1, i - 2));
    }
    s.push_str(&format!("  %acc{sz} = {op} %v{}, %v{}\n", n - 1, n - 2));
    for i in (0..n - 2).rev() {
        s.push_str(&format!("  %acc{sz} = {op} %acc, %v{i}\n"));
    }
    s.push_str(&format!("  {fin}\n  end\n"));
    schedra_ir::parse::parse(s.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{s}"))
}

/// The first machine op that breaks its target's register rules.
fn rule_break(p: &Program) -> Option<String> {
    p.blocks.iter().flat_map(|b| b.bundles().iter()).flat_map(|x| x.ops.iter()).find_map(|op| {
        let desc = p.target.op(&op.inst.opcode)?;
        p.target.rules.op_regs_ok(desc, &op.inst).err()
    })
}

fn with(ra: Ra, inject: Option<schedra_compiler::Fault>) -> Options {
    Options { sched: Sched::TopDown, ra, inject, stress_regalloc: None, post: Default::default() }
}

#[test]
fn machine_programs_keep_register_rules() {
    let mut failures = Vec::new();
    let mut progs: Vec<(String, Program)> = shaders().iter().map(|p| (p.display().to_string(), load(p))).collect();
    progs.extend(["v3d71", "gen8", "r600"].iter().map(|t| (format!("pressure {t}"), pressure_program(t, if *t == "r600" { 600 } else { 90 }))));
    for (name, src) in progs {
        for opts in combos() {
            match compile(&src, &opts) {
                Ok(c) => {
                    if let Some(e) = rule_break(&c.program) {
                        failures.push(format!("{name} {opts:?}: {e}"));
                    }
                }
                Err(e) => failures.push(format!("{name} {opts:?}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn generated_pressure_programs_spill_and_behave() {
    for t in ["v3d71", "gen8", "r600"] {
        let src = pressure_program(t, if t == "r600" { 600 } else { 90 });
        for opts in combos() {
            let c = compile(&src, &opts).unwrap_or_else(|e| panic!("{t} {opts:?}: {e}"));
            assert!(c.stats.spills > 0 && c.stats.fills > 0, "{t} {opts:?}: {:?}", c.stats);
            assert_eq!(differs(&src, &c.program), None, "{t} {opts:?}");
        }
    }
}

#[test]
fn fault_v3d_rf0_across_implicit_clobbers_a_varying() {
    use schedra_compiler::Fault;
    let src = schedra_ir::parse::parse(b"target v3d71\nb0:\n  %a = ldvary 0\n  %b = ldvary 1\n  %c = ldvary 2\n  %p = fmul %a, %b\n  %q = fmul %p, %c\n  %r = fmul %q, %a\n  tlbw %r\n  end\n", None).expect("parse");
    for ra in [Ra::Split, Ra::Graph] {
        let good = compile(&src, &with(ra, None)).expect("compile");
        assert_eq!(differs(&src, &good.program), None);
        let bad = compile(&src, &with(ra, Some(Fault::V3dRf0AcrossImplicit))).expect("compile with fault");
        assert!(differs(&src, &bad.program).is_some(), "{ra:?}: the fault did not change behaviour:\n{}", bad.program);
        assert_eq!(verdict(&src, &bad.program), schedra_verify::Verdict::Violation);
    }
}

#[test]
fn fault_ra_split_preallocated_clobbers_a_swapped_input() {
    use schedra_compiler::Fault;
    let text = b"target r600\nstage vertex\ninput %a = $R1.x\ninput %b = $R1.y\nb0:\n  $R1.x = mov %b\n  $R1.y = mov %a\n  export 0, $R1.x\n  export 1, $R1.y\n  end\n";
    let src = schedra_ir::parse::parse(text, None).expect("parse");
    let good = compile(&src, &with(Ra::Split, None)).expect("compile");
    assert_eq!(differs(&src, &good.program), None);
    let bad = compile(&src, &with(Ra::Split, Some(Fault::RaSplitPreallocated))).expect("compile with fault");
    assert!(differs(&src, &bad.program).is_some(), "the fault did not change behaviour:\n{}", bad.program);
    assert_eq!(verdict(&src, &bad.program), schedra_verify::Verdict::Violation);
}

#[test]
fn fault_spill_no_reserve_clobbers_a_live_value() {
    use schedra_compiler::Fault;
    let src = pressure_program("v3d71", 90);
    for ra in [Ra::Split, Ra::Graph] {
        let bad = compile(&src, &with(ra, Some(Fault::SpillNoReserve))).expect("compile with fault");
        assert!(bad.stats.fills > 0);
        assert!(differs(&src, &bad.program).is_some(), "{ra:?}: the fault did not change behaviour");
        assert_eq!(verdict(&src, &bad.program), schedra_verify::Verdict::Violation);
    }
}

#[test]
fn fault_gen8_r127_spill_fill_breaks_the_r127_rule() {
    use schedra_compiler::Fault;
    let src = pressure_program("gen8", 90);
    for ra in [Ra::Split, Ra::Graph] {
        let good = compile(&src, &with(ra, None)).expect("compile");
        assert_eq!(rule_break(&good.program), None);
        let bad = compile(&src, &with(ra, Some(Fault::Gen8R127SpillFill))).expect("compile with fault");
        let e = rule_break(&bad.program).expect("a fill returns into g127");
        assert!(e.contains("g127") && e.contains("send.scratch_read"), "{e}");
        assert_eq!(verdict(&src, &bad.program), schedra_verify::Verdict::Violation);
    }
}

#[test]
fn machine_programs_are_proven_by_the_verifier() {
    let mut failures = Vec::new();
    for path in shaders() {
        let src = load(&path);
        for opts in combos() {
            let Ok(c) = compile(&src, &opts) else { continue };
            let r = schedra_verify::verify(&src, &c.program, &schedra_verify::VerifyOptions::default());
            if r.verdict == schedra_verify::Verdict::Violation {
                failures.push(format!("{} {opts:?}: {:?}", path.display(), r.violations.first()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The verifier's verdict on `machine` against `src`.
fn verdict(src: &Program, machine: &Program) -> schedra_verify::Verdict {
    schedra_verify::verify(src, machine, &schedra_verify::VerifyOptions::default()).verdict
}
