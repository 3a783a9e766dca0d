//! Generator-feature coverage: which program features one generated case
//! actually exercised (a loop, a preallocated read, an SFU op, ...). The
//! campaign ORs the sets of all cases to show how much of the generator's
//! space a run has touched.
//!
//! Invariant: a bit is set only when the program really contains the
//! feature (the generator sets it at the point where it emits it).

/// A set of generator features, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Features(pub u32);

/// The features, their bits and names.
impl Features {
    /// An if/else diamond.
    pub const BRANCH: Features = Features(1 << 0);
    /// A counted loop.
    pub const LOOP: Features = Features(1 << 1);
    /// A branch or loop inside another.
    pub const NESTED: Features = Features(1 << 2);
    /// A write to a preallocated register.
    pub const PREALLOC_WRITE: Features = Features(1 << 3);
    /// A read of a preallocated register.
    pub const PREALLOC_READ: Features = Features(1 << 4);
    /// An `input` line.
    pub const INPUT: Features = Features(1 << 5);
    /// A write to an input register while the program runs.
    pub const INPUT_CLOBBER: Features = Features(1 << 6);
    /// A value of more than one register.
    pub const MULTI_REG: Features = Features(1 << 7);
    /// An op with an implicit destination.
    pub const IMPLICIT: Features = Features(1 << 8);
    /// An SFU / transcendental op.
    pub const SFU: Features = Features(1 << 9);
    /// A message send.
    pub const SEND: Features = Features(1 << 10);
    /// An immediate operand.
    pub const IMM: Features = Features(1 << 11);
    /// A second definition of a virtual register.
    pub const REDEFINE: Features = Features(1 << 12);
    /// The pressure burst (values kept live to the end).
    pub const PRESSURE: Features = Features(1 << 13);
    /// An op with three register operands.
    pub const THREE_OPERANDS: Features = Features(1 << 14);
    /// An output in the middle of the program.
    pub const MID_OUTPUT: Features = Features(1 << 15);
    /// A swap of two preallocated registers.
    pub const SWAP: Features = Features(1 << 16);
    /// A read of the value defined just before.
    pub const CHAIN: Features = Features(1 << 17);
    /// The same value in two operands of one op.
    pub const REPEATED_OPERAND: Features = Features(1 << 18);
    /// A fragment discard.
    pub const DISCARD: Features = Features(1 << 19);

    /// Every feature with its name, in bit order.
    pub const ALL: [(Features, &'static str); 20] = [
        (Features::BRANCH, "branch"),
        (Features::LOOP, "loop"),
        (Features::NESTED, "nested"),
        (Features::PREALLOC_WRITE, "prealloc-write"),
        (Features::PREALLOC_READ, "prealloc-read"),
        (Features::INPUT, "input"),
        (Features::INPUT_CLOBBER, "input-clobber"),
        (Features::MULTI_REG, "multi-reg"),
        (Features::IMPLICIT, "implicit"),
        (Features::SFU, "sfu"),
        (Features::SEND, "send"),
        (Features::IMM, "imm"),
        (Features::REDEFINE, "redefine"),
        (Features::PRESSURE, "pressure"),
        (Features::THREE_OPERANDS, "3-operands"),
        (Features::MID_OUTPUT, "mid-output"),
        (Features::SWAP, "swap"),
        (Features::CHAIN, "chain"),
        (Features::REPEATED_OPERAND, "repeated-operand"),
        (Features::DISCARD, "discard"),
    ];

    /// Add the features of `other`.
    pub fn insert(&mut self, other: Features) {
        self.0 |= other.0;
    }
    /// Whether every feature of `other` is in the set.
    pub fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }
    /// How many features are in the set.
    pub fn count(self) -> usize {
        self.0.count_ones() as usize
    }
    /// The names of the features in the set, in bit order.
    pub fn names(self) -> Vec<&'static str> {
        Features::ALL.iter().filter(|(f, _)| self.contains(*f)).map(|(_, n)| *n).collect()
    }
}

impl std::ops::BitOr for Features {
    type Output = Features;
    fn bitor(self, o: Features) -> Features {
        Features(self.0 | o.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_distinct_and_named() {
        let mut all = Features::default();
        for (f, _) in Features::ALL {
            assert_eq!(f.count(), 1);
            assert!(!all.contains(f));
            all.insert(f);
        }
        assert_eq!(all.names().len(), Features::ALL.len());
    }
}
