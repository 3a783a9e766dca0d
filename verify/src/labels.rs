//! Block labels to block indices, built once per program.
//!
//! `Program::block_index` scans the blocks comparing labels; the verifier
//! asks for every edge and every block of both programs, which made label
//! comparisons quadratic in the number of blocks. [`Labels`] answers the
//! same question (the *first* block with a label) from a hash map.

use rustc_hash::FxHashMap;
use schedra_ir::Program;

/// The index of the first block with each label of a program.
pub struct Labels<'p> {
    first: FxHashMap<&'p str, usize>,
}

impl<'p> Labels<'p> {
    /// The labels of `p`'s blocks.
    pub fn of(p: &'p Program) -> Labels<'p> {
        let mut first = FxHashMap::with_capacity_and_hasher(p.blocks.len(), Default::default());
        for (i, b) in p.blocks.iter().enumerate() {
            first.entry(b.label.as_str()).or_insert(i);
        }
        Labels { first }
    }

    /// The index of the first block labelled `label` (as
    /// `Program::block_index`).
    pub fn index(&self, label: &str) -> Option<usize> {
        self.first.get(label).copied()
    }
}
