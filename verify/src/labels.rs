//! Block labels to block indices, built once per program.
//!
//! `Program::block_index` scans the blocks comparing labels; the verifier
//! asks for every edge and every block of both programs, which made label
//! comparisons quadratic in the number of blocks. [`Labels`] answers the
//! same question (the *first* block with a label) from a hash map, and
//! first from a guess: the two programs list the same blocks in the same
//! order and an edge usually leads to the next block, so a caller that can
//! guess the index has its answer from one comparison of short names
//! (valid when no two blocks share a label) instead of a hash look-up.

use crate::ids::same_name;
use rustc_hash::FxHashMap;
use schedra_ir::Program;

/// The index of the first block with each label of a program.
pub struct Labels<'p> {
    first: FxHashMap<&'p str, usize>,
    /// Every block's label, in block order.
    names: Vec<&'p str>,
    /// Whether no two blocks share a label (then each block is the first
    /// with its label).
    distinct: bool,
}

impl<'p> Labels<'p> {
    /// The labels of `p`'s blocks.
    pub fn of(p: &'p Program) -> Labels<'p> {
        let mut first = FxHashMap::with_capacity_and_hasher(p.blocks.len(), Default::default());
        let mut names = Vec::with_capacity(p.blocks.len());
        for (i, b) in p.blocks.iter().enumerate() {
            first.entry(b.label.as_str()).or_insert(i);
            names.push(b.label.as_str());
        }
        Labels { distinct: first.len() == names.len(), first, names }
    }

    /// The index of the first block labelled `label` (as
    /// `Program::block_index`).
    pub fn index(&self, label: &str) -> Option<usize> {
        self.first.get(label).copied()
    }

    /// [`Labels::index`], trying block `guess` first.
    pub fn index_near(&self, label: &str, guess: usize) -> Option<usize> {
        match self.names.get(guess) {
            Some(n) if self.distinct && same_name(n.as_bytes(), label.as_bytes()) => Some(guess),
            _ => self.index(label),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_give_the_same_index_as_the_map() {
        for text in ["target v3d71\nb0:\n    jmp b2\nb1:\n    end\nb2:\n    brnz 1, b1, b0\n", "target v3d71\nb0:\n    jmp b1\nb1:\n    jmp b1\nb1:\n    end\n"] {
            let p = schedra_ir::parse::parse(text.as_bytes(), None).expect("parses");
            let l = Labels::of(&p);
            for label in ["b0", "b1", "b2", "b3", ""] {
                for guess in 0..5 {
                    assert_eq!(l.index_near(label, guess), l.index(label), "{label} {guess}");
                }
            }
            for b in &p.blocks {
                assert_eq!(schedra_ir::cfg::successor_labels(&b.term).collect::<Vec<_>>(), b.term.successors());
            }
        }
    }
}
