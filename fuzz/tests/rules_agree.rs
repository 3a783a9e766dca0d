//! The interpreter's reading of the hardware rules against the verifier's,
//! over what the campaign feeds them: compiled generated programs on every
//! register-file target, and mutants of them (`fuzz::mutate`). Every
//! program must get the same answer from both (`oracle::rules_agree`), and
//! the mutants must break rules often enough on every target that the
//! agreement means something.

use schedra_fuzz::gen::{generate, Config, SeedStream};
use schedra_fuzz::interp::{self, rules::RuleKind, RunError};
use schedra_fuzz::{mutate, oracle};
use std::collections::BTreeMap;

/// Generated programs per target, and mutants tried per compiled output.
const CASES: u64 = 200;
const MUTANTS: usize = 20;

#[test]
fn interpreter_and_verifier_read_the_rules_alike() {
    for t in schedra_ir::target::generated() {
        if interp::rules::family(t).is_none() {
            continue;
        }
        let mut broken: BTreeMap<RuleKind, usize> = BTreeMap::new();
        let mut checked = 0;
        for n in 0..CASES {
            let mut bytes = SeedStream::new(n, 16 * 1024);
            let cfg = if n % 2 == 0 { Config::default() } else { bytes.draw(64, |u| Config::swarm(u).unwrap_or_default()) };
            let Ok(p) = bytes.draw(cfg.byte_hint(), |u| generate(u, t, &cfg)) else { continue };
            let Ok(c) = schedra_compiler::compile(&p, &Default::default()) else { continue };
            let compiled = interp::prepare(&c.program);
            assert_eq!(compiled.broken_rule(), None, "{}#{n}: the compiler's output breaks a rule", t.name);
            if let Err(f) = oracle::rules_agree(&p, &c.program, &compiled) {
                panic!("{}#{n}: {}\n{}", t.name, f.message, schedra_ir::print::print(&c.program));
            }
            for _ in 0..MUTANTS {
                let Some((m, mutation)) = bytes.draw(64, |u| mutate::mutate(&c.program, u)) else { continue };
                let decoded = interp::prepare_ignoring_rules(&m);
                if let Some(RunError::Rule { kind, .. }) = decoded.broken_rule() {
                    *broken.entry(*kind).or_default() += 1;
                }
                if let Err(f) = oracle::rules_agree(&p, &m, &decoded) {
                    panic!("{}#{n} {mutation}: {}\n{}", t.name, f.message, schedra_ir::print::print(&m));
                }
                checked += 1;
            }
        }
        let total: usize = broken.values().sum();
        eprintln!("{}: {checked} mutants, {total} break a rule: {broken:?}", t.name);
        assert!(checked >= 100 && total >= 5, "{}: {checked} mutants checked, {total} broke a rule", t.name);
    }
}
