//! What the generator needs to know about a target beyond its opcode table,
//! derived from the description: the registers inputs arrive in
//! (`Target::inputs`), the pool of registers that may be preallocated, how a loop
//! counter counts down, how a branch condition is made, which output op
//! ends the program (`Target::ends_thread`), the register runs that carry
//! values wider than any ALU op can make (`wide`), and, for a target
//! without ALU immediates whose results do not cross blocks (a bypass
//! network), the op that loads constants and the fact that values cross
//! blocks only in registers.
//!
//! Invariant: every register in a profile exists in the target's file, is
//! neither reserved (for the pool) nor implicitly written, and the pool's
//! runs are pairwise disjoint; the wide runs are disjoint from each other,
//! from the pool and from the inputs. A counter or condition whose constant
//! the target takes as no immediate has `load` set, and then the constant
//! is loaded by that op into a value first.

use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem, Sizes};
use schedra_ir::{Imm, PhysReg, Reg, Target};

/// How a loop counter is set up and counted down: `c = mov start` then
/// `c = step c, delta` until the word is zero.
#[derive(Clone, Copy, Debug)]
pub struct Counter {
    /// The move that sets the start value.
    pub mov: &'static OpDesc,
    /// The op that counts down.
    pub step: &'static OpDesc,
    /// Integer counters start at `n`, float counters at `n as f32`.
    pub float: bool,
    /// The immediate that `step` combines with the counter.
    pub delta: Imm,
    /// The op that loads the start and `delta` (the target's constant
    /// load) when `mov` and `step` take no immediate: the counter is then
    /// `c = load start` and `d = load delta; c = step c, d`.
    pub load: Option<&'static OpDesc>,
}

impl Counter {
    /// The start value for a trip count of `n`.
    pub fn start(&self, n: u32) -> Imm {
        if self.float {
            Imm::f32(n as f32)
        } else {
            Imm::int(n as i64)
        }
    }
}

/// The target facts the generator uses.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Register runs an `input` line may bind.
    pub inputs: Vec<PhysReg>,
    /// Register runs that may be preallocated (disjoint from each other).
    pub pool: Vec<PhysReg>,
    /// The loop counter, if the target can count with immediates.
    pub counter: Option<Counter>,
    /// An op `c = op v, imm` that turns a value into a branch condition
    /// taken about half the time (`and v, 1`, or `max v, 0.0`); on a
    /// target without such an immediate, `imm` is loaded with `load`.
    pub cond: Option<(&'static OpDesc, Imm)>,
    /// The op that loads a constant word into a value (`Sem::Const` with an
    /// index operand), used where the target takes no immediate: `None` on
    /// targets whose counter and condition take immediates.
    pub load: Option<&'static OpDesc>,
    /// Values live in one block only (a bypass network: nothing is read
    /// across a block boundary), so what crosses blocks lives in the pool's
    /// registers, and a loop counter is one of them.
    pub local_values: bool,
    /// How many of the pressure burst's values later code may read: all on
    /// a target that spills to memory; on a bypass network (no memory to
    /// spill to), three quarters of the register components, so that what
    /// later code keeps live fits the registers beside the block's own
    /// values. The rest of the burst is only output at the block's end: it
    /// is live all through the block in source order (pressure beyond the
    /// network and the registers together) but a schedule may make each
    /// such value just before its output.
    pub burst_read: usize,
    /// Output ops allowed anywhere (v3d71 `tlbw`, r600 `export`).
    pub outputs: Vec<&'static OpDesc>,
    /// The output that must be the program's last op (gen8 `send.eot`).
    pub final_output: Option<&'static OpDesc>,
    /// An op that folds two values of one size into one (for the end).
    pub fold: Option<&'static OpDesc>,
    /// The register move (`mov`).
    pub mov: Option<&'static OpDesc>,
    /// For each size of a fixed-size op whose source no ALU op can make
    /// (`Sizes::Fixed` with a source wider than `max_alu_size`: r600's
    /// `tex`), its source and destination sizes beyond the ALU's: one
    /// aligned run of allocatable registers: the generator gathers such an
    /// operand there one register at a time and writes such a result there,
    /// so that its registers can be read one at a time.
    pub wide: Vec<PhysReg>,
}

impl Profile {
    /// The wide run of `size` registers, if the target needs one.
    pub fn wide_run(&self, size: u8) -> Option<PhysReg> {
        self.wide.iter().copied().find(|p| p.size == size)
    }
}

