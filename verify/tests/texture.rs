//! The verifier on the texture paths of v3d71 (TMU coordinate writes, then
//! `ldtmu`) and r600 (`tex`, a TEX-clause fetch): each proven program is
//! broken once by hand, and the violation names the texture op.

use schedra_verify::{verify, Kind, Verdict, VerifyOptions};

fn check(src: &str, machine: &str) -> (Verdict, Vec<(Kind, String)>) {
    let src = schedra_ir::parse::parse(src.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let m = schedra_ir::parse::parse(machine.as_bytes(), None).unwrap_or_else(|e| panic!("{e}\n{machine}"));
    let r = verify(&src, &m, &VerifyOptions::default());
    (r.verdict, r.violations.into_iter().map(|v| (v.kind, v.message)).collect())
}

fn has(v: &[(Kind, String)], kind: Kind, text: &str) -> bool {
    v.iter().any(|(k, m)| *k == kind && m.contains(text))
}

/// `n` empty bundles, one per line.
fn nops(n: usize) -> String {
    "    { }\n".repeat(n)
}

const R600_SRC: &str = "target r600
stage fragment
input %u = $R0.x
input %v = $R0.y
b0:
    $R2.x = mov %u
    $R2.y = mov %v
    $R3.x:4 = tex $R2.x:2
    %a = add $R3.x, $R3.w
    export 0, %a
    end
";

fn r600_machine(gap: usize) -> String {
    format!(
        "target r600
stage fragment
form machine
input $R0.x
input $R0.y
b0:
    {{ x: mov $R2.x, $R0.x ; y: mov $R2.y, $R0.y }}
    {{ cf: tex $R3.x:4, $R2.x:2 }}
{}    {{ x: add $R0.x, $R3.x, $R3.w }}
    {{ cf: export 0, $R0.x }}
    end
",
        nops(gap)
    )
}

#[test]
fn r600_a_fetch_read_after_its_latency_is_proven() {
    let gap = schedra_ir::target::r600::TEX_LATENCY as usize - 1;
    let (verdict, v) = check(R600_SRC, &r600_machine(gap));
    assert_eq!(verdict, Verdict::Proven, "{v:?}");
}

#[test]
fn r600_a_fetch_read_one_cycle_early_is_latency_naming_the_tex() {
    let gap = schedra_ir::target::r600::TEX_LATENCY as usize - 2;
    let (verdict, v) = check(R600_SRC, &r600_machine(gap));
    assert_eq!(verdict, Verdict::Violation, "{v:?}");
    assert!(v.iter().any(|(k, m)| *k == Kind::Latency && m.contains("`tex`")), "{v:?}");
}

#[test]
fn r600_a_fetch_across_two_gprs_is_a_register_violation() {
    let gap = schedra_ir::target::r600::TEX_LATENCY as usize - 1;
    let m = r600_machine(gap).replace("tex $R3.x:4, $R2.x:2", "tex $R3.x:4, $R2.w:2").replace("mov $R2.x, $R0.x ; y: mov $R2.y, $R0.y", "mov $R3.x, $R0.x ; w: mov $R2.w, $R0.y");
    let (_, v) = check(R600_SRC, &m);
    assert!(has(&v, Kind::Register, "does not lie inside one GPR"), "{v:?}");
}

const V3D_SRC: &str = "target v3d71
stage fragment
input %w = $rf1
b0:
    %u = fmul %w, 2.0
    tmut %w
    tmus %u
    %r = ldtmu
    %g = ldtmu
    %b = ldtmu
    %a = ldtmu
    %s = fadd %r, %a
    tlbw %s
    tlbw %g
    tlbw %b
    end
";

/// The source's machine form with `gap` empty bundles between `tmus` and
/// the first `ldtmu`, and `loads` as the four loads.
fn v3d_machine(gap: usize, loads: &str) -> String {
    format!(
        "target v3d71
stage fragment
form machine
input $rf1
b0:
    {{ mul: fmul $rf4, $rf1, 2.0 }}
    {{ add: tmut $rf1 }}
    {{ add: tmus $rf4 }}
{}{loads}    {{ add: fadd $rf5, $rf5, $rf8 }}
    {{ add: tlbw $rf5 }}
    {{ add: tlbw $rf6 }}
    {{ add: tlbw $rf7 ; sig: thrsw }}
    {{ }}
    {{ }}
    end
",
        nops(gap)
    )
}

const LOADS: &str = "    { sig: ldtmu $rf5 }\n    { sig: ldtmu $rf6 }\n    { sig: ldtmu $rf7 }\n    { sig: ldtmu $rf8 }\n";

#[test]
fn v3d71_ldtmu_after_the_tmu_latency_is_proven() {
    let gap = schedra_ir::target::v3d71::TMU_LATENCY as usize - 1;
    let (verdict, v) = check(V3D_SRC, &v3d_machine(gap, LOADS));
    assert_eq!(verdict, Verdict::Proven, "{v:?}");
}

#[test]
fn v3d71_ldtmu_one_cycle_early_is_latency_naming_ldtmu_and_tmus() {
    let gap = schedra_ir::target::v3d71::TMU_LATENCY as usize - 2;
    let (verdict, v) = check(V3D_SRC, &v3d_machine(gap, LOADS));
    assert_eq!(verdict, Verdict::Violation, "{v:?}");
    assert!(has(&v, Kind::Latency, "`ldtmu` reads the texture unit at cycle 101, before its lookup started by `tmus` (bundle 2"), "{v:?}");
}

#[test]
fn v3d71_a_missing_ldtmu_is_a_hazard_at_the_block_end() {
    let gap = schedra_ir::target::v3d71::TMU_LATENCY as usize - 1;
    let loads = LOADS.replace("    { sig: ldtmu $rf7 }\n", "    { add: mov $rf7, 1 }\n");
    let (verdict, v) = check(V3D_SRC, &v3d_machine(gap, &loads));
    assert_eq!(verdict, Verdict::Violation, "{v:?}");
    assert!(has(&v, Kind::Hazard, "the block ends with 1 word(s) of the texture lookup started by `tmus` (bundle 2"), "{v:?}");
}

#[test]
fn v3d71_an_extra_ldtmu_is_a_hazard_naming_it() {
    let gap = schedra_ir::target::v3d71::TMU_LATENCY as usize - 1;
    let loads = format!("{LOADS}    {{ sig: ldtmu $rf9 }}\n");
    let (verdict, v) = check(V3D_SRC, &v3d_machine(gap, &loads));
    assert_eq!(verdict, Verdict::Violation, "{v:?}");
    assert!(has(&v, Kind::Hazard, "`ldtmu` reads the texture unit while no lookup has a word left to read"), "{v:?}");
}

#[test]
fn v3d71_swapped_coordinates_are_a_dataflow_difference() {
    let gap = schedra_ir::target::v3d71::TMU_LATENCY as usize - 1;
    let m = v3d_machine(gap, LOADS).replace("tmut $rf1", "tmut $rf4").replace("tmus $rf4", "tmus $rf1");
    let (verdict, v) = check(V3D_SRC, &m);
    assert_eq!(verdict, Verdict::Violation, "{v:?}");
    assert!(v.iter().any(|(k, _)| *k == Kind::Dataflow), "{v:?}");
}

#[test]
fn v3d71_tmu_access_in_a_thread_end_delay_slot_is_a_hazard() {
    let gap = schedra_ir::target::v3d71::TMU_LATENCY as usize - 1;
    let m = v3d_machine(gap, LOADS).replace("    { sig: ldtmu $rf8 }\n", "").replace("{ add: tlbw $rf7 ; sig: thrsw }\n    { }", "{ add: tlbw $rf7 ; sig: thrsw }\n    { sig: ldtmu $rf8 }").replace("{ add: fadd $rf5, $rf5, $rf8 }", "{ }");
    let (_, v) = check(V3D_SRC, &m);
    assert!(has(&v, Kind::Hazard, "TMU access `ldtmu` in thread-end delay slot 1"), "{v:?}");
}
