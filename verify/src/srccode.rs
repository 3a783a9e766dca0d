//! The source program decoded once per verification.
//!
//! The fixpoint runs every source block once per visit (about two visits
//! per block), and liveness reads every instruction once per iteration.
//! Resolving an instruction's opcode (a string hash), the ids of the
//! registers it names (a string hash per operand) and its index operand
//! on each of those reads was a visible fixed cost. [`SrcCode`] does it
//! once: per instruction its `&'static OpDesc`, the variables of each
//! operand and of the destination (ranges of one flat list, so decoding a
//! program is a handful of allocations), its index operand and the name of
//! its destination.
//!
//! Invariant: the decoded form says exactly what the instruction says to
//! the simulators — an operand's variables are [`operand_vars`] of it, the
//! index operand is [`index_operand`], an unknown opcode has no
//! description (the simulators skip it) — so running the decoded form is
//! running the program.

use crate::ids::Vregs;
use schedra_ir::target::opcache::OpCache;
use crate::symbolic::{index_operand, operand_vars, DestName, Var};
use schedra_ir::target::{OpDesc, Sem};
use schedra_ir::{Operand, Program, Reg, TermKind};

/// A range of one of the flat lists of [`SrcCode`] and
/// [`crate::machcode::MachCode`]: `start..end`, empty when out of bounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The range `start..end`.
    pub(crate) fn of(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    /// The range as indices.
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The items of `v` in the range (none when it is out of bounds).
    pub(crate) fn get<T>(self, v: &[T]) -> &[T] {
        v.get(self.start as usize..self.end as usize).unwrap_or(&[])
    }
}

/// One source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An immediate word.
    Imm(u32),
    /// A label (no value).
    Label,
    /// Registers: their variables, one per word, as numbers (see
    /// [`SrcCode::vars`]).
    Vars(Span),
}

/// One decoded source instruction.
#[derive(Clone, Debug)]
pub struct SrcInst {
    /// The opcode's description (`None`: unknown opcode).
    pub desc: Option<&'static OpDesc>,
    /// The operands (see [`SrcCode::args`]).
    args: Span,
    /// The destination's variables (see [`SrcCode::dest`]).
    dest: Span,
    /// The destination as messages name it, when there is one.
    pub dest_name: Option<DestName>,
    /// The index operand (0 when there is none).
    pub idx: u32,
    /// Line in the source file.
    pub line: u32,
}

/// One decoded source block.
#[derive(Clone, Debug, Default)]
pub struct SrcBlock {
    insts: Span,
    /// The branch condition's operand, if the block ends in `brnz`.
    pub cond: Option<Arg>,
}

/// A source program, decoded (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SrcCode {
    blocks: Vec<SrcBlock>,
    insts: Vec<SrcInst>,
    args: Vec<Arg>,
    /// Operand and destination variables, as numbers.
    vars: Vec<u32>,
    /// [`order_key`] of every variable the program can name, ascending:
    /// variable number `i` is the one of `keys[i]`, so numbers order as
    /// the variables do.
    keys: Vec<u64>,
}

/// A `u64` that orders as the variables do (`Var`'s derived order:
/// variant, then fields), for sorting and searching with integer compares.
fn order_key(v: Var) -> u64 {
    match v {
        Var::V(id, w) => (u64::from(id.0) << 8) | u64::from(w),
        Var::P(r) => (1 << 40) | u64::from(r),
        Var::S(s) => (2 << 40) | u64::from(s),
    }
}

