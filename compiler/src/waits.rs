//! Encoded waits and texture barriers, for a target whose machine form
//! states its stalls (`Target::waits`, kepler): one block's scheduled
//! bundles, in issue order → the same ops with barriers inserted, pairs
//! formed and every bundle's `wait` computed.
//!
//! Algorithm (Mesa's SchedDataCalculator and `insertTextureBarriers` in
//! spirit, see `shared/research/kepler.md`):
//! 1. Groups: the non-empty bundles in order; the empty ones were the list
//!    scheduler's nop cycles, which the waits replace. In the peephole mode
//!    ([`Post::Peephole`]) the ops first move as nouveau's `PostRADualIssue`
//!    moves them ([`peephole`]): for each op whose successor cannot pair
//!    with it, the first later op that can, and that commutes with every op
//!    it passes, moves up behind it.
//! 2. Barriers ([`barriers`]): walking the groups with the unknown-landing
//!    ops in flight (in issue order, the order they land in), a group that
//!    reads or writes a destination of one of them is preceded by a barrier
//!    whose level is the number of later ones in flight — the weakest level
//!    that covers it. A block ends with a level-0 barrier if any is in
//!    flight (every write lands within its block).
//! 3. Waits ([`timed`]): a scoreboard holds, per register, the cycle its
//!    last write lands, and the cycle the next SFU op may issue. Each group
//!    issues at the first cycle after the previous one at which its sources
//!    have landed, its fixed-latency writes land after the register's last
//!    write, its unknown-landing writes issue after that write has landed,
//!    and the SFU timer allows it; a single op and a later single op that may
//!    dual-issue with it and is ready at the same cycle become a pair
//!    (Mesa's sched byte 0x04; a pair is never extended): in the peephole
//!    mode only the next op, as Mesa's calculator does; in the list mode any
//!    of the next few that commutes with the ops it passes. The gap to the previous bundle is
//!    that bundle's wait, with `{ }` nops after it when the gap is longer
//!    than the clock's `max_wait`. The terminator issues once every write
//!    has landed and one cycle before the SFU timer allows an SFU op
//!    (the next block's first bundle comes a cycle after it).
//!
//! Invariant: in the result every read of a fixed-latency result happens at
//! or after its landing, every read or overwrite of an unknown-landing
//! result follows a barrier that covers it, two writes to one register land
//! in issue order, SFU ops issue at least `sfu_spacing` cycles apart, and no
//! write is in flight at the terminator's cycle — counting a barrier's stall
//! as zero, which only the hardware can lengthen.

use crate::{Fault, Options, Post};
use schedra_ir::target::{Dest, OpDesc, Sem, WaitClock};
use schedra_ir::{Bundle, Imm, Inst, Op, Operand, Reg, SmolStr, Target};

/// The bundles of one block with texture barriers and encoded waits (see
/// the module doc); `bundles` are the scheduled bundles in issue order.
pub fn encode(target: &'static Target, clock: &WaitClock, bundles: Vec<Bundle>, opts: &Options) -> Vec<Bundle> {
    let mut groups: Vec<Vec<Op>> = bundles.into_iter().filter(|b| !b.ops.is_empty()).map(|b| b.ops).collect();
    if opts.post == Post::Peephole {
        groups = peephole(target, groups);
    }
    let groups = barriers(target, groups, opts);
    timed(target, clock, groups, opts)
}

/// The op's description on `target`.
fn desc(target: &Target, op: &Op) -> Option<&'static OpDesc> {
    target.op(&op.inst.opcode)
}

/// The registers an op reads.
fn reads(inst: &Inst) -> impl Iterator<Item = Reg> + '_ {
    inst.srcs.iter().filter_map(Operand::phys).flat_map(|p| p.regs())
}

/// The registers an op writes.
fn writes(d: &OpDesc, inst: &Inst) -> Vec<Reg> {
    match d.dest {
        Dest::Explicit => inst.dest.iter().filter_map(Operand::phys).flat_map(|p| p.regs()).collect(),
        Dest::Implicit(r) => vec![r],
        // a bypass-network result is written to no register
        Dest::None | Dest::Unit => Vec::new(),
    }
}