/// [`Profile::wide`]: for each wide size in increasing order, the highest
/// aligned run of allocatable registers that overlaps no input, pool run or
/// earlier wide run.
fn wide_runs(t: &'static Target, taken: &[PhysReg]) -> Vec<PhysReg> {
    let mut sizes: Vec<u8> = t
        .ops
        .iter()
        .filter(|o| !o.machine_only)
        .filter_map(|o| match o.sizes {
            Sizes::Fixed { dest, src } if src > t.max_alu_size => Some([dest, src]),
            _ => None,
        })
        .flatten()
        .filter(|&s| s > t.max_alu_size && s <= t.max_value_size)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let alloc = t.rules.allocatable(t.default_stage);
    let mut out: Vec<PhysReg> = Vec::new();
    for size in sizes {
        let align = if size >= 3 { 4 } else { size as Reg };
        let fits = |p: &PhysReg| {
            t.regs.contains(*p) && p.regs().all(|r| alloc.contains(&r) && !t.implicit_regs.contains(&r) && !t.reserved.contains(&r)) && !taken.iter().chain(out.iter()).any(|q| q.overlaps(*p))
        };
        let run = alloc.iter().rev().filter(|&&r| r % align == 0).map(|&r| PhysReg { base: r, size }).find(fits);
        out.extend(run);
    }
    out
}

/// Whether `o` writes a value the source form names (`%d = o …`).
pub fn names_dest(o: &OpDesc) -> bool {
    matches!(o.dest, Dest::Explicit | Dest::Unit)
}

