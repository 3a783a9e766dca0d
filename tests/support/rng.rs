//! The tests' deterministic random numbers: xorshift64 (Marsaglia), shared
//! by the test files of the root crate (`#[path = "support/rng.rs"] mod
//! rng;`) and of `schedra-verify` (`#[path =
//! "../../tests/support/rng.rs"]`), so that a seed means the same stream
//! everywhere and no test file carries its own copy.
//!
//! Invariant: the state is never 0 (xorshift's fixed point), whatever the
//! seed: [`Rng::new`] maps 0 to 1.
#![allow(dead_code)] // each test crate uses a different subset

/// A xorshift64 generator.
pub struct Rng(u64);

impl Rng {
    /// The generator started from `seed` (0 is replaced by 1).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 1 } else { seed })
    }
    /// The next 64-bit word.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// An element of `v`; `v` must not be empty.
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

/// `n` bytes from the generator seeded with `seed | 1`: bits 24..32 of each
/// word.
pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng::new(seed | 1);
    (0..n).map(|_| (r.next() >> 24) as u8).collect()
}
