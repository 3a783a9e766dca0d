//! Opcode name → position in a target's opcode table, the index behind
//! [`super::Target::op`]: a small hash table built once per target and
//! process. It is on every decoder's path (validation, the compiler, the
//! verifier, the interpreters look an opcode up per instruction).
//!
//! Algorithm: a name of at most 16 bytes is packed into one `u128` (its
//! first and last 4 or 8 bytes, which for a given length determine it);
//! with its length that is its key. Keys live in an open-addressing table
//! (linear probing, at most a quarter full) and are compared as two
//! integers, which for short opcode names is much cheaper than hashing and
//! //! comparing strings. A key is inserted only if absent, so a name the
//! target's table spells twice finds its first row. Names longer than 16
//! bytes (no opcode today) are found by a scan of the table, first row
//! first. Invariant: [`Table::find`] answers exactly what the first row
//! named `name` is.

use super::OpDesc;

/// The longest name that is packed into a key.
const PACKED: usize = 16;

/// A name's key: its length and its bytes, zero-padded.
type Key = (usize, u128);

/// The key of `name`, if it is short enough to pack. Built from two
/// (possibly overlapping) fixed-size loads of the front and back of the
/// name, so no variable-length copy is needed; with the length they
/// determine the name.
fn key(name: &[u8]) -> Option<Key> {
    let n = name.len();
    let bits = match n {
        0 => 0,
        1..=3 => name.iter().enumerate().fold(0u128, |k, (i, &b)| k | u128::from(b) << (8 * i)),
        4..=8 => {
            let front = u32::from_le_bytes(name.get(..4)?.try_into().ok()?);
            let back = u32::from_le_bytes(name.get(n - 4..)?.try_into().ok()?);
            u128::from(front) | u128::from(back) << 32
        }
        9..=PACKED => {
            let front = u64::from_le_bytes(name.get(..8)?.try_into().ok()?);
            let back = u64::from_le_bytes(name.get(n - 8..)?.try_into().ok()?);
            u128::from(front) | u128::from(back) << 64
        }
        _ => return None,
    };
    Some((n, bits))
}

/// One target's opcodes by name: `slots.len()` is a power of two.
#[derive(Debug)]
pub(crate) struct Table {
    ops: &'static [OpDesc],
    slots: Vec<Option<(Key, &'static OpDesc)>>,
}

impl Table {
    /// The table of `ops` (a target's opcode table).
    pub(crate) fn of(ops: &'static [OpDesc]) -> Table {
        let size = (4 * ops.len()).next_power_of_two().max(64);
        let mut table = Table { ops, slots: vec![None; size] };
        for o in ops {
            if let Some(k) = key(o.name.as_bytes()) {
                table.insert(k, o);
            }
        }
        table
    }

    /// The first slot to probe for `k`.
    fn home(&self, k: Key) -> usize {
        let (len, bits) = k;
        let h = (bits as u64 ^ (bits >> 64) as u64 ^ len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 32) as usize & (self.slots.len() - 1)
    }

    /// Put `k` in, unless it is there already (the first row wins).
    fn insert(&mut self, k: Key, o: &'static OpDesc) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        for _ in 0..self.slots.len() {
            match self.slots.get_mut(i) {
                Some(slot @ None) => {
                    *slot = Some((k, o));
                    return;
                }
                Some(Some((x, _))) if *x == k => return,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The first row named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&'static OpDesc> {
        match key(name.as_bytes()) {
            Some(k) => self.get(k),
            None => self.ops.iter().find(|o| o.name == name),
        }
    }

    fn get(&self, k: Key) -> Option<&'static OpDesc> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        for _ in 0..self.slots.len() {
            match self.slots.get(i)? {
                None => return None,
                Some((x, o)) if *x == k => return Some(o),
                Some(_) => i = (i + 1) & mask,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_row_of_each_name() {
        for t in crate::target::all() {
            let table = Table::of(t.ops);
            let names = t.ops.iter().map(|o| o.name.to_string());
            let others = ["", "x", "fadd.", "tlbw2", "mov ", "mov\0", "addd", "send.tex.eot.x", "a-name-longer-than-sixteen"].map(String::from);
            for name in names.chain(others) {
                let first = t.ops.iter().find(|o| o.name == name);
                assert!(
                    match (table.find(&name), first) {
                        (Some(a), Some(b)) => std::ptr::eq(a, b),
                        (a, b) => a.is_none() && b.is_none(),
                    },
                    "{}: {name}",
                    t.name
                );
            }
        }
    }
}
