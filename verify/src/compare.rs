//! The semantic check: run the dataflow fixpoint, then compare each block's
//! two runs and turn every difference into a located violation.
//!
//! Per reachable block, with the fixpoint's entry facts: the machine's timing
//! problems (two writes landing together → `hazard`, a write in flight at the
//! block end → `latency`), then the obligations — every effect word per
//! channel in order, the branch condition, and every variable live into a
//! successor being available there. An obligation whose two terms are the
//! same hash-consed term is closed syntactically; otherwise it goes to the
//! solver (`smt`): proven, refuted (diagnosed by [`crate::diagnose`] into
//! latency / clobber / dataflow, with the counterexample) or unknown.
//!
//! Invariant: a block is reported proven only if every obligation is closed
//! by syntax or by an `unsat` answer, and the entry facts used are a
//! fixpoint (re-checked here after the iteration).

use crate::dataflow::{describe_var, enter, exit_facts, EnterBuffers, ExitLocs, fixpoint, input_facts, liveness, successors_by, Facts, Liveness};
use crate::diagnose::{Ctx, Diagnosis};
use crate::report::{Kind, Obligations, Violation};
use crate::smt::{Answer, Counterexample, Smt};
use crate::ids::Vregs;
use crate::labels::Labels;
use crate::machcode::MachCode;
use crate::srccode::SrcCode;
use crate::symbolic::{namer, Channel, run_machine, run_machine_into, MachBuffers, SrcBuffers, run_source, MachEffect, MachRun, ReadId, SrcEffect, SrcRun, TimingIssue};
use crate::term::{Term, Terms};
use schedra_ir::Program;
use std::rc::Rc;

/// The outcome of the semantic check.
pub struct Outcome {
    /// Value and timing violations.
    pub violations: Vec<Violation>,
    /// Obligation counts.
    pub obligations: Obligations,
    /// Issue cycles summed over reachable blocks.
    pub cycles: u64,
}

/// Most walks [`Checker::confirm_on_paths`] tries without success before
/// it leaves the remaining counterexamples unknown.
const MAX_FAILED_WALKS: usize = 3;

struct Checker<'a> {
    src: &'a Program,
    mach: &'a Program,
    terms: Terms,
    smt: Smt,
    vregs: Rc<Vregs>,
    /// Per source block, its id for symbols: the first block of its label.
    sym_at: Vec<u32>,
    code: SrcCode,
    mcode: MachCode,
    mbufs: MachBuffers,
    sbufs: SrcBuffers,
    ebufs: EnterBuffers,
    locs: ExitLocs,
    /// Per source block, the machine block of the same label.
    mach_of: Vec<Option<usize>>,
    live: Liveness,
    succs: Vec<Vec<usize>>,
    tally: Obligations,
    out: Vec<Violation>,
    /// The verdict is a violation whatever this comparison finds (a rule
    /// of the machine program is already broken): every obligation is
    /// settled as after a first refutation (see `oblige`).
    refuted: bool,
}

/// Compare `mach` against `src` (both structurally sound, see
/// [`crate::rules::structure`]).
pub fn check(src: &Program, mach: &Program, timeout_ms: u64) -> Outcome {
    check_in(src, mach, MachCode::of(mach), (&Labels::of(src), &Labels::of(mach)), timeout_ms, false)
}

