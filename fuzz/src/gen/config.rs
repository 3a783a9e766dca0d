//! The generator's switches. A [`Config`] is itself [`Arbitrary`], so every
//! fuzz case can draw its own mix of features (swarm testing, as in
//! wasm-smith and Csmith): a case without loops explores straight-line
//! scheduling more deeply, a case with only SFU ops and one chain finds
//! latency bugs sooner, and so on.
//!
//! Invariant: every field is accepted whatever its raw value; the accessor
//! methods clamp raw values into the ranges the generator supports, so an
//! arbitrary `Config` never makes generation fail or run away.

use arbitrary::{Arbitrary, Unstructured};

/// The largest instruction budget a program may have: generated programs
/// have up to ~500 instructions.
pub const MAX_INSTS: usize = 500;

/// Most values the pressure burst defines early and keeps live to the end.
pub const MAX_PRESSURE: usize = 96;

/// Immediate classes (bits of [`Config::imm_classes`]).
pub mod imm_class {
    /// Integers in -16..=15 (v3d71 small immediates).
    pub const SMALL_INT: u8 = 1;
    /// Floats ±2^k for k in -8..=7, and 0.0 (v3d71 small float immediates).
    pub const POW2_FLOAT: u8 = 2;
    /// Any 32-bit integer.
    pub const ANY_INT: u8 = 4;
    /// Any finite float.
    pub const ANY_FLOAT: u8 = 8;
    /// NaN, infinities, -0.0, 0x80000000, 0xffffffff.
    pub const SPECIAL: u8 = 16;
}

/// Which features one generated program may use. `Default` switches
/// everything on with moderate sizes; `Config::swarm` draws each switch
/// from the fuzzer's bytes.
#[derive(Clone, Debug, PartialEq, Eq, Arbitrary)]
pub struct Config {
    /// Instruction budget of the body (clamped to 1..=[`MAX_INSTS`]).
    pub max_insts: u16,
    /// If/else diamonds.
    pub branches: bool,
    /// Counted loops with bounded trip counts.
    pub loops: bool,
    /// Deepest nesting of branches and loops (clamped to 0..=3).
    pub max_depth: u8,
    /// Preallocated (fixed) registers written and read mid-program.
    pub prealloc: bool,
    /// How many distinct preallocated registers (clamped to 1..=6).
    pub prealloc_regs: u8,
    /// The preallocated pool may include input registers, so that inputs
    /// are overwritten while their values are still needed (r600 swaps).
    pub clobber_inputs: bool,
    /// `input` lines binding payload registers.
    pub inputs: bool,
    /// Values of more than one register (gen8 `:2`, `:4`).
    pub multi_reg: bool,
    /// Ops whose result lands in a fixed register (v3d71 ldunif, ldvary,
    /// ldconst).
    pub implicit: bool,
    /// SFU / transcendental ops.
    pub sfu: bool,
    /// Message sends (gen8 `send.tex`).
    pub sends: bool,
    /// Immediate classes in use (bits of [`imm_class`]; 0 = none).
    pub imm_classes: u8,
    /// Percent of value operands that are immediates where allowed.
    pub imm_rate: u8,
    /// Percent of register operands taken from the newest value (long
    /// dependency chains, reads right after slow writes).
    pub chain_bias: u8,
    /// Values defined early and kept live to the end (clamped to
    /// 0..=[`MAX_PRESSURE`]); high values force spills.
    pub pressure: u8,
    /// Redefine existing virtual registers (non-SSA).
    pub redefine: bool,
    /// Output ops in the middle of the program and inside branches.
    pub mid_outputs: bool,
    /// Swap the contents of two preallocated registers.
    pub swaps: bool,
    /// Allow more distinct immediates in one op than a bundle can carry
    /// (the compiler must then materialise some); rare under `swarm`.
    pub imm_overflow: bool,
    /// Opcode subset: bit `i % 32` enables the target's `ops[i]`
    /// (an empty subset means all).
    pub op_mask: u32,
    /// One more op after the final outputs whose result nothing reads (a
    /// dead tail), so that register writes can reach the last bundles and
    /// the thread-end bundle (fault `v3d-thrsw-rf-write`: since `tlbw` may
    /// not sit in the delay slots, programs ending in outputs never put an
    /// ALU write there). `swarm` draws it from `chain_bias` without taking
    /// bytes of its own, so every other choice of a seed stays the same.
    #[arbitrary(default)]
    pub dead_tail: bool,
    /// Fragment programs on a target whose default stage is another but
    /// which has a fragment discard (r600), so that discards are drawn
    /// there too (`super::stage_of`). `swarm` draws it from `imm_rate`
    /// without taking bytes of its own.
    #[arbitrary(default)]
    pub fragment: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_insts: 60,
            branches: true,
            loops: true,
            max_depth: 2,
            prealloc: true,
            prealloc_regs: 3,
            clobber_inputs: true,
            inputs: true,
            multi_reg: true,
            implicit: true,
            sfu: true,
            sends: true,
            imm_classes: 0x1f,
            imm_rate: 20,
            chain_bias: 40,
            pressure: 0,
            redefine: true,
            mid_outputs: true,
            swaps: true,
            imm_overflow: false,
            op_mask: u32::MAX,
            dead_tail: false,
            fragment: true,
        }
    }
}

