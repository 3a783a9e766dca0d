//! Tests of the whole reducer through [`super::reduce`] with in-process
//! predicates.

use super::*;
use schedra_ir::{parse::parse, print::print, validate::validate};

fn prog(text: &str) -> Program {
    parse(text.as_bytes(), None).expect("test program parses")
}

fn has_op(p: &Program, op: &str) -> bool {
    p.blocks.iter().flat_map(|b| b.insts()).any(|i| i.opcode == op)
}

/// A chain of `n` v3d71 ops with one `recip` in the middle whose result
/// feeds the rest.
fn chain(n: usize) -> String {
    let mut s = String::from("target v3d71\ninput %w = $rf1\nb0:\n %v0 = ldunif 0\n");
    for k in 1..n {
        let op = if k == n / 2 { format!("%v{k} = recip %v{}", k - 1) } else { format!("%v{k} = fadd %v{}, %w", k - 1) };
        s.push_str(&format!(" {op}\n"));
    }
    s.push_str(&format!(" tlbw %v{}\n end\n", n - 1));
    s
}

#[test]
fn every_candidate_is_valid_and_the_result_keeps_the_recip() {
    let p = prog(&chain(60));
    let mut invalid_seen = 0;
    let mut pred = |c: &Program| {
        invalid_seen += usize::from(validate(c).is_err());
        has_op(c, "recip")
    };
    let r = reduce(&p, &mut pred, &ReduceOptions::default()).expect("reduces");
    assert_eq!(invalid_seen, 0);
    assert!(has_op(&r.program, "recip"));
    assert_eq!(r.final_instructions, 1, "{}", print(&r.program));
    assert_eq!(r.original_instructions, 61);
    assert!(r.tests_run < 60, "{} tests", r.tests_run);
}

#[test]
fn same_input_same_output() {
    let p = prog(&chain(40));
    let run = || {
        let r = reduce(&p, &mut |c: &Program| has_op(c, "recip") && c.op_count() >= 3, &ReduceOptions::default()).expect("reduces");
        (print(&r.program), r.tests_run)
    };
    assert_eq!(run(), run());
}

#[test]
fn uninteresting_or_invalid_input_is_refused() {
    let p = prog(&chain(10));
    let mut calls = 0;
    let r = reduce(&p, &mut |_| {
        calls += 1;
        false
    }, &ReduceOptions::default());
    assert!(matches!(r, Err(ReduceError::NotInteresting)));
    assert_eq!(calls, 1);
    let bad = prog("target v3d71\nb0:\n tlbw %undefined\n end\n");
    assert!(matches!(reduce(&bad, &mut |_| true, &ReduceOptions::default()), Err(ReduceError::Invalid(_))));
}

#[test]
fn the_test_budget_is_respected() {
    let p = prog(&chain(80));
    let opts = ReduceOptions { max_tests: 3, ..ReduceOptions::default() };
    let mut calls = 0;
    let r = reduce(&p, &mut |c: &Program| {
        calls += 1;
        has_op(c, "recip")
    }, &opts)
    .expect("reduces");
    assert!(calls <= 3 && r.tests_run == calls);
    assert!(r.truncated);
    assert!(has_op(&r.program, "recip"));
    assert!(validate(&r.program).is_ok());
}

#[test]
fn branches_collapse_to_the_interesting_side() {
    let text = "target v3d71\ninput %w = $rf1\nb0:\n %c = ldunif 0\n brnz %c, b1, b2\nb1:\n %a = fmul %w, %w\n tlbw %a\n jmp b3\nb2:\n %b = recip %w\n tlbw %b\n jmp b3\nb3:\n %d = fadd %c, %w\n tlbw %d\n end\n";
    let r = reduce(&prog(text), &mut |c: &Program| has_op(c, "recip"), &ReduceOptions::default()).expect("reduces");
    assert_eq!(r.program.blocks.len(), 1, "{}", print(&r.program));
    assert_eq!(r.final_instructions, 1);
}

#[test]
fn preallocations_and_inputs_go_away() {
    let text = "target v3d71\ninput %w = $rf1\ninput %u = $rf2\nb0:\n $rf5 = fmul %w, %u\n %r = recip $rf5\n tlbw %r\n end\n";
    let r = reduce(&prog(text), &mut |c: &Program| has_op(c, "recip") && has_op(c, "fmul"), &ReduceOptions::default()).expect("reduces");
    let out = print(&r.program);
    assert!(!out.contains("$rf5") && r.program.inputs.is_empty(), "{out}");
    assert_eq!(r.final_instructions, 2, "{out}");
}

#[test]
fn multi_register_values_shrink() {
    // The end-of-thread payload is an ALU value (a send.tex result has a
    // fixed size 4, and a gen8 program must end with `send.eot`).
    let text = "target gen8\ninput %x:2 = $g2:2\nb0:\n %y:2 = mul %x, %x\n %z:2 = add %y, %x\n %t:4 = send.tex %z\n %u:2 = add %z, %x\n send.eot %u\n end\n";
    let r = reduce(&prog(text), &mut |c: &Program| has_op(c, "mul"), &ReduceOptions::default()).expect("reduces");
    let out = print(&r.program);
    assert!(!out.contains(":2") && !out.contains(":4"), "{out}");
    assert!(has_op(&r.program, "mul"));
}

#[test]
fn names_are_canonical() {
    let r = reduce(&prog(&chain(12)), &mut |c: &Program| has_op(c, "recip"), &ReduceOptions::default()).expect("reduces");
    let out = print(&r.program);
    assert!(out.contains("%0 = recip"), "{out}");
    assert_eq!(r.program.blocks[0].label, "b0");
}

#[test]
fn a_balance_that_no_single_removal_keeps_is_reduced_by_pairs() {
    // Interesting: the recip and the tlbw stay, and the fadds and the fmuls
    // each come in even numbers. No single removal and no run of
    // neighbours keeps that; removing the two fadds (not neighbours) does.
    let p = prog("target v3d71\ninput %w = $rf1\nb0:\n %a = fadd %w, %w\n %b = fmul %w, %w\n %c = fadd %w, %w\n %d = fmul %w, %w\n %r = recip %w\n tlbw %r\n end\n");
    let count = |c: &Program, op: &str| c.blocks.iter().flat_map(|b| b.insts()).filter(|i| i.opcode == op).count();
    let mut pred = |c: &Program| has_op(c, "recip") && has_op(c, "tlbw") && count(c, "fadd") % 2 == 0 && count(c, "fmul") % 2 == 0;
    let r = reduce(&p, &mut pred, &ReduceOptions::default()).expect("reduces");
    assert_eq!(r.final_instructions, 2, "{}", print(&r.program));
}
