//! The control-flow graph of a program and the dense sets its dataflow
//! problems work on, shared by validation, the compiler, the verifier and
//! the reducer: block successors resolved once ([`Successors`]), the blocks
//! by label ([`BlockIndex`]), predecessors in edge order
//! ([`Predecessors`]), the reverse postorder of a depth-first walk from the
//! entry ([`reverse_postorder`]), bit sets of variables ([`BitSet`], one
//! per block: [`BlockSets`]), and the backward fixpoint ([`solve_flat`],
//! [`live_out_of`]) behind the compiler's liveness.
//!
//! Invariants: [`live_out_of`] is the least solution of `in = use ∪ (out −
//! def)`, `out = ∪ in(succ)` over the successors given;
//! [`reverse_postorder`] lists each block reachable from block 0 once, every
//! block before its successors except along back edges.

/// Sets of up to this many 64-bit words live inline (no allocation): every
/// per-gap and per-block set of a fuzz-sized function.
const INLINE_WORDS: usize = 4;

/// A fixed-capacity bit set of variables (capacity set by [`BitSet::new`]);
/// small sets are stored inline.
#[derive(Debug, Default)]
pub struct BitSet {
    /// Number of words in use.
    len: usize,
    /// The words when `len <= INLINE_WORDS` (unused ones stay zero).
    inline: [u64; INLINE_WORDS],
    /// The words when `len > INLINE_WORDS`.
    heap: Vec<u64>,
}

impl Clone for BitSet {
    /// A copy; an inline set copies its words and touches no heap.
    fn clone(&self) -> BitSet {
        BitSet {
            len: self.len,
            inline: self.inline,
            heap: if self.len > INLINE_WORDS {
                self.heap.clone()
            } else {
                Vec::new()
            },
        }
    }
}

impl PartialEq for BitSet {
    fn eq(&self, o: &BitSet) -> bool {
        self.words() == o.words()
    }
}

impl Eq for BitSet {}

/// The elements of word `wi` of a bit set whose bits are `w`, in
/// increasing order (`wi * 64 + b` for each set bit `b`).
pub fn word_bits(wi: usize, mut w: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if w == 0 {
            return None;
        }
        let b = w.trailing_zeros() as usize;
        w &= w - 1;
        Some(wi * 64 + b)
    })
}

impl BitSet {
    /// An empty set able to hold `n` elements.
    pub fn new(n: usize) -> BitSet {
        let len = n.div_ceil(64);
        BitSet {
            len,
            inline: [0; INLINE_WORDS],
            heap: if len > INLINE_WORDS { vec![0; len] } else { Vec::new() },
        }
    }
    /// The set as words: element `i` is bit `i % 64` of word `i / 64`.
    pub fn words(&self) -> &[u64] {
        if self.len <= INLINE_WORDS {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
    /// The set as words to change in place ([`BitSet::words`] layout).
    pub fn words_mut(&mut self) -> &mut [u64] {
        if self.len <= INLINE_WORDS {
            &mut self.inline[..self.len]
        } else {
            &mut self.heap
        }
    }
    /// A set able to hold `n` elements whose words are `words` (missing
    /// words are empty, extra ones ignored).
    pub fn from_words(n: usize, words: &[u64]) -> BitSet {
        let mut s = BitSet::new(n);
        let own = s.words_mut();
        let k = own.len().min(words.len());
        own[..k].copy_from_slice(&words[..k]);
        s
    }
    /// Add `i` (ignored when out of range).
    pub fn insert(&mut self, i: usize) {
        if let Some(w) = self.words_mut().get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    /// Remove `i`.
    pub fn remove(&mut self, i: usize) {
        if let Some(w) = self.words_mut().get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    /// Whether `i` is in the set.
    pub fn contains(&self, i: usize) -> bool {
        self.words().get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// Add every element of `o`; returns whether the set grew.
    pub fn union_with(&mut self, o: &BitSet) -> bool {
        let mut changed = false;
        for (a, b) in self.words_mut().iter_mut().zip(o.words().iter()) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    /// How many elements this set shares with `o`.
    pub fn count_common(&self, o: &BitSet) -> usize {
        self.words()
            .iter()
            .zip(o.words())
            .map(|(a, b)| (a & b).count_ones() as usize)
            .sum()
    }
    /// Remove every member of `o` (sets of the same capacity).
    pub fn subtract(&mut self, o: &BitSet) {
        for (a, b) in self.words_mut().iter_mut().zip(o.words().iter()) {
            *a &= !b;
        }
    }
    /// The elements in decreasing order.
    pub fn iter_rev(&self) -> impl Iterator<Item = usize> + '_ {
        self.words().iter().enumerate().rev().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = 63 - w.leading_zeros() as usize;
                w &= !(1u64 << b);
                Some(wi * 64 + b)
            })
        })
    }
    /// The elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words().iter().enumerate().flat_map(|(wi, &w)| word_bits(wi, w))
    }
}

