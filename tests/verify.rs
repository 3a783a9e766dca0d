//! End-to-end behaviour of `schedra verify` (cli.md): every line of
//! `corpus/spec/cases.tsv` gets exactly its verdict, kind, block
//! and bundle through `--json`; hand-written mutations of the proven
//! examples are never proven; statuses 0/1/2/3 and the human output.

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/spec")
}

fn schedra(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).output().expect("run schedra");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn verify_json(src: &Path, out: &Path) -> (i32, serde_json::Value) {
    let (code, stdout, stderr) = schedra(&["verify", &src.to_string_lossy(), &out.to_string_lossy(), "--json"]);
    let v = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout} {stderr}"));
    (code, v)
}

#[test]
fn every_spec_case_gets_its_listed_verdict_kind_and_location() {
    let dir = examples();
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).expect("cases.tsv");
    let mut n = 0;
    for line in cases.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "malformed line {line:?}");
        let (code, v) = verify_json(&dir.join(f[0]).join("src.ir"), &dir.join(f[0]).join("out.s"));
        assert_eq!(v["verdict"], f[1], "{}: {v}", f[0]);
        for key in ["target", "violations", "obligations", "cycles", "time_ms"] {
            assert!(v.get(key).is_some(), "{}: missing {key}", f[0]);
        }
        if f[1] == "proven" {
            assert_eq!(code, 0, "{}", f[0]);
            assert_eq!(v["violations"].as_array().map(Vec::len), Some(0));
        } else {
            assert_eq!(code, 1, "{}", f[0]);
            let first = &v["violations"][0];
            assert_eq!(first["kind"], f[2], "{}: {v}", f[0]);
            assert_eq!(first["block"], f[3], "{}: {v}", f[0]);
            assert_eq!(first["bundle"].as_u64().map(|b| b.to_string()).as_deref(), Some(f[4]), "{}: {v}", f[0]);
            assert!(first["line"].as_u64().is_some_and(|l| l > 0));
        }
        n += 1;
    }
    assert!(n >= 7, "only {n} cases ran");
}

/// Write `text` to a fresh temporary file and return its path.
fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedra-verify-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write temp file");
    p
}

fn example(case: &str, file: &str) -> String {
    std::fs::read_to_string(examples().join(case).join(file)).expect("example file")
}

/// Apply `edit` to the machine program of `case`; the result must be a
/// violation (exit 1) of one of `kinds`.
fn mutant(case: &str, name: &str, edit: impl Fn(&str) -> String, kinds: &[&str]) {
    let original = example(case, "out.s");
    let changed = edit(&original);
    assert_ne!(changed, original, "{name}: the edit changed nothing");
    let out = temp(&format!("{case}-{name}.s"), &changed);
    let (code, v) = verify_json(&examples().join(case).join("src.ir"), &out);
    assert_eq!(v["verdict"], "violation", "{case}/{name}: {v}\n{changed}");
    assert_eq!(code, 1);
    let kind = v["violations"][0]["kind"].as_str().unwrap_or("");
    assert!(kinds.contains(&kind), "{case}/{name}: kind {kind}, expected one of {kinds:?}: {v}");
}

fn lines_swapped(text: &str, a: &str, b: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let i = lines.iter().position(|l| l.contains(a)).expect("first line");
    let j = lines.iter().position(|l| l.contains(b)).expect("second line");
    lines.swap(i, j);
    lines.join("\n") + "\n"
}

fn line_dropped(text: &str, needle: &str) -> String {
    text.lines().filter(|l| !l.contains(needle)).map(|l| format!("{l}\n")).collect()
}

