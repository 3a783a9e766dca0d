//! The machine clock as data: what a read sees of a write that has not
//! landed ([`Clock`]), and when an op's result may be read ([`ReadWindow`]).
//!
//! The model every consumer implements (docs/architecture.md, "Machine
//! clock"): each bundle issues in one cycle and all its ops read their
//! sources when it issues (parallel reads); a write issued at cycle `c` by an
//! op of latency `L` lands at `c + L`. What happens to a read before the
//! landing is the target's [`Clock`]; how long after issue the result stays
//! readable is the op's [`ReadWindow`].

/// How a target's pipeline treats reads of registers with a write in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The hardware holds a bundle until the writes its registers wait on
    /// have landed (gen8). Waits cost stall cycles, never correctness.
    Interlocked,
    /// Not interlocked: a read before the landing sees the register's
    /// previous contents; the compiler waits by emitting empty bundles
    /// (v3d71, r600).
    Padded,
    /// Not interlocked, and each bundle may carry an encoded wait `wait N`
    /// (`0..=max`): the next bundle issues `N + 1` cycles later (kepler's
    /// scheduling byte). Empty bundles are allowed and cost a cycle each.
    EncodedWaits {
        /// The largest wait a bundle may encode.
        max: u8,
    },
}

impl Clock {
    /// Whether reads wait for pending writes ([`Clock::Interlocked`]).
    pub const fn interlocked(self) -> bool {
        matches!(self, Clock::Interlocked)
    }
    /// The largest wait one bundle may encode (0 unless
    /// [`Clock::EncodedWaits`]).
    pub const fn max_wait(self) -> u8 {
        match self {
            Clock::EncodedWaits { max } => max,
            _ => 0,
        }
    }
    /// One line for `schedra targets`.
    pub fn describe(self) -> String {
        match self {
            Clock::Interlocked => "interlocked (reads wait for pending writes)".to_string(),
            Clock::Padded => "not interlocked, padded (early reads see old contents; waits are empty bundles)".to_string(),
            Clock::EncodedWaits { max } => {
                format!("not interlocked, encoded waits (early reads see old contents; a bundle may carry `wait 0..={max}`)")
            }
        }
    }
}

/// The distances, in cycles from the issue of the op that writes a result,
/// at which a read may see that result: from `min` on (the write has
/// landed) up to and including `max` (`None`: until the register is
/// overwritten). A read at a distance past `max` is a `latency` violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadWindow {
    /// The earliest distance: the op's latency.
    pub min: u32,
    /// The latest distance, if the result expires (a bypass network).
    pub max: Option<u32>,
}

impl ReadWindow {
    /// Whether a read `distance` cycles after issue is past the window's end.
    pub const fn expired(self, distance: u64) -> bool {
        match self.max {
            Some(m) => distance > m as u64,
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_without_a_maximum_never_expire() {
        let w = ReadWindow { min: 2, max: None };
        assert!(!w.expired(0) && !w.expired(u64::MAX));
        let b = ReadWindow { min: 1, max: Some(2) };
        assert!(!b.expired(1) && !b.expired(2));
        assert!(b.expired(3));
    }

    #[test]
    fn only_the_interlocked_clock_waits() {
        assert!(Clock::Interlocked.interlocked());
        assert!(!Clock::Padded.interlocked());
        assert!(!Clock::EncodedWaits { max: 31 }.interlocked());
        assert_eq!(Clock::EncodedWaits { max: 31 }.max_wait(), 31);
        assert_eq!(Clock::Padded.max_wait(), 0);
    }
}