/// The least solution of the backward problem `in[b] = gen[b] ∪ (out[b] −
/// kill[b])`, `out[b] = ∪ in[s]` over the successors `succs(b)` (indices
/// beyond the blocks ignored), as `(in, out)`, on flat arrays of `w` words
/// per block (block `b` at `b * w..`; `gen`, consumed as the first `in`,
/// and `kill` hold at least `nb * w` words).
///
/// Round-robin from the last block until nothing changes, skipping a block
/// none of whose successors' `in` grew since its last visit; starting from
/// `in = gen`, `out = ∅` (below every solution), the iteration reaches the
/// least one (any fair order of visits does).
pub fn solve_flat<'s>(
    (w, nb): (usize, usize),
    gen: Vec<u64>,
    k: &[u64],
    succs: impl Fn(usize) -> &'s [usize],
) -> (Vec<u64>, Vec<u64>) {
    let g = &gen;
    let mut live_in = g.clone();
    let mut live_out = vec![0u64; nb * w];
    // Steps numbered from 1: when each block was last visited (0: never)
    // and when its `in` last grew. A block whose successors' `in` have not
    // grown since its visit would compute the same sets again: skipped.
    let mut visited = vec![0u32; nb];
    let mut grew_at = vec![0u32; nb];
    let mut step = 0u32;
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let ss = succs(b);
            let seen = visited[b];
            if seen != 0 && !ss.iter().any(|&s| grew_at.get(s).is_some_and(|&t| t > seen)) {
                continue;
            }
            step += 1;
            visited[b] = step;
            let at = b * w..(b + 1) * w;
            let out = &mut live_out[at.clone()];
            out.fill(0);
            for &s in ss.iter().filter(|&&s| s < nb) {
                for (o, x) in out.iter_mut().zip(&live_in[s * w..(s + 1) * w]) {
                    *o |= x;
                }
            }
            let mut grew = false;
            let words = live_in[at.clone()].iter_mut().zip(&g[at.clone()]).zip(&k[at]);
            for (((i, gw), kw), ow) in words.zip(out.iter()) {
                let v = gw | (ow & !kw);
                grew |= *i != v;
                *i = v;
            }
            if grew {
                // Later than this visit, so a self-loop is visited again.
                step += 1;
                grew_at[b] = step;
                changed = true;
            }
        }
    }
    (live_in, live_out)
}

/// The upward-exposed reads (`uses`) and the writes (`defs`) of one block,
/// over variables `0..width`: the transfer function of a backward liveness
/// fixpoint ([`program_live_out`]). Feed a block's accesses in program
/// order.
#[derive(Clone, Debug)]
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub struct UseDef {
    /// Variables read before any write in the block.
    pub uses: BitSet,
    /// Variables written in the block.
    pub defs: BitSet,
}

impl UseDef {
    /// Empty sets over `0..width`.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn new(width: usize) -> UseDef {
        UseDef {
            uses: BitSet::new(width),
            defs: BitSet::new(width),
        }
    }
    /// Record a read of `x`: upward exposed unless written earlier.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn read(&mut self, x: usize) {
        if !self.defs.contains(x) {
            self.uses.insert(x);
        }
    }
    /// Record a write of `x`.
    #[cfg_attr(not(test), allow(dead_code))] // used by tests only
    pub fn write(&mut self, x: usize) {
        self.defs.insert(x);
    }
}

