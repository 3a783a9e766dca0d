//! `--stress-regalloc N` (`Options::stress_regalloc`): the allocator hands
//! out only the N highest-numbered registers, and a program that cannot be
//! allocated in N gets more (N doubles), so a valid program never fails for
//! it.
//!
//! - Every corpus shader (the bug zoo included, without its fault) and every
//!   spec example compiles and is proven for N = 1..=8 in all four
//!   `--sched`/`--ra` modes.
//! - The limit is real: a program with six values live compiled with N = 3
//!   spills and writes only the three highest registers besides the
//!   target's implicit ones, and with N = 5 it does not spill.
//! - `schedra compile` takes the flag and refuses 0.

use schedra_compiler::{compile, Options, Ra, Sched};
use schedra_ir::{Operand, Program};
use schedra_verify::{verify, Verdict, VerifyOptions};
use std::collections::BTreeSet;
use std::process::Command;

#[path = "support/shaders.rs"]
mod shaders;
use shaders::{load, root, shaders};

fn stressed(n: u16, sched: Sched, ra: Ra) -> Options {
    Options { sched, ra, inject: None, stress_regalloc: Some(n), post: Default::default() }
}

#[test]
fn every_shader_is_proven_under_every_small_register_count() {
    let files = shaders();
    assert!(files.len() > 30, "corpus found ({} files)", files.len());
    let vopts = VerifyOptions { timeout_ms: 20_000 };
    let mut bad = Vec::new();
    for path in &files {
        let src = load(path);
        for n in 1..=8 {
            for (sched, ra) in [(Sched::TopDown, Ra::Split), (Sched::BottomUp, Ra::Split), (Sched::TopDown, Ra::Graph), (Sched::BottomUp, Ra::Graph)] {
                let label = format!("{} --stress-regalloc {n} {sched:?} {ra:?}", path.display());
                match compile(&src, &stressed(n, sched, ra)) {
                    Err(e) => bad.push(format!("{label}: compile error: {e}")),
                    Ok(c) => {
                        let r = verify(&src, &c.program, &vopts);
                        if r.verdict != Verdict::Proven {
                            let first = r.violations.first().map(|v| v.message.clone()).unwrap_or_default();
                            bad.push(format!("{label}: {:?}: {first}", r.verdict));
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
}

const SIX_LIVE: &str = "target v3d71\nb0:\n %a = ldunif 0\n %b = ldunif 1\n %c = fadd %a, %b\n %d = fmul %a, %b\n %e = fadd %c, %d\n %f = fmul %c, %d\n %g = fadd %e, %f\n %h = fadd %g, %a\n %i = fadd %h, %b\n %j = fadd %i, %c\n %k = fadd %j, %d\n tlbw %k\n end\n";

/// The registers the machine program names.
fn registers(p: &Program) -> BTreeSet<u16> {
    let ops = p.blocks.iter().flat_map(|b| b.insts()).flat_map(|i| i.dest.iter().chain(&i.srcs));
    ops.filter_map(Operand::phys).flat_map(|r| r.regs()).collect()
}

#[test]
fn a_low_count_limits_the_registers_and_forces_spills() {
    let src = schedra_ir::parse::parse(SIX_LIVE.as_bytes(), None).expect("parses");
    let implicit: BTreeSet<u16> = src.target.implicit_regs.iter().copied().collect();
    let three = compile(&src, &stressed(3, Sched::TopDown, Ra::Split)).expect("compiles");
    assert!(three.stats.spills > 0, "{:?}", three.stats);
    let used: BTreeSet<u16> = registers(&three.program).difference(&implicit).copied().collect();
    assert!(used.iter().all(|r| (61..64).contains(r)), "only rf61-rf63 besides rf0: {used:?}");
    let five = compile(&src, &stressed(5, Sched::TopDown, Ra::Split)).expect("compiles");
    assert_eq!(five.stats.spills, 0, "{:?}", five.stats);
    let free = compile(&src, &Options::default()).expect("compiles");
    assert_eq!(free.stats.spills, 0);
    for c in [&three, &five] {
        assert_eq!(verify(&src, &c.program, &VerifyOptions::default()).verdict, Verdict::Proven);
    }
}

#[test]
fn the_cli_takes_the_flag_and_refuses_zero() {
    let bin = env!("CARGO_BIN_EXE_schedra");
    let file = root().join("corpus/v3d71/tonemap.ir");
    let ok = Command::new(bin).args(["compile", "--stress-regalloc", "3", "--stats"]).arg(&file).output().expect("runs");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let stats = String::from_utf8_lossy(&ok.stderr);
    assert!(!stats.contains(" 0 spills"), "three registers make tonemap spill: {stats}");
    let zero = Command::new(bin).args(["compile", "--stress-regalloc", "0"]).arg(&file).output().expect("runs");
    assert_eq!(zero.status.code(), Some(2), "{}", String::from_utf8_lossy(&zero.stderr));
}
