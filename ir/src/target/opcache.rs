//! Opcode look-ups remembered within one decoding of a program.
//!
//! The verifier's decoders and the fuzzers' interpreters each look every
//! op's name up in the target's table ([`Target::op`]) and must not take
//! the compiler's answers; this cache makes the repeats cheap without
//! changing an answer.

use super::{OpDesc, Target};
use std::marker::PhantomData;

/// How many opcode look-ups an [`OpCache`] remembers (a power of two).
const OP_CACHE: usize = 32;

/// A decoder's opcode look-ups, remembered by where the name's text lives.
/// Programs spell opcodes with `SmolStr::new_static` of the target's own
/// names, so a program repeats a handful of name addresses and each
/// distinct one is looked up in the target's table about once; names
/// elsewhere (parsed text, inline strings) are looked up as usual. Every
/// name it is asked about outlives it (`'p`: the borrowed program), so no
/// text is freed and another put in its place while it lives: the same
/// address and length are the same text, and [`OpCache::op`] answers
/// exactly what [`Target::op`] does.
pub struct OpCache<'p> {
    target: &'static Target,
    names: PhantomData<&'p str>,
    /// Direct-mapped by address: (address, length, answer); address 0 is
    /// an empty slot (a `&str` never points there).
    slots: [(usize, usize, Option<&'static OpDesc>); OP_CACHE],
}

impl<'p> OpCache<'p> {
    /// An empty cache for `target`.
    pub fn new(target: &'static Target) -> OpCache<'p> {
        OpCache { target, names: PhantomData, slots: [(0, 0, None); OP_CACHE] }
    }

    /// The description of the opcode `name` ([`Target::op`]).
    #[inline]
    pub fn op(&mut self, name: &'p str) -> Option<&'static OpDesc> {
        let (addr, len) = (name.as_ptr() as usize, name.len());
        let i = (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59) & (OP_CACHE - 1);
        match self.slots.get_mut(i) {
            Some(&mut (a, l, desc)) if a == addr && l == len => desc,
            Some(slot) => {
                let desc = self.target.op(name);
                *slot = (addr, len, desc);
                desc
            }
            None => self.target.op(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OpCache;

    #[test]
    fn answers_as_the_target_does() {
        let t = crate::target::by_name("v3d71").expect("v3d71");
        let mut c = OpCache::new(t);
        let names: Vec<&str> = t.ops.iter().map(|d| d.name).collect();
        // The same texts elsewhere, alive as long as the cache (as a
        // borrowed program's names are).
        let copies: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        for _ in 0..2 {
            for (n, copy) in names.iter().zip(&copies) {
                assert_eq!(c.op(n).map(|d| d.name), t.op(n).map(|d| d.name));
                assert_eq!(c.op(copy).map(|d| d.name), Some(*n));
                // A prefix at the same address.
                assert_eq!(c.op(&n[..n.len() - 1]).map(|d| d.name), t.op(&n[..n.len() - 1]).map(|d| d.name));
            }
        }
        assert!(c.op("no-such-op").is_none());
    }
}