/// The blocks of a program by label: [`crate::Program::block_index`]
/// (the first block with the label) by hashing instead of comparing with
/// every label.
pub struct BlockIndex<'p>(rustc_hash::FxHashMap<&'p str, usize>);

impl<'p> BlockIndex<'p> {
    /// The index of `p`'s labels.
    pub fn new(p: &'p crate::Program) -> BlockIndex<'p> {
        let mut m = rustc_hash::FxHashMap::default();
        m.reserve(p.blocks.len());
        for (i, b) in p.blocks.iter().enumerate() {
            m.entry(b.label.as_str()).or_insert(i);
        }
        BlockIndex(m)
    }
    /// The first block labelled `label`, if any.
    pub fn get(&self, label: &str) -> Option<usize> {
        self.0.get(label).copied()
    }
}

/// The successor labels of a terminator in [`crate::Terminator::successors`]
/// order, without collecting them.
pub fn successor_labels(t: &crate::Terminator) -> impl Iterator<Item = &str> {
    let (a, b) = match &t.kind {
        crate::TermKind::Jmp(l) => (Some(l.as_str()), None),
        crate::TermKind::Brnz { nonzero, zero, .. } => {
            (Some(nonzero.as_str()), Some(zero.as_str()))
        }
        crate::TermKind::End => (None, None),
    };
    a.into_iter().chain(b)
}

/// Each block's successors as block indices (the first block with each
/// label [`successor_labels`] names, in that order; a label naming no block
/// is left out), resolved once per program so that fixpoints over its CFG
/// hash no label.
#[derive(Clone, Debug, Default)]
pub struct Successors {
    /// Per block: up to two successors and how many there are.
    of: Vec<([usize; 2], u8)>,
}

impl Successors {
    /// The successors of every block of `p`.
    pub fn new(p: &crate::Program) -> Successors {
        let labels = BlockIndex::new(p);
        let mut of = Vec::with_capacity(p.blocks.len());
        for b in &p.blocks {
            // A plain match, not `successor_labels`: no iterator chain per
            // block.
            let mut s = ([0usize; 2], 0u8);
            let mut add = |l: &str| {
                if let (Some(t), Some(slot)) = (labels.get(l), s.0.get_mut(s.1 as usize)) {
                    *slot = t;
                    s.1 += 1;
                }
            };
            match &b.term.kind {
                crate::TermKind::Jmp(l) => add(l),
                crate::TermKind::Brnz { nonzero, zero, .. } => {
                    add(nonzero);
                    add(zero);
                }
                crate::TermKind::End => {}
            }
            of.push(s);
        }
        Successors { of }
    }
    /// The table of the given successor lists, block by block (the first
    /// two of each list).
    pub fn from_lists<'a>(lists: impl ExactSizeIterator<Item = &'a [usize]>) -> Successors {
        let mut of = Vec::with_capacity(lists.len());
        of.extend(lists.map(|l| pair(l.iter().copied())));
        Successors { of }
    }
    /// How many blocks there are.
    pub fn len(&self) -> usize {
        self.of.len()
    }
    /// The successors of block `b` (empty for an unknown block).
    pub fn of(&self, b: usize) -> &[usize] {
        self.of.get(b).map_or(&[][..], |(s, n)| s.get(..*n as usize).unwrap_or(&[]))
    }
}

/// The first two of `succs` and how many there are.
fn pair(succs: impl Iterator<Item = usize>) -> ([usize; 2], u8) {
    let mut s = ([0usize; 2], 0u8);
    for t in succs {
        if let Some(slot) = s.0.get_mut(s.1 as usize) {
            *slot = t;
            s.1 += 1;
        }
    }
    s
}

/// One set of variables `0..width` per block, as one flat array of words
/// (block `b`'s words at `b * w..`, `w = width / 64` rounded up): the form
/// the liveness fixpoint works on, filled and read without a [`BitSet`] per
/// block.
#[derive(Clone, Debug)]
pub struct BlockSets {
    /// Words per block.
    w: usize,
    /// Every block's words.
    words: Vec<u64>,
}

