//! `schedra fuzz --seeds DIR` end to end: the project's own shaders
//! (corpus/shaders) lowered for the fuzzed target become seed programs of
//! a campaign, and a directory that gives none is a usage error
//! (docs/fuzzing.md, `schedra fuzz`).

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fuzz(args: &[&str], out: &str) -> Output {
    let dir = std::env::temp_dir().join(format!("schedra-seeds-cli-{}-{out}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_schedra")).arg("fuzz").args(args).args(["--out", &dir.to_string_lossy(), "--jobs", "1", "--no-reduce"]).current_dir(root()).output().expect("schedra runs");
    let _ = std::fs::remove_dir_all(&dir);
    o
}

/// The number in `fuzz: N seed programs from DIR` on standard error.
fn seed_count(stderr: &str) -> Option<usize> {
    stderr.lines().find_map(|l| l.strip_prefix("fuzz: ")?.split_once(" seed programs from ")?.0.parse().ok())
}

#[test]
fn shaders_seed_a_campaign() {
    let o = fuzz(&["--seeds", "corpus/shaders", "--target", "v3d71", "--time", "3s", "--json"], "ok");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // cel-fragment, discard, lit-vertex, phong-450 and textured-fragment
    // lower for v3d71; cel.glsl has no stage without --stage
    assert_eq!(seed_count(&err), Some(5), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert!(r["execs"].as_u64().is_some_and(|n| n > 0), "{r}");
}

#[test]
fn a_directory_without_seeds_is_a_usage_error() {
    // lima-gp runs vertex shaders only, and the one vertex shader there samples a texture
    let o = fuzz(&["--seeds", "corpus/shaders/bad", "--target", "lima-gp", "--time", "1s"], "bad");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no shader or source program there lowers"), "{err}");
    let o = fuzz(&["--seeds", "corpus/no-such-dir", "--time", "1s"], "missing");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn real_shaders_seed_every_target_that_runs_them() {
    let real = root().join("../shared/real/glmark2");
    if !real.is_dir() {
        println!("skipped: ../shared/real not present");
        return;
    }
    let o = fuzz(&["--seeds", &real.to_string_lossy(), "--target", "gen8", "--time", "2s"], "real");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // gen8 runs the 38 glmark2 fragment shaders, and every one lowers (the
    // one with `discard` through `halt.nz`)
    assert_eq!(seed_count(&err), Some(38), "{err}");
}
