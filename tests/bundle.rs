//! Behaviour of the bundler (`schedra_compiler::pipeline::bundle_program`): random allocated
//! programs (source form, physical registers only) for every target are
//! bundled, and the machine program must produce the same effects and branch
//! trace as the allocated program under the interpreters, for several seeds,
//! and keep the target's bundle rules. Each scheduler fault must break a
//! small program of its own.

use schedra_compiler::pipeline::{self, schedule, Hints, Source};
use schedra_compiler::{Context, Fault, Options, Sched};
use schedra_fuzz::interp;
use schedra_ir::target::{gen8::GEN8, r600::R600, v3d71::V3D71, Dest, OperandKind};
use schedra_ir::{Block, Body, Form, Imm, Input, Inst, Operand, PhysReg, Program, Span, Stage, TermKind, Target, Terminator, VirtReg};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// The pipeline's pre-RA scheduling stage on `p`, as a program.
fn schedule_program(p: &Program, opts: &Options) -> Program {
    let src = Source::new(p).expect("source form");
    schedule(&mut Context::new(), &src, opts).program(&src)
}

fn reg(r: u16, size: u8) -> Operand {
    Operand::Phys(PhysReg { base: r, size })
}
fn imm(v: i64) -> Operand {
    Operand::Imm(Imm::int(v))
}
fn inst(op: &str, dest: Option<Operand>, srcs: Vec<Operand>) -> Inst {
    Inst { opcode: op.into(), dest, srcs, span: Span::default() }
}
fn block(label: &str, insts: Vec<Inst>, kind: TermKind) -> Block {
    Block { label: label.into(), body: Body::Source(insts), term: Terminator { kind, span: Span::default() }, span: Span::default() }
}
fn program(t: &'static Target, stage: Stage, inputs: &[(u16, u8)], blocks: Vec<Block>) -> Program {
    let inputs = inputs.iter().enumerate().map(|(i, &(r, s))| Input { vreg: Some(VirtReg { name: schedra_ir::format_smolstr!("in{i}"), size: Some(s) }), reg: PhysReg { base: r, size: s }, span: Span::default() }).collect();
    Program { name: Some("t".into()), target: t, stage, form: Form::Source, inputs, blocks }
}

/// Per-target random op generator over a small register pool.
struct Gen {
    t: &'static Target,
    pool: Vec<u16>,
    readable: Vec<u16>,
    size: u8,
    ops: Vec<&'static str>,
    out: &'static str,
}

impl Gen {
    fn v3d() -> Gen {
        Gen { t: &V3D71, pool: (4..10).collect(), readable: (1..10).collect(), size: 1, ops: vec!["fadd", "fmul", "add", "sub", "xor", "shl", "mov", "recip", "exp2", "ldunif", "ldconst", "ldvary", "umul24", "fmin"], out: "tlbw" }
    }
    fn r600() -> Gen {
        Gen { t: &R600, pool: (8..16).collect(), readable: (4..16).collect(), size: 1, ops: vec!["add", "mul", "max", "mov", "muladd", "recip", "sin", "mov"], out: "export" }
    }
    fn gen8() -> Gen {
        Gen { t: &GEN8, pool: (10..30).step_by(2).collect(), readable: (2..30).step_by(2).collect(), size: 2, ops: vec!["add", "mul", "min", "mov", "mad", "math.rcp", "send.tex", "spill"], out: "" }
    }

    fn value(&self, rng: &mut Rng, k: OperandKind, i: usize, desc: &schedra_ir::OpDesc) -> Operand {
        if k == OperandKind::Value && rng.below(5) == 0 {
            let v = if self.t.name == "r600" { Operand::Imm(Imm::f32(rng.below(7) as f32 * 0.5)) } else { imm(rng.below(8) as i64 - 3) };
            if let Operand::Imm(x) = v {
                if self.t.rules.imm_ok(desc, i, x) {
                    return v;
                }
            }
        }
        reg(rng.pick(&self.readable), self.size)
    }