/// Whether `b` may issue in the slot after `a`'s in one bundle: the
/// target's bundle rule holds for the pair in slot order and each has its
/// own slot.
fn pairable(target: &Target, a: &Op, b: &Op) -> bool {
    let (Some(da), Some(db)) = (desc(target, a), desc(target, b)) else { return false };
    let (Some(first), Some(second)) = (target.slots.first(), target.slots.get(1)) else { return false };
    da.slots.contains(first) && db.slots.contains(second) && target.rules.bundle_ok(&[(da, &a.inst), (db, &b.inst)]).is_ok()
}

/// Whether two ops may trade places: no register one writes is read or
/// written by the other, neither is an unknown-landing op or a barrier,
/// and not both touch memory, outputs or discards.
fn commute(target: &Target, a: &Op, b: &Op) -> bool {
    let (Some(da), Some(db)) = (desc(target, a), desc(target, b)) else { return false };
    let fixed = |d: &OpDesc| d.unknown_landing || d.sem == Sem::TexBarrier;
    let memory = |d: &OpDesc| matches!(d.sem, Sem::ScratchRead | Sem::ScratchWrite | Sem::Output(..) | Sem::Discard);
    if fixed(da) || fixed(db) || (memory(da) && memory(db)) {
        return false;
    }
    let (wa, wb) = (writes(da, &a.inst), writes(db, &b.inst));
    let clash = |w: &[Reg], other: &Inst, ow: &[Reg]| w.iter().any(|r| ow.contains(r) || reads(other).any(|x| x == *r));
    !clash(&wa, &b.inst, &wb) && !clash(&wb, &a.inst, &wa)
}

/// nouveau's `PostRADualIssue` on the block's ops in order (see the module
/// doc); every group of the result holds one op.
pub fn peephole(target: &Target, groups: Vec<Vec<Op>>) -> Vec<Vec<Op>> {
    let mut ops: Vec<Op> = groups.into_iter().flatten().collect();
    let mut i = 0;
    while i + 1 < ops.len() {
        let (Some(a), Some(next)) = (ops.get(i), ops.get(i + 1)) else { break };
        if !pairable(target, a, next) {
            let mut found = None;
            for c in i + 2..ops.len() {
                let Some(check) = ops.get(c) else { break };
                let passes = ops.get(i + 1..c).unwrap_or(&[]).iter().all(|x| commute(target, x, check));
                if !passes {
                    break;
                }
                if pairable(target, a, check) {
                    found = Some(c);
                    break;
                }
            }
            if let Some(c) = found {
                let moved = ops.remove(c);
                ops.insert(i + 1, moved);
            }
        }
        i += 1;
    }
    ops.into_iter().map(|o| vec![o]).collect()
}

/// The target's barrier op with level `level`.
fn barrier_op(target: &Target, level: usize) -> Option<Op> {
    let d = target.ops.iter().find(|o| o.sem == Sem::TexBarrier)?;
    let slot = *d.slots.first()?;
    let inst = Inst { opcode: SmolStr::new_static(d.name), dest: None, srcs: vec![Operand::Imm(Imm::int(level as i64))], span: Default::default() };
    Some(Op { slot: SmolStr::new_static(slot), inst })
}

/// Insert the barriers (see the module doc). This is the decision point
/// of the fault `KeplerTexWaw`: a barrier guards only reads of a texture
/// destination, not writes to it.
pub fn barriers(target: &Target, groups: Vec<Vec<Op>>, opts: &Options) -> Vec<Vec<Op>> {
    let guard_writes = !opts.has(Fault::KeplerTexWaw);
    let mut out = Vec::with_capacity(groups.len() + 2);
    let mut flying: Vec<Vec<Reg>> = Vec::new();
    for g in groups {
        let touches = |regs: &Vec<Reg>| {
            g.iter().any(|op| {
                let w = desc(target, op).map(|d| writes(d, &op.inst)).unwrap_or_default();
                reads(&op.inst).any(|r| regs.contains(&r)) || (guard_writes && w.iter().any(|r| regs.contains(r)))
            })
        };
        if let Some(j) = flying.iter().rposition(touches) {
            out.extend(barrier_op(target, flying.len() - 1 - j).map(|b| vec![b]));
            flying.drain(..=j);
        }
        for op in &g {
            if let Some(d) = desc(target, op).filter(|d| d.unknown_landing) {
                flying.push(writes(d, &op.inst));
            }
        }
        out.push(g);
    }
    if !flying.is_empty() {
        out.extend(barrier_op(target, 0).map(|b| vec![b]));
    }
    out
}