fn imm_op(t: &'static Target, sem: Sem, imm: Imm) -> Option<&'static OpDesc> {
    t.ops.iter().find(|o| {
        o.sem == sem && names_dest(o) && o.sizes == Sizes::Uniform && o.operands.len() == 2 && o.operands[1] == OperandKind::Value && t.rules.imm_ok(o, 1, imm)
    })
}

/// `d = op a, b` of `sem` on two register values (for a constant loaded
/// into `b`).
fn reg_op(t: &'static Target, sem: Sem) -> Option<&'static OpDesc> {
    t.ops.iter().find(|o| o.sem == sem && names_dest(o) && !o.machine_only && !o.slots.is_empty() && o.sizes == Sizes::Uniform && o.operands == [OperandKind::Value, OperandKind::Value])
}

/// The target's constant load: `d = op K` with `K` the word.
fn const_load(t: &'static Target) -> Option<&'static OpDesc> {
    t.ops.iter().find(|o| o.sem == Sem::Const && names_dest(o) && !o.machine_only && o.operands == [OperandKind::Index])
}

fn counter(t: &'static Target, mov: Option<&'static OpDesc>) -> Option<Counter> {
    let mov = mov?;
    let int_start = t.rules.imm_ok(mov, 0, Imm::int(4));
    let float_start = t.rules.imm_ok(mov, 0, Imm::f32(4.0));
    let choices = [
        (Sem::Sub, Imm::int(1), false, int_start),
        (Sem::Add, Imm::int(-1), false, int_start),
        (Sem::FAdd, Imm::f32(-1.0), true, float_start),
        (Sem::FSub, Imm::f32(1.0), true, float_start),
    ];
    choices.iter().filter(|c| c.3).find_map(|&(sem, delta, float, _)| imm_op(t, sem, delta).map(|step| Counter { mov, step, float, delta, load: None }))
}

/// A float counter whose start and step are loaded by `load` (a target
/// without ALU immediates).
fn loaded_counter(t: &'static Target, load: &'static OpDesc) -> Option<Counter> {
    let step = reg_op(t, Sem::FAdd)?;
    Some(Counter { mov: load, step, float: true, delta: Imm::f32(-1.0), load: Some(load) })
}

fn pool_regs(t: &'static Target, inputs: &[PhysReg]) -> Vec<PhysReg> {
    let forbidden = |r: Reg| t.reserved.contains(&r) || t.implicit_regs.contains(&r);
    let alloc = t.rules.allocatable(t.default_stage);
    let mut pool: Vec<PhysReg> = Vec::new();
    let push = |p: PhysReg, pool: &mut Vec<PhysReg>| {
        if t.regs.contains(p) && !p.regs().any(forbidden) && !pool.iter().any(|q| q.overlaps(p)) {
            pool.push(p);
        }
    };
    // Input registers first (so that `clobber_inputs` can pick them), then
    // low allocatable registers, then multi-register runs.
    for &p in inputs {
        push(p, &mut pool);
    }
    for &r in alloc.iter().take(24) {
        push(PhysReg::one(r), &mut pool);
    }
    if t.max_alu_size >= 2 {
        for &r in alloc.iter().skip(24).take(16).filter(|r| *r % 2 == 0) {
            push(PhysReg { base: r, size: 2 }, &mut pool);
        }
    }
    pool
}

impl Profile {
    /// The profile of `t`, computed once per target and process when first
    /// asked for (and leaked once per call for a target outside
    /// `target::all()`).
    pub fn cached(t: &'static Target) -> &'static Profile {
        use std::sync::OnceLock;
        static CACHE: OnceLock<Vec<OnceLock<Profile>>> = OnceLock::new();
        let all = CACHE.get_or_init(|| schedra_ir::target::all().iter().map(|_| OnceLock::new()).collect());
        match schedra_ir::target::all().iter().position(|x| std::ptr::eq(*x, t)).and_then(|i| all.get(i)) {
            Some(p) => p.get_or_init(|| Profile::of(t)),
            None => Box::leak(Box::new(Profile::of(t))),
        }
    }
    /// The profile of `t`.
    pub fn of(t: &'static Target) -> Profile {
        let mov = t.ops.iter().find(|o| o.sem == Sem::Mov && names_dest(o) && o.operands == [OperandKind::Value]);
        let imm_cond = imm_op(t, Sem::And, Imm::int(1)).map(|o| (o, Imm::int(1))).or_else(|| imm_op(t, Sem::FMax, Imm::f32(0.0)).map(|o| (o, Imm::f32(0.0))));
        let mut counter = counter(t, mov);
        // Constants are loaded only where no immediate form exists.
        let load = if imm_cond.is_none() || counter.is_none() { const_load(t) } else { None };
        let cond = imm_cond.or_else(|| load.and(reg_op(t, Sem::FMax)).map(|o| (o, Imm::f32(0.0))));
        if counter.is_none() {
            counter = load.and_then(|l| loaded_counter(t, l));
        }
        let is_output = |o: &&OpDesc| matches!(o.sem, Sem::Output(..)) && !o.machine_only;
        let outputs = t.ops.iter().filter(is_output).filter(|o| !t.ends_thread(o)).collect();
        let final_output = t.ops.iter().filter(is_output).find(|o| t.ends_thread(o));
        let fold = [Sem::Xor, Sem::Add, Sem::FAdd].iter().find_map(|&s| {
            t.ops.iter().find(|o| o.sem == s && o.sizes == Sizes::Uniform && names_dest(o) && o.operands.len() == 2)
        });
        let inputs = t.inputs.to_vec();
        let pool = pool_regs(t, &inputs);
        let taken: Vec<PhysReg> = inputs.iter().chain(pool.iter()).copied().collect();
        let wide = wide_runs(t, &taken);
        let local_values = t.network.is_some();
        let burst_read = if local_values { usize::from(t.regs.count) * 3 / 4 } else { usize::MAX };
        Profile { inputs, pool, counter, cond, outputs, final_output, fold, mov, load, local_values, burst_read, wide }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_can_loop_branch_and_output() {
        for t in schedra_ir::target::generated() {
            let p = Profile::of(t);
            assert!(p.counter.is_some(), "{}: no loop counter", t.name);
            assert!(p.cond.is_some(), "{}: no condition op", t.name);
            assert!(!p.outputs.is_empty() || p.final_output.is_some(), "{}: no output", t.name);
            assert!(p.pool.len() >= 6, "{}: pool too small", t.name);
            for (i, a) in p.pool.iter().enumerate() {
                assert!(p.pool[i + 1..].iter().all(|b| !a.overlaps(*b)), "{}: overlapping pool", t.name);
            }
        }
    }

    #[test]
    fn inputs_and_the_final_output_come_from_the_description() {
        for t in schedra_ir::target::all() {
            let p = Profile::of(t);
            assert_eq!(p.inputs, t.inputs, "{}", t.name);
            assert_eq!(p.final_output.map(|o| o.name), t.thread_end_op().map(|o| o.name), "{}", t.name);
            assert!(p.outputs.iter().all(|o| !t.ends_thread(o)), "{}", t.name);
        }
        let gen8 = Profile::of(schedra_ir::target::by_name("gen8").expect("gen8"));
        assert_eq!(gen8.final_output.map(|o| o.name), Some("send.eot"));
    }

    #[test]
    fn r600_counts_with_floats_and_v3d_with_integers() {
        let r = Profile::of(schedra_ir::target::by_name("r600").expect("r600")).counter.expect("counter");
        assert!(r.float);
        let v = Profile::of(schedra_ir::target::by_name("v3d71").expect("v3d71")).counter.expect("counter");
        assert!(!v.float);
    }

    #[test]
    fn wide_runs_exist_exactly_for_sizes_no_alu_op_makes() {
        let r600 = Profile::of(schedra_ir::target::by_name("r600").expect("r600"));
        let sizes: Vec<u8> = r600.wide.iter().map(|p| p.size).collect();
        assert_eq!(sizes, [2, 4], "r600's tex reads two registers and writes four");
        assert!(r600.wide.iter().all(|p| p.base % if p.size >= 3 { 4 } else { p.size as u16 } == 0));
        for (i, a) in r600.wide.iter().enumerate() {
            assert!(r600.wide[i + 1..].iter().chain(&r600.pool).chain(&r600.inputs).all(|b| !a.overlaps(*b)), "{a:?}");
        }
        // gen8's ALU makes two-register values, and its send.tex needs no more.
        assert!(Profile::of(schedra_ir::target::by_name("gen8").expect("gen8")).wide.is_empty());
    }
}
