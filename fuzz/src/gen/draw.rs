//! The generator's byte cursor: takes bytes and gives values exactly as
//! `arbitrary::Unstructured` (arbitrary 1.x) does for the calls the
//! generator makes, without a cross-crate call per draw.
//!
//! What it replicates:
//! - `int_in_range(start..=end)` takes bytes from the front, one at a time,
//!   while fewer than `size_of::<T>()` are taken and `delta = end - start`
//!   still has bits above the ones taken (so `0..=99` takes one byte and
//!   `0..=299usize` two), stopping early when the bytes run out; it folds
//!   them big-endian into an integer and returns `start + int % (delta +
//!   1)` in `T`'s unsigned representation (no modulo when `delta` is the
//!   type's maximum). A one-value range takes nothing.
//! - `arbitrary::<u8 | u32 | i32>()` fills the integer's bytes from the
//!   front, zero-padded when the bytes run out, little-endian; a `bool` is
//!   a `u8`'s lowest bit.
//!
//! The tests check every draw against `Unstructured` on the ranges the
//! generator uses, with and without enough bytes.

/// The rest of the generator's input.
pub struct Cursor<'d> {
    data: &'d [u8],
}

impl<'d> Cursor<'d> {
    /// A cursor over `data`.
    pub fn new(data: &'d [u8]) -> Cursor<'d> {
        Cursor { data }
    }

    /// How many bytes are left.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether no bytes are left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn next_byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    /// `int_in_range(start..=end)` for an integer of `size` bytes, given
    /// and returned in its unsigned representation.
    fn range_bits(&mut self, start: u64, end: u64, size: u32) -> u64 {
        if start == end {
            return start;
        }
        let mask = if size >= 8 { u64::MAX } else { (1u64 << (8 * size)) - 1 };
        let delta = end.wrapping_sub(start) & mask;
        let (mut int, mut taken) = (0u64, 0u32);
        while taken < size && (delta >> (8 * taken)) > 0 {
            let Some(b) = self.next_byte() else { break };
            taken += 1;
            int = ((int << 8) | u64::from(b)) & mask;
        }
        let offset = if delta == mask { int } else { int % (delta + 1) };
        start.wrapping_add(offset) & mask
    }

    /// `int_in_range(0..=99u32)`: a percentile roll.
    pub fn percent(&mut self) -> u32 {
        self.next_byte().map_or(0, |b| u32::from(b) % 100)
    }

    /// `int_in_range(0..=n - 1)` as `usize` (`n >= 1`): an index below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        match n {
            0 | 1 => 0,
            // `delta < 256`: one byte, or none when none is left.
            2..=256 => self.next_byte().map_or(0, |b| usize::from(b) % n),
            _ => self.range_bits(0, n.saturating_sub(1) as u64, usize::BITS / 8) as usize,
        }
    }

    /// `int_in_range(start..=end)` for `i64`.
    pub fn i64_in(&mut self, start: i64, end: i64) -> i64 {
        self.range_bits(start as u64, end as u64, 8) as i64
    }

    /// `int_in_range(start..=end)` for `i32`.
    pub fn i32_in(&mut self, start: i32, end: i32) -> i32 {
        self.range_bits(u64::from(start as u32), u64::from(end as u32), 4) as u32 as i32
    }

    /// `int_in_range(start..=end)` for `u32`.
    pub fn u32_in(&mut self, start: u32, end: u32) -> u32 {
        self.range_bits(u64::from(start), u64::from(end), 4) as u32
    }

    /// `int_in_range(start..=end)` for `u8`.
    pub fn u8_in(&mut self, start: u8, end: u8) -> u8 {
        self.range_bits(u64::from(start), u64::from(end), 1) as u8
    }

    /// The next `N` bytes, zero-padded when fewer are left.
    fn fill<const N: usize>(&mut self) -> [u8; N] {
        let mut buf = [0u8; N];
        let n = N.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        if let Some(b) = buf.get_mut(..n) {
            b.copy_from_slice(head);
        }
        self.data = rest;
        buf
    }

    /// `arbitrary::<bool>()`.
    pub fn bool(&mut self) -> bool {
        self.fill::<1>()[0] & 1 == 1
    }

    /// `arbitrary::<u32>()`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.fill::<4>())
    }

    /// `arbitrary::<i32>()`.
    pub fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.fill::<4>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::Unstructured;

    /// Run `ours` and `theirs` in turn on the same bytes until both have
    /// taken everything, checking each value and how much is left.
    fn agree<T: PartialEq + std::fmt::Debug>(data: &[u8], ours: impl Fn(&mut Cursor) -> T, theirs: impl Fn(&mut Unstructured) -> T) {
        let (mut c, mut u) = (Cursor::new(data), Unstructured::new(data));
        for _ in 0..data.len() + 3 {
            assert_eq!(ours(&mut c), theirs(&mut u));
            assert_eq!(c.len(), u.len());
            assert_eq!(c.is_empty(), u.is_empty());
        }
    }

    #[test]
    fn draws_match_unstructured() {
        let data = crate::gen::seed_bytes(17, 300);
        for cut in [0, 1, 2, 3, 5, 64, 300] {
            let d = &data[..cut];
            for n in [1usize, 2, 3, 7, 12, 100, 255, 256, 257, 1000, 65_536, 70_000, 1 << 24, usize::MAX] {
                agree(d, |c| c.below(n), |u| u.int_in_range(0..=n - 1).expect("range"));
            }
            agree(d, |c| c.percent(), |u| u.int_in_range(0..=99u32).expect("range"));
            for (a, b) in [(-16i64, 15i64), (0, 3), (0, 7), (5, 5), (i64::MIN, i64::MAX)] {
                agree(d, |c| c.i64_in(a, b), |u| u.int_in_range(a..=b).expect("range"));
            }
            for (a, b) in [(-9i32, 7i32), (i32::MIN, i32::MAX)] {
                agree(d, |c| c.i32_in(a, b), |u| u.int_in_range(a..=b).expect("range"));
            }
            for (a, b) in [(1u32, 4u32), (1, 2), (0, u32::MAX)] {
                agree(d, |c| c.u32_in(a, b), |u| u.int_in_range(a..=b).expect("range"));
            }
            for (a, b) in [(1u8, 2u8), (1, 4), (1, 1), (0, 255)] {
                agree(d, |c| c.u8_in(a, b), |u| u.int_in_range(a..=b).expect("range"));
            }
            agree(d, |c| c.bool(), |u| u.arbitrary::<bool>().expect("bool"));
            agree(d, |c| c.u32(), |u| u.arbitrary::<u32>().expect("u32"));
            agree(d, |c| c.i32(), |u| u.arbitrary::<i32>().expect("i32"));
        }
    }
}
