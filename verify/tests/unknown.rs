//! A solver timeout is `unknown`, never `proven`: 24-bit multiplication
//! reassociated on 12-bit operands is equal for every input (no sample can
//! refute it) but needs real bit-vector work, which a 1 ms budget cannot do.

use schedra_verify::{verify, Verdict, VerifyOptions};

pub const SRC: &str = "target v3d71
b0:
    %a = ldunif 0
    %b = ldunif 1
    %c = ldunif 2
    %m = ldconst 0xfff
    %a = and %a, %m
    %b = and %b, %m
    %c = and %c, %m
    %p = umul24 %a, %b
    %p = umul24 %p, %c
    tlbw %p
    end
";

pub const MACH: &str = "target v3d71
form machine
b0:
    { sig: ldunif 0 }
    { add: mov $rf4, $rf0 ; sig: ldunif 1 }
    { add: mov $rf5, $rf0 ; sig: ldunif 2 }
    { add: mov $rf6, $rf0 ; sig: ldconst 0xfff }
    { add: and $rf4, $rf4, $rf0 }
    { add: and $rf5, $rf5, $rf0 }
    { add: and $rf6, $rf6, $rf0 }
    { mul: umul24 $rf7, $rf5, $rf6 }
    { mul: umul24 $rf7, $rf4, $rf7 }
    { add: tlbw $rf7 ; sig: thrsw }
    { }
    { }
    end
";

fn run(timeout_ms: u64) -> schedra_verify::Report {
    let s = schedra_ir::parse::parse(SRC.as_bytes(), None).expect("source parses");
    let m = schedra_ir::parse::parse(MACH.as_bytes(), None).expect("machine parses");
    verify(&s, &m, &VerifyOptions { timeout_ms })
}

#[test]
fn a_solver_timeout_is_unknown_not_proven() {
    let r = run(1);
    assert_eq!(r.verdict, Verdict::Unknown, "{}", r.to_json());
    assert_eq!(r.obligations.unknown, 1);
    assert_eq!(r.exit_status(), 3);
}

#[test]
fn a_zero_timeout_gives_up_at_once() {
    // Z3 reads a timeout of 0 as "none": the verifier must not pass it on.
    let start = std::time::Instant::now();
    let r = run(0);
    assert_eq!(r.verdict, Verdict::Unknown, "{}", r.to_json());
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
}
