//! Throughput of one fuzz case on one core: generate a ~50-instruction
//! v3d71 program, compile it, verify the output and run source and output
//! on two seeds (what `schedra fuzz` does per case, minus the occasional
//! soundness and round-trip checks). Prints execs/s and the time per stage.
//!
//! Run: `cargo bench -p schedra-fuzz --bench throughput` (environment:
//! `BENCH_TARGET` = v3d71|gen8|r600, `BENCH_INSTS` = body budget,
//! `BENCH_SECS` = measuring time).

use arbitrary::Unstructured;
use schedra_fuzz::gen::{generate, seed_bytes, Config};
use schedra_fuzz::interp;
use std::time::{Duration, Instant};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let tname: String = env("BENCH_TARGET", "v3d71".to_string());
    let Some(target) = schedra_ir::target::by_name(&tname) else {
        eprintln!("unknown target {tname}");
        return;
    };
    let insts: u16 = env("BENCH_INSTS", 50);
    let secs: f64 = env("BENCH_SECS", 10.0);
    let cfg = Config { max_insts: insts, pressure: 0, ..Config::default() };
    if std::env::var("BENCH_GEN_ONLY").is_ok() {
        let t = Instant::now();
        let mut ops = 0;
        for i in 0..20_000u64 {
            let data = seed_bytes(i, 8 * 1024);
            if let Ok(p) = generate(&mut Unstructured::new(&data), target, &cfg) {
                ops += p.op_count();
            }
        }
        println!("generate only: {:.1} us per program ({ops} ops)", t.elapsed().as_secs_f64() * 1e6 / 20_000.0);
        return;
    }
    let vopts = schedra_verify::VerifyOptions { timeout_ms: 2000 };
    let (mut tg, mut tc, mut tv, mut tr) = (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut n, mut ops, mut smt, mut proven) = (0u64, 0usize, 0usize, 0u64);
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs {
        let t0 = Instant::now();
        let data = seed_bytes(n, 8 * 1024);
        let mut u = Unstructured::new(&data);
        let Ok(p) = generate(&mut u, target, &cfg) else { continue };
        let t1 = Instant::now();
        let compiled = schedra_compiler::compile(&p, &Default::default());
        let t2 = Instant::now();
        if let Ok(c) = &compiled {
            let r = schedra_verify::verify(&p, &c.program, &vopts);
            smt += r.obligations.smt;
            proven += u64::from(r.verdict == schedra_verify::Verdict::Proven);
        }
        let t3 = Instant::now();
        if let Ok(c) = &compiled {
            for seed in [n, n ^ 0x5eed] {
                let _ = interp::run(&p, seed, 200_000);
                let _ = interp::run(&c.program, seed, 200_000);
            }
        }
        let t4 = Instant::now();
        tg += t1 - t0;
        tc += t2 - t1;
        tv += t3 - t2;
        tr += t4 - t3;
        ops += p.op_count();
        n += 1;
    }
    let total = start.elapsed().as_secs_f64();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n.max(1) as f64;
    println!("throughput {tname}: {n} cases in {total:.1}s = {:.0} execs/s on one core ({:.1} source instructions per case, {proven} proven, {smt} SMT obligations)", n as f64 / total, ops as f64 / n.max(1) as f64);
    println!("per case: generate {:.0} us, compile {:.0} us, verify {:.0} us, run x4 {:.0} us", per(tg), per(tc), per(tv), per(tr));
}
