//! The verifier on kepler: encoded waits, texture barriers, dual issue and
//! SFU spacing, each broken once in an otherwise proven program.

use schedra_verify::{verify, Kind, Verdict, VerifyOptions};

const SRC: &str = "target kepler
b0:
    %c = ipa 0
    %t = tex %c
    %a = fmul %t, 2.0
    %s = rcp %c
    %u = rsq %c
    st.out 0, %a
    st.out 1, %s
    st.out 2, %u
    end
";

const GOOD: &str = "target kepler
form machine
b0:
    { i0: ipa $r0, 0 } wait 14
    { i0: tex $r1, $r0 }
    { i0: rcp $r2, $r0 } wait 3
    { i0: rsq $r3, $r0 }
    { i0: texbar 0 }
    { i0: fmul $r1, $r1, 2.0 } wait 8
    { i0: st.out 0, $r1 }
    { i0: st.out 1, $r2 }
    { i0: st.out 2, $r3 }
    end
";

fn check(machine: &str) -> (Verdict, Vec<(Kind, String)>) {
    let r = verify_pair(SRC, machine);
    (r.verdict, r.violations.into_iter().map(|v| (v.kind, v.message)).collect())
}

/// The verifier's report on the source and machine texts.
fn verify_pair(src: &str, machine: &str) -> schedra_verify::Report {
    let s = schedra_ir::parse::parse(src.as_bytes(), None).expect("source parses");
    let m = schedra_ir::parse::parse(machine.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{machine}"));
    verify(&s, &m, &VerifyOptions::default())
}

fn has(v: &[(Kind, String)], kind: Kind, text: &str) -> bool {
    v.iter().any(|(k, m)| *k == kind && m.contains(text))
}

#[test]
fn the_guarded_program_is_proven() {
    let (verdict, v) = check(GOOD);
    assert_eq!(verdict, Verdict::Proven, "{v:?}");
}

#[test]
fn a_missing_texbar_is_latency_naming_the_tex() {
    let (verdict, v) = check(&GOOD.replace("    { i0: texbar 0 }\n", "    { } wait 30\n"));
    assert_eq!(verdict, Verdict::Violation);
    assert!(has(&v, Kind::Latency, "before a texbar waits for `tex` (bundle 1"), "{v:?}");
}

#[test]
fn a_write_to_a_tex_destination_before_its_texbar_is_latency() {
    let m = GOOD.replace("    { i0: texbar 0 }\n    { i0: fmul $r1, $r1, 2.0 } wait 8\n", "    { i0: mov $r1, 1.0 } wait 8\n    { i0: texbar 0 }\n    { i0: fmul $r1, $r1, 2.0 } wait 8\n");
    let (_, v) = check(&m);
    assert!(has(&v, Kind::Latency, "overwrites $r1 before a texbar waits for `tex`"), "{v:?}");
}

#[test]
fn too_short_a_wait_is_latency() {
    let (verdict, v) = check(&GOOD.replace("} wait 14", "} wait 12"));
    assert_eq!(verdict, Verdict::Violation);
    assert!(has(&v, Kind::Latency, "`ipa` issued at cycle 0 (bundle 0) lands at cycle 15"), "{v:?}");
}

#[test]
fn sfu_ops_closer_than_four_cycles_are_slot() {
    let (_, v) = check(&GOOD.replace("} wait 3\n", "} wait 2\n"));
    assert!(has(&v, Kind::Slot, "SFU ops issue at least 4 cycles apart"), "{v:?}");
}

#[test]
fn illegal_pairs_are_slot() {
    let stores = GOOD.replace("    { i0: st.out 0, $r1 }\n    { i0: st.out 1, $r2 }\n", "    { i0: st.out 0, $r1 ; i1: st.out 1, $r2 } wait 1\n");
    let (_, v) = check(&stores);
    assert!(has(&v, Kind::Slot, "cannot dual-issue"), "{v:?}");
    let after_tex = GOOD.replace("    { i0: tex $r1, $r0 }\n    { i0: rcp $r2, $r0 } wait 3\n", "    { i0: tex $r1, $r0 ; i1: rcp $r2, $r0 } wait 3\n    { } \n");
    let (_, v) = check(&after_tex);
    assert!(has(&v, Kind::Slot, "after `tex` in i0") || has(&v, Kind::Slot, "cannot issue in slot"), "{v:?}");
    // A legal pair, written with i1 first, is still judged as i0 then i1.
    let pair = GOOD.replace("    { i0: st.out 1, $r2 }\n    { i0: st.out 2, $r3 }\n", "    { i0: st.out 1, $r2 }\n    { i0: st.out 2, $r3 }\n").replace("    { i0: rcp $r2, $r0 } wait 3\n", "    { i1: rcp $r2, $r0 ; i0: mov $r4, $r0 } wait 3\n");
    let (verdict, v) = check(&pair);
    assert_eq!(verdict, Verdict::Proven, "{v:?}");
}

#[test]
fn a_reading_pair_is_refused_but_its_mirror_is_allowed() {
    let src = "target kepler\nb0:\n    %c = ipa 0\n    %a = fadd %c, 1.0\n    %b = fmul %c, %c\n    st.out 0, %a\n    st.out 1, %b\n    end\n";
    let ok = "target kepler\nform machine\nb0:\n    { i0: ipa $r0, 0 } wait 14\n    { i0: fadd $r1, $r0, 1.0 ; i1: fmul $r2, $r0, $r0 } wait 8\n    { i0: st.out 0, $r1 }\n    { i0: st.out 1, $r2 }\n    end\n";
    let raw = "target kepler\nform machine\nb0:\n    { i0: ipa $r0, 0 } wait 14\n    { i0: fadd $r1, $r0, 1.0 ; i1: fmul $r2, $r1, $r0 } wait 8\n    { i0: st.out 0, $r1 }\n    { i0: st.out 1, $r2 }\n    end\n";
    let run = |m: &str| verify_pair(src, m);
    assert_eq!(run(ok).verdict, Verdict::Proven, "{:?}", run(ok).violations);
    let r = run(raw);
    assert!(r.violations.iter().any(|v| v.kind == Kind::Slot && v.message.contains("reads what `fadd` writes")), "{:?}", r.violations);
}

#[test]
fn a_wait_out_of_range_built_in_memory_is_slot() {
    let src = schedra_ir::parse::parse(SRC.as_bytes(), None).expect("parses");
    let mut m = schedra_ir::parse::parse(GOOD.as_bytes(), None).expect("parses");
    m.blocks[0].bundles_mut()[0].wait = 40;
    let r = verify(&src, &m, &VerifyOptions::default());
    assert!(r.violations.iter().any(|v| v.kind == Kind::Slot && v.message.contains("`wait 40` is out of range")), "{:?}", r.violations);
}

/// `corpus/regressions/kepler-tex-over-fixed.ir`'s source: a `shr` and then
/// a `tex` write one register.
const WAW_SRC: &str = "target kepler
b0:
    %0 = mov 0
    %1 = shr %0, 0
    %1 = tex %0
    %0 = tex %0
    %2 = tex %0
    st.out 0, %1
    end
";

/// The peephole's output for [`WAW_SRC`] once: `tex $r0` issues while the
/// `shr`'s write to $r0 (landing at cycle 18) is in flight, and the
/// `texbar 0` that covers the texture is released at cycle 13.
const WAW_EARLY: &str = "target kepler
form machine
b0:
    { i0: mov $r1, 0 } wait 8
    { i0: shr $r0, $r1, 0 }
    { i0: tex $r0, $r1 }
    { i0: tex $r1, $r1 }
    { i0: texbar 0 }
    { i0: tex $r1, $r1 } wait 4
    { i0: st.out 0, $r0 }
    { i0: texbar 0 }
    end
";

#[test]
fn a_tex_over_a_fixed_latency_write_in_flight_is_latency() {
    let run = |m: &str| verify_pair(WAW_SRC, m);
    let r = run(WAW_EARLY);
    assert_eq!(r.verdict, Verdict::Violation);
    let want = "`tex` writes $r0 at a time the program cannot know while `shr` (bundle 1) is still in flight to it (landing at cycle 18)";
    assert!(r.violations.iter().any(|v| v.kind == Kind::Latency && v.bundle == 2 && v.message.contains(want)), "{:?}", r.violations);
    // Issued once the `shr`'s write has landed, the same order is proven.
    let landed = WAW_EARLY.replace("    { i0: shr $r0, $r1, 0 }\n", "    { i0: shr $r0, $r1, 0 } wait 8\n");
    let r = run(&landed);
    assert_eq!(r.verdict, Verdict::Proven, "{:?}", r.violations);
}

/// A scalar `tex` and then a four-register `tex.2d` in flight: `texbar 1`
/// covers the `tex` only (levels count ops, not registers), so a read of
/// the `tex.2d`'s first register after it is `latency`; `texbar 0` covers
/// both.
#[test]
fn a_barrier_level_counts_a_multi_register_sample_once() {
    let src = "target kepler
b0:
    %c = ipa 0
    %t = tex %c
    $r60 = mov %c
    $r61 = mov %c
    $r56:4 = tex.2d $r60:2
    %x = mov $r56
    %y = fmul %x, %t
    st.out 0, %y
    end
";
    let machine = "target kepler
form machine
b0:
    { i0: ipa $r0, 0 } wait 14
    { i0: tex $r1, $r0 }
    { i0: mov $r60, $r0 ; i1: mov $r61, $r0 } wait 8
    { i0: tex.2d $r56:4, $r60:2 }
    { i0: texbar LEVEL }
    { i0: fmul $r2, $r56, $r1 } wait 8
    { i0: st.out 0, $r2 }
    { i0: texbar 0 }
    end
";
    let run = |m: &str| verify_pair(src, m);
    let r = run(&machine.replace("LEVEL", "0"));
    assert_eq!(r.verdict, Verdict::Proven, "{:?}", r.violations);
    let r = run(&machine.replace("LEVEL", "1"));
    assert!(r.violations.iter().any(|v| v.kind == Kind::Latency && v.message.contains("reads $r56 before a texbar waits for `tex.2d`")), "{:?}", r.violations);
}

/// A barrier holds its next bundle at least until the texture it covers
/// can land (17 cycles after its issue), so a fixed-latency write in
/// flight at the barrier that lands within that hold may be read right
/// after it; once the texture was issued long enough before, the hold can
/// be as short as nothing and the same read is `latency`.
#[test]
fn a_barrier_holds_at_least_until_its_texture_can_land() {
    let src = "target kepler
b0:
    %c = ipa 0
    %t = tex %c
    %u = rsq %c
    %v = fadd %u, %t
    st.out 0, %v
    end
";
    let machine = "target kepler
form machine
b0:
    { i0: ipa $r0, 0 } wait 14
    { i0: tex $r1, $r0 }GAP
    { i0: rsq $r3, $r0 }
    { i0: texbar 0 }
    { i0: fadd $r2, $r3, $r1 } wait 8
    { i0: st.out 0, $r2 }
    end
";
    let run = |m: &str| verify_pair(src, m);
    // tex at cycle 15, rsq at 16 (lands at 25), texbar at 17: the fadd
    // issues at 32 at the earliest.
    let r = run(&machine.replace("GAP", ""));
    assert_eq!(r.verdict, Verdict::Proven, "{:?}", r.violations);
    // tex at 15, rsq at 36 (lands at 45), texbar at 37: the fadd may issue
    // at 38.
    let r = run(&machine.replace("GAP", " wait 20"));
    assert!(r.violations.iter().any(|v| v.kind == Kind::Latency && v.message.contains("reads $r3 while `rsq` (bundle 2) may not have landed")), "{:?}", r.violations);
}
