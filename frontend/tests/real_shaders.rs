//! glmark2 and kmscube shaders from `../shared/real` (when present): every
//! shader, the templates included (completed with glmark2's run-time
//! additions, `schedra_frontend::glmark2`), is lowered for every target that
//! runs its stage; each lowered program is validated and agrees with the
//! independent evaluator on 10 seeds. The only shaders that do not lower are
//! the one with `discard` (no target has a fragment kill) and, on lima-gp,
//! the textured vertex shader (no texture unit). Prints the counts per target.

use schedra_frontend::{check, lower, parse};
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
    msg.contains("`discard` is not supported") || msg.contains("texture sampling is not supported on target lima-gp")
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
        assert!(refused.len() <= 1, "{}: refused {refused:?}", t.name);
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