impl Config {
    /// A configuration drawn from the fuzzer's bytes (swarm testing). The
    /// instruction budget favours small programs (most bugs need few
    /// instructions and small programs run fast) but reaches
    /// [`MAX_INSTS`].
    pub fn swarm(u: &mut Unstructured) -> arbitrary::Result<Config> {
        let mut c = Config::arbitrary(u)?;
        c.max_insts = match c.max_insts % 8 {
            0..=4 => 8 + c.max_insts % 56,
            5 | 6 => 40 + c.max_insts % 160,
            _ => 100 + c.max_insts % 400,
        };
        c.imm_overflow = c.imm_overflow && c.op_mask % 8 == 0;
        c.dead_tail = c.chain_bias % 4 == 0;
        c.fragment = c.imm_rate % 2 == 1;
        // Pressure is rare but, when on, large enough to spill (48..=96).
        c.pressure = if c.pressure % 4 == 0 { (MAX_PRESSURE / 2 + c.pressure as usize % (MAX_PRESSURE / 2 + 1)) as u8 } else { 0 };
        Ok(c)
    }
    /// Bytes of generator input a program under this configuration takes
    /// at most, with room to spare (measured: at most ~21 per budget or
    /// pressure instruction for the smallest programs, ~13 for 50). Only
    /// a cost estimate for [`super::SeedStream::draw`]: a program that
    /// needs more is still generated exactly.
    pub fn byte_hint(&self) -> usize {
        16 * (self.insts() + self.pressure_values()) + 256
    }
    /// The body's instruction budget.
    pub fn insts(&self) -> usize {
        (self.max_insts as usize).clamp(1, MAX_INSTS)
    }
    /// The deepest nesting of branches and loops.
    pub fn depth(&self) -> usize {
        (self.max_depth as usize).min(3)
    }
    /// The number of preallocated registers.
    pub fn pool_size(&self) -> usize {
        (self.prealloc_regs as usize).clamp(1, 6)
    }
    /// Values of the pressure burst.
    pub fn pressure_values(&self) -> usize {
        (self.pressure as usize).min(MAX_PRESSURE)
    }
    /// Whether the target's `ops[index]` may be used.
    pub fn op_enabled(&self, index: usize) -> bool {
        self.op_mask == 0 || self.op_mask & (1 << (index % 32)) != 0
    }
    /// Percent of immediates among value operands (0..=100).
    pub fn imm_percent(&self) -> u32 {
        if self.imm_classes & 0x1f == 0 {
            0
        } else {
            (self.imm_rate % 101) as u32
        }
    }
    /// Percent of register operands taken from the newest value.
    pub fn chain_percent(&self) -> u32 {
        (self.chain_bias % 101) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swarm_stays_in_range() {
        let data: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let mut u = Unstructured::new(&data);
        let mut big = 0;
        for _ in 0..100 {
            let c = Config::swarm(&mut u).expect("swarm config");
            assert!((1..=MAX_INSTS).contains(&c.insts()));
            assert!(c.depth() <= 3 && (1..=6).contains(&c.pool_size()));
            assert!(c.pressure_values() <= MAX_PRESSURE);
            big += usize::from(c.insts() >= 100);
        }
        assert!(big > 0, "swarm never drew a large program");
    }
}
