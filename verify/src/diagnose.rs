//! Diagnosis: why does a machine value differ from the source's?
//!
//! Given a machine read (or a write) whose value should have been the
//! source term `S`, walk the machine's recorded provenance backwards:
//!
//! 1. at a read of register `r` at cycle `c`: if a write of `S` to `r` had
//!    not landed by `c` (in flight, issued in the same cycle — the same
//!    bundle, whose reads precede its writes; not for a read reached
//!    through a copy, as a swap reads in parallel on purpose — or issued
//!    later), the read came too soon, whatever it saw
//!    → **latency**, reported at the reading op; if `r` held `S` earlier in
//!    the block, a later write replaced it before `c`, and no other register
//!    holds `S` at `c` → **clobber**, reported at the overwriting op, naming
//!    the read that needed it (if another register holds `S`, the read used
//!    the wrong register: **dataflow** at the read, unless a deeper cause is
//!    found);
//! 2. otherwise follow the value to the write that produced it: through
//!    copies (moves, fills) unchanged; through an operation of the same kind
//!    as `S`'s top operation, to the operand reads whose terms differ from
//!    `S`'s arguments;
//! 3. when the walk finds no such cause → **dataflow** at the read whose
//!    value differs (the deepest one reached).
//!
//! The walk is iterative with a step budget, so long chains cost no stack.
//! It uses syntactic equality of hash-consed terms, plus sample evaluation
//! (when given the solver session) to skip operand pairs that are equal but
//! spelled differently.

use crate::ids::Vregs;
use crate::report::Kind;
use crate::smt::Smt;
use crate::symbolic::{MachRun, ReadEvent, ReadId, SrcRun, WriteEvent, WriteId};
use crate::term::{Node, Term, Terms};
use rustc_hash::{FxHashMap, FxHashSet};
use schedra_ir::{Program, Reg};

/// Where and why a value went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnosis {
    /// latency, clobber or dataflow.
    pub kind: Kind,
    /// Bundle index within the block (bundle count = block end).
    pub bundle: usize,
    /// Line in the machine file.
    pub line: u32,
    /// What happened.
    pub message: String,
    /// The source term the walk was looking for where it stopped.
    pub wanted: Option<Term>,
}

/// What the diagnosis looks at: one block's runs.
pub struct Ctx<'a> {
    /// The term arena.
    pub terms: &'a Terms,
    /// The machine block's run.
    pub mach: &'a MachRun,
    /// The writes to each register of `mach`, in issue order
    /// ([`MachRun::writes_by_reg`]).
    pub by_reg: FxHashMap<Reg, Vec<WriteId>>,
    /// The source block's run (for names of terms).
    pub src: &'a SrcRun,
    /// The machine program (register names).
    pub prog: &'a Program,
    /// The source program and its register ids (to spell source names).
    pub source: (&'a Program, &'a Vregs),
    /// The solver, to skip operands that are equal in meaning.
    pub smt: Option<&'a mut Smt>,
}

enum Item {
    /// A read that should have seen the term; `true` when the walk came to
    /// it through a copy (its op copies whatever it reads, so a write in
    /// its own bundle is not the one it needs: bundles read in parallel
    /// on purpose, as in a swap).
    Read(ReadId, Term, bool),
    Write(WriteId, Term),
}

