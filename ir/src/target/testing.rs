//! Test-only descriptions: variants of a real target with one fact changed,
//! for tests of how the consumers implement a description (the compiler,
//! verifier and interpreter crates enable the `testing` feature in their
//! dev-dependencies). Nothing outside tests builds this module.

use super::{Clock, OpDesc, OpIndex, Sem, Target};

/// A copy of `base` named `name` in which every op called `op` has the
/// given result lifetime (the latest distance at which it may be read),
/// leaked so that it lives as long as the real targets.
pub fn with_lifetime(base: &'static Target, name: &'static str, op: &str, lifetime: u32) -> &'static Target {
    let ops: Vec<OpDesc> = base.ops.iter().map(|d| if d.name == op { OpDesc { lifetime: Some(lifetime), ..*d } } else { *d }).collect();
    variant(base, name, Box::leak(ops.into_boxed_slice()), base.clock)
}

/// A copy of `base` named `name` without the ops whose meaning is `sem`,
/// leaked: a target that describes no such operation.
pub fn without(base: &'static Target, name: &'static str, sem: Sem) -> &'static Target {
    let ops: Vec<OpDesc> = base.ops.iter().filter(|d| d.sem != sem).copied().collect();
    variant(base, name, Box::leak(ops.into_boxed_slice()), base.clock)
}

/// A copy of `base` named `name` with another clock, leaked.
pub fn with_clock(base: &'static Target, name: &'static str, clock: Clock) -> &'static Target {
    variant(base, name, base.ops, clock)
}

fn variant(base: &'static Target, name: &'static str, ops: &'static [OpDesc], clock: Clock) -> &'static Target {
    Box::leak(Box::new(Target {
        name,
        summary: base.summary,
        regs: base.regs,
        clock,
        waits: base.waits,
        slots: base.slots,
        default_stage: base.default_stage,
        ops,
        max_alu_size: base.max_alu_size,
        max_value_size: base.max_value_size,
        reserved: base.reserved,
        implicit_regs: base.implicit_regs,
        payload: base.payload,
        inputs: base.inputs,
        end: base.end,
        rules: base.rules,
        abi: base.abi,
        network: base.network,
        op_index: OpIndex::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_op_expires() {
        let t = with_lifetime(&super::super::v3d71::V3D71, "v3d71-expiring", "fmul", 1);
        assert_eq!(t.op("fmul").map(|d| d.window().max), Some(Some(1)));
        assert!(t.ops.iter().filter(|d| d.name != "fmul").all(|d| d.lifetime.is_none()));
        assert_eq!(t.ops.len(), super::super::v3d71::V3D71.ops.len());
        let w = with_clock(&super::super::v3d71::V3D71, "v3d71-waits", Clock::EncodedWaits { max: 7 });
        assert_eq!((w.clock, w.ops.len()), (Clock::EncodedWaits { max: 7 }, t.ops.len()));
        let n = without(&super::super::v3d71::V3D71, "v3d71-no-discard", Sem::Discard);
        assert_eq!(n.ops.len() + 1, t.ops.len());
        assert!(n.ops.iter().all(|d| d.sem != Sem::Discard) && n.op("fmul").is_some());
    }
}
