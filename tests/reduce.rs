//! End-to-end tests of `schedra reduce` through the built binary.
//!
//! - Performance goal: a 300-instruction v3d71 program (built here, four
//!   blocks, one `recip`) reduced with `--test 'grep -q recip {}'` leaves a
//!   valid program of at most 4 instructions that still contains `recip`, in
//!   under 10 s (each test spawns a shell, so this only holds if ddmin
//!   removes big chunks first).
//! - Fault goal: a 300-instruction serial chain with SFU ops, which the
//!   compiler with `--inject v3d-sfu-latency` miscompiles, reduces to at
//!   most 12 instructions that still fail the same way with the fault and
//!   verify without it.
//! - Bad input is one line on standard error and status 2: unparsable,
//!   invalid, not interesting at the start, a `--test` without `{}`.

use schedra_ir::{parse::parse, validate::validate};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn schedra(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedra")).args(args).output().expect("the schedra binary runs")
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedra-reduce-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A deterministic pseudo-random sequence (64-bit LCG).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Emit `count` instructions into `out`, reading from and adding to `vals`;
/// the instruction numbered `recip_at` (global counter `k`) is the one
/// `recip`.
fn emit(out: &mut String, vals: &mut Vec<String>, count: usize, k: &mut usize, recip_at: usize, rng: &mut Lcg) {
    const BIN: [&str; 6] = ["fadd", "fmul", "fsub", "fmax", "add", "xor"];
    for _ in 0..count {
        let d = format!("%v{k}");
        let line = if *k == recip_at {
            format!("{d} = recip {}", vals[rng.next(vals.len())])
        } else {
            match rng.next(10) {
                0 => format!("{d} = ldunif {}", rng.next(16)),
                1 => format!("{d} = ldvary {}", rng.next(8)),
                2 => format!("tlbw {}", vals[rng.next(vals.len())]),
                3 => format!("{d} = fmul {}, 0.5", vals[rng.next(vals.len())]),
                _ => format!("{d} = {} {}, {}", BIN[rng.next(BIN.len())], vals[rng.next(vals.len())], vals[rng.next(vals.len())]),
            }
        };
        if !line.starts_with("tlbw") {
            vals.push(d);
        }
        out.push_str("    ");
        out.push_str(&line);
        out.push('\n');
        *k += 1;
    }
}

/// A valid 300-instruction v3d71 program: a diamond (b0 → b1 | b2 → b3)
/// with one `recip` in b3 whose operand depends on b0's values.
fn big_program() -> String {
    let mut rng = Lcg(7);
    let mut out = String::from("shader big\ntarget v3d71\nstage fragment\ninput %w = $rf1\n\nb0:\n");
    let mut k = 0;
    let recip_at = 230;
    let mut vals = vec!["%w".to_string()];
    emit(&mut out, &mut vals, 99, &mut k, recip_at, &mut rng);
    out.push_str("    %c = ldunif 20\n    brnz %c, b1, b2\n\nb1:\n");
    k += 1;
    let shared = vals.clone();
    let mut left = shared.clone();
    emit(&mut out, &mut left, 50, &mut k, recip_at, &mut rng);
    out.push_str("    jmp b3\n\nb2:\n");
    let mut right = shared.clone();
    emit(&mut out, &mut right, 50, &mut k, recip_at, &mut rng);
    out.push_str("    jmp b3\n\nb3:\n");
    let mut tail = shared;
    emit(&mut out, &mut tail, 100, &mut k, recip_at, &mut rng);
    out.push_str("    end\n");
    out
}

#[test]
fn big_program_is_valid_and_has_300_instructions_and_one_recip() {
    let text = big_program();
    let p = parse(text.as_bytes(), None).expect("the generated program parses");
    validate(&p).expect("the generated program is valid");
    assert_eq!(p.op_count(), 300);
    assert_eq!(text.matches("recip").count(), 1);
}

#[test]
fn reduces_300_instructions_to_the_recip_in_under_10s() {
    let dir = scratch("big");
    let (big, min) = (dir.join("big.ir"), dir.join("min.ir"));
    std::fs::write(&big, big_program()).expect("write input");
    let start = Instant::now();
    let out = schedra(&["reduce", &big.to_string_lossy(), "--test", "grep -q recip {}", "-o", &min.to_string_lossy()]);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let text = std::fs::read_to_string(&min).expect("reduced program written");
    let p = parse(text.as_bytes(), None).expect("the reduced program parses");
    validate(&p).expect("the reduced program is valid");
    assert!(text.contains("recip"), "{text}");
    assert!(p.op_count() <= 4, "{} instructions left:\n{text}", p.op_count());
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(stderr.contains("reduced 300 -> "), "summary missing: {stderr}");
    assert!(stderr.contains("-    %v"), "diff missing: {stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A valid 300-instruction v3d71 program: one serial chain through float
/// ops with a `recip` every 37 instructions, uniforms and `tlbw`s mixed in.
/// Each `recip` result is read by the next op, so a scheduler that takes
/// SFU results to land after one cycle reads them too soon; each is also
/// written out at the end, so its register stays taken and the primary
/// violation is that early read (not a same-cycle landing on a reused
/// register, which would need enough pressure to wrap the allocator).
fn sfu_chain() -> String {
    const OPS: [&str; 4] = ["fadd", "fmul", "fsub", "fmax"];
    let mut rng = Lcg(3);
    let mut body: Vec<String> = vec!["%v0 = ldunif 0".to_string()];
    let (mut prev, mut vals, mut recips) = ("%v0".to_string(), vec!["%w".to_string(), "%v0".to_string()], Vec::new());
    let mut k = 1;
    while body.len() + 1 + recips.len() < 300 {
        let d = format!("%v{k}");
        let line = if k % 37 == 0 {
            recips.push(d.clone());
            format!("{d} = recip {prev}")
        } else if k % 11 == 0 {
            vals.push(d.clone());
            format!("{d} = ldunif {}", k % 16)
        } else if k % 13 == 0 {
            format!("tlbw {prev}")
        } else {
            format!("{d} = {} {prev}, {}", OPS[rng.next(OPS.len())], vals[rng.next(vals.len())])
        };
        if !line.starts_with("tlbw") && k % 11 != 0 {
            prev = d.clone();
            vals.push(d);
        }
        body.push(line);
        k += 1;
    }
    body.push(format!("tlbw {prev}"));
    body.extend(recips.iter().map(|r| format!("tlbw {r}")));
    let mut out = String::from("shader chain\ntarget v3d71\nstage fragment\ninput %w = $rf1\n\nb0:\n");
    for line in body {
        out.push_str(&format!("    {line}\n"));
    }
    out.push_str("    end\n");
    out
}

#[test]
fn injected_fault_case_reduces_to_at_most_12_instructions() {
    let dir = scratch("fault");
    let (case, min, out_s) = (dir.join("chain.ir"), dir.join("min.ir"), dir.join("min.s"));
    let text = sfu_chain();
    let p = parse(text.as_bytes(), None).expect("the chain parses");
    validate(&p).expect("the chain is valid");
    assert_eq!(p.op_count(), 300);
    std::fs::write(&case, &text).expect("write input");
    let (case_s, min_s, out_s) = (case.to_string_lossy(), min.to_string_lossy(), out_s.to_string_lossy());
    let start = Instant::now();
    let out = schedra(&["reduce", &case_s, "--inject", "v3d-sfu-latency", "-o", &min_s]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let reduced = std::fs::read_to_string(&min).expect("reduced program written");
    let q = parse(reduced.as_bytes(), None).expect("the reduced program parses");
    validate(&q).expect("the reduced program is valid");
    assert!(q.op_count() <= 12, "{} instructions left:\n{reduced}", q.op_count());
    eprintln!("fault case: 300 -> {} instructions in {:?}", q.op_count(), start.elapsed());
    // Still the same failure with the fault ...
    let c = schedra(&["compile", &min_s, "--inject", "v3d-sfu-latency", "-o", &out_s]);
    assert_eq!(c.status.code(), Some(0));
    let v = schedra(&["verify", &min_s, &out_s, "--json"]);
    let json = String::from_utf8_lossy(&v.stdout);
    assert_eq!(v.status.code(), Some(1), "{json}");
    assert!(json.contains("\"kind\":\"latency\""), "{json}");
    // ... and none without it.
    let ok = schedra(&["verify", &min_s]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reduced_program_goes_to_stdout_without_o() {
    let dir = scratch("stdout");
    let case = dir.join("case.ir");
    std::fs::write(&case, "target v3d71\nb0:\n %a = ldunif 0\n %b = ldunif 1\n %r = recip %a\n %s = fadd %r, %b\n tlbw %s\n end\n").expect("write");
    let out = schedra(&["reduce", &case.to_string_lossy(), "--test", "grep -q recip {}", "--no-diff"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    let p = parse(stdout.as_bytes(), None).expect("stdout is a program");
    assert_eq!(p.op_count(), 1, "{stdout}");
    assert!(stdout.contains("%0 = recip"), "canonical names expected: {stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `schedra reduce` and checks the one-line status-2 rejection.
fn rejected(name: &str, text: &str, extra: &[&str], expect: &str) {
    let dir = scratch(name);
    let case = dir.join("case.ir");
    std::fs::write(&case, text).expect("write");
    let mut args = vec!["reduce".to_string(), case.to_string_lossy().into_owned()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = Instant::now();
    let out = schedra(&argv);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{name}: one line expected: {stderr}");
    assert!(stderr.contains(expect), "{name}: {stderr}");
    assert!(out.stdout.is_empty(), "{name}");
    assert!(start.elapsed() < Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    let ok = "target v3d71\nb0:\n %a = ldunif 0\n tlbw %a\n end\n";
    rejected("parse", "target v3d71\nb0:\n %a = = ldunif\n end\n", &["--test", "true {}"], "case.ir:3:");
    rejected("invalid", "target v3d71\nb0:\n tlbw %nowhere\n end\n", &["--test", "true {}"], "case.ir:3:");
    rejected("boring", ok, &["--test", "grep -q recip {}"], "does not succeed on the input");
    rejected("placeholder", ok, &["--test", "true"], "{}");
    rejected("target", ok, &["--target", "nosuch", "--test", "true {}"], "unknown target");
    rejected("no-failure", ok, &[], "does not fail");
    rejected("no-failure-with-fault", ok, &["--inject", "v3d-sfu-latency"], "does not fail");
    rejected("unknown-fault", ok, &["--inject", "no-such-fault"], "unknown fault");
}
