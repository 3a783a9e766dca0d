//! Verifier-only scaling on hand-built v3d71 source/machine pairs of 1k,
//! 10k and 100k instructions (no compiler: the verifier may not depend on
//! it), proven and with one wrong register near the end (refutation and
//! diagnosis).
//!
//! The pair is built here as text by a seeded xorshift: uniforms
//! (`ldunifrf` into the value's register), varyings (`ldvary`, an empty
//! cycle, then `mov` out of rf0), fadd/fmul over values at most 12
//! definitions old, SFU ops (followed by an empty cycle for their latency
//! of 2) and `tlbw` writes; value k lives in rf(4 + k mod 56), one op per
//! bundle, and the program ends with `thrsw` and its two delay slots. So the
//! machine program is correct by construction and its size grows exactly
//! with the source's.
//!
//! Prints the best of several runs (wall time) per size and case, the
//! obligation split and the 10k/1k and 100k/10k ratios. Exits with status 1
//! if a correct pair is not proven or the wrong one is.
//!
//! Run: `cargo bench -p schedra-verify --bench scaling`
//! (SCHEDRA_VERIFY_SIZES=1000,10000 to choose the sizes).

use schedra_ir::Program;
use schedra_verify::{verify, Verdict, VerifyOptions};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Deterministic xorshift64 stream.
struct Rng(u64);

impl Rng {
    fn below(&mut self, m: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % m.max(1) as u64) as usize
    }
}

fn reg(k: usize) -> String {
    format!("$rf{}", 4 + k % 56)
}

/// Source and machine text of a pair with `n` source instructions; with
/// `wrong`, the op that computes the value written last reads a register
/// that holds no value (rf63) instead of its second operand.
fn pair(n: usize, wrong: bool) -> (String, String) {
    let mut r = Rng(0x9e37_79b9 ^ n as u64);
    let mut src = String::from("target v3d71\nstage fragment\nb0:\n");
    let mut mach = String::from("target v3d71\nstage fragment\nform machine\nb0:\n");
    let mut k = 0usize;
    for _ in 0..n.saturating_sub(2) {
        let recent = |r: &mut Rng| k - 1 - r.below(k.min(12));
        let choice = if k < 2 { r.below(2) } else { r.below(100) };
        match choice {
            0..=14 => {
                let u = r.below(64);
                let _ = writeln!(src, "    %v{k} = ldunif {u}");
                let _ = writeln!(mach, "    {{ sig: ldunifrf {}, {u} }}", reg(k));
            }
            15..=29 => {
                let v = r.below(16);
                let _ = writeln!(src, "    %v{k} = ldvary {v}");
                let _ = writeln!(mach, "    {{ sig: ldvary {v} }}\n    {{ }}\n    {{ add: mov {}, $rf0 }}", reg(k));
            }
            30..=79 => {
                let (a, b) = (recent(&mut r), recent(&mut r));
                let (op, slot) = if choice < 55 { ("fadd", "add") } else { ("fmul", "mul") };
                let _ = writeln!(src, "    %v{k} = {op} %v{a}, %v{b}");
                let _ = writeln!(mach, "    {{ {slot}: {op} {}, {}, {} }}", reg(k), reg(a), reg(b));
            }
            80..=89 => {
                let a = recent(&mut r);
                let op = ["recip", "rsqrt", "exp2", "log2"][r.below(4)];
                let _ = writeln!(src, "    %v{k} = {op} %v{a}");
                let _ = writeln!(mach, "    {{ add: {op} {}, {} }}\n    {{ }}", reg(k), reg(a));
            }
            _ => {
                let a = recent(&mut r);
                let _ = writeln!(src, "    tlbw %v{a}");
                let _ = writeln!(mach, "    {{ add: tlbw {} }}", reg(a));
                continue;
            }
        }
        k += 1;
    }
    // The value written last comes from a two-operand ALU op, so that the
    // wrong-register mutant changes an effect.
    let (a, b) = (k.saturating_sub(1), k.saturating_sub(2));
    let _ = writeln!(src, "    %v{k} = fadd %v{a}, %v{b}");
    let last_alu = mach.len();
    let _ = writeln!(mach, "    {{ add: fadd {}, {}, {} }}", reg(k), reg(a), reg(b));
    let last = k;
    let _ = writeln!(src, "    tlbw %v{last}\n    end");
    let _ = writeln!(mach, "    {{ add: tlbw {} ; sig: thrsw }}\n    {{ }}\n    {{ }}\n    end", reg(last));
    if wrong {
        let at = last_alu;
        // Make the op's last operand name a register no recent value is in.
        if let Some(end) = mach[at..].find(" }") {
            let line_end = at + end;
            if let Some(comma) = mach[at..line_end].rfind(", ") {
                mach.replace_range(at + comma + 2..line_end, "$rf63");
            }
        }
    }
    (src, mach)
}

