//! Nothing panics on any input: random line-level mutations of the spec
//! examples' machine programs (dropped, duplicated and swapped lines,
//! renamed registers, changed numbers) that still parse are verified, and
//! the verifier must return a report every time. Mutants of the two sources
//! are verified against the original machine programs as well.

use schedra_verify::{verify, VerifyOptions};
use std::path::PathBuf;

#[path = "../../tests/support/rng.rs"]
mod rng;
use rng::Rng;

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.below(3) {
        let n = lines.len();
        let i = rng.below(n);
        match rng.below(6) {
            0 if n > 1 => {
                lines.remove(i);
            }
            1 => {
                let l = lines.get(i).cloned().unwrap_or_default();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.below(n);
                lines.swap(i, j);
            }
            3 => {
                if let Some(l) = lines.get_mut(i) {
                    *l = l.replacen(['4', '5', '1', 'x'], ["0", "9", "2", "y"][rng.below(4)], 1);
                }
            }
            4 => {
                if let Some(l) = lines.get_mut(i) {
                    *l = l.replacen("$rf", "$rf1", 1).replacen("$g1", "$g12", 1);
                }
            }
            _ => {
                if let Some(l) = lines.get_mut(i) {
                    *l = l.replacen(" ; ", " }\n    { ", 1);
                }
            }
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn mutated_examples_never_panic() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/spec");
    let mut rng = Rng::new(0x5eed_1234_abcd_ef01);
    let opts = VerifyOptions { timeout_ms: 200 };
    let mut verified = 0;
    for case in ["v3d71-mul", "r600-swap", "gen8-spill", "v3d71-add-as-shl", "gen8-r127", "r600-swap-split", "v3d71-mul-too-soon"] {
        let src_text = std::fs::read_to_string(dir.join(case).join("src.ir")).expect("src");
        let mach_text = std::fs::read_to_string(dir.join(case).join("out.s")).expect("out");
        let src = schedra_ir::parse::parse(src_text.as_bytes(), None).expect("src parses");
        let mach = schedra_ir::parse::parse(mach_text.as_bytes(), None).expect("out parses");
        for _ in 0..150 {
            let m = mutate(&mach_text, &mut rng);
            if let Ok(p) = schedra_ir::parse::parse(m.as_bytes(), None) {
                let r = verify(&src, &p, &opts);
                assert!(!r.to_json().is_empty());
                verified += 1;
            }
            let s = mutate(&src_text, &mut rng);
            if let Ok(p) = schedra_ir::parse::parse(s.as_bytes(), None) {
                let r = verify(&p, &mach, &opts);
                assert!(!r.to_json().is_empty());
                verified += 1;
            }
        }
    }
    assert!(verified > 500, "only {verified} mutants parsed");
}