    fn op(&self, rng: &mut Rng, out: &mut Vec<Inst>, next_slot: &mut u32) {
        let name = rng.pick(&self.ops);
        let d = reg(rng.pick(&self.pool), self.size);
        if name == "spill" {
            let off = (*next_slot % 4) * 2;
            *next_slot += 1;
            out.push(inst("send.scratch_write", None, vec![imm(off as i64), reg(rng.pick(&self.readable), 2)]));
            out.push(inst("send.scratch_read", Some(d), vec![imm(off as i64)]));
            return;
        }
        if name == "send.tex" {
            let base = rng.pick(&[10u16, 14, 18, 22]);
            out.push(inst(name, Some(reg(base, 4)), vec![reg(rng.pick(&self.readable), 2)]));
            return;
        }
        let Some(desc) = self.t.op(name) else { return };
        let mut srcs: Vec<Operand> = desc
            .operands
            .iter()
            .enumerate()
            .map(|(i, k)| match k {
                OperandKind::Index => imm(if name == "ldconst" { 0x1234_5678 + rng.below(9) as i64 } else { rng.below(4) as i64 }),
                _ => self.value(rng, *k, i, desc),
            })
            .collect();
        // At most one immediate value operand per op (one per bundle on v3d71).
        let mut seen = false;
        for (o, k) in srcs.iter_mut().zip(desc.operands) {
            if *k != OperandKind::Index && o.imm().is_some() {
                if seen {
                    *o = reg(self.readable[1], self.size);
                }
                seen = true;
            }
        }
        let dest = matches!(desc.dest, Dest::Explicit | Dest::Implicit(_)).then_some(d);
        out.push(inst(name, dest, srcs));
    }

    fn output(&self, rng: &mut Rng, r: u16) -> Inst {
        match self.out {
            "tlbw" => inst("tlbw", None, vec![reg(r, 1)]),
            _ => inst("export", None, vec![imm(rng.below(3) as i64), reg(r, 1)]),
        }
    }

    fn body(&self, rng: &mut Rng, n: usize, slot: &mut u32) -> Vec<Inst> {
        let mut v = Vec::new();
        for _ in 0..n {
            if !self.out.is_empty() && rng.below(6) == 0 {
                let r = rng.pick(&self.readable);
                v.push(self.output(rng, r));
            } else {
                self.op(rng, &mut v, slot);
            }
        }
        v
    }

    fn program(&self, rng: &mut Rng) -> Program {
        let mut slot = 0;
        let mut entry: Vec<Inst> = Vec::new();
        for &r in &self.pool {
            // Define every pool register first.
            let src = reg(self.readable[0], self.size);
            entry.push(inst("mov", Some(reg(r, self.size)), vec![src]));
        }
        let n = 4 + rng.below(24);
        entry.extend(self.body(rng, n, &mut slot));
        let (inputs, stage): (Vec<(u16, u8)>, Stage) = match self.t.name {
            "v3d71" => (vec![(1, 1), (2, 1), (3, 1)], Stage::Fragment),
            "r600" => ((4..8).map(|r| (r, 1)).collect(), Stage::Vertex),
            _ => (vec![(2, 2), (4, 2), (6, 2), (8, 2)], Stage::Fragment),
        };
        let mut fin: Vec<Inst> = Vec::new();
        if self.t.name == "gen8" {
            fin.push(inst("mov", Some(reg(120, 2)), vec![reg(rng.pick(&self.pool), 2)]));
            fin.push(inst("mov", Some(reg(122, 2)), vec![reg(rng.pick(&self.pool), 2)]));
            fin.push(inst("send.eot", None, vec![reg(120, 4)]));
            entry.extend(fin);
            return program(self.t, stage, &inputs, vec![block("b0", entry, TermKind::End)]);
        }
        for (i, &r) in self.pool.iter().enumerate() {
            if i % 2 == 0 || rng.below(2) == 0 {
                fin.push(self.output(rng, r));
            }
        }
        if rng.below(2) == 0 {
            entry.extend(fin);
            return program(self.t, stage, &inputs, vec![block("b0", entry, TermKind::End)]);
        }
        let cond = reg(rng.pick(&self.pool), 1);
        let n1 = rng.below(10);
        let n2 = rng.below(10);
        let n3 = rng.below(8);
        let mut b3 = self.body(rng, n3, &mut slot);
        b3.extend(fin);
        let blocks = vec![
            block("b0", entry, TermKind::Brnz { cond, nonzero: "b1".into(), zero: "b2".into() }),
            block("b1", self.body(rng, n1, &mut slot), TermKind::Jmp("b3".into())),
            block("b2", self.body(rng, n2, &mut slot), TermKind::Jmp("b3".into())),
            block("b3", b3, TermKind::End),
        ];
        program(self.t, stage, &inputs, blocks)
    }
}

