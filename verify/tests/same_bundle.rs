//! Diagnosis per semantics.md's table on every target: a read that happens
//! before the write it needs has landed is `latency`, whatever the read
//! then sees. The plainest case is a read in the same bundle (v3d71,
//! kepler), ALU group (r600) or instruction (lima-gp) as its write. gen8 is
//! interlocked and single-issue: its reads wait for their writes, so the
//! same program order is proven there (with the stall counted), and two
//! ops in one bundle break the slot rule.

use schedra_verify::{verify, Kind, Report, Verdict, VerifyOptions};

fn check(src: &str, mach: &str) -> Report {
    let s = schedra_ir::parse::parse(src.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let m = schedra_ir::parse::parse(mach.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{mach}"));
    verify(&s, &m, &VerifyOptions::default())
}

/// The violation of `kind` at `bundle` of the entry block, if any.
fn at(r: &Report, kind: Kind, bundle: usize) -> bool {
    r.violations.iter().any(|v| v.kind == kind && v.bundle == bundle)
}

/// The value kinds present (latency, clobber, dataflow) in report order.
fn value_kinds(r: &Report) -> Vec<Kind> {
    r.violations.iter().map(|v| v.kind).filter(|k| matches!(k, Kind::Latency | Kind::Clobber | Kind::Dataflow)).collect()
}

#[test]
fn v3d71_a_read_in_the_bundle_of_its_write_is_latency() {
    let src = "target v3d71\ninput %a = $rf1\nb0:\n    %b = fadd %a, %a\n    %c = fmul %b, %a\n    tlbw %c\n    end\n";
    let good = "target v3d71\nform machine\ninput $rf1\nb0:\n    { add: fadd $rf4, $rf1, $rf1 }\n    { mul: fmul $rf5, $rf4, $rf1 }\n    { add: tlbw $rf5 ; sig: thrsw }\n    { }\n    { }\n    end\n";
    assert_eq!(check(src, good).verdict, Verdict::Proven, "{:?}", check(src, good).violations);
    let same = "target v3d71\nform machine\ninput $rf1\nb0:\n    { add: fadd $rf4, $rf1, $rf1 ; mul: fmul $rf5, $rf4, $rf1 }\n    { add: tlbw $rf5 ; sig: thrsw }\n    { }\n    { }\n    end\n";
    let r = check(src, same);
    assert_eq!(r.verdict, Verdict::Violation);
    assert!(at(&r, Kind::Latency, 0), "{:?}", r.violations);
    assert_eq!(value_kinds(&r).first(), Some(&Kind::Latency), "{:?}", r.violations);
}

#[test]
fn v3d71_a_read_before_ldvary_lands_is_latency_whatever_rf0_holds() {
    // rf0 still holds the uniform (a value of the program) when the fmul
    // reads it: the read is early, so the verdict is latency, not
    // dataflow or clobber.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/spec/v3d71-mul-too-soon");
    let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).expect("the example exists");
    let r = check(&read("src.ir"), &read("out.s"));
    assert_eq!(r.violations.first().map(|v| (v.kind, v.bundle)), Some((Kind::Latency, 2)), "{:?}", r.violations);
}

#[test]
fn r600_a_read_in_the_group_of_its_write_is_latency() {
    let src = "target r600\ninput %a = $R1.x\nb0:\n    %b = add %a, %a\n    %c = mul %b, %a\n    export 0, %c\n    end\n";
    let good = "target r600\nform machine\ninput $R1.x\nb0:\n    { x: add $R2.x, $R1.x, $R1.x }\n    { y: mul $R3.y, $R2.x, $R1.x }\n    { cf: export 0, $R3.y }\n    end\n";
    assert_eq!(check(src, good).verdict, Verdict::Proven, "{:?}", check(src, good).violations);
    let same = "target r600\nform machine\ninput $R1.x\nb0:\n    { x: add $R2.x, $R1.x, $R1.x ; y: mul $R3.y, $R2.x, $R1.x }\n    { cf: export 0, $R3.y }\n    end\n";
    let r = check(src, same);
    assert_eq!(r.verdict, Verdict::Violation);
    assert!(at(&r, Kind::Latency, 0), "{:?}", r.violations);
    assert_eq!(value_kinds(&r).first(), Some(&Kind::Latency), "{:?}", r.violations);
}

const KEPLER_SRC: &str = "target kepler\nb0:\n    %a = ld.const 0\n    %b = fadd %a, %a\n    %c = fmul %b, %a\n    st.out 0, %c\n    end\n";

#[test]
fn kepler_a_read_in_the_pair_of_its_write_is_latency() {
    let good = "target kepler\nform machine\nb0:\n    { i0: ld.const $r0, 0 } wait 8\n    { i0: fadd $r1, $r0, $r0 } wait 8\n    { i0: fmul $r2, $r1, $r0 } wait 8\n    { i0: st.out 0, $r2 }\n    end\n";
    assert_eq!(check(KEPLER_SRC, good).verdict, Verdict::Proven, "{:?}", check(KEPLER_SRC, good).violations);
    // The pair breaks the dual-issue rule (the second reads what the
    // first writes) and its read is early.
    let same = "target kepler\nform machine\nb0:\n    { i0: ld.const $r0, 0 } wait 8\n    { i0: fadd $r1, $r0, $r0 ; i1: fmul $r2, $r1, $r0 } wait 8\n    { i0: st.out 0, $r2 }\n    end\n";
    let r = check(KEPLER_SRC, same);
    assert_eq!(r.verdict, Verdict::Violation);
    assert!(at(&r, Kind::Slot, 1), "{:?}", r.violations);
    assert!(at(&r, Kind::Latency, 1), "{:?}", r.violations);
    assert_eq!(value_kinds(&r).first(), Some(&Kind::Latency), "{:?}", r.violations);
}

#[test]
fn kepler_a_read_before_the_wait_is_over_is_latency() {
    let short = "target kepler\nform machine\nb0:\n    { i0: ld.const $r0, 0 } wait 8\n    { i0: fadd $r1, $r0, $r0 } wait 3\n    { i0: fmul $r2, $r1, $r0 } wait 8\n    { i0: st.out 0, $r2 }\n    end\n";
    let r = check(KEPLER_SRC, short);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(value_kinds(&r).first(), Some(&Kind::Latency), "{:?}", r.violations);
    assert!(at(&r, Kind::Latency, 2), "{:?}", r.violations);
}

#[test]
fn lima_gp_a_read_in_the_instruction_of_its_write_is_latency() {
    let src = "target lima-gp\nb0:\n    %a = ld_att 0\n    %b = ld_uni 1\n    %c = add %a, %b\n    %d = mul %c, %c\n    st_var 0, %d\n    end\n";
    let good = "target lima-gp\nform machine\nb0:\n    { reg0.x: ld_att 0 ; uni.y: ld_uni 1 ; add0: add ^reg0.x.0, ^uni.y.0 }\n    { mul0: mul ^add0.1, ^add0.1 }\n    { pass: mov ^mul0.1 ; st.x: st_var 0, ^pass.0 }\n    end\n".to_string();
    assert_eq!(check(src, &good).verdict, Verdict::Proven, "{:?}", check(src, &good).violations);
    let same = good.replace("    { reg0.x: ld_att 0 ; uni.y: ld_uni 1 ; add0: add ^reg0.x.0, ^uni.y.0 }\n    { mul0: mul ^add0.1, ^add0.1 }\n", "    { reg0.x: ld_att 0 ; uni.y: ld_uni 1 ; add0: add ^reg0.x.0, ^uni.y.0 ; mul0: mul ^add0.0, ^add0.0 }\n    { }\n");
    assert_ne!(same, good);
    let r = check(src, &same);
    assert_eq!(r.verdict, Verdict::Violation);
    assert!(at(&r, Kind::Latency, 0), "{:?}", r.violations);
    assert_eq!(value_kinds(&r).first(), Some(&Kind::Latency), "{:?}", r.violations);
}

#[test]
fn gen8_reads_wait_for_their_writes_and_one_bundle_holds_one_op() {
    let src = "target gen8\ninput %a:2 = $g2:2\nb0:\n    %b:2 = add %a, %a\n    %c:2 = mul %b, %a\n    %t:4 = send.tex %c\n    send.eot %t\n    end\n";
    let next = "target gen8\nform machine\ninput $g2:2\nb0:\n    add $g4:2, $g2:2, $g2:2\n    mul $g6:2, $g4:2, $g2:2\n    send.tex $g120:4, $g6:2\n    send.eot $g120:4\n    end\n";
    let r = check(src, next);
    assert_eq!(r.verdict, Verdict::Proven, "{:?}", r.violations);
    let one_bundle = "target gen8\nform machine\ninput $g2:2\nb0:\n    { alu: add $g4:2, $g2:2, $g2:2 ; alu: mul $g6:2, $g4:2, $g2:2 }\n    send.tex $g120:4, $g6:2\n    send.eot $g120:4\n    end\n";
    let r = check(src, one_bundle);
    assert_eq!(r.violations.first().map(|v| v.kind), Some(Kind::Slot), "{:?}", r.violations);
}
