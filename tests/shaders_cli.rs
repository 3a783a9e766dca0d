//! `schedra lower`, and `compile`/`verify` given shader files (cli.md "Real
//! shaders"): the project's WGSL shaders lower, compile and prove from the
//! command line; rejected shaders exit 2 with one `path:line:col:` line;
//! kmscube's shaders (from ../shared/real, when present) prove on every
//! target that runs their stage.

use std::process::{Command, Output};

fn schedra(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("schedra runs")
}

#[test]
fn lower_prints_a_valid_source_form() {
    let o = schedra(&["lower", "corpus/shaders/cel-fragment.wgsl", "--target", "r600"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let p = schedra_ir::parse::parse(text.as_bytes(), None).expect("the output parses");
    assert_eq!(p.target.name, "r600");
    assert!(schedra_ir::validate::validate(&p).is_ok());
    assert!(text.contains("export 0,"), "{text}");
}

#[test]
fn a_glsl_file_takes_its_stage_from_the_flag() {
    let ok = schedra(&["verify", "corpus/shaders/cel.glsl", "--target", "r600", "--stage", "fragment"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let no = schedra(&["lower", "corpus/shaders/cel.glsl", "--target", "r600"]);
    assert_eq!(no.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no.stderr).starts_with("corpus/shaders/cel.glsl:1:1:"));
}

#[test]
fn compile_and_verify_take_shaders() {
    let c = schedra(&["compile", "corpus/shaders/lit-vertex.wgsl", "--target", "v3d71", "--ra", "graph"]);
    assert_eq!(c.status.code(), Some(0), "{}", String::from_utf8_lossy(&c.stderr));
    assert!(String::from_utf8_lossy(&c.stdout).contains("form machine"));
    for (f, t) in [("corpus/shaders/lit-vertex.wgsl", "r600"), ("corpus/shaders/textured-fragment.wgsl", "gen8"), ("corpus/shaders/textured-fragment.wgsl", "v3d71"), ("corpus/shaders/textured-fragment.wgsl", "r600"), ("corpus/shaders/textured-fragment.wgsl", "kepler"), ("corpus/shaders/cel-fragment.wgsl", "v3d71"), ("corpus/shaders/discard.frag", "v3d71"), ("corpus/shaders/discard.frag", "gen8"), ("corpus/shaders/discard.frag", "r600"), ("corpus/shaders/discard.frag", "kepler")] {
        let v = schedra(&["verify", f, "--target", t, "--json"]);
        assert_eq!(v.status.code(), Some(0), "{f} {t}: {}", String::from_utf8_lossy(&v.stdout));
        assert!(String::from_utf8_lossy(&v.stdout).contains("\"proven\""));
    }
}

#[test]
fn a_module_that_panics_naga_is_one_line_of_error() {
    let f = "corpus/shaders/bad/naga-panic.spv";
    for cmd in ["lower", "compile", "verify"] {
        let o = schedra(&[cmd, f, "--target", "gen8"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd}: naga's panic message is not shown: {err}");
        assert!(err.starts_with(&format!("{f}:1:1: SPIR-V: malformed module")), "{cmd}: {err}");
    }
}

#[test]
fn bad_shaders_exit_2_with_a_location() {
    let cases = [
        ("corpus/shaders/bad/syntax.wgsl", "3:35:"),
        ("corpus/shaders/bad/unknown-builtin.frag", "4:25:"),
        ("corpus/shaders/bad/dynamic-loop.frag", "5:25:"),
        ("corpus/shaders/bad/texture-vertex.vert", "5:28:"),
        ("corpus/shaders/textured-fragment.wgsl", "1:1:"),
    ];
    // A texture is an error on lima-gp, the one target without a texture
    // path in its ABI, and so is a fragment shader (lima-gp runs vertex
    // shaders only); every other target samples.
    let target = |f: &str| if f.contains("texture") { "lima-gp" } else { "v3d71" };
    for cmd in ["lower", "compile", "verify"] {
        for (f, loc) in cases {
            let o = schedra(&[cmd, f, "--target", target(f)]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{cmd} {f}: {err}");
            assert!(err.starts_with(&format!("{f}:{loc}")), "{cmd} {f}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{cmd} {f}: {err}");
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["lower", "corpus/shaders/cel-fragment.wgsl", "--target", "nosuch"][..],
        &["compile", "corpus/shaders/cel-fragment.wgsl"][..],
        &["lower", "corpus/shaders/cel-fragment.wgsl", "--target", "v3d71", "--stage", "geometry"][..],
        &["lower", "corpus/shaders/cel-fragment.wgsl", "--target", "v3d71", "--entry", "nosuch"][..],
        &["lower", "corpus/shaders/lit-vertex.wgsl", "--target", "gen8"][..],
        &["lower", "corpus/shaders/missing.wgsl", "--target", "gen8"][..],
    ] {
        let o = schedra(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn kmscube_proves_where_its_stage_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real/kmscube");
    if !dir.is_dir() {
        println!("skipped: ../shared/real not present");
        return;
    }
    for (f, targets) in [("cube-smooth.vert", &["v3d71", "r600"][..]), ("cube-smooth.frag", &["v3d71", "gen8", "r600"][..])] {
        let path = dir.join(f).to_string_lossy().to_string();
        for t in targets {
            let o = schedra(&["verify", &path, "--target", t]);
            assert_eq!(o.status.code(), Some(0), "{f} on {t}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        }
    }
}
