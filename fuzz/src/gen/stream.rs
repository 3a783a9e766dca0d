//! A seed's byte stream ([`super::seed_bytes`]: SplitMix64), made only as
//! far as it is read.
//!
//! A fuzz case reads its bytes through `arbitrary::Unstructured` from a
//! stream of [`SeedStream::max`] bytes, but a ~50-instruction program reads
//! only a few hundred of them. [`SeedStream::draw`] runs a reader on a
//! prefix of the rest of the stream; if the reader ends with its
//! `Unstructured` empty it may have run short, so the stream is made in
//! full and the reader run again.
//!
//! Why that gives exactly what the full stream gives: every `Unstructured`
//! method the readers use (`int_in_range`, `arbitrary` of integers and
//! bools, `choose_index`, `is_empty`) takes bytes from the front only and
//! depends only on the bytes it takes and on whether any are left. A reader
//! that ends with bytes left never ran short, so it took the same bytes and
//! saw `is_empty() == false` at the same points as on the full stream.
//! (Readers must not use methods that look at the remaining length or take
//! from the back, such as `arbitrary_len` or `Vec<T>::arbitrary`.)
//!
//! Invariant: the bytes made so far are always a prefix of
//! `seed_bytes(seed, max)`, and the position only moves forward over bytes
//! a reader took.

use arbitrary::Unstructured;

/// SplitMix64's increment.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Word `i` (0-based) of the SplitMix64 stream of `seed`.
pub(super) fn word(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(GAMMA.wrapping_mul(i.wrapping_add(1)));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Append the stream of `seed` to `out` (which holds its first
/// `out.len()` bytes, a multiple of 8) until it holds `len` bytes; nothing
/// when it already holds that many.
pub(super) fn extend(seed: u64, out: &mut Vec<u8>, len: usize) {
    if out.len() >= len {
        return;
    }
    out.reserve(len - out.len() + 8);
    let mut i = (out.len() / 8) as u64;
    while out.len() < len {
        out.extend_from_slice(&word(seed, i).to_le_bytes());
        i += 1;
    }
    out.truncate(len);
}

/// The byte stream of one seed, made lazily; see the module docs.
pub struct SeedStream {
    seed: u64,
    max: usize,
    /// The bytes made so far: a prefix of the stream, whole words unless
    /// it is all `max` bytes.
    data: Vec<u8>,
    /// How many bytes readers have taken.
    pos: usize,
}

impl SeedStream {
    /// The stream of `seed`, `max` bytes long (none made yet).
    pub fn new(seed: u64, max: usize) -> SeedStream {
        SeedStream { seed, max, data: Vec::new(), pos: 0 }
    }

    /// The stream's full length.
    pub fn max(&self) -> usize {
        self.max
    }

    /// How many bytes readers have taken so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Run `read` on the stream from the current position, as if on the
    /// whole rest of it, and move the position past what it took. `hint`
    /// is how many bytes `read` is expected to take at most (only a cost:
    /// a reader that runs short is run again on the full stream, so `read`
    /// must be a pure function of its bytes).
    pub fn draw<T>(&mut self, hint: usize, mut read: impl FnMut(&mut Unstructured) -> T) -> T {
        let mut want = self.pos.saturating_add(hint).min(self.max);
        loop {
            self.make(want);
            let rest = self.data.get(self.pos..).unwrap_or(&[]);
            let mut u = Unstructured::new(rest);
            let out = read(&mut u);
            let (left, total) = (u.len(), rest.len());
            if left > 0 || self.data.len() >= self.max {
                self.pos += total - left;
                return out;
            }
            want = self.max;
        }
    }

    /// Make the first `len` bytes (rounded up to whole words, at most
    /// `max`).
    fn make(&mut self, len: usize) {
        if self.data.len() >= len {
            return;
        }
        let words = len.div_ceil(8).saturating_mul(8).min(self.max);
        extend(self.seed, &mut self.data, words);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::seed_bytes;

    /// Read `n` single bytes, then whether the stream was empty.
    fn take(u: &mut Unstructured, n: usize) -> (Vec<u8>, bool) {
        let bytes = (0..n).map(|_| u.arbitrary::<u8>().unwrap_or(0)).collect();
        (bytes, u.is_empty())
    }

    #[test]
    fn draws_see_the_full_stream() {
        let full = seed_bytes(9, 1000);
        let mut s = SeedStream::new(9, 1000);
        // A hint far too small: the reader runs short and is run again.
        let (a, empty) = s.draw(3, |u| take(u, 20));
        assert_eq!((&a[..], empty), (&full[..20], false));
        let (b, _) = s.draw(100, |u| take(u, 50));
        assert_eq!(&b[..], &full[20..70]);
        assert_eq!(s.position(), 70);
        // Reading past the end behaves as on the full stream.
        let (c, empty) = s.draw(8, |u| take(u, 2000));
        let mut u = Unstructured::new(&full[70..]);
        assert_eq!((c, empty), take(&mut u, 2000));
        assert_eq!(s.position(), 1000);
    }

    #[test]
    fn odd_lengths_match_seed_bytes() {
        for len in [0, 1, 7, 8, 9, 100, 1001] {
            let mut out = Vec::new();
            extend(4, &mut out, len);
            assert_eq!(out, seed_bytes(4, len), "{len}");
        }
    }
}