/// The scoreboard of [`timed`].
#[derive(Default)]
struct Board {
    /// Per register, the cycle its last fixed-latency write lands.
    land: Vec<u64>,
    /// The first cycle the next SFU op may issue.
    sfu: u64,
}

impl Board {
    fn land(&self, r: Reg) -> u64 {
        self.land.get(usize::from(r)).copied().unwrap_or(0)
    }

    fn set(&mut self, r: Reg, c: u64) {
        let i = usize::from(r);
        if self.land.len() <= i {
            self.land.resize(i + 1, 0);
        }
        if let Some(x) = self.land.get_mut(i) {
            *x = c;
        }
    }

    /// The latency an op's wait is computed from: its own, except under the
    /// fault `KeplerWaitDefault` (the decision point), where loads and
    /// interpolations with a longer latency are taken to have the
    /// default 9.
    fn latency(d: &OpDesc, opts: &Options) -> u64 {
        let l = u64::from(d.latency.max(1));
        if opts.has(Fault::KeplerWaitDefault) && matches!(d.sem, Sem::Varying | Sem::ScratchRead) {
            return l.min(9);
        }
        l
    }

    /// The first cycle from `from` at which `ops` may issue together.
    fn earliest(&self, target: &Target, ops: &[Op], from: u64, opts: &Options) -> u64 {
        let mut at = from;
        for op in ops {
            let Some(d) = desc(target, op) else { continue };
            for r in reads(&op.inst) {
                at = at.max(self.land(r));
            }
            // A fixed-latency write lands after the register's last write;
            // an unknown-landing op issues only once that write has landed
            // (as Mesa's calculator makes every write wait), since its own
            // landing is not on this board's timeline: a barrier's stall
            // counts as zero here and in the verifier.
            for r in writes(d, &op.inst) {
                let after = if d.unknown_landing { self.land(r) } else { (self.land(r) + 1).saturating_sub(Self::latency(d, opts)) };
                at = at.max(after);
            }
            if d.sfu {
                at = at.max(self.sfu);
            }
        }
        at
    }

    /// Record `ops` issuing at `at`.
    fn commit(&mut self, target: &Target, clock: &WaitClock, ops: &[Op], at: u64, opts: &Options) {
        for op in ops {
            let Some(d) = desc(target, op) else { continue };
            if !d.unknown_landing {
                let l = Self::latency(d, opts);
                for r in writes(d, &op.inst) {
                    self.set(r, at + l);
                }
            }
            if d.sfu {
                self.sfu = at + u64::from(clock.sfu_spacing);
            }
        }
    }

    /// The cycle by which every write has landed.
    fn quiet(&self) -> u64 {
        self.land.iter().copied().max().unwrap_or(0)
    }
}

/// Put a gap of `gap` stall cycles after the last bundle of `out`: its
/// wait, then nops (each costs one cycle plus its own wait).
fn pad(out: &mut [Bundle], extra: &mut Vec<Bundle>, mut gap: u64, max: u64) {
    let Some(last) = out.last_mut() else { return };
    let w = gap.min(max);
    last.wait = w as u8;
    gap -= w;
    while gap > 0 {
        let w = (gap - 1).min(max);
        extra.push(Bundle { ops: Vec::new(), span: Default::default(), wait: w as u8 });
        gap -= 1 + w;
    }
}