impl Ctx<'_> {
    /// The source's name for a term, or a short rendering.
    pub fn name(&self, t: Term) -> String {
        match self.src.name(t) {
            Some(n) => n.render(self.source.0, self.source.1),
            None => self.terms.show(t, 60),
        }
    }

    fn reg(&self, r: Reg) -> String {
        format!("${}", self.prog.reg_name(r))
    }

    fn read(&self, r: ReadId) -> Option<&ReadEvent> {
        self.mach.reads.get(r)
    }

    fn write(&self, w: WriteId) -> Option<&WriteEvent> {
        self.mach.writes.get(w)
    }

    fn differ(&mut self, a: Term, b: Term) -> bool {
        if a == b {
            return false;
        }
        match self.smt.as_deref_mut() {
            Some(s) => s.quick_differ(self.terms, a, b),
            None => true,
        }
    }

    /// Explain why read `r` did not see `wanted`.
    pub fn explain_read(&mut self, r: ReadId, wanted: Term) -> Diagnosis {
        self.walk(Item::Read(r, wanted, false), None)
    }

    /// Explain why write `w` did not produce `wanted`.
    pub fn explain_write(&mut self, w: WriteId, wanted: Term) -> Diagnosis {
        self.walk(Item::Write(w, wanted), None)
    }

    fn walk(&mut self, first: Item, fallback: Option<Diagnosis>) -> Diagnosis {
        let mut stack = vec![(first, 0u32)];
        let mut deepest: Option<(u32, Diagnosis)> = fallback.map(|d| (0, d));
        let mut budget = 4 * (self.mach.reads.len() + self.mach.writes.len()) + 64;
        let mut seen = FxHashSet::default();
        let mut held_elsewhere: Option<Diagnosis> = None;
        while let Some((item, depth)) = stack.pop() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let key = match &item {
                Item::Read(r, w, _) => (0u8, *r, *w),
                Item::Write(x, w) => (1u8, *x, *w),
            };
            if !seen.insert(key) {
                continue;
            }
            let found = match item {
                Item::Read(r, wanted, copied) => {
                    let Some(ev) = self.read(r).cloned() else { continue };
                    if ev.term == wanted {
                        continue;
                    }
                    let held = self.holder(wanted, ev.cycle).is_some();
                    if let Some(d) = self.latency(&ev, wanted, !copied).or_else(|| if held { None } else { self.clobber(&ev, wanted) }) {
                        return d;
                    }
                    if let Some(w) = ev.from {
                        stack.push((Item::Write(w, wanted), depth + 1));
                    }
                    if held_elsewhere.is_none() && held {
                        held_elsewhere = Some(self.wrong_read(&ev, wanted));
                    }
                    if deepest.as_ref().is_some_and(|(d, _)| depth <= *d) {
                        continue;
                    }
                    self.wrong_read(&ev, wanted)
                }
                Item::Write(w, wanted) => {
                    let Some(ev) = self.write(w).cloned() else { continue };
                    match self.operand_pairs(&ev, wanted) {
                        Some(pairs) => {
                            for (rid, s) in pairs.into_iter().rev() {
                                stack.push((Item::Read(rid, s, ev.copy), depth + 1));
                            }
                            continue;
                        }
                        None => self.wrong_write(&ev, wanted),
                    }
                }
            };
            if deepest.as_ref().is_none_or(|(d, _)| depth > *d) {
                deepest = Some((depth, found));
            }
        }
        held_elsewhere.or(deepest.map(|(_, d)| d)).unwrap_or_else(|| Diagnosis {
            kind: Kind::Dataflow,
            bundle: 0,
            line: 0,
            message: "the machine value differs from the source's".to_string(),
            wanted: None,
        })
    }

    /// The reads of `w` to follow, each with the term it should have seen;
    /// `None` when `w` does not compute `wanted`'s kind of operation.
    fn operand_pairs(&mut self, w: &WriteEvent, wanted: Term) -> Option<Vec<(ReadId, Term)>> {
        if w.copy {
            return self.mach.write_reads(w).first().map(|r| vec![(*r, wanted)]);
        }
        let (Node::App(f, margs), Node::App(g, sargs)) = (*self.terms.node(w.term), *self.terms.node(wanted)) else {
            return None;
        };
        let (margs, sargs) = (self.terms.args(margs).to_vec(), self.terms.args(sargs).to_vec());
        if f != g || margs.len() != sargs.len() {
            return None;
        }
        let got: Vec<(ReadId, Term)> = self.mach.write_reads(w).iter().filter_map(|r| self.read(*r).map(|e| (*r, e.term))).collect();
        let mut pairs = Vec::new();
        if got.len() == sargs.len() && !matches!(f, crate::term::Fun::Alu(s) if s.commutative()) {
            for ((rid, t), s) in got.iter().zip(sargs.iter()) {
                if self.differ(*t, *s) {
                    pairs.push((*rid, *s));
                }
            }
        } else {
            let mut remaining: Vec<Term> = sargs.to_vec();
            let mut unmatched = Vec::new();
            for (rid, t) in &got {
                match remaining.iter().position(|s| s == t) {
                    Some(i) => {
                        remaining.remove(i);
                    }
                    None => unmatched.push(*rid),
                }
            }
            // Immediate operands of the machine op account for literals.
            for m in margs.iter() {
                if matches!(self.terms.node(*m), Node::Lit(_)) {
                    if let Some(i) = remaining.iter().position(|s| s == m) {
                        remaining.remove(i);
                    }
                }
            }
            for rid in unmatched {
                let Some(t) = self.read(rid).map(|e| e.term) else { continue };
                let shape = |x: Term| match self.terms.node(x) {
                    Node::App(f, a) => Some((*f, a.len())),
                    _ => None,
                };
                let i = remaining.iter().position(|s| shape(*s) == shape(t)).unwrap_or(0);
                if i >= remaining.len() {
                    break;
                }
                let s = remaining.remove(i);
                if self.differ(t, s) {
                    pairs.push((rid, s));
                }
            }
        }
        if pairs.is_empty() {
            return None;
        }
        Some(pairs)
    }

    /// A write of `wanted` to the register that had not landed at the read.
    /// `same_cycle`: a write issued in the read's own cycle counts.
    fn latency(&self, ev: &ReadEvent, wanted: Term, same_cycle: bool) -> Option<Diagnosis> {
        let ids = self.by_reg.get(&ev.reg)?;
        let w = ids.iter().filter_map(|&i| self.write(i)).filter(|w| w.term == wanted && w.land > ev.cycle && (same_cycle || w.issue != ev.cycle)).min_by_key(|w| w.issue)?;
        let when = if w.land == u64::MAX {
            format!("`{}` issued at cycle {} (bundle {}) lands at a time the program cannot know, and no texbar waits for it", w.at.opcode, w.issue, w.at.bundle)
        } else if w.issue < ev.cycle {
            format!("`{}` issued at cycle {} (bundle {}) lands at cycle {}", w.at.opcode, w.issue, w.at.bundle, w.land)
        } else if w.issue == ev.cycle {
            format!("`{}` that writes it issues in the same cycle (bundle {}), whose reads see the registers as they were before it, and lands at cycle {}", w.at.opcode, w.at.bundle, w.land)
        } else {
            format!("`{}` that writes it issues only at cycle {} (bundle {}) and lands at cycle {}", w.at.opcode, w.issue, w.at.bundle, w.land)
        };
        Some(Diagnosis {
            kind: Kind::Latency,
            bundle: ev.at.bundle,
            line: ev.at.line,
            message: format!(
                "`{}` reads {} at cycle {} expecting {}; {}",
                ev.at.opcode,
                self.reg(ev.reg),
                ev.cycle,
                self.name(wanted),
                when
            ),
            wanted: Some(wanted),
        })
    }

    /// The writes to `reg` issued by `cycle` (a prefix of the issue-ordered
    /// list: only those can have landed by then).
    fn issued_by(&self, reg: Reg, cycle: u64) -> &[WriteId] {
        let ids = self.by_reg.get(&reg).map(Vec::as_slice).unwrap_or(&[]);
        let n = ids.partition_point(|&i| self.write(i).is_some_and(|w| w.issue <= cycle));
        ids.get(..n).unwrap_or(ids)
    }

    /// The register's contents at `cycle`: the last write landed by then
    /// (writes are scanned newest first; a write issued more than 1024
    /// cycles before the best candidate cannot land after it).
    fn current(&self, reg: Reg, cycle: u64) -> Option<Term> {
        let ids = self.issued_by(reg, cycle);
        let mut best: Option<(u64, Term)> = None;
        for w in ids.iter().rev().filter_map(|&i| self.write(i)) {
            if best.is_some_and(|(land, _)| w.issue + 1024 < land) {
                break;
            }
            if w.land <= cycle && best.is_none_or(|(land, _)| w.land > land) {
                best = Some((w.land, w.term));
            }
        }
        best.map(|b| b.1).or_else(|| self.mach.entry.get(reg))
    }

    /// `wanted` sat in the register earlier and a later write destroyed it.
    fn clobber(&self, ev: &ReadEvent, wanted: Term) -> Option<Diagnosis> {
        let killer = self.killer(ev.reg, ev.cycle, wanted)?;
        let k = self.write(killer)?;
        Some(Diagnosis {
            kind: Kind::Clobber,
            bundle: k.at.bundle,
            line: k.at.line,
            message: format!(
                "`{}` (bundle {}) overwrites {} at cycle {}, destroying {} that `{}` reads at bundle {} (cycle {})",
                k.at.opcode,
                k.at.bundle,
                self.reg(k.reg),
                k.land,
                self.name(wanted),
                ev.at.opcode,
                ev.at.bundle,
                ev.cycle
            ),
            wanted: Some(wanted),
        })
    }

    /// The write that replaced the last version of `reg` equal to `wanted`
    /// among those landed by `cycle` (one scan, newest first, in issue order).
    fn killer(&self, reg: Reg, cycle: u64, wanted: Term) -> Option<WriteId> {
        let ids = self.issued_by(reg, cycle);
        let mut later: Option<WriteId> = None;
        for &i in ids.iter().rev() {
            let Some(w) = self.write(i) else { continue };
            if w.land > cycle {
                continue;
            }
            if w.term == wanted {
                return later;
            }
            later = Some(i);
        }
        if self.mach.entry.get(reg) == Some(wanted) {
            return later;
        }
        None
    }

    /// Where `wanted` sits at `cycle`, if some register holds it.
    fn holder(&self, wanted: Term, cycle: u64) -> Option<Reg> {
        let mut regs: Vec<Reg> = self.mach.entry.keys().chain(self.by_reg.keys().copied()).collect();
        regs.sort_unstable();
        regs.dedup();
        regs.into_iter().find(|r| self.current(*r, cycle) == Some(wanted))
    }

    fn wrong_read(&self, ev: &ReadEvent, wanted: Term) -> Diagnosis {
        let elsewhere = match self.holder(wanted, ev.cycle) {
            Some(r) => format!(" (it is in {} then)", self.reg(r)),
            None => String::new(),
        };
        Diagnosis {
            kind: Kind::Dataflow,
            bundle: ev.at.bundle,
            line: ev.at.line,
            message: format!(
                "`{}` reads {} = {} at cycle {}, but the source has {} there{}",
                ev.at.opcode,
                self.reg(ev.reg),
                self.terms.show(ev.term, 60),
                ev.cycle,
                self.name(wanted),
                elsewhere
            ),
            wanted: Some(wanted),
        }
    }

    fn wrong_write(&self, w: &WriteEvent, wanted: Term) -> Diagnosis {
        Diagnosis {
            kind: Kind::Dataflow,
            bundle: w.at.bundle,
            line: w.at.line,
            message: format!(
                "`{}` writes {} = {}, but the source computes {}",
                w.at.opcode,
                self.reg(w.reg),
                self.terms.show(w.term, 60),
                self.name(wanted)
            ),
            wanted: Some(wanted),
        }
    }

    /// Why a value live out of the block (`wanted`, the source's `what`,
    /// live into `succ`) is in no location at the block end. `None` when a
    /// write of it is still in flight (reported as latency by the caller).
    pub fn explain_live_out(&mut self, wanted: Term, what: &str, succ: &str, end_bundle: usize, end_line: u32) -> Option<Diagnosis> {
        if self.mach.writes.iter().any(|w| w.term == wanted && w.land > self.mach.cycles) {
            return None;
        }
        let end = self.mach.cycles;
        let mut best: Option<(u64, Diagnosis)> = None;
        let mut regs: Vec<Reg> = self.mach.entry.keys().chain(self.by_reg.keys().copied()).collect();
        regs.sort_unstable();
        regs.dedup();
        for r in regs {
            let Some(killer) = self.killer(r, u64::MAX, wanted) else { continue };
            let Some(k) = self.write(killer) else { continue };
            if best.as_ref().is_some_and(|(l, _)| *l >= k.land) {
                continue;
            }
            let d = Diagnosis {
                kind: Kind::Clobber,
                bundle: k.at.bundle,
                line: k.at.line,
                message: format!(
                    "`{}` (bundle {}) overwrites {} at cycle {}, destroying {} ({}) that block {succ} still reads after the block ends at cycle {end}",
                    k.at.opcode,
                    k.at.bundle,
                    self.reg(r),
                    k.land,
                    what,
                    self.terms.show(wanted, 40)
                ),
                wanted: Some(wanted),
            };
            best = Some((k.land, d));
        }
        if let Some((_, d)) = best {
            return Some(d);
        }
        let fallback = Diagnosis {
            kind: Kind::Dataflow,
            bundle: end_bundle,
            line: end_line,
            message: format!("{what} (= {}) is live into block {succ} but no register or scratch slot holds it at the end of the block", self.terms.show(wanted, 60)),
            wanted: Some(wanted),
        };
        // A write of the same operation may have computed it from wrong operands.
        let top = |t: Term| match self.terms.node(t) {
            Node::App(f, _) => Some(*f),
            _ => None,
        };
        let cand = self.mach.writes.iter().enumerate().rev().find(|(_, w)| top(w.term).is_some() && top(w.term) == top(wanted)).map(|(i, _)| i);
        match cand {
            Some(w) => {
                let d = self.walk(Item::Write(w, wanted), Some(fallback.clone()));
                if d.kind == Kind::Dataflow {
                    Some(fallback)
                } else {
                    Some(d)
                }
            }
            None => Some(fallback),
        }
    }
}
