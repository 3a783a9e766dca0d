//! Chaitin–Briggs graph colouring with precoloured registers and
//! multi-register values.
//!
//! Simplify: repeatedly remove a node whose neighbours cannot block all of
//! its candidate runs (weighted degree: a neighbour of size `m` can block at
//! most `m + n - 1` runs of size `n`); when none is left, remove the node with
//! the lowest spill cost per degree *optimistically* (Briggs). Select: pop
//! nodes in reverse and give each the first run — copy hints first, then the
//! candidates in allocation order — that no coloured neighbour overlaps, that
//! avoids the registers the node interferes with (preallocated, implicit,
//! scratch) and that the target rules allow. Nodes that find none are
//! returned for spilling.
//!
//! Invariant: every run returned is allowed for its node and overlaps no run
//! of an interfering node nor any register the node interferes with.

use super::interference::{Constraints, Graph, Hint};
use super::ra_ir::{RegSet, ValId};
use super::spill::LazyCosts;
use schedra_ir::PhysReg;

/// The values to colour and what is known about them.
pub struct Problem<'a> {
    /// The nodes to colour.
    pub nodes: &'a [ValId],
    /// The interference graph (may contain other values, ignored).
    pub graph: &'a Graph,
    /// Rule constraints and hints.
    pub cons: &'a Constraints,
    /// Size of every value.
    pub sizes: &'a [u8],
    /// Spill cost of every value (asked for only when simplification has
    /// to remove a node optimistically).
    pub cost: &'a LazyCosts<'a>,
}

/// The registers of the one-register candidates, when no register is a
/// candidate twice (then counting free candidates is counting free
/// registers of this set).
fn single_cands(p: &Problem) -> Option<RegSet> {
    let cands = p.cons.cands_for(1);
    let mut set = RegSet::default();
    cands.iter().for_each(|r| set.insert(r.base));
    let exact = set.len() == cands.len() && cands.iter().all(|r| (r.base as usize) < RegSet::CAP);
    exact.then_some(set)
}

/// How many candidate runs value `v` could take before any neighbour is
/// coloured (`single`: [`single_cands`]).
fn available(p: &Problem, single: Option<&RegSet>, v: ValId) -> usize {
    let size = p.sizes.get(v as usize).copied().unwrap_or(1);
    let phys = p.graph.phys.get(v as usize).copied().unwrap_or_default();
    let no_partial = p.cons.no_partial.get(v as usize).is_none_or(Vec::is_empty);
    if size == 1 && no_partial {
        // Size-1 candidates (one register each) and no overlap rule: a
        // candidate is taken iff its register is a physical neighbour's or
        // forbidden to `v`.
        let mut blocked = phys;
        if let Some(f) = p.cons.forbid.get(v as usize) {
            blocked.union_with(f);
        }
        if let Some(set) = single {
            return set.difference_len(&blocked);
        }
        return p
            .cons
            .cands_for(1)
            .iter()
            .filter(|r| !blocked.contains(r.base))
            .count();
    }
    p.cons
        .cands_for(size)
        .iter()
        .filter(|r| !phys.overlaps(**r) && p.cons.allowed(v, **r))
        .count()
}

/// The simplify phase: the order in which to select (last removed first).
fn simplify(p: &Problem) -> Vec<ValId> {
    let nv = p.sizes.len();
    let mut in_graph = vec![false; nv];
    p.nodes.iter().for_each(|&v| in_graph[v as usize] = true);
    // The same set as words, for walking a node's neighbours in the graph.
    let mut in_words = vec![0u64; nv.div_ceil(64)];
    p.nodes.iter().for_each(|&v| set_bit(&mut in_words, v, true));
    let size = |v: ValId| p.sizes.get(v as usize).copied().unwrap_or(1) as usize;
    let mut weight = vec![0usize; nv];
    for &v in p.nodes {
        let mut w = 0;
        p.graph
            .neighbours_in(v, &in_words, |m| w += size(m) + size(v) - 1);
        weight[v as usize] = w;
    }
    let single = single_cands(p);
    let avail: Vec<usize> = (0..nv)
        .map(|v| {
            if in_graph[v] {
                available(p, single.as_ref(), v as ValId)
            } else {
                0
            }
        })
        .collect();
    let mut stack = Vec::with_capacity(p.nodes.len());
    let mut left: Vec<ValId> = p.nodes.to_vec();
    while !left.is_empty() {
        let pick = match left
            .iter()
            .position(|&v| weight[v as usize] < avail[v as usize])
        {
            Some(i) => i,
            None => {
                let cost = &p.cost.get().cost;
                let score = |v: ValId| {
                    cost.get(v as usize).copied().unwrap_or(1.0)
                        / (weight[v as usize] as f64 + 1.0)
                };
                let mut best = 0;
                for (i, &v) in left.iter().enumerate() {
                    if score(v) < score(left[best]) {
                        best = i;
                    }
                }
                best
            }
        };
        let v = left.swap_remove(pick);
        in_graph[v as usize] = false;
        set_bit(&mut in_words, v, false);
        p.graph.neighbours_in(v, &in_words, |m| {
            if let Some(w) = weight.get_mut(m as usize) {
                *w = w.saturating_sub(size(v) + size(m) - 1);
            }
        });
        stack.push(v);
    }
    stack
}