/// The distinct variables of `raw` and `extra` as their [`order_key`]s,
/// ascending (variable number `i` is the `i`-th), and the number of each
/// variable of `raw`.
///
/// The words of virtual registers (nearly every variable; ids below
/// `nvregs`, words below 64) are marked in a bit mask per register instead
/// of sorted: their keys come out in order by walking the masks, and a
/// word's number is its register's first number plus the words below it
/// in the mask. The few other variables are sorted and merged in.
fn number_vars(raw: &[Var], extra: &[Var], nvregs: usize) -> (Vec<u64>, Vec<u32>) {
    let mut masks = vec![0u64; nvregs];
    let mut other: Vec<u64> = Vec::new();
    let word_bit = |v: &Var| match *v {
        Var::V(id, w) if (id.0 as usize) < nvregs && w < 64 => Some((id.0 as usize, w)),
        _ => None,
    };
    for v in raw.iter().chain(extra) {
        match word_bit(v).and_then(|(id, w)| Some((masks.get_mut(id)?, w))) {
            Some((m, w)) => *m |= 1 << w,
            None => other.push(order_key(*v)),
        }
    }
    other.sort_unstable();
    other.dedup();
    // Merge the masks' keys (in order) with the other keys, noting where
    // each register's words start.
    let mut keys = Vec::with_capacity(other.len() + masks.iter().map(|m| m.count_ones() as usize).sum::<usize>());
    let mut first = vec![0u32; nvregs];
    let mut rest = other.iter().copied().peekable();
    for (id, &m) in masks.iter().enumerate() {
        let mut bits = m;
        while bits != 0 {
            let key = (id as u64) << 8 | u64::from(bits.trailing_zeros());
            while let Some(k) = rest.next_if(|k| *k < key) {
                keys.push(k);
            }
            if bits == m {
                if let Some(f) = first.get_mut(id) {
                    *f = keys.len() as u32;
                }
            }
            keys.push(key);
            bits &= bits - 1;
        }
    }
    keys.extend(rest);
    let number = |v: &Var| match word_bit(v) {
        Some((id, w)) => {
            // Words `0..n` all named (nearly every register): word `w` is
            // the `w`-th; otherwise count the named words below it.
            let below = match masks.get(id) {
                Some(&m) if m & m.wrapping_add(1) == 0 => u32::from(w),
                Some(&m) => (m & ((1u64 << w) - 1)).count_ones(),
                None => 0,
            };
            first.get(id).copied().unwrap_or(0) + below
        }
        None => keys.binary_search(&order_key(*v)).unwrap_or(0) as u32,
    };
    let vars = raw.iter().map(number).collect();
    (keys, vars)
}

/// The variable of an [`order_key`].
fn from_order_key(k: u64) -> Var {
    match k >> 40 {
        0 => Var::V(crate::ids::VregId((k >> 8) as u32), k as u8),
        1 => Var::P(k as schedra_ir::Reg),
        _ => Var::S(k as u32),
    }
}

/// Every (register, variable) pair the program's inputs name at entry:
/// each input register holds its physical-register variable and the
/// source's name for it (the words the name covers).
pub fn input_vars(p: &Program, vregs: &Vregs, mut f: impl FnMut(Reg, Var)) {
    for input in &p.inputs {
        let named = input.vreg.as_ref().and_then(|v| Some((v, vregs.id(&v.name)?)));
        for (w, r) in input.reg.regs().enumerate() {
            f(r, Var::P(r));
            if let Some((v, id)) = named {
                let n = v.size.or_else(|| vregs.size(id)).unwrap_or(input.reg.size);
                if (w as u8) < n {
                    f(r, Var::V(id, w as u8));
                }
            }
        }
    }
}

/// Walks the program's register names in the order of
/// [`crate::ids::virt_occurrences`], so that each name's id comes from
/// [`Vregs::id_at`] instead of a hash of the name.
struct Names<'v> {
    vregs: &'v Vregs,
    /// The index of the next occurrence.
    k: usize,
}