impl BlockSets {
    /// `nb` empty sets over `0..width`.
    pub fn new(nb: usize, width: usize) -> BlockSets {
        let w = width.div_ceil(64);
        BlockSets {
            w,
            words: vec![0; nb * w],
        }
    }
    /// Add `x` to block `b`'s set (ignored when out of range).
    pub fn insert(&mut self, b: usize, x: usize) {
        if x / 64 < self.w {
            if let Some(word) = self.words.get_mut(b * self.w + x / 64) {
                *word |= 1 << (x % 64);
            }
        }
    }
    /// Whether `x` is in block `b`'s set.
    pub fn contains(&self, b: usize, x: usize) -> bool {
        x / 64 < self.w
            && self
                .words
                .get(b * self.w + x / 64)
                .is_some_and(|w| w & (1 << (x % 64)) != 0)
    }
    /// Block `b`'s set as words ([`BitSet::words`] layout; empty for an
    /// unknown block).
    pub fn block(&self, b: usize) -> &[u64] {
        self.words.get(b * self.w..(b + 1) * self.w).unwrap_or(&[])
    }
}

/// The variables live out of each block (the least solution of `in = use ∪
/// (out − def)`, `out = ∪ in(succ)`) over the CFG `succs`, given each
/// block's upward-exposed reads `uses` and writes `defs` (sets of the same
/// width, one per block of `succs`).
pub fn live_out_of(succs: &Successors, uses: BlockSets, defs: &BlockSets) -> BlockSets {
    let w = uses.w;
    let kill = if defs.w == w { &defs.words[..] } else { &[] };
    let nb = succs.len().min(uses.words.len().min(kill.len()) / w.max(1));
    let (_, out) = solve_flat((w, nb), uses.words, kill, |b| succs.of(b));
    BlockSets { w, words: out }
}

/// The variables live out of each block of `p` (the least solution of
/// `in = use ∪ (out − def)`, `out = ∪ in(succ)`), given each block's
/// [`UseDef`] (`ud[b]` for block `b`; a missing entry reads as empty);
/// sets over `0..width`. [`live_out_of`] without the per-block sets.
#[cfg_attr(not(test), allow(dead_code))] // used by tests only
pub fn program_live_out(p: &crate::Program, ud: &[UseDef], width: usize) -> Vec<BitSet> {
    let nb = p.blocks.len();
    let (mut uses, mut defs) = (BlockSets::new(nb, width), BlockSets::new(nb, width));
    for (b, u) in ud.iter().enumerate().take(nb) {
        u.uses.iter().for_each(|x| uses.insert(b, x));
        u.defs.iter().for_each(|x| defs.insert(b, x));
    }
    let out = live_out_of(&Successors::new(p), uses, &defs);
    (0..nb).map(|b| BitSet::from_words(width, out.block(b))).collect()
}

/// The blocks reachable from block 0 of a graph of `n` blocks in reverse
/// postorder of a depth-first walk that takes each block's successors
/// (`succs(b)`) in order; successors `>= n` are ignored. The walk keeps its
/// own stack, so no graph can overflow the thread's.
pub fn reverse_postorder<'s>(n: usize, succs: impl Fn(usize) -> &'s [usize]) -> Vec<usize> {
    let mut post = postorder(n, [0], succs);
    post.reverse();
    post
}

/// The nodes reachable from `roots` (taken in order, each one not yet
/// reached starting a new walk) of a graph of `n` nodes, in postorder of a
/// depth-first walk that takes each node's successors (`succs(v)`) in
/// order: every node after the successors it reached first. Roots and
/// successors `>= n` are ignored; the walk keeps its own stack.
pub fn postorder<'s>(n: usize, roots: impl IntoIterator<Item = usize>, succs: impl Fn(usize) -> &'s [usize]) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for r in roots {
        if r >= n || seen[r] {
            continue;
        }
        seen[r] = true;
        stack.push((r, 0));
        while let Some((b, k)) = stack.pop() {
            match succs(b).get(k).copied() {
                Some(s) => {
                    stack.push((b, k + 1));
                    if s < n && !seen[s] {
                        seen[s] = true;
                        stack.push((s, 0));
                    }
                }
                None => post.push(b),
            }
        }
    }
    post
}