/// [`check`], with `mach` decoded as `mcode` and the labels of `src` and
/// `mach` given. `refuted`: the verdict is already a violation (the
/// caller found a broken rule), so no obligation waits for the solver.
pub fn check_in(src: &Program, mach: &Program, mcode: MachCode, (src_labels, mach_labels): (&Labels, &Labels), timeout_ms: u64, refuted: bool) -> Outcome {
    let vregs = Rc::new(Vregs::of(src));
    let code = SrcCode::of(src, &vregs);
    let succs = successors_by(src, src_labels);
    let live = liveness(&code, &succs);
    // Room for the terms of about four visits per op (most blocks are
    // visited once or twice; each visit makes a term or two per op).
    let ops = src.op_count() + mach.op_count();
    let mut terms = Terms::with_capacity(4 * ops + 64);
    terms.set_namer(namer(src, Rc::clone(&vregs)));
    let sym_at = src.blocks.iter().enumerate().map(|(b, sb)| src_labels.index_near(&sb.label, b).unwrap_or(b) as u32).collect();
    let mut c = Checker {
        src,
        mach,
        terms,
        sym_at,
        smt: Smt::new(mach.target, timeout_ms),
        vregs,
        code,
        mcode,
        mbufs: MachBuffers::default(),
        sbufs: SrcBuffers::default(),
        ebufs: EnterBuffers::default(),
        locs: ExitLocs::default(),
        mach_of: src.blocks.iter().enumerate().map(|(b, sb)| mach_labels.index_near(&sb.label, b)).collect(),
        live,
        succs,
        tally: Obligations::default(),
        out: Vec::new(),
        refuted,
    };
    c.smt.set_first_is_entry(!c.succs.iter().any(|s| s.contains(&0)));
    let start = input_facts(&mut c.terms, src, &c.code, &c.vregs);
    // Loops iterated until stable before the blocks after them run.
    let pos = crate::wto::Wto::of(&c.succs).pos;
    // The last runs of each block during the iteration: the final pass
    // reuses them when they ran from the final entry facts (`step` is a
    // function of the facts, so re-running would repeat it).
    // The runs are stored in place (a run is a few hundred bytes: moving
    // it through return values costs more than the rest of a small visit's
    // bookkeeping).
    let mut last: Vec<Option<(SrcRun, MachRun)>> = vec![None; src.blocks.len()];
    let mut fp = fixpoint(src.blocks.len(), start.clone(), &pos, &mut |b, f| match last.get_mut(b) {
        Some(slot) => c.step_into(b, f, slot),
        None => c.step(b, f).1,
    });
    let mut cycles = 0;
    let mut exits: Vec<Vec<(usize, Facts)>> = vec![Vec::new(); src.blocks.len()];
    for (b, facts) in fp.entry.iter().enumerate() {
        let (Some(facts), Some(slot)) = (facts, last.get_mut(b)) else { continue };
        let fresh = fp.fresh.get(b).copied().unwrap_or(false);
        let ex = match fp.exits.get_mut(b) {
            Some(ex) if fresh && slot.is_some() => std::mem::take(ex),
            _ => c.step_into(b, facts, slot),
        };
        let Some((s, m)) = slot.as_ref() else { continue };
        cycles += m.cycles;
        c.compare_block(b, s, m, &ex, &fp.entry, &[]);
        exits[b] = ex;
    }
    if !c.out.is_empty() {
        c.blame_with_forward_facts(start.clone());
        c.confirm_on_paths(&last);
    }
    if !fp.converged || !is_fixpoint(&fp.entry, &exits, &start) {
        c.tally.unknown += 1;
        c.tally.smt += 1;
        c.tally.total += 1;
    }
    Outcome { violations: c.out, obligations: c.tally, cycles }
}

/// Whether every block's entry facts are the meet of its predecessors'
/// exit facts (and `start` for block 0). A block with one incoming state
/// (most of them) is compared with it directly; only a join meets copies.
fn is_fixpoint(entry: &[Option<Facts>], exits: &[Vec<(usize, Facts)>], start: &Facts) -> bool {
    // Per block, its first incoming state and the meet of all of them once
    // there is a second.
    let mut first: Vec<Option<&Facts>> = vec![None; entry.len()];
    let mut met: Vec<Option<Facts>> = vec![None; entry.len()];
    if let Some(m) = first.first_mut() {
        *m = Some(start);
    }
    for (s, f) in exits.iter().flatten() {
        let (Some(one), Some(joined)) = (first.get_mut(*s), met.get_mut(*s)) else { continue };
        match (one, joined) {
            (one @ None, _) => *one = Some(f),
            (_, Some(m)) => {
                m.meet_with(f);
            }
            (Some(a), joined @ None) => {
                let mut m = (*a).clone();
                m.meet_with(f);
                *joined = Some(m);
            }
        }
    }
    first.iter().zip(&met).zip(entry).all(|((one, joined), e)| match (joined, one) {
        (Some(m), _) => e.as_ref() == Some(m),
        (None, Some(f)) => e.as_ref() == Some(*f),
        (None, None) => true,
    })
}