/// The bundles with their waits (see the module doc, step 3). This is
/// the decision point of the faults `KeplerDualRaw` (a pair is formed
/// although the second op reads what the first writes) and
/// `KeplerDualAfterTex` (a pair is formed with an unknown-landing op
/// first).
pub fn timed(target: &Target, clock: &WaitClock, groups: Vec<Vec<Op>>, opts: &Options) -> Vec<Bundle> {
    let max = u64::from(target.clock.max_wait());
    let mut board = Board::default();
    let mut out: Vec<Bundle> = Vec::with_capacity(groups.len());
    let (mut from, mut last) = (0u64, None::<u64>);
    let mut queue: std::collections::VecDeque<Vec<Op>> = groups.into();
    while let Some(mut ops) = queue.pop_front() {
        let at = board.earliest(target, &ops, from, opts);
        if let [a] = ops.as_slice() {
            if let Some(k) = partner(target, (&board, from, at), a, &queue, opts) {
                if let Some(mut b) = queue.remove(k).and_then(|g| g.into_iter().next()) {
                    if let (Some(s0), Some(s1)) = (target.slots.first(), target.slots.get(1)) {
                        if let Some(a) = ops.first_mut() {
                            a.slot = SmolStr::new_static(s0);
                        }
                        b.slot = SmolStr::new_static(s1);
                    }
                    ops.push(b);
                }
            }
        }
        let mut extra = Vec::new();
        if let Some(prev) = last {
            pad(&mut out, &mut extra, at - prev - 1, max);
        }
        out.append(&mut extra);
        board.commit(target, clock, &ops, at, opts);
        out.push(Bundle { ops, span: Default::default(), wait: 0 });
        (from, last) = (at + 1, Some(at));
    }
    if let Some(prev) = last {
        let term = from.max(board.quiet()).max(board.sfu.saturating_sub(1));
        let mut extra = Vec::new();
        pad(&mut out, &mut extra, term - prev - 1, max);
        out.append(&mut extra);
    }
    out
}

/// How many later groups the list mode looks through for an op to pair.
const PARTNER_WINDOW: usize = 8;

/// The index in `queue` of the single op that pairs with `a` issuing at
/// `at`: ready by then, not an SFU op after an SFU op, allowed in the
/// second slot by the target's rule (or by an injected fault). The peephole
/// mode looks only at the next group (Mesa's calculator pairs neighbours);
/// the list mode also at the next [`PARTNER_WINDOW`] groups, taking an op
/// that commutes with every op it passes.
fn partner(target: &Target, (board, from, at): (&Board, u64, u64), a: &Op, queue: &std::collections::VecDeque<Vec<Op>>, opts: &Options) -> Option<usize> {
    let window = if opts.post == Post::List { PARTNER_WINDOW } else { 1 };
    let sfu = |o: &Op| desc(target, o).is_some_and(|d| d.sfu);
    for (k, g) in queue.iter().enumerate().take(window) {
        let [b] = g.as_slice() else { return None };
        let passes = queue.iter().take(k).all(|x| x.iter().all(|o| commute(target, o, b)));
        if !passes {
            continue;
        }
        let ready = board.earliest(target, std::slice::from_ref(b), from, opts) <= at;
        if ready && !(sfu(a) && sfu(b)) && (pairable(target, a, b) || faulty_pair(target, a, b, opts)) {
            return Some(k);
        }
    }
    None
}