fn parse(text: &str) -> Result<Program, String> {
    schedra_ir::parse::parse(text.as_bytes(), None).map_err(|e| e.to_string())
}

/// Best wall time of `runs` verifications, and the last report.
fn best(src: &Program, mach: &Program, runs: usize) -> (Duration, schedra_verify::Report) {
    let opts = VerifyOptions::default();
    let mut best = Duration::MAX;
    let mut report = verify(src, mach, &opts);
    for _ in 0..runs {
        let t = Instant::now();
        report = verify(src, mach, &opts);
        best = best.min(t.elapsed());
    }
    (best, report)
}

fn main() {
    let mut failed = false;
    let mut times: Vec<(usize, Duration, Duration)> = Vec::new();
    println!("verifier-only scaling, hand-built straight-line v3d71 pairs, best of 3 runs (wall time; shared machine: compare ratios)");
    let sizes: Vec<usize> = match std::env::var("SCHEDRA_VERIFY_SIZES") {
        Ok(v) => v.split(',').filter_map(|x| x.trim().parse().ok()).filter(|&n| n >= 2).collect(),
        Err(_) => vec![1_000, 10_000, 100_000],
    };
    for n in sizes {
        let runs = if n >= 100_000 { 1 } else { 3 };
        let (s, m) = pair(n, false);
        let (_, m2) = pair(n, true);
        let (src, mach, bad) = match (parse(&s), parse(&m), parse(&m2)) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            (a, b, c) => {
                println!("{n:>7} insts  generated text does not parse: {:?} {:?} {:?}", a.err(), b.err(), c.err());
                failed = true;
                continue;
            }
        };
        let bundles: usize = mach.blocks.iter().map(|b| b.bundles().len()).sum();
        let (ok_t, ok) = best(&src, &mach, runs);
        let (bad_t, refuted) = best(&src, &bad, runs);
        let o = &ok.obligations;
        println!(
            "{n:>7} insts  {bundles:>7} bundles  proven {:>9.2} ms ({:?}; {} obligations, {} syntactic, {} smt)  wrong register {:>9.2} ms ({:?}{})",
            ok_t.as_secs_f64() * 1e3,
            ok.verdict,
            o.total,
            o.syntactic,
            o.smt,
            bad_t.as_secs_f64() * 1e3,
            refuted.verdict,
            refuted.violations.first().map(|v| format!(", {} at bundle {}", v.kind.as_str(), v.bundle)).unwrap_or_default()
        );
        failed |= ok.verdict != Verdict::Proven || refuted.verdict == Verdict::Proven;
        times.push((n, ok_t, bad_t));
    }
    for w in times.windows(2) {
        let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64().max(1e-9);
        println!("ratio {}/{}: proven {:.1}, wrong register {:.1}", w[1].0, w[0].0, ratio(w[0].1, w[1].1), ratio(w[0].2, w[1].2));
    }
    std::process::exit(i32::from(failed));
}
