//! Opcode name → description, per target: what `Target::op` finds, through
//! a small hash table built once per target and process.
//!
//! Algorithm: a name of at most 16 bytes is packed into one `u128` (its
//! first and last 4 or 8 bytes, which for a given length determine it);
//! with its length that is its key. Keys live in an open-addressing table
//! (linear probing, at most a quarter full) and are compared as two
//! integers, which for short opcode names is much cheaper than hashing and
//! comparing strings. A key is inserted only if absent, so a name the target's table spells
//! twice finds its first row, as `Target::op` does. Names longer than 16
//! bytes (none today) are looked up with `Target::op`.

use schedra_ir::target::OpDesc;
use schedra_ir::Target;

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
struct Table {
    slots: Vec<Option<(Key, &'static OpDesc)>>,
}

impl Table {
    fn of(t: &'static Target) -> Table {
        let size = (4 * t.ops.len()).next_power_of_two().max(64);
        let mut table = Table { slots: vec![None; size] };
        for o in t.ops {
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

/// The description of `opcode` on `t`: exactly `t.op(opcode)`.
pub(crate) fn op_desc(t: &'static Target, opcode: &str) -> Option<&'static OpDesc> {
    static TABLES: std::sync::OnceLock<Vec<Table>> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| schedra_ir::target::all().iter().map(|t| Table::of(t)).collect());
    let table = schedra_ir::target::all().iter().position(|x| std::ptr::eq(*x, t)).and_then(|i| tables.get(i));
    match (table, key(opcode.as_bytes())) {
        (Some(table), Some(k)) => table.get(k),
        _ => t.op(opcode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_target_op_finds() {
        for t in schedra_ir::target::all() {
            let names = t.ops.iter().map(|o| o.name.to_string());
            let others = ["", "x", "fadd.", "tlbw2", "mov ", "mov\0", "addd", "send.tex.eot.x", "a-name-longer-than-sixteen"].map(String::from);
            for name in names.chain(others) {
                assert!(
                    match (op_desc(t, &name), t.op(&name)) {
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
