//! glmark2 and kmscube shaders from `../shared/real` (when present): every
//! shader, the templates included (completed with glmark2's run-time
//! additions, `schedra_frontend::glmark2`), is lowered for every target that
//! runs its stage; each lowered program is validated and agrees with the
//! independent evaluator on 10 seeds. The only shader that does not lower is,
//! on lima-gp, the textured vertex shader (no texture unit); the one with
//! `discard` lowers on every target that runs fragment shaders. Prints the
//! counts per target.

use schedra_compiler::{compile, Options, Ra, Sched};
use schedra_frontend::{check, lower, parse};
use schedra_verify::{verify, Verdict, VerifyOptions};
use std::path::PathBuf;

fn real_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/real");
    d.is_dir().then_some(d)
}

fn shaders(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["glmark2", "kmscube"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if ext == "vert" || ext == "frag" {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Why a shader may fail to lower for a target: the reasons the issue
/// names as clear errors.
fn expected_refusal(msg: &str) -> bool {
    msg.contains("texture sampling is not supported on target lima-gp")
}

#[test]
fn real_shaders_lower_and_agree_with_the_evaluator() {
    let Some(dir) = real_dir() else {
        println!("skipped: ../shared/real not present");
        return;
    };
    let shaders = shaders(&dir);
    let templates = shaders.iter().filter(|p| std::fs::read_to_string(p).unwrap_or_default().contains('$')).count();
    assert_eq!((shaders.len(), templates), (73, 10), "61 complete glmark2 shaders, 10 templates and 2 of kmscube");
    let mut failures = Vec::new();
    for t in schedra_ir::target::all() {
        if t.abi.is_none() {
            println!("{}: no shader ABI in its description yet, not lowered", t.name);
            continue;
        }
        let (mut lowered, mut checked, mut refused) = (0, 0, Vec::new());
        for path in &shaders {
            let p = path.to_string_lossy().to_string();
            let Some((_, Some(stage))) = parse::lang_of(&p) else { continue };
            if !lower::supports(t, stage) {
                continue;
            }
            let bytes = std::fs::read(path).unwrap_or_default();
            let parsed = match parse::parse_file(&p, &bytes, Some(stage)) {
                Ok(x) => x,
                Err(e) => {
                    failures.push(format!("{p} {}: does not parse: {e}", t.name));
                    continue;
                }
            };
            let req = lower::Request { entry: None, stage: Some(stage), name: None };
            let prog = match lower::lower(&parsed, t, &req) {
                Ok(x) => x,
                Err(e) if expected_refusal(&e.message) => {
                    refused.push(format!("{} ({})", path.file_name().and_then(|n| n.to_str()).unwrap_or(""), e.message));
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{p} {}: does not lower: {e}", t.name));
                    continue;
                }
            };
            lowered += 1;
            if let Err(e) = schedra_ir::validate::validate(&prog) {
                failures.push(format!("{p} {}: invalid lowered program: {e}", t.name));
                continue;
            }
            let results: Vec<Result<usize, String>> = (0..10u64).map(|seed| check::check(&parsed, t, &req, seed).map_err(|e| format!("seed {seed}: {e}"))).collect();
            let bad: Vec<String> = results.iter().filter_map(|r| r.clone().err()).collect();
            let defined: usize = results.iter().filter_map(|r| r.as_ref().ok()).sum();
            if bad.is_empty() && defined == 0 {
                failures.push(format!("{p} {}: no defined output on 10 seeds", t.name));
            } else if bad.is_empty() {
                checked += 1;
            } else {
                failures.push(format!("{p} {}: {}", t.name, bad[0]));
            }
        }
        println!("{}: {lowered} lowered, {checked} agree with the evaluator on 10 seeds; refused: {}", t.name, refused.join(", "));
        // Only a target without a texture path refuses a shader (the
        // textured vertex one).
        let refusals = usize::from(t.abi.is_some_and(|a| a.texture.is_none()));
        assert!(refused.len() <= refusals, "{}: refused {refused:?}", t.name);
        // A target running both stages lowers at least 30 of the corpus; one
        // running a single stage (gen8 fragment, lima-gp vertex) sees only part of it and lowers at
        // least 15. One running both with a texture path (v3d71, r600) also
        // lowers the ten textured shaders: at least 50.
        let both = t.abi.is_some_and(|a| a.vertex.is_some() && a.fragment.is_some());
        let textured = t.abi.is_some_and(|a| a.texture.is_some());
        let least = match (both, textured) {
            (true, true) => 50,
            (true, false) => 30,
            _ => 15,
        };
        assert!(lowered >= least, "{}: only {lowered} shaders lowered", t.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// glmark2's `ideas-logo-shadow.frag` (`if (color.w < 0.5) discard;`)
/// lowers on every target with a fragment discard, compiles in all four
/// modes and is proven.
#[test]
fn the_discarding_glmark2_shader_compiles_and_proves() {
    let Some(dir) = real_dir() else {
        println!("skipped: ../shared/real not present");
        return;
    };
    let path = dir.join("glmark2/ideas-logo-shadow.frag");
    let p = path.to_string_lossy().to_string();
    let bytes = std::fs::read(&path).expect("readable");
    let modes = [(Sched::TopDown, Ra::Split), (Sched::TopDown, Ra::Graph), (Sched::BottomUp, Ra::Split), (Sched::BottomUp, Ra::Graph)];
    let mut proven = 0;
    for t in schedra_ir::target::all().iter().filter(|t| t.ops.iter().any(|o| o.sem == schedra_ir::target::Sem::Discard)) {
        let src = schedra_frontend::lower_file(&p, &bytes, t, None, None).unwrap_or_else(|e| panic!("{}: {e}", t.name));
        let kills = src.blocks.iter().flat_map(|b| b.insts()).filter(|i| t.op(&i.opcode).is_some_and(|o| o.sem == schedra_ir::target::Sem::Discard)).count();
        assert_eq!(kills, 1, "{}:\n{src}", t.name);
        for (sched, ra) in modes {
            let c = compile(&src, &Options { sched, ra, ..Options::default() }).unwrap_or_else(|e| panic!("{} {sched:?} {ra:?}: {e}", t.name));
            let r = verify(&src, &c.program, &VerifyOptions { timeout_ms: 20_000 });
            assert_eq!(r.verdict, Verdict::Proven, "{} {sched:?} {ra:?}: {:?}", t.name, r.violations.first());
            proven += 1;
        }
    }
    assert_eq!(proven, 4 * 4, "v3d71, gen8, r600 and kepler in four modes");
}
