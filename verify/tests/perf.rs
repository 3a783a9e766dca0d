//! Performance: a 10k-instruction straight-line v3d71 program verifies in
//! well under a second (syntactic closure, no solver), and a one-register
//! mutation of it is refuted and diagnosed quickly too.

use schedra_verify::{verify, Kind, Verdict, VerifyOptions};
use std::time::Instant;

fn programs(n: usize, wrong_at: Option<usize>) -> (String, String) {
    let mut src = String::from("target v3d71\ninput %w = $rf1\nb0:\n    %x = ldunif 0\n    %y = ldunif 1\n");
    let mut mach = String::from("target v3d71\nform machine\ninput $rf1\nb0:\n    { sig: ldunif 0 }\n    { add: mov $rf4, $rf0 ; sig: ldunif 1 }\n    { add: mov $rf5, $rf0 }\n");
    for i in 0..n {
        src.push_str("    %x = fadd %x, %w\n    %y = fmul %y, %w\n");
        let b = if wrong_at == Some(i) { "$rf4" } else { "$rf1" };
        mach.push_str(&format!("    {{ add: fadd $rf4, $rf4, $rf1 ; mul: fmul $rf5, $rf5, {b} }}\n"));
    }
    src.push_str("    tlbw %x\n    tlbw %y\n    end\n");
    mach.push_str("    { add: tlbw $rf4 }\n    { add: tlbw $rf5 ; sig: thrsw }\n    { }\n    { }\n    end\n");
    (src, mach)
}

fn run(n: usize, wrong_at: Option<usize>) -> (schedra_verify::Report, f64) {
    let (s, m) = programs(n, wrong_at);
    let src = schedra_ir::parse::parse(s.as_bytes(), None).expect("source parses");
    let mach = schedra_ir::parse::parse(m.as_bytes(), None).expect("machine parses");
    let t = Instant::now();
    let r = verify(&src, &mach, &VerifyOptions::default());
    (r, t.elapsed().as_secs_f64())
}

#[test]
fn ten_thousand_instructions_verify_fast() {
    let (r, secs) = run(5_000, None);
    assert_eq!(r.verdict, Verdict::Proven, "{}", r.to_json());
    assert_eq!(r.obligations.smt, 0);
    assert!(secs < 1.0, "took {secs:.3} s");
}

#[test]
fn a_mutation_deep_in_a_long_chain_is_found_and_located() {
    let (r, secs) = run(5_000, Some(1234));
    assert_eq!(r.verdict, Verdict::Violation);
    let v = &r.violations[0];
    assert_eq!((v.kind, v.bundle), (Kind::Dataflow, 3 + 1234), "{}", r.to_json());
    assert!(secs < 10.0, "took {secs:.3} s");
}

#[test]
#[ignore]
fn timing_breakdown() {
    for w in [None, Some(1234)] {
        let (r, secs) = run(5_000, w);
        eprintln!("{w:?}: {secs:.3} s, reported {} ms", r.time_ms);
    }
}
