//! The generator's two most frequent draws, taking exactly the bytes and
//! giving exactly the values `arbitrary::Unstructured::int_in_range` does
//! (arbitrary 1.x), without its generic machinery.
//!
//! `int_in_range(start..=end)` takes bytes from the front, one at a time,
//! while fewer than `size_of::<T>()` are taken and `delta = end - start`
//! still has bits above the ones taken (so `0..=99` takes one byte and
//! `0..=299usize` two), stopping early when the bytes run out; it folds
//! them big-endian into an integer and returns `start + int % (delta + 1)`
//! (no modulo when `delta` is the type's maximum). A one-value range takes
//! nothing. The tests check both draws against `int_in_range` on every
//! range they use, with and without enough bytes.

use arbitrary::Unstructured;

/// The next byte, taken, or `None` when there is none.
fn next_byte(u: &mut Unstructured) -> Option<u8> {
    // `bytes` takes nothing when it fails.
    u.bytes(1).ok().and_then(|b| b.first().copied())
}

/// `u.int_in_range(0..=99u32)`: a percentile roll.
pub fn percent(u: &mut Unstructured) -> u32 {
    next_byte(u).map_or(0, |b| u32::from(b) % 100)
}

/// `u.int_in_range(0..=n - 1)` for `n >= 1` (as `usize`): an index below
/// `n`.
pub fn below(u: &mut Unstructured, n: usize) -> usize {
    let delta = n.saturating_sub(1);
    let mut int = 0usize;
    let mut taken = 0;
    while taken < std::mem::size_of::<usize>() && (delta >> (8 * taken)) > 0 {
        let Some(b) = next_byte(u) else { break };
        int = (int << 8) | usize::from(b);
        taken += 1;
    }
    if delta == usize::MAX {
        int
    } else {
        int % (delta + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_match_int_in_range() {
        let data = crate::gen::seed_bytes(17, 4096);
        for cut in [0, 1, 2, 3, 5, 64, 4096] {
            for n in [1usize, 2, 3, 7, 12, 100, 255, 256, 257, 1000, 65_535, 65_536, 70_000, 1 << 24, (1 << 24) + 3, usize::MAX] {
                let (mut a, mut b) = (Unstructured::new(&data[..cut]), Unstructured::new(&data[..cut]));
                for _ in 0..40 {
                    assert_eq!(below(&mut a, n), b.int_in_range(0..=n - 1).expect("in range"), "n {n} cut {cut}");
                    assert_eq!(a.len(), b.len());
                    assert_eq!(percent(&mut a), b.int_in_range(0..=99u32).expect("in range"));
                    assert_eq!(a.len(), b.len());
                }
            }
        }
    }
}
