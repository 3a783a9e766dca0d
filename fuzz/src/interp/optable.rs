//! Opcode name → description, per target: what `Target::op` finds, through
//! a small hash table built once per target and process.
//!
//! Algorithm: 256 buckets keyed by the name's length and three of its
//! bytes (first, middle, last); each bucket lists `(name, description)` in
//! table order and a lookup takes the first entry whose name is equal, so a
//! name the table spells twice finds its first row, as `Target::op` does.
//! Opcode names are short, so hashing three bytes and comparing the few
//! candidates byte by byte is cheaper than hashing the whole string.

use schedra_ir::target::OpDesc;
use schedra_ir::Target;

/// How many buckets a table has (a power of two).
const BUCKETS: usize = 256;

/// One target's opcodes by name.
struct Table {
    buckets: Vec<Vec<(&'static [u8], &'static OpDesc)>>,
}

/// The bucket of `name`.
fn bucket(name: &[u8]) -> usize {
    let n = name.len();
    let (first, mid, last) = (name.first(), name.get(n / 2), name.last());
    let byte = |b: Option<&u8>| b.copied().unwrap_or(0) as usize;
    (n.wrapping_mul(0x9e) ^ byte(first) ^ (byte(mid) << 2) ^ (byte(last) << 4).wrapping_add(byte(last) >> 3)) % BUCKETS
}

impl Table {
    fn of(t: &'static Target) -> Table {
        let mut buckets = vec![Vec::new(); BUCKETS];
        for o in t.ops {
            if let Some(b) = buckets.get_mut(bucket(o.name.as_bytes())) {
                b.push((o.name.as_bytes(), o));
            }
        }
        Table { buckets }
    }

    fn get(&self, name: &[u8]) -> Option<&'static OpDesc> {
        let b = self.buckets.get(bucket(name))?;
        b.iter().find(|(n, _)| n.len() == name.len() && n.iter().zip(name).all(|(x, y)| x == y)).map(|&(_, o)| o)
    }
}

/// The description of `opcode` on `t`: exactly `t.op(opcode)`.
pub(crate) fn op_desc(t: &'static Target, opcode: &str) -> Option<&'static OpDesc> {
    static TABLES: std::sync::OnceLock<Vec<Table>> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| schedra_ir::target::all().iter().map(|t| Table::of(t)).collect());
    match schedra_ir::target::all().iter().position(|x| std::ptr::eq(*x, t)).and_then(|i| tables.get(i)) {
        Some(table) => table.get(opcode.as_bytes()),
        None => t.op(opcode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_target_op_finds() {
        for t in schedra_ir::target::all() {
            let names = t.ops.iter().map(|o| o.name.to_string());
            let others = ["", "x", "fadd.", "tlbw2", "mov ", "addd", "send.tex.eot.x"].map(String::from);
            for name in names.chain(others) {
                assert!(match (op_desc(t, &name), t.op(&name)) {
                    (Some(a), Some(b)) => std::ptr::eq(a, b),
                    (a, b) => a.is_none() && b.is_none(),
                }, "{}: {name}", t.name);
            }
        }
    }
}
