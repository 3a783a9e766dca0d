//! The contract's example pairs (`corpus/spec/cases.tsv`) through the library:
//! each pair must get exactly the verdict, kind, block and bundle listed.

use schedra_verify::{verify, Verdict, VerifyOptions};
use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/spec")
}

fn load(path: &PathBuf) -> schedra_ir::Program {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    schedra_ir::parse::parse(&text, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn spec_examples_get_their_listed_verdicts() {
    let dir = examples();
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).expect("cases.tsv");
    let mut ran = 0;
    for line in cases.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "bad line {line}");
        let src = load(&dir.join(f[0]).join("src.ir"));
        let mach = load(&dir.join(f[0]).join("out.s"));
        let r = verify(&src, &mach, &VerifyOptions::default());
        let json = r.to_json();
        match f[1] {
            "proven" => assert_eq!(r.verdict, Verdict::Proven, "{}: {json}", f[0]),
            _ => {
                assert_eq!(r.verdict, Verdict::Violation, "{}: {json}", f[0]);
                let v = &r.violations[0];
                assert_eq!((v.kind.as_str(), v.block.as_str(), v.bundle.to_string()), (f[2], f[3], f[4].to_string()), "{}: {json}", f[0]);
            }
        }
        eprintln!("{}: {json}", f[0]);
        ran += 1;
    }
    assert_eq!(ran, 7);
}
