//! lima-gp end to end through the `schedra` binary: kmscube's vertex shader
//! (corpus/lima-gp/kmscube.ir) compiles in at most 40 instructions in the
//! default mode and is proven; every lima-gp corpus shader is proven in all
//! four modes; a fragment program is bad input; bad machine programs (a
//! read at distance 3, a store of a load, an unknown unit, more than 512
//! instructions) get a located violation, never a panic.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schedra(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).output().expect("run schedra");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A fresh file (tests run in parallel: every call gets its own directory).
fn temp(name: &str, text: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("schedra-lima-test-{}-{k}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write temp file");
    p
}

fn lima_shaders() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("corpus/lima-gp")).expect("corpus/lima-gp").filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "ir")).collect();
    v.sort();
    v
}

/// The instruction count `--stats` reports for `file` in one mode.
fn instructions(file: &str, ra: &str, sched: &str) -> usize {
    let out = temp(&format!("{ra}-{sched}.s"), "");
    let (code, _, err) = schedra(&["compile", file, "--ra", ra, "--sched", sched, "--stats", "-o", &out.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    let n = err.split(" inst").next().and_then(|s| s.rsplit(' ').next()).and_then(|s| s.parse().ok());
    n.unwrap_or_else(|| panic!("no instruction count in {err}"))
}

#[test]
fn kmscube_fits_in_40_instructions_and_is_proven() {
    let k = root().join("corpus/lima-gp/kmscube.ir");
    let k = k.to_string_lossy();
    let n = instructions(&k, "split", "topdown");
    assert!(n <= 40, "kmscube in {n} instructions");
    let (code, out, err) = schedra(&["verify", &k]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("proven"), "{out}");
}

#[test]
fn every_lima_shader_is_proven_in_every_mode() {
    let shaders = lima_shaders();
    assert!(shaders.len() >= 10, "{} lima-gp shaders", shaders.len());
    for f in shaders {
        for ra in ["split", "graph"] {
            for sched in ["topdown", "bottomup"] {
                let out = temp("m.s", "");
                let (code, _, err) = schedra(&["compile", &f.to_string_lossy(), "--ra", ra, "--sched", sched, "-o", &out.to_string_lossy()]);
                assert_eq!(code, 0, "{} {ra} {sched}: {err}", f.display());
                let (code, text, err) = schedra(&["verify", &f.to_string_lossy(), &out.to_string_lossy()]);
                assert_eq!(code, 0, "{} {ra} {sched}: {text}{err}", f.display());
            }
        }
    }
}

#[test]
fn a_fragment_program_is_bad_input() {
    let p = temp("frag.ir", "target lima-gp\nstage fragment\nb0:\n    end\n");
    let (code, _, err) = schedra(&["compile", &p.to_string_lossy()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("frag.ir:2:1:") && err.contains("vertex shaders only"), "{err}");
}

const SRC: &str = "target lima-gp\nb0:\n    %a = ld_att 0\n    %b = ld_uni 1\n    %c = add %a, %b\n    st_var 0, %c\n    end\n";
const MACH: &str = "target lima-gp\nform machine\nb0:\n    { reg0.x: ld_att 0 ; uni.y: ld_uni 1 }\n    { add0: add ^reg0.x.1, ^uni.y.0 ; uni.y: ld_uni 1 }\n    { }\n    { pass: mov ^add0.2 ; st.x: st_var 0, ^pass.0 }\n    end\n";

/// The first violation of verifying `mach` against SRC: kind, bundle, line, message.
fn first_violation(mach: &str) -> (String, u64, u64, String) {
    let s = temp("s.ir", SRC);
    let m = temp("m.s", mach);
    let (code, out, err) = schedra(&["verify", &s.to_string_lossy(), &m.to_string_lossy(), "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    let f = &v["violations"][0];
    (f["kind"].as_str().unwrap_or("").to_string(), f["bundle"].as_u64().unwrap_or(99), f["line"].as_u64().unwrap_or(0), f["message"].as_str().unwrap_or("").to_string())
}

#[test]
fn the_hand_schedule_is_proven_and_bad_machine_programs_are_located() {
    let s = temp("s.ir", SRC);
    let m = temp("ok.s", MACH);
    let (code, out, err) = schedra(&["verify", &s.to_string_lossy(), &m.to_string_lossy()]);
    assert_eq!(code, 0, "{out}{err}");
    let (kind, bundle, line, msg) = first_violation(&MACH.replace("mov ^add0.2", "mov ^add0.3"));
    assert_eq!((kind.as_str(), bundle, line), ("latency", 3, 7), "{msg}");
    assert!(msg.contains("maximum lifetime"), "{msg}");
    let (kind, _, line, msg) = first_violation(&MACH.replace("{ pass: mov ^add0.2 ; st.x: st_var 0, ^pass.0 }", "{ reg0.x: ld_att 0 ; st.x: st_var 0, ^reg0.x.0 }"));
    assert_eq!((kind.as_str(), line), ("register", 7), "{msg}");
    assert!(msg.contains("cannot be stored directly"), "{msg}");
    let (kind, _, line, msg) = first_violation(&MACH.replace("mov ^add0.2", "mov ^add7.2"));
    assert_eq!((kind.as_str(), line), ("register", 7), "{msg}");
    let (kind, _, _, msg) = first_violation(&MACH.replace("pass: mov", "frob: mov"));
    assert_eq!(kind, "slot", "{msg}");
    let long = MACH.replace("    { }\n", &"    { }\n".repeat(520));
    let (kind, _, _, msg) = first_violation(&long);
    assert!(kind == "slot" && msg.contains("512"), "{kind}: {msg}");
}

#[test]
fn bypass_reads_in_the_wrong_place_are_syntax_errors() {
    let p = temp("v.s", "target v3d71\nform machine\nb0:\n    { add: mov $rf1, ^add.1 }\n    end\n");
    let (code, _, err) = schedra(&["run", &p.to_string_lossy()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("v.s:4:22:"), "{err}");
    let p = temp("d.s", "target lima-gp\nform machine\nb0:\n    { add0: mov ^add0.256 }\n    end\n");
    let (code, _, err) = schedra(&["verify", &temp("s.ir", SRC).to_string_lossy(), &p.to_string_lossy()]);
    assert_eq!(code, 2, "{err}");
}

/// A program the campaign found (`schedra fuzz --target lima-gp --seed 3`,
/// reduced): its last select reads three values spilled to three register
/// vectors, more than the two register load units reach at once.
const THREE_VECTORS: &str = "target lima-gp\nb0:\n    %0 = ld_const 0\n    %1 = select %0, %0, %0\n    %2 = mul %0, %1\n    %3 = exp2 %0\n    %4 = floor %0\n    %2 = floor %0\n    %5 = mul %0, %4\n    %6 = exp2 %0\n    %7 = mul %3, %6\n    %8 = exp2 %7\n    %9 = mov %8\n    %10 = neg %0\n    %11 = mul %10, %9\n    %12 = select %0, %11, %0\n    %13 = select %12, %7, %0\n    %14 = exp2 %0\n    %12 = select %2, %9, %14\n    end\n";

#[test]
fn sources_spilled_to_three_register_vectors_are_scheduled() {
    let p = temp("three.ir", THREE_VECTORS);
    for ra in ["split", "graph"] {
        for sched in ["topdown", "bottomup"] {
            let (code, out, err) = schedra(&["verify", &p.to_string_lossy(), "--ra", ra, "--sched", sched]);
            assert_eq!(code, 0, "{ra} {sched}: {out}{err}");
        }
    }
}

/// `schedra run FILE --seed S`: exit status and standard output.
fn run(file: &str, seed: u64) -> (i32, String) {
    let (code, out, _) = schedra(&["run", file, "--seed", &seed.to_string()]);
    (code, out)
}

/// Compile `src` in every mode; each output proven and running like the
/// source on 20 seeds. The instruction count of each mode.
fn proven_and_same_in_every_mode(src: &str) -> Vec<(String, usize)> {
    let want: Vec<(i32, String)> = (0..20).map(|seed| run(src, seed)).collect();
    assert!(want.iter().all(|(c, _)| *c == 0), "{src}: the source runs");
    let mut counts = Vec::new();
    for ra in ["split", "graph"] {
        for sched in ["topdown", "bottomup"] {
            let out = temp("m.s", "");
            let out = out.to_string_lossy();
            let (code, _, err) = schedra(&["compile", src, "--ra", ra, "--sched", sched, "--stats", "-o", &out]);
            assert_eq!(code, 0, "{src} {ra} {sched}: {err}");
            let n = err.split(" inst").next().and_then(|s| s.rsplit(' ').next()).and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
            counts.push((format!("{ra}/{sched}"), n));
            let (code, text, err) = schedra(&["verify", src, &out]);
            assert!(code == 0 && text.starts_with("proven"), "{src} {ra} {sched}: {text}{err}");
            for (seed, w) in want.iter().enumerate() {
                assert_eq!(&run(&out, seed as u64), w, "{src} {ra} {sched} seed {seed}");
            }
        }
    }
    counts
}

#[test]
fn every_lima_shader_runs_like_its_source_in_every_mode() {
    for f in lima_shaders() {
        proven_and_same_in_every_mode(&f.to_string_lossy());
    }
}

#[test]
fn values_crossing_blocks_as_virtual_registers_compile() {
    for name in ["diamond-values.ir", "loop-values.ir", "split-range.ir"] {
        let f = root().join("corpus/lima-gp").join(name);
        let text = std::fs::read_to_string(&f).expect("corpus file");
        assert!(!text.contains("$r") || name == "split-range.ir", "{name} carries its cross-block values in virtual registers");
        proven_and_same_in_every_mode(&f.to_string_lossy());
    }
}

/// Real shaders with control flow and kmscube's, lowered by the front end
/// (`../shared/real`, when present).
#[test]
fn real_shaders_with_control_flow_compile_for_lima_gp() {
    let real = root().join("../shared/real");
    if !real.is_dir() {
        println!("skipped: ../shared/real not present");
        return;
    }
    for (shader, limit) in [("kmscube/cube-smooth.vert", Some(40)), ("glmark2/jellyfish.vert", None), ("glmark2/ideas-text.vert", None)] {
        let lowered = temp("lowered.ir", "");
        let lowered = lowered.to_string_lossy();
        let (code, _, err) = schedra(&["lower", &real.join(shader).to_string_lossy(), "--target", "lima-gp", "-o", &lowered]);
        assert_eq!(code, 0, "{shader}: {err}");
        let counts = proven_and_same_in_every_mode(&lowered);
        println!("{shader}: {counts:?}");
        if let Some(limit) = limit {
            let default = counts.iter().find(|(m, _)| m == "split/topdown").map_or(usize::MAX, |(_, n)| *n);
            assert!(default <= limit, "{shader} in {default} instructions");
        }
    }
}
