//! Why a run stopped without finishing: out of fuel, a machine hazard, or an
//! op the interpreters cannot execute. Every error names where it happened
//! ([`Place`]) so that a user can find the op in the file.

use std::fmt;

/// Where in a program something happened: a block, the 0-based index of the
/// source instruction or machine bundle in it (the terminator has the index
/// one past the last), and the line in the file (0 = not parsed from text).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Place {
    /// The block's label.
    pub block: String,
    /// The instruction or bundle index within the block.
    pub index: usize,
    /// The line in the file, 0 if unknown.
    pub line: u32,
}

impl Place {
    /// A place in `block` at `index`, written on `line`.
    pub fn new(block: &str, index: usize, line: u32) -> Place {
        Place { block: block.to_string(), index, line }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        write!(f, "block {} #{}", self.block, self.index)
    }
}

/// Why a run did not finish.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// More than `fuel` instructions (ops and terminators) ran.
    #[error("out of fuel: more than {fuel} instructions ran")]
    OutOfFuel {
        /// The fuel the run was given.
        fuel: u64,
    },
    /// The machine clock passed its limit (a guard against absurd stalls).
    #[error("more than {limit} machine cycles")]
    TooManyCycles {
        /// The cycle limit.
        limit: u64,
    },
    /// Two writes land on one register in the same cycle (non-interlocked
    /// machine form).
    #[error("{at}: hazard: {message}")]
    Hazard {
        /// The op whose write collides with an earlier one.
        at: Place,
        /// What collides.
        message: String,
    },
    /// A register is read after the read window of the value it holds
    /// ended (an expiring result, e.g. in a bypass network).
    #[error("{at}: latency: {message}")]
    Expired {
        /// The reading op (or terminator).
        at: Place,
        /// What was read when.
        message: String,
    },
    /// The machine program breaks a hardware rule of its target
    /// (targets.md): it does not run ([`super::rules`]).
    #[error("{at}: {kind} rule: {message}")]
    Rule {
        /// The kind of rule, as the verifier names it.
        kind: super::rules::RuleKind,
        /// Where the rule is broken.
        at: Place,
        /// Which rule, and how.
        message: String,
    },
    /// The opcode is not in the target's table.
    #[error("{at}: unknown opcode `{opcode}` for target {target}")]
    UnknownOpcode {
        /// Where.
        at: Place,
        /// The opcode as written.
        opcode: String,
        /// The program's target.
        target: &'static str,
    },
    /// An op or terminator that cannot be executed as written (wrong
    /// operands, sizes, registers out of range, undefined virtual register,
    /// unknown label).
    #[error("{at}: {message}")]
    Malformed {
        /// Where.
        at: Place,
        /// What is wrong.
        message: String,
    },
    /// The program has no entry block.
    #[error("the program has no blocks")]
    NoBlocks,
}
