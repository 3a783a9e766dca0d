//! The order in which the dataflow fixpoint visits blocks: a weak
//! topological order of the CFG.
//!
//! Reference: F. Bourdoncle, "Efficient chaotic iteration strategies with
//! widenings", Formal Methods in Programming and their Applications (1993).
//!
//! A weak topological order (WTO) is a total order of the blocks reachable
//! from block 0, partitioned into nested *components*: a component is a
//! contiguous run of the order whose first block is its *head*, and the
//! components are properly nested (two are disjoint or one lies inside the
//! other). Invariant: every edge `u → v` goes forward in the order
//! (`pos[u] < pos[v]`) unless `v` is the head of a component containing `u`
//! (then it is a back edge, `pos[v] <= pos[u]`, self-loops included). So
//! every cycle passes through a head, each loop's blocks are contiguous with
//! the header first, and nested loops lie inside.
//!
//! Why the fixpoint uses it: its worklist takes the queued block with the
//! smallest position. A back edge re-queues a head that comes before every
//! other block of its component, and the blocks after the component come
//! after all of it, so a loop is iterated until stable before anything after
//! it runs — Bourdoncle's recursive strategy. Reverse post-order keeps the
//! acyclic property but not the contiguity (a depth-first search that enters
//! a loop's exit before its latch places the exit, and everything after it,
//! inside the loop's range), so the blocks after a loop were visited once
//! per round of the loop.
//!
//! Algorithm: Bourdoncle's, a depth-first search that numbers the blocks
//! (Tarjan's strongly-connected-components scheme). When the search leaves
//! a block `v` that reached no block numbered below it, `v` heads a
//! component if some path came back to it; the blocks above it on the stack
//! are un-numbered and the component is laid out by searching again from
//! `v`'s successors, with `v` itself out of the search (so inner cycles, not
//! through `v`, become nested components). The order is built back to front
//! in one flat list. The search is iterative (an explicit stack of frames),
//! so a deep CFG cannot overflow the call stack; successors out of range are
//! ignored, and unreachable blocks get no position. Each block is searched
//! at most once per enclosing component, so the cost is
//! O(depth of nesting × edges).

/// A weak topological order of the blocks reachable from block 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wto {
    /// The reachable blocks, each exactly once, in weak topological order
    /// (block 0 first).
    pub order: Vec<usize>,
    /// Per block, its position in `order`; `usize::MAX` for a block not
    /// reachable from block 0.
    pub pos: Vec<usize>,
    /// Per position in `order`, `Some(end)` if the block there heads a
    /// component, which then spans positions `pos..end` (end exclusive; a
    /// block with a self-loop and no other cycle heads `pos..pos + 1`);
    /// `None` for a block that heads none.
    pub component_end: Vec<Option<usize>>,
}

impl Wto {
    /// The weak topological order of the CFG given by `succs` (successor
    /// lists per block; indices out of range are ignored), from block 0.
    /// Never panics.
    pub fn of(succs: &[Vec<usize>]) -> Wto {
        let mut s = Search::new(succs);
        if !succs.is_empty() {
            s.run(0);
        }
        s.finish()
    }
}

/// Depth-first number of a block the search has not reached (or has
/// un-numbered to lay out a component).
const UNSEEN: usize = 0;
/// Depth-first number of a block already placed in the order.
const PLACED: usize = usize::MAX;

/// One pending step of the search (the recursion of the paper, unrolled).
enum Frame {
    /// Visiting `v`: the index of its next successor, the smallest
    /// depth-first number reached so far from `v`, and whether a path came
    /// back to `v` or above it.
    Visit { v: usize, next: usize, head: usize, cycle: bool },
    /// Laying out the component headed by `v`: the index of its next
    /// successor, and the length of the reversed order when it began.
    Component { v: usize, next: usize, start: usize },
}

/// The state of the search.
struct Search<'a> {
    succs: &'a [Vec<usize>],
    /// Per block, its depth-first number, `UNSEEN` or `PLACED`.
    dfn: Vec<usize>,
    /// The last depth-first number given.
    num: usize,
    /// Blocks visited but not yet placed (Tarjan's stack).
    stack: Vec<usize>,
    /// The order, back to front.
    rev: Vec<usize>,
    /// Heads with their components' extents in `rev`: (head, start, end).
    heads: Vec<(usize, usize, usize)>,
}