impl Names<'_> {
    /// Append the variables operand `o` names (one per word, as
    /// [`operand_vars`]) to `raw`; `o` is the next operand in walk order.
    fn vars(&mut self, o: &Operand, raw: &mut Vec<Var>) {
        match o {
            Operand::Virt(v) => {
                let id = self.vregs.id_at(self.k, &v.name);
                self.k += 1;
                if let Some(id) = id {
                    let n = v.size.or_else(|| self.vregs.size(id)).unwrap_or(1);
                    raw.extend((0..n).map(|w| Var::V(id, w)));
                }
            }
            _ => raw.extend(operand_vars(o, self.vregs)),
        }
    }

    fn arg(&mut self, o: &Operand, raw: &mut Vec<Var>) -> Arg {
        match o {
            Operand::Imm(i) => Arg::Imm(i.bits),
            Operand::Label(_) => Arg::Label,
            _ => {
                let start = raw.len();
                self.vars(o, raw);
                Arg::Vars(Span::of(start, raw.len()))
            }
        }
    }
}

impl SrcCode {
    /// Decode every block of `p` (registers numbered by `vregs`).
    pub fn of(p: &Program, vregs: &Vregs) -> SrcCode {
        let n: usize = p.blocks.iter().map(|b| b.insts().len()).sum();
        let mut c = SrcCode { blocks: Vec::with_capacity(p.blocks.len()), insts: Vec::with_capacity(n), args: Vec::with_capacity(2 * n), ..SrcCode::default() };
        let mut raw: Vec<Var> = Vec::with_capacity(3 * n);
        let mut extra: Vec<Var> = Vec::new();
        let inputs = p.inputs.iter().filter(|i| i.vreg.is_some()).count();
        let mut names = Names { vregs, k: inputs };
        let mut ops = OpCache::new(p.target);
        for b in &p.blocks {
            let first = c.insts.len();
            for inst in b.insts() {
                let desc = ops.op(&inst.opcode);
                let a0 = c.args.len();
                for o in &inst.srcs {
                    let arg = names.arg(o, &mut raw);
                    c.args.push(arg);
                }
                let d0 = raw.len();
                if let Some(d) = &inst.dest {
                    names.vars(d, &mut raw);
                }
                let dest = Span::of(d0, raw.len());
                // A register destination's id is its first variable's.
                let dest_name = match (&inst.dest, raw.get(d0)) {
                    (Some(Operand::Virt(_)), Some(Var::V(id, _))) => Some(DestName::Virt(*id)),
                    (d, _) => d.as_ref().map(|d| DestName::of(p, vregs, d)),
                };
                let idx = desc.map(|d| index_operand(inst, d)).unwrap_or(0);
                let i = SrcInst { desc, args: Span::of(a0, c.args.len()), dest, dest_name, idx, line: inst.span.line };
                extra.extend(c.scratch_vars(&i));
                c.insts.push(i);
            }
            let cond = match &b.term.kind {
                TermKind::Brnz { cond, .. } => Some(names.arg(cond, &mut raw)),
                _ => None,
            };
            c.blocks.push(SrcBlock { insts: Span::of(first, c.insts.len()), cond });
        }
        input_vars(p, vregs, |_, v| extra.push(v));
        let (keys, vars) = number_vars(&raw, &extra, vregs.len());
        c.vars = vars;
        c.keys = keys;
        c
    }

    /// The scratch slots a scratch instruction may touch (a superset of
    /// what the simulator and liveness use: every operand word may be
    /// stored, at least one slot is loaded).
    fn scratch_vars(&self, i: &SrcInst) -> impl Iterator<Item = Var> {
        let words: usize = self.args(i).iter().map(|a| if let Arg::Vars(s) = a { (s.end - s.start) as usize } else { 1 }).sum();
        let n = match i.desc.map(|d| d.sem) {
            Some(Sem::ScratchRead) => ((i.dest.end - i.dest.start) as usize).max(1),
            Some(Sem::ScratchWrite) => words,
            _ => 0,
        };
        let off = i.idx;
        (0..n as u32).map(move |w| Var::S(off.wrapping_add(w)))
    }

    /// The number of a variable (`None` for a variable the program cannot
    /// name).
    pub fn ix(&self, v: &Var) -> Option<u32> {
        self.keys.binary_search(&order_key(*v)).ok().map(|i| i as u32)
    }