#[test]
fn mutations_of_proven_examples_are_never_proven() {
    // v3d71-mul: swap the two fmul bundles, rename a register, drop ops.
    mutant("v3d71-mul", "swap", |t| lines_swapped(t, "fmul $rf5, $rf4, $rf0", "fmul $rf5, $rf5, $rf1"), &["latency", "dataflow", "clobber"]);
    mutant("v3d71-mul", "reg", |t| t.replace("fmul $rf5, $rf5, $rf1", "fmul $rf5, $rf5, $rf2"), &["dataflow"]);
    mutant("v3d71-mul", "drop-mov", |t| t.replace("add: mov $rf4, $rf0 ; ", ""), &["dataflow", "clobber", "latency"]);
    mutant("v3d71-mul", "drop-nop", |t| t.replacen("    { }\n", "", 1), &["latency"]);
    mutant("v3d71-mul", "drop-thrsw", |t| t.replace(" ; sig: thrsw", ""), &["hazard"]);
    mutant("v3d71-mul", "slot", |t| t.replace("mul: fmul $rf5, $rf5, $rf1", "add: fmul $rf5, $rf5, $rf1"), &["slot"]);
    mutant("v3d71-mul", "unknown-op", |t| t.replace("fmul $rf5, $rf5, $rf1", "fmulx $rf5, $rf5, $rf1"), &["structure"]);
    mutant("v3d71-mul", "out-of-range", |t| t.replace("fmul $rf5, $rf5, $rf1", "fmul $rf70, $rf5, $rf1"), &["register"]);
    // v3d71-add-as-shl: a wrong shift amount is refuted by bit-vectors.
    mutant("v3d71-add-as-shl", "shl2", |t| t.replace("shl $rf4, $rf0, 1", "shl $rf4, $rf0, 2"), &["dataflow"]);
    // r600-swap: one channel renamed; the two exports swapped.
    mutant("r600-swap", "reg", |t| t.replace("y: mov $R1.y, $R1.x", "y: mov $R1.y, $R1.z"), &["dataflow"]);
    mutant("r600-swap", "exports", |t| t.replace("export 0, $R1.x", "export 0, $R1.y"), &["dataflow"]);
    // gen8-spill: the spill dropped; the fill from the wrong slot; the
    // end-of-thread send moved before the texture.
    mutant("gen8-spill", "no-spill", |t| line_dropped(t, "send.scratch_write"), &["dataflow"]);
    mutant("gen8-spill", "wrong-slot", |t| t.replace("send.scratch_read $g14:2, 0", "send.scratch_read $g14:2, 4"), &["dataflow"]);
    mutant("gen8-spill", "eot-early", |t| lines_swapped(t, "send.tex", "send.eot"), &["hazard", "dataflow"]);
    mutant("gen8-spill", "reserved", |t| t.replace("mul $g10:2", "mul $g0:2").replace("send.scratch_write 0, $g10:2", "send.scratch_write 0, $g0:2"), &["register"]);
}

#[test]
fn a_counterexample_comes_with_dataflow_violations() {
    let out = temp("shl3.s", &example("v3d71-add-as-shl", "out.s").replace("$rf0, 1", "$rf0, 3"));
    let (_, v) = verify_json(&examples().join("v3d71-add-as-shl").join("src.ir"), &out);
    let cex = &v["violations"][0]["counterexample"];
    let (s, m) = (cex["source"].as_u64().expect("source value"), cex["machine"].as_u64().expect("machine value"));
    let x = cex["inputs"][0][1].as_u64().expect("an input word") as u32;
    assert_eq!((s as u32, m as u32), (x.wrapping_add(x), x << 3));
}

