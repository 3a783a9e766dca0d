//! Compile throughput on straight-line v3d71 programs of 1k and 10k
//! instructions, built here (no files, no criterion): a deterministic mix of
//! uniform and varying loads, ALU ops, SFU ops and tile-buffer writes, each
//! op reading recent values so that register pressure stays moderate.
//!
//! Run: `cargo bench -p schedra-compiler --bench throughput`.
//! Prints, per size and stage, the best of several runs in ms and
//! instructions per second; the stages are the pre-RA scheduler (on the
//! virtual-register program), the bundler (lowering + post-RA scheduling +
//! thread end, on the same program with values in fixed registers), register
//! allocation and the whole `compile` (at 10k only with
//! `SCHEDRA_BENCH_FULL=1`; both timed once, so noisier than the schedulers'
//! best-of figures).

use schedra_compiler::pipeline::{allocate, bundle_program, schedule, Hints, Source};
use schedra_compiler::{compile, Context, Options};
use schedra_ir::target::v3d71::V3D71;
use schedra_ir::{
    Block, Body, Form, Imm, Inst, Operand, Program, Span, Stage, TermKind, Terminator, VirtReg,
};
use std::time::{Duration, Instant};

fn virt(k: usize) -> Operand {
    Operand::Virt(VirtReg {
        name: schedra_ir::format_smolstr!("v{k}"),
        size: None,
    })
}

/// Value k in a fixed register (rf4..rf63 round robin): values are read at
/// most 12 definitions after they are made, so this is a valid allocation.
fn phys(k: usize) -> Operand {
    Operand::Phys(schedra_ir::PhysReg::one(4 + (k % 60) as u16))
}

/// A straight-line program of exactly `n` instructions, values named by `v`.
fn program(n: usize, v: fn(usize) -> Operand) -> Program {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    let mut insts = Vec::with_capacity(n);
    let mut defined = 0usize;
    let inst = |op: &str, dest: Option<Operand>, srcs: Vec<Operand>| Inst {
        opcode: op.into(),
        dest,
        srcs,
        span: Span::default(),
    };
    while insts.len() + 1 < n {
        let recent = |r: usize| v(defined - 1 - r % defined.clamp(1, 12));
        let choice = if defined < 2 { 0 } else { rnd(10) };
        let i = match choice {
            0 => inst(
                "ldunif",
                Some(v(defined)),
                vec![Operand::Imm(Imm::int(rnd(64) as i64))],
            ),
            1 => inst(
                "ldvary",
                Some(v(defined)),
                vec![Operand::Imm(Imm::int(rnd(8) as i64))],
            ),
            2 => inst("recip", Some(v(defined)), vec![recent(rnd(12))]),
            3 => inst("tlbw", None, vec![recent(rnd(12))]),
            4 | 5 => inst(
                "fmul",
                Some(v(defined)),
                vec![recent(rnd(12)), recent(rnd(12))],
            ),
            6 => inst(
                "add",
                Some(v(defined)),
                vec![recent(rnd(12)), Operand::Imm(Imm::int(rnd(8) as i64))],
            ),
            _ => inst(
                "fadd",
                Some(v(defined)),
                vec![recent(rnd(12)), recent(rnd(12))],
            ),
        };
        if i.dest.is_some() {
            defined += 1;
        }
        insts.push(i);
    }
    // The last instruction writes the last value out.
    insts.push(inst("tlbw", None, vec![v(defined.saturating_sub(1))]));
    let block = Block {
        label: "b0".into(),
        body: Body::Source(insts),
        term: Terminator {
            kind: TermKind::End,
            span: Span::default(),
        },
        span: Span::default(),
    };
    Program {
        name: Some(format!("bench{n}")),
        target: &V3D71,
        stage: Stage::Fragment,
        form: Form::Source,
        inputs: vec![],
        blocks: vec![block],
    }
}

/// Best wall time of `runs` calls of `f`.
fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn report(stage: &str, n: usize, d: Duration) {
    let secs = d.as_secs_f64().max(1e-9);
    println!(
        "{n:>6} insts  {stage:<10} {:>9.2} ms  {:>12.0} inst/s",
        secs * 1e3,
        n as f64 / secs
    );
}

fn main() {
    let opts = Options::default();
    let full = std::env::var_os("SCHEDRA_BENCH_FULL").is_some();
    for n in [1_000usize, 10_000] {
        let p = program(n, virt);
        let allocated = program(n, phys);
        let hints = Hints::of_inputs(&allocated);
        let Ok(src) = Source::new(&p) else { return };
        let mut ctx = Context::new();
        let runs = if n > 5_000 { 3 } else { 10 };
        // The allocator and `compile` are timed once each.
        let ra_runs = 1;
        report(
            "sched_pre",
            n,
            best(runs, || drop(schedule(&mut ctx, &src, &opts))),
        );
        report(
            "bundle",
            n,
            best(runs, || drop(bundle_program(&allocated, &opts, &hints))),
        );
        if let Ok((_, st)) = bundle_program(&allocated, &opts, &hints) {
            println!(
                "{n:>6} insts  bundle -> {} bundles, {} cycles, {} nops, {} sfu-stalls",
                st.instructions, st.cycles, st.nops, st.sfu_stalls
            );
        }
        if n > 1_000 && !full {
            println!("{n:>6} insts  (regalloc and compile skipped; set SCHEDRA_BENCH_FULL=1)");
            continue;
        }
        let pre = schedule(&mut ctx, &src, &opts);
        match allocate(&src, &pre, &opts) {
            Ok(_) => report(
                "regalloc",
                n,
                best(ra_runs, || drop(allocate(&src, &pre, &opts))),
            ),
            Err(e) => println!("{n:>6} insts  regalloc failed: {e}"),
        }
        let t = Instant::now();
        match compile(&p, &opts) {
            Ok(c) => {
                report("compile", n, t.elapsed());
                println!(
                    "{n:>6} insts  -> {} bundles, {} cycles, {} nops, {} sfu-stalls, {} spills",
                    c.stats.instructions,
                    c.stats.cycles,
                    c.stats.nops,
                    c.stats.sfu_stalls,
                    c.stats.spills
                );
            }
            Err(e) => println!("{n:>6} insts  compile failed: {e}"),
        }
    }
}