/// Whether an injected fault pairs `a` and `b` although the target's
/// rule refuses them: `KeplerDualRaw` when `b` reads what `a` writes (and
/// the pair is otherwise legal), `KeplerDualAfterTex` when `a` is an
/// unknown-landing op and `b` could issue in the second slot.
fn faulty_pair(target: &Target, a: &Op, b: &Op, opts: &Options) -> bool {
    let (Some(da), Some(db)) = (desc(target, a), desc(target, b)) else { return false };
    let Some(second) = target.slots.get(1) else { return false };
    if !db.slots.contains(second) {
        return false;
    }
    let wa = writes(da, &a.inst);
    if opts.has(Fault::KeplerDualRaw) && reads(&b.inst).any(|r| wa.contains(&r)) {
        let wb = writes(db, &b.inst);
        let renamed = Inst { srcs: b.inst.srcs.iter().map(|s| if s.phys().is_some_and(|p| p.regs().any(|r| wa.contains(&r))) { Operand::Imm(Imm::int(0)) } else { s.clone() }).collect(), ..b.inst.clone() };
        return !wb.iter().any(|r| wa.contains(r)) && target.rules.bundle_ok(&[(da, &a.inst), (db, &renamed)]).is_ok();
    }
    if opts.has(Fault::KeplerDualAfterTex) && da.unknown_landing {
        let wb = writes(db, &b.inst);
        return !wb.iter().any(|r| wa.contains(r)) && !reads(&b.inst).any(|r| wa.contains(&r));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::target::kepler::{CLOCK, KEPLER};
    use schedra_ir::PhysReg;

    fn op(slot: &'static str, name: &str, dest: Option<u16>, srcs: &[u16]) -> Op {
        let inst = Inst {
            opcode: SmolStr::new(name),
            dest: dest.map(|r| Operand::Phys(PhysReg::one(r))),
            srcs: srcs.iter().map(|&r| Operand::Phys(PhysReg::one(r))).collect(),
            span: Default::default(),
        };
        Op { slot: SmolStr::new_static(slot), inst }
    }
    fn ipa(d: u16) -> Op {
        let mut o = op("i0", "ipa", Some(d), &[]);
        o.inst.srcs.push(Operand::Imm(Imm::int(0)));
        o
    }
    fn names(bs: &[Bundle]) -> Vec<String> {
        bs.iter()
            .map(|b| {
                let ops: Vec<String> = b.ops.iter().map(|o| match o.inst.srcs.first().and_then(Operand::imm) {
                    Some(i) if o.inst.opcode == "texbar" => format!("texbar {}", i.bits),
                    _ => o.inst.opcode.to_string(),
                }).collect();
                format!("{} w{}", ops.join("+"), b.wait)
            })
            .collect()
    }

    #[test]
    fn waits_cover_latencies_and_the_block_end() {
        let groups = vec![vec![ipa(1)], vec![op("i0", "fadd", Some(2), &[1, 1])]];
        let out = timed(&KEPLER, &CLOCK, groups, &Options::default());
        // ipa lands at 15: the fadd issues at 15 (wait 14), lands at 24,
        // and the terminator waits for it (wait 8 after cycle 15).
        assert_eq!(names(&out), ["ipa w14", "fadd w8"]);
    }

    #[test]
    fn long_gaps_become_nops() {
        let groups = vec![vec![op("i0", "ld.attr", Some(1), &[])], vec![op("i0", "mov", Some(2), &[1])]];
        let mut groups = groups;
        if let Some(o) = groups.first_mut().and_then(|g| g.first_mut()) {
            o.inst.srcs.push(Operand::Imm(Imm::int(0)));
        }
        let short = schedra_ir::target::testing::with_clock(&KEPLER, "kepler-wait10", schedra_ir::target::Clock::EncodedWaits { max: 10 });
        let out = timed(short, &CLOCK, groups, &Options::default());
        // 23 stall cycles with at most 10 per bundle: w10, then a nop
        // (1 + 10) and a nop (1 + 1): the mov issues at 24.
        assert_eq!(names(&out), ["ld.attr w10", " w10", " w1", "mov w8"]);
    }

    #[test]
    fn barriers_take_the_weakest_level_and_guard_writes() {
        let tex = |d, s| op("i0", "tex", Some(d), &[s]);
        let groups = vec![vec![tex(1, 9)], vec![tex(2, 9)], vec![tex(3, 9)], vec![op("i0", "fadd", Some(4), &[2, 2])], vec![op("i0", "mov", Some(3), &[9])]];
        let out = barriers(&KEPLER, groups.clone(), &Options::default());
        let text: Vec<String> = out.iter().map(|g| names(&[Bundle { ops: g.clone(), span: Default::default(), wait: 0 }]).join("")).collect();
        assert_eq!(text, ["tex w0", "tex w0", "tex w0", "texbar 1 w0", "fadd w0", "texbar 0 w0", "mov w0"]);
        let faulty = barriers(&KEPLER, groups, &Options { inject: Some(Fault::KeplerTexWaw), ..Options::default() });
        let text: Vec<String> = faulty.iter().map(|g| names(&[Bundle { ops: g.clone(), span: Default::default(), wait: 0 }]).join("")).collect();
        assert_eq!(text, ["tex w0", "tex w0", "tex w0", "texbar 1 w0", "fadd w0", "mov w0", "texbar 0 w0"]);
    }

    #[test]
    fn a_tex_waits_for_its_destination_s_last_write_to_land() {
        // shr r0 lands at 9; the tex over r0 issues then (wait 8), not at
        // cycle 1 on the strength of its own earliest landing (18).
        let groups = vec![vec![op("i0", "shr", Some(0), &[1, 1])], vec![op("i0", "tex", Some(0), &[1])], vec![op("i0", "texbar", None, &[])]];
        let out = timed(&KEPLER, &CLOCK, groups, &Options::default());
        assert_eq!(names(&out).first().map(String::as_str), Some("shr w8"));
        let other = vec![vec![op("i0", "shr", Some(0), &[1, 1])], vec![op("i0", "tex", Some(2), &[1])], vec![op("i0", "texbar", None, &[])]];
        let out = timed(&KEPLER, &CLOCK, other, &Options::default());
        assert_eq!(names(&out).first().map(String::as_str), Some("shr w0"), "another register does not wait");
    }

    #[test]
    fn ready_neighbours_pair_and_dependent_ones_do_not() {
        let groups = vec![vec![op("i0", "fadd", Some(1), &[5, 6])], vec![op("i0", "fmul", Some(2), &[5, 6])], vec![op("i0", "fadd", Some(3), &[2, 2])]];
        let out = timed(&KEPLER, &CLOCK, groups.clone(), &Options::default());
        assert_eq!(names(&out), ["fadd+fmul w8", "fadd w8"]);
        assert_eq!(out.first().map(|b| b.ops.iter().map(|o| o.slot.to_string()).collect::<Vec<_>>()), Some(vec!["i0".to_string(), "i1".to_string()]));
        let raw = vec![vec![op("i0", "fadd", Some(1), &[5, 6])], vec![op("i0", "fmul", Some(2), &[1, 6])]];
        assert_eq!(names(&timed(&KEPLER, &CLOCK, raw.clone(), &Options::default())), ["fadd w8", "fmul w8"]);
        let faulty = timed(&KEPLER, &CLOCK, raw, &Options { inject: Some(Fault::KeplerDualRaw), ..Options::default() });
        assert_eq!(names(&faulty), ["fadd+fmul w8"]);
    }

    #[test]
    fn the_list_mode_pairs_past_a_commuting_op_and_the_peephole_mode_does_not() {
        let groups = vec![vec![op("i0", "fadd", Some(1), &[5, 6])], vec![op("i0", "fadd", Some(2), &[1, 1])], vec![op("i0", "fmul", Some(3), &[5, 6])]];
        let list = timed(&KEPLER, &CLOCK, groups.clone(), &Options::default());
        assert_eq!(names(&list), ["fadd+fmul w8", "fadd w8"]);
        let peep = timed(&KEPLER, &CLOCK, groups, &Options { post: Post::Peephole, ..Options::default() });
        assert_eq!(names(&peep), ["fadd w8", "fadd+fmul w8"]);
    }

    #[test]
    fn sfu_ops_are_spaced() {
        let groups = vec![vec![op("i0", "rcp", Some(1), &[5])], vec![op("i0", "rsq", Some(2), &[5])]];
        let out = timed(&KEPLER, &CLOCK, groups, &Options::default());
        // rsq waits for the SFU timer (4 cycles): wait 3; the block ends
        // when rsq's result lands (cycle 13).
        assert_eq!(names(&out), ["rcp w3", "rsq w8"]);
    }

    #[test]
    fn the_peephole_moves_a_pairable_op_up() {
        // fadd r1; fadd r2 = r1 + r1 (cannot pair); fmul r3 (independent)
        // moves up behind the first.
        let groups = vec![vec![op("i0", "fadd", Some(1), &[5, 6])], vec![op("i0", "fadd", Some(2), &[1, 1])], vec![op("i0", "fmul", Some(3), &[5, 6])]];
        let order: Vec<String> = peephole(&KEPLER, groups).into_iter().flatten().map(|o| o.inst.dest.and_then(|d| d.phys()).map_or(0, |p| p.base).to_string()).collect();
        assert_eq!(order, ["1", "3", "2"]);
        // It does not move an op past one it depends on.
        let blocked = vec![vec![op("i0", "fadd", Some(1), &[5, 6])], vec![op("i0", "fadd", Some(2), &[1, 1])], vec![op("i0", "fmul", Some(3), &[2, 6])]];
        let order: Vec<String> = peephole(&KEPLER, blocked).into_iter().flatten().map(|o| o.inst.dest.and_then(|d| d.phys()).map_or(0, |p| p.base).to_string()).collect();
        assert_eq!(order, ["1", "2", "3"]);
    }
}