#[test]
fn a_violating_pair_replays_with_its_words_and_shows_the_first_differing_effect() {
    // `shl $rf4, $rf0, 3` where the source adds the uniform to itself.
    let out = temp("shl3.s", &example("v3d71-add-as-shl", "out.s").replace("$rf0, 1", "$rf0, 3"));
    let src = examples().join("v3d71-add-as-shl").join("src.ir");
    let (code, stdout, stderr) = schedra(&["verify", &src.to_string_lossy(), &out.to_string_lossy(), "--json", "--replay"]);
    assert_eq!(code, 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let first = &v["violations"][0];
    let words = first["counterexample"]["words"].as_array().expect("input words");
    assert!(!words.is_empty() && words.iter().all(|w| w["input"].is_string() && w["word"].is_u64()), "{first}");
    let replay = &first["replay"];
    assert_eq!(replay["replays"], true, "{first}");
    let (s, m) = (first["counterexample"]["source"].as_u64(), first["counterexample"]["machine"].as_u64());
    // The replayed effect carries the verifier's two values.
    assert_eq!(replay["source"][0].as_u64(), s, "{first}");
    assert_eq!(replay["machine"][0].as_u64(), m, "{first}");
    assert!(replay["channel"].is_string() && replay["difference"].as_str().is_some_and(|d| d.contains("effect 0")), "{first}");
    // The text report names the words and the replayed difference.
    let (code, text, _) = schedra(&["verify", &src.to_string_lossy(), &out.to_string_lossy(), "--replay"]);
    assert_eq!(code, 1);
    assert!(text.contains("input words: ") && text.contains("replays: effect 0 on"), "{text}");
    // The proven original has nothing to replay.
    let (code, text, _) = schedra(&["verify", &src.to_string_lossy(), &examples().join("v3d71-add-as-shl/out.s").to_string_lossy(), "--replay"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("replay: no violation carries a counterexample"), "{text}");
}

#[test]
fn statuses_and_human_output() {
    let dir = examples();
    let src = dir.join("v3d71-mul-too-soon/src.ir");
    let out = dir.join("v3d71-mul-too-soon/out.s");
    let (code, stdout, _) = schedra(&["verify", &src.to_string_lossy(), &out.to_string_lossy()]);
    assert_eq!(code, 1);
    assert!(stdout.contains("latency") && stdout.contains("fmul $rf5, $rf4, $rf0") && stdout.contains("%b = ldvary 0"), "{stdout}");

    let bad = temp("bad.s", "shader x\ntarget v3d71\nform machine\nb0:\n    { add: fadd $rf4 $rf4 }\n    end\n");
    let (code, _, stderr) = schedra(&["verify", &src.to_string_lossy(), &bad.to_string_lossy()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.s:5:"), "{stderr}");

    let bad_src = temp("bad.ir", "target v3d71\nb0:\n    %a = fadd %zz, 1\n    end\n");
    let (code, _, stderr) = schedra(&["verify", &bad_src.to_string_lossy(), &out.to_string_lossy()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.ir:"), "{stderr}");

    let (code, _, _) = schedra(&["verify", &out.to_string_lossy(), &out.to_string_lossy()]);
    assert_eq!(code, 2, "a machine-form file is not a source");
}

#[test]
fn one_file_compiles_and_verifies() {
    let src = examples().join("v3d71-mul/src.ir");
    let (code, stdout, stderr) = schedra(&["verify", &src.to_string_lossy(), "--json"]);
    assert_eq!(code, 0, "{stdout} {stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(v["verdict"], "proven");
}

#[test]
fn a_solver_timeout_exits_3_with_verdict_unknown() {
    // 24-bit products of 12-bit operands, reassociated: equal for all
    // inputs, but beyond a 1 ms solver budget.
    let src = temp(
        "assoc.ir",
        "target v3d71\nb0:\n    %a = ldunif 0\n    %b = ldunif 1\n    %c = ldunif 2\n    %m = ldconst 0xfff\n    %a = and %a, %m\n    %b = and %b, %m\n    %c = and %c, %m\n    %p = umul24 %a, %b\n    %p = umul24 %p, %c\n    tlbw %p\n    end\n",
    );
    let out = temp(
        "assoc.s",
        "target v3d71\nform machine\nb0:\n    { sig: ldunif 0 }\n    { add: mov $rf4, $rf0 ; sig: ldunif 1 }\n    { add: mov $rf5, $rf0 ; sig: ldunif 2 }\n    { add: mov $rf6, $rf0 ; sig: ldconst 0xfff }\n    { add: and $rf4, $rf4, $rf0 }\n    { add: and $rf5, $rf5, $rf0 }\n    { add: and $rf6, $rf6, $rf0 }\n    { mul: umul24 $rf7, $rf5, $rf6 }\n    { mul: umul24 $rf7, $rf4, $rf7 }\n    { add: tlbw $rf7 ; sig: thrsw }\n    { }\n    { }\n    end\n",
    );
    let (code, stdout, stderr) = schedra(&["verify", &src.to_string_lossy(), &out.to_string_lossy(), "--json", "--timeout-ms", "1"]);
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"));
    assert_eq!((code, v["verdict"].as_str()), (3, Some("unknown")), "{v}");
    assert_eq!(v["obligations"]["unknown"], 1);
}
