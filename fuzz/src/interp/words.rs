//! The words of one value (a register run, an immediate, a result) without
//! a heap allocation in the common case.
//!
//! Values in the three targets are at most 4 registers wide, so [`Words`]
//! keeps up to [`INLINE`] words inline and only moves to a `Vec` for wider
//! values (which only malformed programs make). The interpreters build,
//! copy and drop one of these per operand and result of every executed op,
//! which is why they must not allocate.
//!
//! Invariant: the two representations are interchangeable: equality,
//! `Deref` and iteration see only the sequence of words.

use std::ops::Deref;

/// How many words are kept without allocating.
pub const INLINE: usize = 4;

/// A short sequence of 32-bit words.
#[derive(Clone, Debug)]
pub enum Words {
    /// Up to [`INLINE`] words: the first `len` of `w`.
    Inline {
        /// How many words are used.
        len: u8,
        /// The words (the tail past `len` is unused).
        w: [u32; INLINE],
    },
    /// More than [`INLINE`] words.
    Heap(Vec<u32>),
}

impl Words {
    /// No words.
    pub const fn new() -> Words {
        Words::Inline { len: 0, w: [0; INLINE] }
    }

    /// One word.
    pub const fn one(word: u32) -> Words {
        Words::Inline { len: 1, w: [word, 0, 0, 0] }
    }

    /// `len` words, word i being `f(i)` (inline when `len <= INLINE`).
    pub fn from_fn(len: usize, mut f: impl FnMut(u32) -> u32) -> Words {
        if len <= INLINE {
            let mut w = [0u32; INLINE];
            for (i, x) in w.iter_mut().enumerate().take(len) {
                *x = f(i as u32);
            }
            Words::Inline { len: len as u8, w }
        } else {
            Words::Heap((0..len as u32).map(f).collect())
        }
    }

    /// Append `word` (moving to the heap past [`INLINE`] words).
#[inline]
    pub fn push(&mut self, word: u32) {
        match self {
            Words::Inline { len, w } if (*len as usize) < INLINE => {
                w[*len as usize] = word;
                *len += 1;
            }
            Words::Inline { len, w } => {
                let mut v = Vec::with_capacity(2 * INLINE);
                v.extend_from_slice(&w[..*len as usize]);
                v.push(word);
                *self = Words::Heap(v);
            }
            Words::Heap(v) => v.push(word),
        }
    }

    /// The words as a slice.
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Words::Inline { len, w } => w.get(..*len as usize).unwrap_or(&[]),
            Words::Heap(v) => v,
        }
    }
}

impl Default for Words {
    fn default() -> Words {
        Words::new()
    }
}

impl Deref for Words {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Words {}

impl FromIterator<u32> for Words {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Words {
        let mut out = Words::new();
        for w in iter {
            out.push(w);
        }
        out
    }
}

impl From<&[u32]> for Words {
    fn from(words: &[u32]) -> Words {
        words.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_hold_the_same_words() {
        let short: Words = (1..=3).collect();
        assert!(matches!(short, Words::Inline { len: 3, .. }));
        assert_eq!(&*short, &[1, 2, 3]);
        let long: Words = (1..=9).collect();
        assert!(matches!(long, Words::Heap(_)));
        assert_eq!(&*long, &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(Words::from(&[1u32, 2, 3][..]), short);
        assert_eq!(Words::Heap(vec![1, 2, 3]), short);
        assert_ne!(Words::one(1), short);
        assert!(Words::new().is_empty());
        assert_eq!(Words::from_fn(3, |i| i + 1), short);
        assert_eq!(Words::from_fn(9, |i| i + 1), long);
    }
}
