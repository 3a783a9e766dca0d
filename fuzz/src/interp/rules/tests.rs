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

/// A scheduled lima-gp program that breaks no rule (`interp::bypass`'s
/// test pair).
const LIMA: &str = "b0:\n { reg0.x: ld_att 0 ; uni.y: ld_uni 1 }\n { add0: add ^reg0.x.1, ^uni.y.0 ; uni.y: ld_uni 1 }\n { complex: rcp_impl ^add0.1 ; mul0: complex2 ^add0.1 ; pass: mov ^add0.1 ; st.y: st_reg $r1.y, ^pass.0 }\n { mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }\n { pass: mov ^mul0.2 ; st.x: st_var 0, ^pass.0 }\n jmp b1\nb1:\n { reg1.y: ld_reg $r1.y ; mul1: mul ^reg1.y.0, ^reg1.y.0 }\n { add0: mov ^mul1.1 ; st.y: st_var 1, ^add0.0 }\n end\n";

#[test]
fn lima_gp_shared_units_reads_and_sequences() {
    let lima = |from: &str, to: &str| {
        assert!(LIMA.contains(from), "{from}");
        kind(&machine("lima-gp", &LIMA.replace(from, to)))
    };
    assert_eq!(kind(&machine("lima-gp", LIMA)), None);
    // Slot: the add units share one opcode; complex1 takes both mul units; one
    // index and one kind of access per load unit, in the component's sub-slot.
    assert_eq!(lima("{ add0: mov ^mul1.1 ;", "{ add0: mov ^mul1.1 ; add1: min ^mul1.1, ^mul1.1 ;"), Some(RuleKind::Slot));
    assert_eq!(lima("{ add0: mov ^mul1.1 ;", "{ add0: mov ^mul1.1 ; add1: neg ^mul1.1 ;"), None);
    assert_eq!(lima("{ reg0.x: ld_att 0 ;", "{ reg0.x: ld_att 0 ; reg0.y: ld_att 5 ;"), Some(RuleKind::Slot));
    assert_eq!(lima("{ reg0.x: ld_att 0 ;", "{ reg0.x: ld_att 0 ; reg0.y: ld_att 1 ;"), None);
    assert_eq!(lima("{ reg0.x: ld_att 0 ;", "{ reg0.y: ld_att 0 ;"), Some(RuleKind::Slot));
    assert_eq!(lima("{ reg1.y: ld_reg $r1.y ;", "{ reg1.y: ld_att 1 ;"), Some(RuleKind::Slot));
    assert_eq!(lima("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }", "{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 ; mul1: mov ^pass.1 }"), Some(RuleKind::Slot));
    // Register: a unit that does not exist; the complex unit as a second
    // source; a store of what complex1 made (a store of a unit that made
    // nothing there is time, not a rule).
    assert_eq!(lima("mul1: mul ^reg1.y.0, ^reg1.y.0", "mul1: mul ^reg1.y.0, ^reg9.y.0"), Some(RuleKind::Register));
    assert_eq!(lima("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }", "{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 ; add0: add ^add0.2, ^complex.1 }"), Some(RuleKind::Register));
    assert_eq!(lima("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }", "{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }\n { st.z: st_reg $r2.z, ^mul0.0 }"), None);
    assert_eq!(lima("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }", "{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 ; st.z: st_reg $r2.z, ^mul0.0 }"), Some(RuleKind::Register));
    // Hazard: complex1 without complex2 right before; a move of a
    // schedule_first result.
    assert_eq!(lima("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }", "{ }\n { mul0: complex1 ^complex.2, ^mul0.2, ^pass.2 }"), Some(RuleKind::Hazard));
    assert_eq!(lima("{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 }\n { }", "{ mul0: complex1 ^complex.1, ^mul0.1, ^pass.1 ; add1: mov ^mul0.1 }\n { }"), Some(RuleKind::Hazard));
    // Time is not a rule: a read past its window stops the run instead.
    assert_eq!(lima("{ pass: mov ^mul0.2 ;", "{ pass: mov ^pass.3 ;"), None);
}

#[test]
fn lima_gp_length() {
    let long = format!("b0:\n{} end\n", " { }\n".repeat(513));
    assert_eq!(kind(&machine("lima-gp", &long)), Some(RuleKind::Slot));
}