/// Colour the nodes. `Ok(assign)` gives a run for every node (indexed by
/// value); `Err(spill)` lists the nodes that found no register.
pub fn color(p: &Problem) -> Result<Vec<Option<PhysReg>>, Vec<ValId>> {
    let mut assign: Vec<Option<PhysReg>> = vec![None; p.sizes.len()];
    // The values given a run so far, as words.
    let mut assigned = vec![0u64; p.sizes.len().div_ceil(64)];
    let mut failed = Vec::new();
    for v in simplify(p).into_iter().rev() {
        let size = p.sizes.get(v as usize).copied().unwrap_or(1);
        let mut busy = p.graph.phys.get(v as usize).copied().unwrap_or_default();
        p.graph.neighbours_in(v, &assigned, |m| {
            if let Some(r) = assign.get(m as usize).copied().flatten() {
                busy.insert_run(r);
            }
        });
        let fits = |r: PhysReg| r.size == size && !busy.overlaps(r) && p.cons.allowed(v, r);
        let hinted = p
            .cons
            .hints
            .get(v as usize)
            .into_iter()
            .flatten()
            .find_map(|h| {
                let r = match *h {
                    Hint::Phys(r) => Some(r),
                    Hint::Val(o) => assign.get(o as usize).copied().flatten(),
                };
                r.filter(|r| fits(*r) && p.cons.cands_for(size).contains(r))
            });
        let choice = hinted.or_else(|| first_fit(p, v, size, &busy));
        match choice {
            Some(r) => {
                assign[v as usize] = Some(r);
                set_bit(&mut assigned, v, true);
            }
            None => failed.push(v),
        }
    }
    if failed.is_empty() {
        Ok(assign)
    } else {
        Err(failed)
    }
}

/// The first candidate run of `v` (of size `size`) in allocation order that
/// overlaps no register of `busy` and that the rules allow. A one-register
/// value without an overlap rule is checked against one blocked set (the
/// busy registers and those the rules forbid it): the same runs qualify.
fn first_fit(p: &Problem, v: ValId, size: u8, busy: &RegSet) -> Option<PhysReg> {
    let cands = p.cons.cands_for(size);
    let no_partial = p.cons.no_partial.get(v as usize).is_none_or(Vec::is_empty);
    if size == 1 && no_partial {
        let mut blocked = *busy;
        if let Some(f) = p.cons.forbid.get(v as usize) {
            blocked.union_with(f);
        }
        return cands
            .iter()
            .copied()
            .find(|r| r.size == 1 && !blocked.contains(r.base));
    }
    cands
        .iter()
        .copied()
        .find(|r| r.size == size && !busy.overlaps(*r) && p.cons.allowed(v, *r))
}

/// Put value `v` in (`on`) or out of the set with words `words`.
fn set_bit(words: &mut [u64], v: ValId, on: bool) {
    if let Some(w) = words.get_mut(v as usize / 64) {
        let bit = 1u64 << (v % 64);
        if on {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }
}

/// The registers of all runs in `assign` (for tests and diagnostics).
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn used_regs(assign: &[Option<PhysReg>]) -> RegSet {
    let mut s = RegSet::default();
    assign.iter().flatten().for_each(|r| s.insert_run(*r));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::interference::{build, constraints};
    use crate::allocate::liveness::{analyze, VarMap};
    use crate::allocate::ra_ir::Func;

    fn setup(src: &str, regs: &[u16]) -> (Func, Graph, Constraints) {
        let p = schedra_ir::parse::parse(src.as_bytes(), None).expect("parse");
        let f = Func::from_program(&p).expect("lower");
        let vm = VarMap::new(&f, true, true);
        let g = build(&f, &vm, &analyze(&f, &vm));
        let k = constraints(&f, regs).expect("constraints");
        (f, g, k)
    }

    const TRIANGLE: &str = "target r600\nstage vertex\nb0:\n %a = mov 1.0\n %b = mov 2.0\n %c = add %a, %b\n %d = add %c, %a\n %e = add %d, %b\n export 0, %e\n end\n";

    #[test]
    fn colours_without_overlap_and_honours_precoloured_interference() {
        let (f, g, k) = setup(TRIANGLE, &[0, 1, 2, 3]);
        let nodes: Vec<ValId> = (0..f.vals.len() as ValId).collect();
        let sizes: Vec<u8> = f.vals.iter().map(|v| v.size).collect();
        let cost = LazyCosts::known(crate::allocate::spill::Costs {
            cost: vec![1.0; sizes.len()],
            span: vec![0; sizes.len()],
        });
        let a = color(&Problem {
            nodes: &nodes,
            graph: &g,
            cons: &k,
            sizes: &sizes,
            cost: &cost,
        })
        .expect("colours");
        for x in &nodes {
            for y in &nodes {
                if x != y && g.interferes(*x, *y) {
                    assert_ne!(a[*x as usize], a[*y as usize]);
                }
            }
        }
        assert!(used_regs(&a).len() <= 3);
    }

    #[test]
    fn reports_nodes_to_spill_when_registers_run_out() {
        let (f, g, k) = setup(TRIANGLE, &[0, 1]);
        let nodes: Vec<ValId> = (0..f.vals.len() as ValId).collect();
        let sizes: Vec<u8> = f.vals.iter().map(|v| v.size).collect();
        let cost = LazyCosts::known(crate::allocate::spill::Costs {
            cost: vec![1.0; sizes.len()],
            span: vec![0; sizes.len()],
        });
        let spill = color(&Problem {
            nodes: &nodes,
            graph: &g,
            cons: &k,
            sizes: &sizes,
            cost: &cost,
        })
        .expect_err("three values live at once in two registers");
        assert!(!spill.is_empty());
    }
}