    /// The variable of a number (a scratch slot past `u32::MAX` for a
    /// foreign number).
    pub fn var(&self, ix: u32) -> Var {
        self.keys.get(ix as usize).map(|k| from_order_key(*k)).unwrap_or(Var::S(u32::MAX))
    }

    /// The number of variables the program can name (numbers are
    /// `0..universe_len()`).
    pub fn universe_len(&self) -> usize {
        self.keys.len()
    }

    /// Block `b` (`None` past the last block).
    pub fn block(&self, b: usize) -> Option<&SrcBlock> {
        self.blocks.get(b)
    }

    /// Every block, in program order.
    pub fn blocks(&self) -> &[SrcBlock] {
        &self.blocks
    }

    /// A block's instructions, in order.
    pub fn insts(&self, b: &SrcBlock) -> &[SrcInst] {
        b.insts.get(&self.insts)
    }

    /// An instruction's operands, in order.
    pub fn args(&self, i: &SrcInst) -> &[Arg] {
        i.args.get(&self.args)
    }

    /// The variables of a register operand, as numbers.
    pub fn vars(&self, s: Span) -> &[u32] {
        s.get(&self.vars)
    }

    /// The variables an instruction's destination names (one per word),
    /// as numbers.
    pub fn dest(&self, i: &SrcInst) -> &[u32] {
        i.dest.get(&self.vars)
    }

    /// The variables an operand reads (none for immediates and labels), as
    /// numbers.
    pub fn arg_vars(&self, a: &Arg) -> &[u32] {
        match a {
            Arg::Vars(s) => self.vars(*s),
            _ => &[],
        }
    }

    /// The source variables an instruction reads and writes, scratch slots
    /// included, as numbers appended to `uses` and `defs` (for liveness).
    pub fn uses_defs(&self, i: &SrcInst, uses: &mut Vec<u32>, defs: &mut Vec<u32>) {
        let (u0, d0) = (uses.len(), defs.len());
        for a in self.args(i) {
            uses.extend_from_slice(self.arg_vars(a));
        }
        defs.extend_from_slice(self.dest(i));
        if let Some(d) = i.desc {
            let off = i.idx;
            let slots = |n: usize| (0..n as u32).filter_map(move |w| self.ix(&Var::S(off.wrapping_add(w))));
            match d.sem {
                Sem::ScratchRead => {
                    let n = (defs.len() - d0).max(1);
                    uses.extend(slots(n));
                }
                Sem::ScratchWrite => {
                    let n = uses.len() - u0;
                    defs.extend(slots(n));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::VregId;

    #[test]
    fn numbering_by_masks_matches_sorting_the_keys() {
        let v = |id: u32, w: u8| Var::V(VregId(id), w);
        let raw = vec![v(3, 1), Var::P(7), v(0, 0), v(3, 0), v(9, 2), v(3, 70), Var::S(4), v(1, 63), v(3, 1), Var::P(0), v(0, 0)];
        let extra = vec![Var::S(1), v(2, 0), v(1, 5)];
        for nvregs in [0, 2, 4, 10] {
            let mut want: Vec<u64> = raw.iter().chain(&extra).map(|x| order_key(*x)).collect();
            want.sort_unstable();
            want.dedup();
            let nums: Vec<u32> = raw.iter().map(|x| want.binary_search(&order_key(*x)).unwrap_or(usize::MAX) as u32).collect();
            assert_eq!(number_vars(&raw, &extra, nvregs), (want, nums), "{nvregs} registers");
        }
    }

    #[test]
    fn order_keys_order_as_variables_and_round_trip() {
        let mut vars = vec![Var::S(u32::MAX), Var::P(7), Var::V(VregId(u32::MAX), 255), Var::V(VregId(3), 1), Var::V(VregId(3), 0), Var::P(0), Var::S(0), Var::V(VregId(4), 0)];
        let mut by_key = vars.clone();
        vars.sort();
        by_key.sort_by_key(|v| order_key(*v));
        assert_eq!(vars, by_key);
        assert!(vars.iter().all(|v| from_order_key(order_key(*v)) == *v));
    }
}
