//! A fragment discard is an ordered effect (`Sem::Discard`): its condition
//! and its place among the block's outputs are compared like any effect's
//! words. On every target with one: a correct placement is proven; a
//! discard moved before an output, given another condition or dropped is a
//! violation naming it.

use schedra_verify::{verify, Kind, Report, Verdict, VerifyOptions};

fn check(src: &str, mach: &str) -> Report {
    let s = schedra_ir::parse::parse(src.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let m = schedra_ir::parse::parse(mach.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{mach}"));
    verify(&s, &m, &VerifyOptions::default())
}

/// Every target's source (an output, then a discard of an input; gen8's
/// output ends the thread, so there the discard comes first) and
/// machine forms: the correct one, the discard moved before the output,
/// the discard of another register, and the discard dropped.
struct Case {
    target: &'static str,
    op: &'static str,
    src: &'static str,
    good: &'static str,
    moved: &'static str,
    other: &'static str,
    dropped: &'static str,
}

const CASES: [Case; 4] = [
    Case {
        target: "kepler",
        op: "kil.nz",
        src: "target kepler\nb0:\n    %a = ipa 0\n    %c = ipa 1\n    st.out 0, %a\n    kil.nz %c\n    end\n",
        good: "target kepler\nform machine\nb0:\n    { i0: ipa $r1, 0 }\n    { i0: ipa $r2, 1 } wait 14\n    { i0: st.out 0, $r1 }\n    { i0: kil.nz $r2 }\n    end\n",
        moved: "target kepler\nform machine\nb0:\n    { i0: ipa $r1, 0 }\n    { i0: ipa $r2, 1 } wait 14\n    { i0: kil.nz $r2 }\n    { i0: st.out 0, $r1 }\n    end\n",
        other: "target kepler\nform machine\nb0:\n    { i0: ipa $r1, 0 }\n    { i0: ipa $r2, 1 } wait 14\n    { i0: st.out 0, $r1 }\n    { i0: kil.nz $r1 }\n    end\n",
        dropped: "target kepler\nform machine\nb0:\n    { i0: ipa $r1, 0 }\n    { i0: ipa $r2, 1 } wait 14\n    { i0: st.out 0, $r1 }\n    end\n",
    },
    Case {
        target: "r600",
        op: "killne_int",
        src: "target r600\nstage fragment\ninput %a = $R1.x\ninput %c = $R1.y\nb0:\n    export 0, %a\n    killne_int %c\n    end\n",
        good: "target r600\nform machine\nstage fragment\ninput $R1.x\ninput $R1.y\nb0:\n    { cf: export 0, $R1.x }\n    { x: killne_int $R1.y }\n    end\n",
        moved: "target r600\nform machine\nstage fragment\ninput $R1.x\ninput $R1.y\nb0:\n    { x: killne_int $R1.y }\n    { cf: export 0, $R1.x }\n    end\n",
        other: "target r600\nform machine\nstage fragment\ninput $R1.x\ninput $R1.y\nb0:\n    { cf: export 0, $R1.x }\n    { x: killne_int $R1.x }\n    end\n",
        dropped: "target r600\nform machine\nstage fragment\ninput $R1.x\ninput $R1.y\nb0:\n    { cf: export 0, $R1.x }\n    end\n",
    },
    Case {
        target: "v3d71",
        op: "setmsf.ifnz",
        src: "target v3d71\ninput %a = $rf1\ninput %c = $rf2\nb0:\n    tlbw %a\n    setmsf.ifnz %c\n    end\n",
        good: "target v3d71\nform machine\ninput $rf1\ninput $rf2\nb0:\n    { add: tlbw $rf1 }\n    { add: setmsf.ifnz $rf2 ; sig: thrsw }\n    { }\n    { }\n    end\n",
        moved: "target v3d71\nform machine\ninput $rf1\ninput $rf2\nb0:\n    { add: setmsf.ifnz $rf2 }\n    { add: tlbw $rf1 ; sig: thrsw }\n    { }\n    { }\n    end\n",
        other: "target v3d71\nform machine\ninput $rf1\ninput $rf2\nb0:\n    { add: tlbw $rf1 }\n    { add: setmsf.ifnz $rf1 ; sig: thrsw }\n    { }\n    { }\n    end\n",
        dropped: "target v3d71\nform machine\ninput $rf1\ninput $rf2\nb0:\n    { add: tlbw $rf1 ; sig: thrsw }\n    { }\n    { }\n    end\n",
    },
    Case {
        target: "gen8",
        op: "halt.nz",
        src: "target gen8\ninput %a = $g2\ninput %c = $g3\nb0:\n    halt.nz %c\n    $g112 = mov %a\n    send.eot $g112\n    end\n",
        good: "target gen8\nform machine\ninput $g2\ninput $g3\nb0:\n    halt.nz $g3\n    mov $g112, $g2\n    send.eot $g112\n    end\n",
        // The thread-ending send is the output and stays last: a discard
        // past it also breaks that rule.
        moved: "target gen8\nform machine\ninput $g2\ninput $g3\nb0:\n    mov $g112, $g2\n    send.eot $g112\n    halt.nz $g3\n    end\n",
        other: "target gen8\nform machine\ninput $g2\ninput $g3\nb0:\n    halt.nz $g2\n    mov $g112, $g2\n    send.eot $g112\n    end\n",
        dropped: "target gen8\nform machine\ninput $g2\ninput $g3\nb0:\n    mov $g112, $g2\n    send.eot $g112\n    end\n",
    },
];

fn names_the_discard(r: &Report, op: &str) -> bool {
    r.violations.iter().any(|v| v.kind == Kind::Dataflow && (v.message.contains(op) || v.message.contains("`discard`")))
}

#[test]
fn a_correct_discard_is_proven() {
    for c in &CASES {
        let r = check(c.src, c.good);
        assert_eq!(r.verdict, Verdict::Proven, "{}: {:?}", c.target, r.violations);
    }
}

#[test]
fn a_discard_moved_before_an_output_is_a_violation_naming_it() {
    for c in &CASES {
        let r = check(c.src, c.moved);
        assert_eq!(r.verdict, Verdict::Violation, "{}: {:?}", c.target, r.violations);
        let v = r.violations.iter().find(|v| v.message.contains(c.op)).unwrap_or_else(|| panic!("{}: {:?}", c.target, r.violations));
        assert_eq!(v.kind, Kind::Dataflow, "{}: {v:?}", c.target);
        // gen8's source discards before its one output, the others' after
        let (m, s) = if c.target == "gen8" { (1, 0) } else { (0, 1) };
        assert!(v.message.contains(&format!("discards after {m} of the block's outputs but the source after {s}: a discard moved across an output")), "{}: {}", c.target, v.message);
    }
}

#[test]
fn a_discard_of_another_condition_is_a_violation_naming_it() {
    for c in &CASES {
        let r = check(c.src, c.other);
        assert_eq!(r.verdict, Verdict::Violation, "{}: {:?}", c.target, r.violations);
        assert!(names_the_discard(&r, c.op), "{}: {:?}", c.target, r.violations);
    }
}

#[test]
fn a_dropped_discard_is_a_violation_naming_its_channel() {
    for c in &CASES {
        let r = check(c.src, c.dropped);
        assert_eq!(r.verdict, Verdict::Violation, "{}: {:?}", c.target, r.violations);
        let v = r.violations.iter().find(|v| v.message.contains("channel `discard`")).unwrap_or_else(|| panic!("{}: {:?}", c.target, r.violations));
        assert!(v.message.contains("the source writes channel `discard` 1 time(s), the machine only 0"), "{}: {}", c.target, v.message);
    }
}

#[test]
fn the_generic_rules_hold_for_discards() {
    // kepler: a flow op never issues first of a pair.
    let src = CASES[0].src;
    let paired = "target kepler\nform machine\nb0:\n    { i0: ipa $r1, 0 }\n    { i0: ipa $r2, 1 } wait 14\n    { i0: st.out 0, $r1 }\n    { i0: kil.nz $r2 ; i1: mov $r3, $r1 }\n    end\n";
    let r = check(src, paired);
    assert!(r.violations.iter().any(|v| v.kind == Kind::Slot && v.message.contains("kil.nz")), "{:?}", r.violations);
    // v3d71: a discard gates the TLB writes, so it stays out of the
    // thread-end delay slots.
    let late = "target v3d71\nform machine\ninput $rf1\ninput $rf2\nb0:\n    { add: tlbw $rf1 ; sig: thrsw }\n    { add: setmsf.ifnz $rf2 }\n    { }\n    end\n";
    let r = check(CASES[2].src, late);
    assert!(r.violations.iter().any(|v| v.kind == Kind::Hazard && v.message.contains("setmsf.ifnz")), "{:?}", r.violations);
}
