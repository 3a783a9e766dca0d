//! The dataflow fixpoint over control flow: loops are proven without
//! unrolling, and wrong loop-carried values, wrong branch conditions and
//! wrong registers after a join are reported at the right block.

use schedra_verify::{verify, Kind, Report, Verdict, VerifyOptions};

const SRC: &str = "target v3d71
input %w = $rf1
entry:
    %i = ldunif 0
    %acc = ldunif 1
    jmp loop
loop:
    %acc = fadd %acc, %w
    %i = sub %i, 1
    brnz %i, latch, done
latch:
    jmp loop
done:
    tlbw %acc
    end
";

const MACH: &str = "target v3d71
form machine
input $rf1
entry:
    { sig: ldunif 0 }
    { add: mov $rf4, $rf0 ; sig: ldunif 1 }
    { add: mov $rf5, $rf0 }
    jmp loop
loop:
    { add: fadd $rf5, $rf5, $rf1 ; mul: sub $rf4, $rf4, 1 }
    brnz $rf4, latch, done
latch:
    jmp loop
done:
    { add: tlbw $rf5 ; sig: thrsw }
    { }
    { }
    end
";

fn check(src: &str, mach: &str) -> Report {
    let s = schedra_ir::parse::parse(src.as_bytes(), None).expect("source parses");
    let m = schedra_ir::parse::parse(mach.as_bytes(), None).unwrap_or_else(|e| panic!("machine parses: {e}\n{mach}"));
    verify(&s, &m, &VerifyOptions::default())
}

fn first(r: &Report) -> (Kind, String, usize) {
    let v = r.violations.first().unwrap_or_else(|| panic!("expected a violation: {}", r.to_json()));
    (v.kind, v.block.clone(), v.bundle)
}

#[test]
fn a_counted_loop_is_proven_without_unrolling() {
    let r = check(SRC, MACH);
    assert_eq!(r.verdict, Verdict::Proven, "{}", r.to_json());
    assert!(r.obligations.total >= 3, "{}", r.to_json());
}

#[test]
fn blocks_may_appear_in_any_order() {
    let reordered = MACH.replace("latch:\n    jmp loop\n", "").replace("loop:", "latch:\n    jmp loop\nloop:");
    assert_ne!(reordered, MACH);
    assert_eq!(check(SRC, &reordered).verdict, Verdict::Proven);
}

#[test]
fn a_wrong_loop_carried_value_is_found_in_the_loop() {
    let m = MACH.replace("latch:\n    jmp loop", "latch:\n    { add: fadd $rf5, $rf5, $rf1 }\n    jmp loop");
    let r = check(SRC, &m);
    assert_eq!(r.verdict, Verdict::Violation);
    let (kind, block, _) = first(&r);
    assert!(matches!(kind, Kind::Dataflow | Kind::Clobber), "{}", r.to_json());
    assert_eq!(block, "latch", "{}", r.to_json());
}

#[test]
fn a_wrong_branch_condition_is_a_dataflow_violation_at_the_terminator() {
    let r = check(SRC, &MACH.replace("sub $rf4, $rf4, 1", "sub $rf4, $rf4, 2"));
    let (kind, block, bundle) = first(&r);
    assert_eq!((kind, block.as_str()), (Kind::Dataflow, "loop"), "{}", r.to_json());
    assert!(bundle <= 1);
    let cex = r.violations[0].counterexample.as_ref().expect("a counterexample");
    assert_ne!(cex.source == 0, cex.machine == 0, "{cex:?}");
}

#[test]
fn reading_the_wrong_register_after_the_loop_is_reported_there() {
    let r = check(SRC, &MACH.replace("tlbw $rf5", "tlbw $rf4"));
    let (kind, block, bundle) = first(&r);
    assert_eq!((kind, block.as_str(), bundle), (Kind::Dataflow, "done", 0), "{}", r.to_json());
}

#[test]
fn a_clobbered_loop_value_is_a_clobber() {
    let m = MACH.replace("latch:\n    jmp loop", "latch:\n    { add: mov $rf5, $rf4 }\n    jmp loop");
    let r = check(SRC, &m);
    let (kind, block, bundle) = first(&r);
    assert_eq!((kind, block.as_str(), bundle), (Kind::Clobber, "latch", 0), "{}", r.to_json());
}

#[test]
fn different_edges_are_a_structure_violation() {
    let r = check(SRC, &MACH.replace("brnz $rf4, latch, done", "brnz $rf4, done, latch"));
    assert_eq!(first(&r).0, Kind::Structure, "{}", r.to_json());
    let r = check(SRC, &MACH.replace("latch:\n    jmp loop\n", ""));
    assert_eq!(first(&r).0, Kind::Structure, "{}", r.to_json());
}

#[test]
fn a_write_in_flight_at_a_block_end_is_latency() {
    let m = MACH.replace("    { add: fadd $rf5, $rf5, $rf1 ; mul: sub $rf4, $rf4, 1 }", "    { add: fadd $rf5, $rf5, $rf1 ; mul: sub $rf4, $rf4, 1 }\n    { add: recip $rf6, $rf1 }");
    let r = check(SRC, &m);
    let (kind, block, bundle) = first(&r);
    assert_eq!((kind, block.as_str(), bundle), (Kind::Latency, "loop", 2), "{}", r.to_json());
}
