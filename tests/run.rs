//! End-to-end tests of `schedra run` over `corpus/spec/`: every
//! example whose verdict in `cases.tsv` is `proven` prints the same effect
//! lines for its source and its machine program on seeds 0..10; the
//! `latency` and `clobber` examples print different lines for some seed.
//! Also the exit statuses of cli.md (fuel, bad input, JSON output).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/spec")
}

fn schedra(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).output().expect("the schedra binary runs")
}

/// The (case, verdict, kind) rows of cases.tsv.
fn cases() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(examples().join("cases.tsv")).expect("cases.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let at = |i: usize| f.get(i).map_or(String::new(), |s| s.to_string());
            (at(0), at(1), at(2))
        })
        .collect()
}

/// stdout of a successful `schedra run FILE --seed S`.
fn run(case: &str, file: &str, seed: u64) -> String {
    let path = examples().join(case).join(file);
    let path = path.to_str().expect("utf-8 path");
    let out = schedra(&["run", path, "--seed", &seed.to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{case}/{file} seed {seed}: {stderr}");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn proven_examples_print_identical_lines() {
    let proven: Vec<String> = cases().into_iter().filter(|c| c.1 == "proven").map(|c| c.0).collect();
    assert!(proven.len() >= 4, "cases.tsv lists the proven examples: {proven:?}");
    for case in &proven {
        for seed in 0..10 {
            let (src, out) = (run(case, "src.ir", seed), run(case, "out.s", seed));
            assert!(!src.trim().is_empty(), "{case}: the source has effects");
            assert_eq!(src, out, "{case} seed {seed}");
        }
    }
}

#[test]
fn latency_and_clobber_examples_differ() {
    let broken: Vec<String> = cases().into_iter().filter(|c| c.2 == "latency" || c.2 == "clobber").map(|c| c.0).collect();
    assert!(broken.iter().any(|c| c == "v3d71-mul-too-soon") && broken.iter().any(|c| c == "r600-swap-split"), "{broken:?}");
    for case in &broken {
        let differs = (0..10).any(|seed| run(case, "src.ir", seed) != run(case, "out.s", seed));
        assert!(differs, "{case} behaves like its source on every seed");
    }
}

#[test]
fn effect_lines_have_the_documented_shape() {
    let text = run("r600-swap", "out.s", 0);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, channel) in lines.iter().zip(["export 0", "export 1"]) {
        let word = line.strip_prefix(channel).and_then(|w| w.strip_prefix(" 0x")).unwrap_or("");
        assert!(word.len() == 8 && word.bytes().all(|b| b.is_ascii_hexdigit()), "{line}");
    }
}

#[test]
fn json_reports_effects_cycles_and_stalls() {
    let path = examples().join("gen8-spill/out.s");
    let out = schedra(&["run", path.to_str().expect("utf-8"), "--json", "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["effects"][0]["channel"], "rt");
    assert_eq!(v["effects"][0]["words"].as_array().map(Vec::len), Some(4));
    assert!(v["stalls"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(v["cycles"].as_u64().unwrap_or(0) > v["stalls"].as_u64().unwrap_or(0), "{v}");
    assert_eq!(v["executed"], 7);
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("schedra-run-test-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write a temporary file");
    path
}

#[test]
fn out_of_fuel_is_status_1() {
    let path = temp_file("loop.ir", "target v3d71\nb0:\n    %a = ldunif 0\n    jmp b0\n");
    let out = schedra(&["run", path.to_str().expect("utf-8"), "--fuel", "50"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fuel"));
}

#[test]
fn hazard_is_status_1() {
    let text = "target v3d71\nform machine\ninput $rf1\nb0:\n    { sig: ldvary 0 }\n    { add: mov $rf0, $rf1 }\n    end\n";
    let path = temp_file("hazard.s", text);
    let out = schedra(&["run", path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hazard"));
}

#[test]
fn a_broken_hardware_rule_is_status_1_naming_the_rule() {
    let path = examples().join("gen8-r127/out.s");
    let out = schedra(&["run", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("register rule") && err.contains("g127"), "{err}");
}

#[test]
fn bad_input_is_status_2_with_a_location() {
    let path = temp_file("bad.ir", "target v3d71\nb0:\n    %a = ldunif 0\n    ??\n");
    let p = path.to_str().expect("utf-8").to_string();
    let out = schedra(&["run", &p]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{p}:4:")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
