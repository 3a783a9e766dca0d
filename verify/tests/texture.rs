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