impl<'a> Search<'a> {
    fn new(succs: &'a [Vec<usize>]) -> Search<'a> {
        let n = succs.len();
        Search { succs, dfn: vec![UNSEEN; n], num: 0, stack: Vec::new(), rev: Vec::with_capacity(n), heads: Vec::new() }
    }

    /// The `i`-th successor of `v` that is a block, skipping any out of
    /// range: the successor and the index after it.
    fn succ(&self, v: usize, mut i: usize) -> Option<(usize, usize)> {
        let list = self.succs.get(v)?;
        while let Some(&w) = list.get(i) {
            i += 1;
            if w < self.dfn.len() {
                return Some((w, i));
            }
        }
        None
    }

    fn dfn(&self, v: usize) -> usize {
        self.dfn.get(v).copied().unwrap_or(PLACED)
    }

    /// Number `v`, push it, and return the frame that visits it.
    fn enter(&mut self, v: usize) -> Frame {
        self.num += 1;
        if let Some(d) = self.dfn.get_mut(v) {
            *d = self.num;
        }
        self.stack.push(v);
        Frame::Visit { v, next: 0, head: self.num, cycle: false }
    }

    /// The search from `root`; every frame that finishes hands the
    /// smallest depth-first number it reached to the frame below it
    /// (`PLACED` once its block is placed, which never lowers anything).
    fn run(&mut self, root: usize) {
        let mut frames = vec![self.enter(root)];
        let mut ret: Option<usize> = None;
        while let Some(frame) = frames.last_mut() {
            match frame {
                Frame::Visit { v, next, head, cycle } => {
                    let v = *v;
                    if let Some(min) = ret.take() {
                        if min <= *head {
                            *head = min;
                            *cycle = true;
                        }
                    }
                    if let Some((w, after)) = self.succ(v, *next) {
                        *next = after;
                        match self.dfn(w) {
                            UNSEEN => {
                                let f = self.enter(w);
                                frames.push(f);
                            }
                            d if d <= *head => {
                                *head = d;
                                *cycle = true;
                            }
                            _ => {}
                        }
                        continue;
                    }
                    let (head, cycle) = (*head, *cycle);
                    frames.pop();
                    ret = Some(self.leave(v, head, cycle, &mut frames));
                }
                Frame::Component { v, next, start } => {
                    let v = *v;
                    ret = None;
                    if let Some((w, after)) = self.succ(v, *next) {
                        *next = after;
                        if self.dfn(w) == UNSEEN {
                            let f = self.enter(w);
                            frames.push(f);
                        }
                        continue;
                    }
                    let start = *start;
                    frames.pop();
                    self.rev.push(v);
                    self.heads.push((v, start, self.rev.len()));
                    ret = Some(PLACED);
                }
            }
        }
    }

    /// The visit of `v` is over with `head` the smallest number reached:
    /// unless a path leads above `v`, place `v` (alone, or as the head of a
    /// component laid out by a new frame). Returns what the visit hands on.
    fn leave(&mut self, v: usize, head: usize, cycle: bool, frames: &mut Vec<Frame>) -> usize {
        if head != self.dfn(v) {
            return head;
        }
        if let Some(d) = self.dfn.get_mut(v) {
            *d = PLACED;
        }
        let mut cycle = cycle;
        while let Some(x) = self.stack.pop() {
            if x == v {
                break;
            }
            // Above `v` on the stack: in `v`'s component, searched again.
            cycle = true;
            if let Some(d) = self.dfn.get_mut(x) {
                *d = UNSEEN;
            }
        }
        if cycle {
            frames.push(Frame::Component { v, next: 0, start: self.rev.len() });
        } else {
            self.rev.push(v);
        }
        PLACED
    }

    fn finish(self) -> Wto {
        let total = self.rev.len();
        let mut order = self.rev;
        order.reverse();
        let mut pos = vec![usize::MAX; self.dfn.len()];
        for (i, &b) in order.iter().enumerate() {
            if let Some(p) = pos.get_mut(b) {
                *p = i;
            }
        }
        let mut component_end = vec![None; total];
        for (_, start, end) in self.heads {
            if let Some(slot) = component_end.get_mut(total - end) {
                *slot = Some(total - start);
            }
        }
        Wto { order, pos, component_end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CFG with `n` blocks and the given edges.
    fn cfg(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
        let mut succs = vec![Vec::new(); n];
        for &(a, b) in edges {
            succs[a].push(b);
        }
        succs
    }

    /// Blocks reachable from block 0 (ignoring successors out of range).
    fn reachable(succs: &[Vec<usize>]) -> Vec<bool> {
        let mut seen = vec![false; succs.len()];
        let mut todo = Vec::new();
        if !succs.is_empty() {
            seen[0] = true;
            todo.push(0);
        }
        while let Some(b) = todo.pop() {
            for &s in &succs[b] {
                if s < succs.len() && !seen[s] {
                    seen[s] = true;
                    todo.push(s);
                }
            }
        }
        seen
    }

    /// The WTO's invariants: each reachable block exactly once and no
    /// other, `pos` its inverse, components nested and headed by their
    /// first block, and every edge forward or a back edge to the head of a
    /// component containing its source.
    fn check(succs: &[Vec<usize>], w: &Wto) {
        let reach = reachable(succs);
        assert_eq!(w.order.len(), reach.iter().filter(|r| **r).count(), "{succs:?} {w:?}");
        assert_eq!(w.pos.len(), succs.len());
        assert_eq!(w.component_end.len(), w.order.len());
        for (b, r) in reach.iter().enumerate() {
            if *r {
                assert_eq!(w.order[w.pos[b]], b, "{succs:?} {w:?}");
            } else {
                assert_eq!(w.pos[b], usize::MAX, "unreachable {b}: {succs:?} {w:?}");
            }
        }
        if !w.order.is_empty() {
            assert_eq!(w.order[0], 0);
        }
        let spans: Vec<(usize, usize)> = w.component_end.iter().enumerate().filter_map(|(p, e)| e.map(|e| (p, e))).collect();
        for &(p, e) in &spans {
            assert!(p < e && e <= w.order.len(), "{w:?}");
            for &(q, f) in &spans {
                assert!(f <= p || e <= q || (p <= q && f <= e) || (q <= p && e <= f), "components cross: {w:?}");
            }
        }
        for (u, list) in succs.iter().enumerate() {
            if !reach[u] {
                continue;
            }
            for &v in list.iter().filter(|v| **v < succs.len()) {
                let (pu, pv) = (w.pos[u], w.pos[v]);
                if pu < pv {
                    continue;
                }
                let end = w.component_end[pv].unwrap_or_else(|| panic!("back edge {u}->{v} to a non-head: {succs:?} {w:?}"));
                assert!(pu < end, "back edge {u}->{v} from outside {v}'s component: {succs:?} {w:?}");
            }
        }
    }

    #[test]
    fn a_chain_and_a_diamond_are_in_topological_order_with_no_component() {
        let g = cfg(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
        let w = Wto::of(&g);
        check(&g, &w);
        assert!(w.component_end.iter().all(Option::is_none));
        assert_eq!(w.pos[3], 3);
    }

    #[test]
    fn nested_loops_are_contiguous_with_their_headers_first() {
        // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2, 3 -> 4 -> 1, 1 -> 5 (exit).
        // The exit is listed first among 1's successors, so a DFS finishes it
        // first and reverse post-order puts it inside the loop's range.
        let g = cfg(6, &[(0, 1), (1, 5), (1, 2), (2, 3), (3, 2), (3, 4), (4, 1)]);
        let w = Wto::of(&g);
        check(&g, &w);
        assert_eq!(w.order, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(w.component_end[1], Some(5), "outer loop: blocks 1..=4");
        assert_eq!(w.component_end[2], Some(4), "inner loop: blocks 2 and 3");
        assert_eq!(w.component_end[3], None);
    }

    #[test]
    fn a_self_loop_is_a_component_of_one() {
        let g = cfg(3, &[(0, 1), (1, 1), (1, 2)]);
        let w = Wto::of(&g);
        check(&g, &w);
        assert_eq!(w.order, vec![0, 1, 2]);
        assert_eq!(w.component_end, vec![None, Some(2), None]);
    }

    #[test]
    fn an_irreducible_loop_gets_one_of_its_entries_as_head() {
        // 1 and 2 form a cycle entered at both.
        let g = cfg(4, &[(0, 1), (0, 2), (1, 2), (2, 1), (1, 3), (2, 3)]);
        let w = Wto::of(&g);
        check(&g, &w);
        let head = w.order[1];
        assert!(head == 1 || head == 2);
        assert_eq!(w.component_end[1], Some(3));
        assert_eq!(w.order[3], 3);
    }

    #[test]
    fn unreachable_blocks_and_bad_successors_get_no_position() {
        // 2 is unreachable but jumps into the loop; 1 names a block that does not exist.
        let g = cfg(4, &[(0, 1), (1, 1), (1, 9), (1, 3), (2, 1), (2, 2)]);
        let w = Wto::of(&g);
        check(&g, &w);
        assert_eq!(w.order, vec![0, 1, 3]);
        assert_eq!(w.pos[2], usize::MAX);
        assert_eq!(Wto::of(&[]), Wto { order: vec![], pos: vec![], component_end: vec![] });
        let back_to_entry = cfg(2, &[(0, 1), (1, 0)]);
        let w = Wto::of(&back_to_entry);
        check(&back_to_entry, &w);
        assert_eq!(w.component_end[0], Some(2));
    }

    #[test]
    fn a_deep_cfg_does_not_overflow_the_stack() {
        let n = 200_000;
        let mut g: Vec<Vec<usize>> = (0..n).map(|b| vec![b + 1]).collect();
        g[n - 1] = vec![0];
        let w = Wto::of(&g);
        assert_eq!(w.order.len(), n);
        assert_eq!(w.component_end[0], Some(n));
        g[n - 1] = vec![];
        let w = Wto::of(&g);
        assert_eq!(w.order, (0..n).collect::<Vec<_>>());
    }

    /// xorshift64*, so the property test needs no dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
        }
    }

    #[test]
    fn every_reachable_block_appears_once_and_every_forward_edge_goes_forward() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let n = 1 + rng.below(14);
            let g: Vec<Vec<usize>> = (0..n)
                .map(|_| {
                    let k = rng.below(4);
                    // Mostly real blocks, now and then one out of range.
                    (0..k).map(|_| rng.below(n + 1)).collect()
                })
                .collect();
            let w = Wto::of(&g);
            check(&g, &w);
            assert_eq!(Wto::of(&g), w, "deterministic");
        }
    }
}