/// The predecessors of each block, in edge order: block by block, each
/// block's successors in order, so a block that reaches another by two
/// edges is listed twice, one after the other. Stored as runs of one flat
/// list rather than a `Vec` per block.
#[derive(Clone, Debug, Default)]
pub struct Predecessors {
    /// Block `b`'s predecessors are `list[ends[b - 1]..ends[b]]`.
    ends: Vec<usize>,
    list: Vec<usize>,
}

impl Predecessors {
    /// The predecessors of each of `n` blocks whose successors are
    /// `succs(b)` (successors `>= n` ignored).
    pub fn new<'s>(n: usize, succs: impl Fn(usize) -> &'s [usize]) -> Predecessors {
        let edges = || (0..n).flat_map(|b| succs(b).iter().map(move |&s| (b, s))).filter(|&(_, s)| s < n);
        let mut ends = vec![0; n];
        for (_, s) in edges() {
            ends[s] += 1;
        }
        // `ends` becomes each run's end, `next` its start, then the next
        // free place in it.
        let (mut next, mut total) = (Vec::with_capacity(n), 0);
        for e in ends.iter_mut() {
            next.push(total);
            total += *e;
            *e = total;
        }
        let mut list = vec![0; total];
        for (b, s) in edges() {
            list[next[s]] = b;
            next[s] += 1;
        }
        Predecessors { ends, list }
    }
    /// The predecessors of block `b` (empty past the last block).
    pub fn of(&self, b: usize) -> &[usize] {
        let start = b.checked_sub(1).and_then(|i| self.ends.get(i)).copied().unwrap_or(0);
        let end = self.ends.get(b).copied().unwrap_or(start);
        self.list.get(start..end).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_postorder_puts_a_block_before_its_successors_and_skips_the_unreachable() {
        // 0 -> 1 -> 3, 0 -> 2 -> 3, 3 -> 1 (a back edge), 4 unreachable, 9 out of range.
        let succs: Vec<Vec<usize>> = vec![vec![1, 2], vec![3], vec![3, 9], vec![1], vec![0]];
        let order = reverse_postorder(succs.len(), |b| succs[b].as_slice());
        assert_eq!(order, [0, 2, 1, 3]);
        assert!(reverse_postorder(0, |_| &[]).is_empty());
    }

    #[test]
    fn postorder_walks_each_root_not_yet_reached() {
        // 0 -> 1, 2 -> 1, 3 -> 0; roots 2, 0, 3, then 7 (out of range).
        let succs: Vec<Vec<usize>> = vec![vec![1], vec![], vec![1], vec![0]];
        let order = postorder(succs.len(), [2, 0, 3, 7], |v| succs[v].as_slice());
        assert_eq!(order, [1, 2, 0, 3]);
    }

    #[test]
    fn predecessors_come_in_edge_order_with_every_edge() {
        let succs: Vec<Vec<usize>> = vec![vec![1, 1], vec![2, 7], vec![0], vec![2]];
        let preds = Predecessors::new(succs.len(), |b| succs[b].as_slice());
        let got: Vec<&[usize]> = (0..5).map(|b| preds.of(b)).collect();
        assert_eq!(got, [&[2][..], &[0, 0], &[1, 3], &[], &[]]);
        let succs: Vec<Vec<usize>> = vec![vec![1, 2], vec![3, 9], vec![3, 1], vec![0, 3]];
        let preds = Predecessors::new(4, |b| succs[b].as_slice());
        let got: Vec<Vec<usize>> = (0..5).map(|b| preds.of(b).to_vec()).collect();
        assert_eq!(got, vec![vec![3], vec![0, 2], vec![0], vec![1, 2, 3], vec![]]);
    }
}
