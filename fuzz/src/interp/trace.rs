//! The branch trace of a run: the label of every block a terminator passed
//! control to, in order (semantics.md counts the branch taken at each
//! terminator as observable behaviour).
//!
//! Keeping every label of a million-step loop would cost memory, so the
//! trace stores the first [`TRACE_LIMIT`] labels for diagnosis plus the
//! total count and an order-sensitive hash of the whole sequence.
//! Labels are shared `Arc<str>`s made once per block when a program is
//! decoded, so recording a taken branch copies no text.
//! Invariant: two traces compare equal exactly when their counts, hashes and
//! kept prefixes are equal, which (up to hash collisions) means the runs took
//! the same branches.

use super::world::mix;
use std::sync::Arc;

/// How many labels a trace keeps verbatim.
pub const TRACE_LIMIT: usize = 4096;

/// The branches a run took.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Trace {
    /// The first [`TRACE_LIMIT`] successor labels, in order.
    /// Compared, hashed and printed as the label text.
    pub labels: Vec<Arc<str>>,
    /// How many terminators passed control to a block.
    pub taken: u64,
    /// Order-sensitive hash of all successor labels.
    pub hash: u64,
}

impl Trace {
    /// An empty trace with room for `n` labels (at most [`TRACE_LIMIT`]).
    pub fn with_capacity(n: usize) -> Trace {
        Trace { labels: Vec::with_capacity(n.min(TRACE_LIMIT)), taken: 0, hash: 0 }
    }

    /// Record that control passed to the block labelled `label`.
    pub fn push(&mut self, label: &str) {
        self.push_shared(&Arc::from(label), label_hash(label));
    }

    /// [`Trace::push`] of a label shared with the decoded program, with
    /// `h` = [`label_hash`]`(label)` computed once beforehand; the same
    /// trace results.
    pub fn push_shared(&mut self, label: &Arc<str>, h: u64) {
        self.taken += 1;
        self.hash = mix(self.hash ^ h);
        if self.labels.len() < TRACE_LIMIT {
            self.labels.push(Arc::clone(label));
        }
    }
}

/// The hash of one label that [`Trace::push`] folds into the trace's hash.
pub fn label_hash(label: &str) -> u64 {
    label.bytes().fold(mix(label.len() as u64), |h, b| mix(h ^ b as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matters() {
        let (mut a, mut b) = (Trace::default(), Trace::default());
        a.push("b1");
        a.push("b2");
        b.push("b2");
        b.push("b1");
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.taken, 2);
        assert_eq!(a.labels, [Arc::from("b1"), Arc::from("b2")]);
    }
}
