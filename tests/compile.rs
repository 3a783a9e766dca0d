//! End-to-end behaviour of `schedra compile` and `schedra_compiler::compile`:
//! every corpus shader and every spec example compiles in all four
//! `--ra` × `--sched` combinations, and the source, the allocated program
//! and the machine program give identical effects and branch traces under
//! the interpreters on 20 seeds. The CLI keeps its statuses and output shapes.

use schedra_compiler::{compile, regalloc, sched_pre, Options, Ra, Sched};
use schedra_fuzz::interp;
use schedra_ir::Program;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEEDS: u64 = 20;
const FUEL: u64 = 2_000_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "ir") {
            out.push(p);
        }
    }
}

/// Every corpus shader and every spec example source.
fn shaders() -> Vec<PathBuf> {
    let mut v = Vec::new();
    collect(&root().join("corpus"), &mut v);
    let ex = root().join("../shared/spec/examples");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&ex).map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path().join("src.ir"))).filter(|p| p.exists()).collect()).unwrap_or_default();
    dirs.sort();
    v.extend(dirs);
    v
}

fn load(path: &Path) -> Program {
    let bytes = std::fs::read(path).expect("read shader");
    schedra_ir::parse::parse(&bytes, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn combos() -> Vec<Options> {
    let mut v = Vec::new();
    for ra in [Ra::Split, Ra::Graph] {
        for sched in [Sched::TopDown, Sched::BottomUp] {
            v.push(Options { sched, ra, inject: None });
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

#[test]
fn allocated_programs_behave_like_their_sources() {
    let mut failures = Vec::new();
    for path in shaders() {
        let src = load(&path);
        for opts in combos() {
            let scheduled = sched_pre::schedule_program(&src, &opts);
            match regalloc::allocate(&scheduled, &opts) {
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
    let src = root().join("../shared/spec/examples/v3d71-mul/src.ir");
    let out = std::env::temp_dir().join(format!("schedra-compile-{}.s", std::process::id()));
    let o = schedra(&["compile", src.to_str().unwrap_or(""), "-o", out.to_str().unwrap_or(""), "--stats", "--ra", "graph", "--sched", "bottomup"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = String::from_utf8_lossy(&o.stderr);
    assert!(stats.starts_with("mul - v3d71 shader: ") && stats.contains(" inst, ") && stats.contains(" spills, "), "{stats}");
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