/// Rule checks the machine program must pass (a subset of the verifier's).
fn check_rules(m: &Program) -> Result<(), String> {
    let t = m.target;
    for b in &m.blocks {
        for (i, bundle) in b.bundles().iter().enumerate() {
            let mut slots: Vec<&str> = Vec::new();
            let mut imms: Vec<u32> = Vec::new();
            let mut pairs = Vec::new();
            for op in &bundle.ops {
                let d = t.op(&op.inst.opcode).ok_or(format!("unknown op {}", op.inst.opcode))?;
                if !d.slots.contains(&op.slot.as_str()) || slots.contains(&op.slot.as_str()) {
                    return Err(format!("{} #{i}: bad slot {}", b.label, op.slot));
                }
                slots.push(&op.slot);
                t.rules.slot_ok(d, &op.slot, op.inst.dest.as_ref().and_then(Operand::phys))?;
                for (o, k) in op.inst.srcs.iter().zip(d.operands) {
                    if let (Some(x), true) = (o.imm(), *k != OperandKind::Index) {
                        if !imms.contains(&x.bits) {
                            imms.push(x.bits);
                        }
                    }
                }
                pairs.push((d, &op.inst));
            }
            if imms.len() > t.rules.max_bundle_imms() {
                return Err(format!("{} #{i}: too many immediates", b.label));
            }
            t.rules.bundle_ok(&pairs)?;
        }
        if let (TermKind::End, Some(k)) = (&b.term.kind, t.end_delay_slots()) {
            let n = b.bundles().len();
            let p = n.checked_sub(k + 1).ok_or("end sequence too short")?;
            for (j, bundle) in b.bundles().iter().enumerate() {
                let has = bundle.ops.iter().any(|o| o.inst.opcode == "thrsw");
                if has != (j == p) {
                    return Err(format!("thrsw misplaced at #{j}"));
                }
                for op in bundle.ops.iter().filter(|o| o.inst.opcode != "thrsw") {
                    let d = t.op(&op.inst.opcode).ok_or("unknown op")?;
                    if j == p {
                        t.rules.end_slot_ok(d, &op.inst, None)?;
                    } else if j > p {
                        t.rules.end_slot_ok(d, &op.inst, Some(j - p - 1))?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether the machine program behaves like the allocated one on `seeds`.
fn same_behaviour(alloc: &Program, m: &Program, seeds: u64) -> Result<(), String> {
    for seed in 0..seeds {
        let a = interp::run(alloc, seed, 100_000).map_err(|e| format!("source run: {e}"))?;
        let b = interp::run(m, seed, 100_000).map_err(|e| format!("machine run: {e}"))?;
        if a.effects != b.effects || a.trace != b.trace {
            return Err(format!("seed {seed}: effects differ:\n{:?}\nvs\n{:?}", a.effects, b.effects));
        }
    }
    Ok(())
}

fn check_program(p: &Program, opts: &Options) -> Result<(), String> {
    let (m, stats) = pipeline::bundle_program(p, opts, &Hints::of_inputs(p)).map_err(|e| e.to_string())?;
    check_rules(&m).map_err(|e| format!("{e}\n{m}"))?;
    same_behaviour(p, &m, 3).map_err(|e| format!("{e}\nsource:\n{p}\nmachine:\n{m}"))?;
    if stats.instructions != m.bundle_count() {
        return Err("stats disagree with the program".into());
    }
    Ok(())
}

#[test]
fn random_programs_keep_their_behaviour_on_every_target() {
    for (gen, cases) in [(Gen::v3d(), 300), (Gen::r600(), 300), (Gen::gen8(), 200)] {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ gen.t.name.len() as u64);
        for case in 0..cases {
            let p = gen.program(&mut rng);
            if let Err(e) = check_program(&p, &Options::default()) {
                panic!("{} case {case}: {e}", gen.t.name);
            }
        }
    }
}

#[test]
fn pre_ra_scheduling_keeps_behaviour_of_allocated_programs() {
    // Physical registers only: the pre-RA scheduler must respect every
    // preallocated-register dependency, so the program means the same.
    for gen in [Gen::v3d(), Gen::r600(), Gen::gen8()] {
        let mut rng = Rng::new(77 + gen.t.name.len() as u64);
        for sched in [Sched::TopDown, Sched::BottomUp] {
            for case in 0..100 {
                let p = gen.program(&mut rng);
                let q = schedule_program(&p, &Options { sched, ..Default::default() });
                if let Err(e) = same_behaviour(&p, &q, 2) {
                    panic!("{} {sched:?} case {case}: {e}\n{q}", gen.t.name);
                }
            }
        }
    }
}

fn bad(p: &Program, opts: &Options, hints: &Hints) -> bool {
    let (m, _) = pipeline::bundle_program(p, opts, hints).expect("bundles");
    check_rules(&m).is_err() || same_behaviour(p, &m, 2).is_err()
}

fn v3d(insts: Vec<Inst>) -> Program {
    program(&V3D71, Stage::Fragment, &[(1, 1), (2, 1), (3, 1)], vec![block("b0", insts, TermKind::End)])
}

#[test]
fn each_fault_breaks_a_small_program() {
    let ok = Options::default();
    let with = |f| Options { inject: Some(f), ..Default::default() };
    let none = Hints::default();
    // ldvary read one cycle too early.
    let p = v3d(vec![
        inst("ldvary", Some(reg(4, 1)), vec![imm(0)]),
        inst("tlbw", None, vec![reg(4, 1)]),
        inst("recip", Some(reg(5, 1)), vec![reg(1, 1)]),
        inst("recip", Some(reg(6, 1)), vec![reg(5, 1)]),
        inst("tlbw", None, vec![reg(6, 1)]),
    ]);
    assert!(!bad(&p, &ok, &none));
    assert!(bad(&p, &with(Fault::V3dLdvarySameCycle), &none));
    // SFU result read one cycle too early.
    let p = v3d(vec![
        inst("recip", Some(reg(4, 1)), vec![reg(1, 1)]),
        inst("fadd", Some(reg(5, 1)), vec![reg(4, 1), reg(4, 1)]),
        inst("tlbw", None, vec![reg(5, 1)]),
        inst("fmul", Some(reg(6, 1)), vec![reg(1, 1), reg(2, 1)]),
        inst("fmul", Some(reg(7, 1)), vec![reg(6, 1), reg(6, 1)]),
        inst("fmul", Some(reg(8, 1)), vec![reg(7, 1), reg(7, 1)]),
        inst("tlbw", None, vec![reg(8, 1)]),
    ]);
    assert!(!bad(&p, &ok, &none));
    assert!(bad(&p, &with(Fault::V3dSfuLatency), &none));
    // ALU write in the thrsw bundle.
    let p = v3d(vec![inst("fadd", Some(reg(4, 1)), vec![reg(1, 1), reg(1, 1)]), inst("tlbw", None, vec![reg(4, 1)]), inst("fadd", Some(reg(5, 1)), vec![reg(1, 1), reg(1, 1)])]);
    assert!(!bad(&p, &ok, &none));
    assert!(bad(&p, &with(Fault::V3dThrswRfWrite), &none));
    // A write overtakes a late read of the old value.
    let p = v3d(vec![
        inst("recip", Some(reg(5, 1)), vec![reg(1, 1)]),
        inst("recip", Some(reg(6, 1)), vec![reg(5, 1)]),
        inst("fadd", Some(reg(7, 1)), vec![reg(6, 1), reg(2, 1)]),
        inst("mov", Some(reg(2, 1)), vec![reg(3, 1)]),
        inst("tlbw", None, vec![reg(7, 1)]),
        inst("tlbw", None, vec![reg(2, 1)]),
    ]);
    assert!(!bad(&p, &ok, &none));
    assert!(bad(&p, &with(Fault::SchedIgnoreWar), &none));
    // r600: a write to a pinned register moves into a group before a late
    // read of its old value.
    let x = |g: u16, c: u16| reg(g * 4 + c, 1);
    let insts = vec![
        inst("recip", Some(x(2, 0)), vec![x(1, 1)]),
        inst("recip", Some(x(2, 1)), vec![x(2, 0)]),
        inst("add", Some(x(2, 2)), vec![x(2, 1), x(1, 0)]),
        inst("mov", Some(x(1, 0)), vec![Operand::Imm(Imm::f32(1.0))]),
        inst("export", None, vec![imm(0), x(2, 2)]),
        inst("export", None, vec![imm(1), x(1, 0)]),
    ];
    let p = program(&R600, Stage::Vertex, &[(4, 1), (5, 1)], vec![block("b0", insts, TermKind::End)]);
    let pinned = Hints { pinned: vec![4, 5] };
    assert!(!bad(&p, &ok, &pinned));
    assert!(bad(&p, &with(Fault::R600PinnedWar), &pinned));
    assert!(!bad(&p, &with(Fault::R600PinnedWar), &Hints { pinned: vec![9] }));
}

/// The program with every pool register turned into a virtual register of
/// the same name (non-SSA: pool registers are redefined freely).
fn virtualise(p: &Program, pool: &[u16]) -> Program {
    let mut q = p.clone();
    let conv = |o: &mut Operand| {
        if let Operand::Phys(r) = o {
            if pool.contains(&r.base) {
                *o = Operand::Virt(VirtReg { name: schedra_ir::format_smolstr!("v{}", r.base), size: Some(r.size) });
            }
        }
    };
    for b in &mut q.blocks {
        for i in b.insts_mut() {
            i.dest.iter_mut().for_each(conv);
            i.srcs.iter_mut().for_each(conv);
        }
        if let TermKind::Brnz { cond, .. } = &mut b.term.kind {
            conv(cond);
        }
    }
    q
}

#[test]
fn pre_ra_scheduling_keeps_behaviour_of_virtual_non_ssa_programs() {
    let mut moved = 0;
    for gen in [Gen::v3d(), Gen::r600()] {
        let mut rng = Rng::new(4242 + gen.t.name.len() as u64);
        for case in 0..300 {
            let p = virtualise(&gen.program(&mut rng), &gen.pool);
            for sched in [Sched::TopDown, Sched::BottomUp] {
                let q = schedule_program(&p, &Options { sched, ..Default::default() });
                assert_eq!(p.op_count(), q.op_count());
                moved += usize::from(p.blocks != q.blocks);
                if let Err(e) = same_behaviour(&p, &q, 2) {
                    panic!("{} case {case} {sched:?}: {e}\n{p}\n---\n{q}", gen.t.name);
                }
            }
        }
    }
    assert!(moved > 300, "the scheduler reordered only {moved} programs");
}

fn verdict(src: &Program, m: &Program) -> (schedra_verify::Verdict, String) {
    let r = schedra_verify::verify(src, m, &schedra_verify::VerifyOptions { timeout_ms: 5_000 });
    let msg = r.violations.iter().map(|v| format!("{:?} {}#{}: {}", v.kind, v.block, v.bundle, v.message)).collect::<Vec<_>>().join("\n");
    (r.verdict, msg)
}

#[test]
fn the_verifier_proves_bundled_random_programs() {
    for (gen, cases) in [(Gen::v3d(), 60), (Gen::r600(), 60), (Gen::gen8(), 40)] {
        let mut rng = Rng::new(0x5eed ^ gen.t.name.len() as u64);
        for case in 0..cases {
            let p = gen.program(&mut rng);
            let (m, _) = pipeline::bundle_program(&p, &Options::default(), &Hints::of_inputs(&p)).expect("bundles");
            let (v, msg) = verdict(&p, &m);
            assert_eq!(v, schedra_verify::Verdict::Proven, "{} case {case}: {msg}\n{p}\n{m}", gen.t.name);
        }
    }
}

#[test]
fn the_verifier_catches_each_scheduler_fault_in_random_programs() {
    // For each fault, some random program of its target must compile to a
    // machine program the verifier rejects.
    let faults = [
        (Fault::V3dLdvarySameCycle, Gen::v3d()),
        (Fault::V3dSfuLatency, Gen::v3d()),
        (Fault::V3dThrswRfWrite, Gen::v3d()),
        (Fault::SchedIgnoreWar, Gen::v3d()),
        (Fault::SchedIgnoreWar, Gen::r600()),
        (Fault::R600PinnedWar, Gen::r600()),
    ];
    for (f, gen) in faults {
        let mut rng = Rng::new(0xfa17 ^ gen.t.name.len() as u64);
        let opts = Options { inject: Some(f), ..Default::default() };
        let caught = (0..200).any(|_| {
            let p = gen.program(&mut rng);
            // Pinned: the registers a source would preallocate (inputs, and
            // the pool registers it names as destinations).
            let hints = Hints::from_source(&p);
            let (m, _) = pipeline::bundle_program(&p, &opts, &hints).expect("bundles");
            verdict(&p, &m).0 == schedra_verify::Verdict::Violation
        });
        assert!(caught, "{f} on {} never caught", gen.t.name);
    }
}

#[test]
fn bundling_never_fails_under_any_fault_or_scheduler() {
    for gen in [Gen::v3d(), Gen::r600(), Gen::gen8()] {
        let mut rng = Rng::new(0xabad ^ gen.t.name.len() as u64);
        for case in 0..60 {
            let p = gen.program(&mut rng);
            let hints = Hints::from_source(&p);
            for f in Fault::all().iter().copied().map(Some).chain([None]) {
                for sched in [Sched::TopDown, Sched::BottomUp] {
                    let opts = Options { inject: f, sched, ..Default::default() };
                    let q = schedule_program(&p, &opts);
                    if let Err(e) = pipeline::bundle_program(&q, &opts, &hints) {
                        panic!("{} case {case} {f:?}: {e}", gen.t.name);
                    }
                }
            }
        }
    }
}
