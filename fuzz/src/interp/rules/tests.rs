//! Each rule of `targets.md` that the checker reads, broken once on
//! purpose, and legal programs left alone.

use super::*;
use crate::interp::parse_text;

fn machine(target: &str, body: &str) -> Program {
    parse_text(&format!("target {target}\nform machine\n{body}"))
}

/// The kind of the rule `p` breaks, if any.
fn kind(p: &Program) -> Option<RuleKind> {
    match check(p) {
        Some(RunError::Rule { kind, .. }) => Some(kind),
        Some(other) => panic!("not a rule: {other:?}"),
        None => None,
    }
}

const END: &str = "    { sig: thrsw }\n    { }\n    { }\n    end\n";

#[test]
fn v3d71_slots_immediates_and_thread_end() {
    let ok = machine("v3d71", &format!("b0:\n    {{ add: add $rf4, $rf5, 1 ; mul: sub $rf6, $rf5, 1 }}\n{END}"));
    assert_eq!(kind(&ok), None);
    for bad in [
        "{ add: add $rf4, $rf5, 1 ; mul: sub $rf6, $rf5, 2 }",
        "{ add: add $rf4, $rf5, 100 }",
        "{ mul: fadd $rf4, $rf5, $rf6 }",
        "{ add: mov $rf4, $rf5 ; mul: mov $rf4, $rf6 }",
        "{ add: mov $rf4, $rf5 ; add: mov $rf6, $rf5 }",
        "{ alu: mov $rf4, $rf5 }",
    ] {
        assert_eq!(kind(&machine("v3d71", &format!("b0:\n    {bad}\n{END}"))), Some(RuleKind::Slot), "{bad}");
    }
    assert_eq!(kind(&machine("v3d71", "b0:\n    { add: mov $rf4, $rf5 }\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", "b0:\n    { sig: thrsw }\n    { }\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", "b0:\n    { sig: thrsw }\n    { add: recip $rf4, $rf5 }\n    { }\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", "b0:\n    { sig: thrsw ; add: mov $rf4, $rf5 }\n    { }\n    { }\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", "b0:\n    { sig: thrsw }\n    { add: mov $rf4, $rf2 }\n    { }\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", "b0:\n    { sig: thrsw }\n    { }\n    { sig: ldvary 0 }\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", &format!("b0:\n    {{ sig: thrsw }}\n    jmp b1\nb1:\n{END}"))), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("v3d71", &format!("b0:\n    {{ add: mov $rf70, $rf5 }}\n{END}"))), Some(RuleKind::Register));
}

#[test]
fn gen8_registers_and_end_of_thread() {
    assert_eq!(kind(&machine("gen8", "b0:\n    mov $g3, $g2\n    send.eot $g120:4\n    end\n")), None);
    assert_eq!(kind(&machine("gen8", "b0:\n    mov $g0, $g2\n    send.eot $g120:4\n    end\n")), Some(RuleKind::Register));
    assert_eq!(kind(&machine("gen8", "b0:\n    send.eot $g20:4\n    end\n")), Some(RuleKind::Register));
    assert_eq!(kind(&machine("gen8", "b0:\n    send.eot $g120:4\n    mov $g3, $g2\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("gen8", "b0:\n    mov $g3, $g2\n    end\n")), Some(RuleKind::Hazard));
    assert_eq!(kind(&machine("gen8", "b0:\n    send.scratch_read $g126:2, 0\n    send.eot $g120:4\n    end\n")), Some(RuleKind::Register));
    assert_eq!(kind(&machine("gen8", "b0:\n    add $g4:2, $g5:2, $g8:2\n    send.eot $g120:4\n    end\n")), Some(RuleKind::Register));
    assert_eq!(kind(&machine("gen8", "b0:\n    add $g4, 1.0, $g5\n    send.eot $g120:4\n    end\n")), Some(RuleKind::Slot));
}

#[test]
fn r600_channels_ports_and_immediates() {
    assert_eq!(kind(&machine("r600", "b0:\n    { x: add $R0.x, $R1.x, $R2.y ; y: mov $R0.y, $R1.x }\n    end\n")), None);
    assert_eq!(kind(&machine("r600", "b0:\n    { x: mov $R0.y, $R1.x }\n    end\n")), Some(RuleKind::Slot));
    let ports = "b0:\n    { x: add $R0.x, $R1.x, $R2.x ; y: add $R0.y, $R3.x, $R4.x ; z: add $R0.z, $R5.x, $R6.x ; w: add $R0.w, $R7.x, $R8.x }\n    end\n";
    assert_eq!(kind(&machine("r600", ports)), Some(RuleKind::Slot));
    let imms = "b0:\n    { x: add $R0.x, 1.0, 2.0 ; y: add $R0.y, 3.0, 4.0 ; z: mov $R0.z, 5.0 }\n    end\n";
    assert_eq!(kind(&machine("r600", imms)), Some(RuleKind::Slot));
    assert_eq!(kind(&machine("r600", "b0:\n    { x: mov $R1.x, 1.0 ; t: mov $R1.x, 2.0 }\n    end\n")), Some(RuleKind::Slot));
}

#[test]
fn kepler_dual_issue_waits_and_sfu_spacing() {
    assert_eq!(kind(&machine("kepler", "b0:\n    { i0: fadd $r1, $r2, $r3 ; i1: fmul $r4, $r2, $r3 }\n    end\n")), None);
    assert_eq!(kind(&machine("kepler", "b0:\n    { i0: fadd $r1, $r2, $r3 ; i1: fmul $r4, $r1, $r3 }\n    end\n")), Some(RuleKind::Slot));
    assert_eq!(kind(&machine("kepler", "b0:\n    { i0: tex $r1, $r2 ; i1: mov $r4, $r3 }\n    end\n")), Some(RuleKind::Slot));
    assert_eq!(kind(&machine("kepler", "b0:\n    { i0: rcp $r1, $r2 }\n    { i0: rcp $r3, $r2 }\n    end\n")), Some(RuleKind::Slot));
    assert_eq!(kind(&machine("kepler", "b0:\n    { i0: rcp $r1, $r2 } wait 3\n    { i0: rcp $r3, $r2 } wait 2\n    end\n")), None);
    assert_eq!(kind(&machine("kepler", "b0:\n    { i0: fadd $r1, $r2, 0x3f800001 }\n    end\n")), Some(RuleKind::Slot));
}

#[test]
fn targets_without_a_family_are_not_checked_here() {
    let p = parse_text("target lima-gp\nform machine\nb0:\n    end\n");
    assert!(family(p.target).is_none());
    assert_eq!(check(&p), None);
}