/// Reverse post-order of the blocks reachable from block 0, and for each
/// block its position in it.
fn rpo(succs: &[Vec<usize>]) -> (Vec<usize>, Vec<usize>) {
    let n = succs.len();
    let order = schedra_ir::cfg::reverse_postorder(n, |b| succs[b].as_slice());
    let mut pos = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        pos[*b] = i;
    }
    (order, pos)
}


impl Checker<'_> {

    /// Run block `b` from `facts`; the runs and the exit facts per
    /// successor.
    fn step(&mut self, b: usize, facts: &Facts) -> ((SrcRun, MachRun), Vec<(usize, Facts)>) {
        let mut runs = None;
        let ex = self.step_into(b, facts, &mut runs);
        (runs.unwrap_or_default(), ex)
    }

    /// [`Checker::step`], with the runs put in `runs`.
    fn step_into(&mut self, b: usize, facts: &Facts, runs: &mut Option<(SrcRun, MachRun)>) -> Vec<(usize, Facts)> {
        let src = self.src;
        if src.blocks.get(b).is_none() {
            *runs = Some((SrcRun::default(), MachRun::default()));
            return Vec::new();
        }
        let live_in = self.live.live_in.get(b).map(Vec::as_slice).unwrap_or(&[]);
        let at = self.sym_at.get(b).copied().unwrap_or(b as u32);
        let (src_env, names, mach_env) = enter(&mut self.terms, &self.code, &self.vregs, at, facts, live_in, &mut self.ebufs);
        let s = run_source(&mut self.terms, &self.code, b, at, src_env, names, &mut self.sbufs, false);
        // The machine run is made in its slot (see `run_machine_into`).
        let (s_slot, m) = runs.get_or_insert_with(Default::default);
        *s_slot = s;
        match self.mach_of.get(b).copied().flatten() {
            Some(mb) => run_machine_into(&mut self.terms, &self.mcode, &mut self.mbufs, (mb, at), mach_env, false, m),
            None => *m = MachRun::default(),
        }
        let (s, m) = (&*s_slot, &*m);
        let n = self.succs.get(b).map(Vec::len).unwrap_or(0);
        let mut exits = Vec::with_capacity(n);
        self.locs.fill(&self.terms, m);
        for k in 0..n {
            let Some(&succ) = self.succs.get(b).and_then(|s| s.get(k)) else { continue };
            let live = self.live.live_in.get(succ).map(Vec::as_slice).unwrap_or(&[]);
            let smt = &mut self.smt;
            let f = exit_facts(&mut self.terms, s, m, &mut self.locs, live, &mut |t: &mut Terms, x, y| smt.proven_equal(t, x, y));
            exits.push((succ, f));
        }
        exits
    }

    /// Blame, once the sound fixpoint found violations: re-run every block
    /// with *optimistic* entry facts — the meet over forward edges only
    /// (reverse post-order, back edges ignored) — and check each back edge
    /// against the loop header's optimistic facts. A loop that fails to keep
    /// a value is then reported at the block that loses it (the back edge's
    /// source) instead of at the loop entry where the weakened fixpoint
    /// first notices. Used only when these violations exist; otherwise the
    /// fixpoint's violations stand. Never turns a violation into a proof.
    fn blame_with_forward_facts(&mut self, start: Facts) {
        let (order, pos) = rpo(&self.succs);
        let n = self.src.blocks.len();
        let mut entry: Vec<Option<Facts>> = vec![None; n];
        if let Some(e) = entry.first_mut() {
            *e = Some(start);
        }
        let mut runs = Vec::new();
        for &b in &order {
            let Some(facts) = entry.get(b).cloned().flatten() else { continue };
            let ((s, m), ex) = self.step(b, &facts);
            for (succ, f) in &ex {
                if pos.get(*succ).is_some_and(|p| *p > pos[b]) {
                    if let Some(slot) = entry.get_mut(*succ) {
                        *slot = Some(match slot.take() {
                            Some(old) => old.meet(f),
                            None => f.clone(),
                        });
                    }
                }
            }
            runs.push((b, s, m, ex));
        }
        let saved = std::mem::take(&mut self.out);
        let tally = self.tally;
        for (b, s, m, ex) in &runs {
            let back: Vec<usize> = ex.iter().map(|(succ, _)| *succ).filter(|succ| pos.get(*succ).is_some_and(|p| *p <= pos[*b])).collect();
            self.compare_block(*b, s, m, ex, &entry, &back);
        }
        self.tally = tally;
        if self.out.is_empty() {
            self.out = saved;
        }
    }

    /// Keep a violation with a counterexample only when its words are the
    /// program's: one of the first block, entered only at program start,
    /// with nothing unbound, stands as it is; any other is confirmed by a
    /// concrete walk of both programs from the start ([`crate::walk`]),
    /// which replaces its words by all the input words the walk read. One
    /// the walk cannot confirm is dropped and its obligation counted
    /// unknown. Once a walk has shown a difference, its words serve every
    /// later violation (they make the programs differ); after
    /// [`MAX_FAILED_WALKS`] failed walks the rest are unknown.
    fn confirm_on_paths(&mut self, runs: &[Option<(SrcRun, MachRun)>]) {
        let entry_only = !self.succs.iter().any(|s| s.contains(&0));
        let first = self.mach.blocks.first().map(|b| b.label.clone());
        let mut inputs = Vec::new();
        crate::srccode::input_vars(self.src, &self.vregs, |r, v| {
            if let Some(i) = self.code.ix(&v) {
                inputs.push((i, r));
            }
        });
        let program = crate::walk::Program { terms: &self.terms, machine: self.mach, mach_of: &self.mach_of, code: &self.code, runs, earliest_landing: self.mcode.earliest_landing, succs: &self.succs, inputs: &inputs };
        let (mut shown, mut failed) = (None, 0usize);
        let mut kept = Vec::with_capacity(self.out.len());
        for mut v in std::mem::take(&mut self.out) {
            let Some(cex) = &v.counterexample else {
                kept.push(v);
                continue;
            };
            if entry_only && first.as_deref() == Some(v.block.as_str()) && cex.unbound.is_empty() {
                let mut c = cex.clone();
                let entry = runs.first().and_then(Option::as_ref).map(|(_, m)| m);
                c.words.extend(crate::witness::landing_words(self.mach.target, self.mcode.earliest_landing, entry));
                v.counterexample = Some(c);
                kept.push(v);
                continue;
            }
            let confirmed = match &shown {
                Some(words) => Some(crate::smt::Counterexample { words: Vec::clone(words), unbound: Vec::new(), ..cex.clone() }),
                None if failed < MAX_FAILED_WALKS => crate::walk::confirm(&program, cex),
                None => None,
            };
            match confirmed {
                Some(c) => {
                    shown = Some(c.words.clone());
                    v.counterexample = Some(c);
                    kept.push(v);
                }
                None => {
                    failed += 1;
                    self.tally.unknown += 1;
                }
            }
        }
        self.out = kept;
    }

    /// Block `b`'s machine run `m` again, from the same entry, with its
    /// reads recorded for a diagnosis. The run is a function of its entry
    /// and makes no new term, so term numbering (and every later report)
    /// is the same as if `m` had recorded them.
    fn recorded(&mut self, b: usize, m: &MachRun) -> MachRun {
        let at = self.sym_at.get(b).copied().unwrap_or(b as u32);
        match self.mach_of.get(b).copied().flatten() {
            Some(mb) => run_machine(&mut self.terms, &self.mcode, &mut self.mbufs, mb, at, m.entry_state(), true),
            None => MachRun::default(),
        }
    }

    /// Block `b`'s source run `s` again, from the same entry, with the
    /// destinations' words recorded for a diagnosis (names and definition
    /// lines). Like [`Checker::recorded`], it makes no new term.
    fn src_recorded(&mut self, b: usize, s: &SrcRun) -> SrcRun {
        let at = self.sym_at.get(b).copied().unwrap_or(b as u32);
        let mut env = crate::symbolic::Env::new(self.code.universe_len());
        for (v, t) in &s.entry {
            if let Some(i) = self.code.ix(v) {
                env.set(i, *t);
            }
        }
        run_source(&mut self.terms, &self.code, b, at, env, s.entry.clone(), &mut self.sbufs, true)
    }

    fn ctx<'b>(&'b mut self, s: &'b SrcRun, m: &'b MachRun) -> Ctx<'b> {
        Ctx { terms: &self.terms, mach: m, by_reg: m.writes_by_reg(), src: s, prog: self.mach, source: (self.src, &self.vregs), smt: Some(&mut self.smt) }
    }

    fn push(&mut self, label: &str, d: Diagnosis, src_line: Option<u32>, cex: Option<Counterexample>, s: &SrcRun) {
        let mut msg = d.message;
        if let (Kind::Dataflow, Some(c)) = (d.kind, &cex) {
            msg.push_str(&format!("; e.g. {}", c.describe()));
        }
        let mut v = Violation::new(d.kind, label, d.bundle, d.line, msg);
        let near = d.wanted.and_then(|w| s.def_line(w));
        v.src_line = near.or(src_line).filter(|l| *l > 0);
        v.counterexample = cex;
        self.out.push(v);
    }

    /// One obligation `a == b` (or same truth for branch conditions).
    /// Once a violation is recorded (here or, `refuted`, by the caller's
    /// rule checks) the verdict can no longer be `proven`,
    /// so later obligations are settled from the samples alone (refuted or
    /// unknown): a wrong value read early makes every later effect a hard,
    /// different-looking query, and waiting for Z3 on each of them would
    /// only add reports of the same fault.
    fn oblige(&mut self, source: Term, machine: Term, truth: bool) -> Answer {
        self.tally.total += 1;
        if source == machine {
            self.tally.syntactic += 1;
            return Answer::Equal;
        }
        self.tally.smt += 1;
        let ans = if self.refuted || !self.out.is_empty() {
            self.smt.equal_quick(&self.terms, source, machine, truth)
        } else if truth {
            self.smt.same_truth(&self.terms, source, machine)
        } else {
            self.smt.equal(&self.terms, source, machine)
        };
        if ans == Answer::Unknown {
            self.tally.unknown += 1;
        }
        ans
    }

    fn compare_block(&mut self, b: usize, s: &SrcRun, m: &MachRun, exits: &[(usize, Facts)], entry: &[Option<Facts>], back: &[usize]) {
        let (src, mach) = (self.src, self.mach);
        let Some(sb) = src.blocks.get(b) else { return };
        let Some(mb) = self.mach_of.get(b).copied().flatten().and_then(|i| mach.blocks.get(i)) else { return };
        let (label, end, end_line) = (mb.label.as_str(), mb.bundles().len(), mb.term.span.line);
        self.timing(label, m, end, end_line);
        self.effects(b, label, s, m, end, end_line);
        if let (Some(sc), Some((mc, _))) = (s.cond, m.cond) {
            if let Answer::Differ(cex) = self.oblige(sc, mc, true) {
                let (rec, srec) = (self.recorded(b, m), self.src_recorded(b, s));
                let read = rec.cond.and_then(|(_, r)| r);
                let d = self.explain(&srec, &rec, read, sc, end, end_line, "the branch condition differs from the source's");
                self.push(label, d, Some(sb.term.span.line), Some(cex), &srec);
            }
        }
        for (succ, ex) in exits {
            let (Some(Some(se)), Some(sblock)) = (entry.get(*succ), src.blocks.get(*succ)) else { continue };
            let n = self.live.live_in.get(*succ).map(Vec::len).unwrap_or(0);
            for k in 0..n {
                let Some(&i) = self.live.live_in.get(*succ).and_then(|l| l.get(k)) else { continue };
                let v = self.code.var(i);
                let Some(want) = s.exit.get(i) else { continue };
                if self.terms.is_junk(want) {
                    continue;
                }
                self.tally.total += 1;
                self.tally.syntactic += 1;
                let is_back = back.contains(succ);
                if !is_back && se.has(i) {
                    continue;
                }
                let what = describe_var(&v, src, &self.vregs);
                let held_here: Vec<crate::symbolic::Loc> = ex.holders(i).collect();
                if is_back {
                    let expected: Vec<crate::symbolic::Loc> = se.holders(i).collect();
                    let closed_ok = se.var_closed(i).is_some_and(|t| ex.var_closed(i) == Some(t));
                    if closed_ok || !se.has(i) || expected.iter().any(|l| held_here.contains(l)) {
                        continue;
                    }
                    if !held_here.is_empty() {
                        let here: Vec<String> = held_here.iter().map(|l| self.loc_name(*l)).collect();
                        let there: Vec<String> = expected.iter().map(|l| self.loc_name(*l)).collect();
                        let msg = format!("{what} goes back to block {} in {} but that block reads it from {}", sblock.label, here.join(", "), there.join(", "));
                        self.out.push(Violation::new(Kind::Dataflow, label, end, end_line, msg));
                        continue;
                    }
                }
                let locs: Vec<String> = held_here.iter().map(|l| self.loc_name(*l)).collect();
                if !locs.is_empty() {
                    let msg = format!("{what} is live into block {} and is held in {} here, but another predecessor of {} leaves it elsewhere", sblock.label, locs.join(", "), sblock.label);
                    self.out.push(Violation::new(Kind::Dataflow, label, end, end_line, msg));
                    continue;
                }
                let name = sblock.label.clone();
                let (rec, srec) = (self.recorded(b, m), self.src_recorded(b, s));
                let d = self.ctx(&srec, &rec).explain_live_out(want, &what, &name, end, end_line);
                if let Some(d) = d {
                    let line = srec.def_line(want);
                    self.push(label, d, line, None, &srec);
                }
            }
        }
    }

    fn loc_name(&self, l: crate::symbolic::Loc) -> String {
        match l.get() {
            crate::symbolic::Place::R(r) => format!("${}", self.mach.reg_name(r)),
            crate::symbolic::Place::S(o) => format!("scratch[{o}]"),
        }
    }

    fn timing(&mut self, label: &str, m: &MachRun, end: usize, end_line: u32) {
        for issue in &m.issues {
            match issue {
                TimingIssue::SameCycle { write, other } => {
                    let (Some(w), Some(o)) = (m.writes.get(*write), m.writes.get(*other)) else { continue };
                    let msg = format!(
                        "`{}` (bundle {}) and `{}` (bundle {}) both land on ${} at cycle {}",
                        w.at.opcode, w.at.bundle, o.at.opcode, o.at.bundle, self.mach.reg_name(w.reg), w.land
                    );
                    self.out.push(Violation::new(Kind::Hazard, label, w.at.bundle, w.at.line, msg));
                }
                TimingIssue::Unsettled { at, reg, write, tex, overwrite } => {
                    let Some(w) = m.writes.get(*write) else { continue };
                    let r = self.mach.reg_name(*reg);
                    let msg = match (tex, overwrite) {
                        (true, false) => format!("`{}` reads ${r} before a texbar waits for `{}` (bundle {}, line {}) that writes it", at.opcode, w.at.opcode, w.at.bundle, w.at.line),
                        (true, true) => format!("`{}` overwrites ${r} before a texbar waits for `{}` (bundle {}, line {}) that writes it, which may land after it", at.opcode, w.at.opcode, w.at.bundle, w.at.line),
                        (false, true) => format!("`{}` writes ${r} at a time the program cannot know while `{}` (bundle {}) is still in flight to it (landing at cycle {}); a texture result may overwrite only a register with no write in flight", at.opcode, w.at.opcode, w.at.bundle, w.land),
                        (false, false) => format!("`{}` reads ${r} while `{}` (bundle {}) may not have landed: a texbar before it stalls for a time the program cannot know", at.opcode, w.at.opcode, w.at.bundle),
                    };
                    self.out.push(Violation::new(Kind::Latency, label, at.bundle, at.line, msg));
                }
                TimingIssue::InFlight { write, .. } if m.writes.get(*write).is_some_and(|w| w.land == u64::MAX) => {
                    let Some(w) = m.writes.get(*write) else { continue };
                    let msg = format!("`{}` (bundle {}) writes ${} and no texbar waits for it before the block ends", w.at.opcode, w.at.bundle, self.mach.reg_name(w.reg));
                    self.out.push(Violation::new(Kind::Latency, label, end, end_line, msg));
                }
                TimingIssue::InFlight { write, end: c } => {
                    let Some(w) = m.writes.get(*write) else { continue };
                    let msg = format!(
                        "`{}` (bundle {}) writes ${} landing at cycle {}, after the block ends at cycle {c}",
                        w.at.opcode, w.at.bundle, self.mach.reg_name(w.reg), w.land
                    );
                    self.out.push(Violation::new(Kind::Latency, label, end, end_line, msg));
                }
                TimingIssue::TexEarly { at, lookup, cycle, lands } => {
                    let from = lookup.as_ref().map_or(String::new(), |l| format!(" started by `{}` (bundle {}, line {})", l.opcode, l.bundle, l.line));
                    let msg = format!("`{}` reads the texture unit at cycle {cycle}, before its lookup{from} lands at cycle {lands}", at.opcode);
                    self.out.push(Violation::new(Kind::Latency, label, at.bundle, at.line, msg));
                }
                TimingIssue::TexEmpty { at } => {
                    let msg = format!("`{}` reads the texture unit while no lookup has a word left to read (one result read too many)", at.opcode);
                    self.out.push(Violation::new(Kind::Hazard, label, at.bundle, at.line, msg));
                }
                TimingIssue::TexLeft { unread, lookup } => {
                    let msg = match lookup {
                        Some(l) if *unread > 0 => format!("the block ends with {unread} word(s) of the texture lookup started by `{}` (bundle {}, line {}) unread", l.opcode, l.bundle, l.line),
                        _ if *unread > 0 => format!("the block ends with {unread} word(s) of a texture lookup unread"),
                        _ => "the block ends with a texture coordinate written and no lookup started".to_string(),
                    };
                    self.out.push(Violation::new(Kind::Hazard, label, end, end_line, msg));
                }
                TimingIssue::Expired { write, read, cycle } => {
                    let Some(w) = m.writes.get(*write) else { continue };
                    let msg = format!(
                        "`{}` reads ${} at cycle {cycle}, past the maximum lifetime of the result of `{}` (bundle {}, issued at cycle {}, readable until cycle {})",
                        read.opcode, self.mach.reg_name(w.reg), w.at.opcode, w.at.bundle, w.issue, w.expires.unwrap_or(w.land)
                    );
                    self.out.push(Violation::new(Kind::Latency, label, read.bundle, read.line, msg));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn explain(&mut self, s: &SrcRun, m: &MachRun, read: Option<ReadId>, want: Term, bundle: usize, line: u32, what: &str) -> Diagnosis {
        match read {
            Some(r) => self.ctx(s, m).explain_read(r, want),
            None => Diagnosis { kind: Kind::Dataflow, bundle, line, message: what.to_string(), wanted: Some(want) },
        }
    }

    /// Compare the two runs' effects channel by channel (channels in name
    /// order), the `i`-th write to a channel against the `i`-th.
    fn effects(&mut self, blk: usize, label: &str, s: &SrcRun, m: &MachRun, end: usize, end_line: u32) {
        if s.effects.is_empty() && m.effects.is_empty() {
            return;
        }
        let mut channels: Vec<Channel> = s.effects.iter().map(|e| e.channel).chain(m.effects.iter().map(|e| e.channel)).collect();
        channels.sort_unstable();
        channels.dedup();
        for ch in channels {
            let src_writes = || s.effects.iter().filter(|e| e.channel == ch);
            let mach_writes = || m.effects.iter().enumerate().filter(|(_, e)| e.channel == ch);
            let (ns, nm) = (src_writes().count(), mach_writes().count());
            let (mut se, mut me) = (src_writes(), mach_writes());
            for _ in 0..ns.max(nm) {
                match (se.next(), me.next()) {
                    (Some(a), Some((k, b))) => self.effect_pair(blk, label, s, m, a, (k, b)),
                    (Some(a), None) => {
                        let mut v = Violation::new(Kind::Dataflow, label, end, end_line, format!("the source writes channel `{ch}` {ns} time(s), the machine only {nm}"));
                        v.src_line = Some(a.line);
                        self.out.push(v);
                        break;
                    }
                    (None, Some((_, b))) => {
                        let msg = format!("`{}` writes channel `{ch}` a time more than the source ({nm} vs {ns})", b.at.opcode);
                        self.out.push(Violation::new(Kind::Dataflow, label, b.at.bundle, b.at.line, msg));
                        break;
                    }
                    (None, None) => break,
                }
            }
        }
    }

    /// Compare a source effect with the machine's `k`-th effect `b` of block `blk`.
    fn effect_pair(&mut self, blk: usize, label: &str, s: &SrcRun, m: &MachRun, a: &SrcEffect, (k, b): (usize, &MachEffect)) {
        if a.words.len() != b.words.len() {
            let msg = format!("`{}` writes {} word(s) to `{}`, the source {}", b.at.opcode, b.words.len(), a.channel, a.words.len());
            let mut v = Violation::new(Kind::Dataflow, label, b.at.bundle, b.at.line, msg);
            v.src_line = Some(a.line);
            self.out.push(v);
            return;
        }
        for (w, (&sw, &mw)) in a.words.iter().zip(&b.words).enumerate() {
            if let Answer::Differ(cex) = self.oblige(sw, mw, false) {
                let (rec, srec) = (self.recorded(blk, m), self.src_recorded(blk, s));
                let read = rec.effects.get(k).and_then(|e| e.reads.get(w)).copied().flatten();
                let what = if a.channel.is_discard() && w + 1 == a.words.len() {
                    // The place word: how many outputs the block made first.
                    let count = |t: Term| match self.terms.node(t) {
                        crate::term::Node::Lit(n) => n.to_string(),
                        _ => self.terms.show(t, 60),
                    };
                    format!("`{}` discards after {} of the block's outputs but the source after {}: a discard moved across an output", b.at.opcode, count(mw), count(sw))
                } else {
                    format!("`{}` writes {} to `{}` but the source writes {}", b.at.opcode, self.terms.show(mw, 60), a.channel, self.terms.show(sw, 60))
                };
                let d = self.explain(&srec, &rec, read, sw, b.at.bundle, b.at.line, &what);
                self.push(label, d, Some(a.line), Some(cex), &srec);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbolic::Loc;

    #[test]
    fn the_fixpoint_check_meets_joins_and_compares_single_edges() {
        let f = |held: &[(u16, u32)], closed: &[(u32, u32)]| {
            Facts::from_parts(held.iter().map(|&(r, v)| (Loc::reg(r), v)).collect(), Vec::new(), closed.iter().map(|&(v, t)| (v, Term(t))).collect())
        };
        let start = f(&[(1, 0)], &[]);
        let (a, b) = (f(&[(1, 0), (2, 1)], &[(1, 7)]), f(&[(2, 1), (3, 2)], &[(1, 7), (2, 8)]));
        // Block 1 is reached from 0 (a) and 2 (b); block 2 from 1 (b).
        let exits = vec![vec![(1, a.clone())], vec![(2, b.clone())], vec![(1, b.clone())]];
        let good = vec![Some(start.clone()), Some(a.meet(&b)), Some(b.clone())];
        assert!(is_fixpoint(&good, &exits, &start));
        for (k, wrong) in [(0, a.clone()), (1, a.clone()), (2, a.clone())] {
            let mut bad = good.clone();
            bad[k] = Some(wrong);
            assert!(!is_fixpoint(&bad, &exits, &start), "block {k}");
        }
        let unreached = vec![Some(start.clone()), None, None];
        assert!(is_fixpoint(&unreached, &[Vec::new(), Vec::new(), Vec::new()], &start));
    }
}
