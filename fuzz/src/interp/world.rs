//! The outside world of a shader run: every word that comes from outside the
//! program (uniforms, varyings, texture results, input registers) and every
//! word a program could read without having written it (registers not
//! declared as inputs, scratch slots never written) is a pure function of
//! `(seed, kind, index...)`.
//!
//! Algorithm: the tuple is folded through the splitmix64 finaliser
//! ([`mix`]); the resulting 64-bit hash picks a word. Outside inputs are
//! drawn from a distribution that exercises real shader arithmetic (mostly
//! "nice" floats such as ±1.25·2^k, some zeros so that branches go both
//! ways, a few small integers and raw words); garbage words are raw
//! hashed bits from a kind of their own, so reading an uninitialised register
//! gives a different word from any input with overwhelming probability.
//!
//! A world may also *pin* words ([`Pins`]): a pinned uniform, varying,
//! input register, garbage register or texture result is the given word
//! instead of the drawn one, and every other word is still drawn from the
//! seed. This is how a verifier counterexample's input words are replayed
//! (`crate::replay`).
//!
//! Invariant: for a fixed seed and pins, each query always returns the
//! same word, and the source interpreter and the machine simulator see the
//! same words because both ask this module.

use rustc_hash::FxHashMap;
use schedra_ir::Reg;
use std::sync::Arc;

/// The tags that keep the kinds of outside words apart.
#[derive(Clone, Copy)]
#[repr(u64)]
enum Kind {
    Uniform = 1,
    Varying = 2,
    Texture = 3,
    InputReg = 4,
    GarbageReg = 5,
    GarbageScratch = 6,
    Landing = 7,
}

/// The splitmix64 finaliser: a bijective 64-bit mixer with full avalanche.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash a sequence of words into one 64-bit value (order-sensitive).
fn hash(parts: impl IntoIterator<Item = u64>) -> u64 {
    parts.into_iter().fold(0x5eed_5eed_5eed_5eed, |h, p| mix(h ^ mix(p)))
}

/// Turn a hash into an "input-like" word: 1/16 zero, 1/16 a small integer
/// 1..=16, 1/16 raw bits, and 13/16 a nice float ±(1 + m/256)·2^e with m in
/// 0..256 and e in -3..=4 (4096 distinct values whose sums and products
/// stay finite and exact enough to keep different inputs apart).
fn input_word(h: u64) -> u32 {
    let bits = (h >> 32) as u32;
    match h & 15 {
        0 => 0,
        1 => 1 + (bits & 15),
        2 => bits,
        _ => {
            let m = (bits & 0xff) as f32;
            let e = ((bits >> 8) & 7) as i32 - 3;
            let sign = if bits & 0x800 != 0 { -1.0 } else { 1.0 };
            (sign * (1.0 + m / 256.0) * 2f32.powi(e)).to_bits()
        }
    }
}

/// Words that replace the drawn ones: per kind, index → word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    /// Uniform words by index (`ldunif index`).
    pub uniforms: FxHashMap<u32, u32>,
    /// Varying words by index (`ldvary index`).
    pub varyings: FxHashMap<u32, u32>,
    /// Entry words of input registers.
    pub input_regs: FxHashMap<Reg, u32>,
    /// Entry words of registers that are not inputs.
    pub garbage_regs: FxHashMap<Reg, u32>,
    /// Words of scratch slots before anything writes them.
    pub garbage_scratch: FxHashMap<u32, u32>,
    /// Texture result words by coordinate words and result word.
    pub textures: FxHashMap<(Vec<u32>, u32), u32>,
    /// The delays of unknown-landing results past their earliest landing
    /// (capped at the window), by their number in the run.
    pub landings: FxHashMap<u64, u32>,
}

impl Pins {
    /// Whether nothing is pinned.
    pub fn is_empty(&self) -> bool {
        self.uniforms.is_empty() && self.varyings.is_empty() && self.input_regs.is_empty() && self.garbage_regs.is_empty() && self.garbage_scratch.is_empty() && self.textures.is_empty() && self.landings.is_empty()
    }
}

/// The outside world of one run, determined by its seed and its pins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// The seed every word not pinned is drawn from.
    pub seed: u64,
    /// The pinned words, if any.
    pins: Option<Arc<Pins>>,
}

impl World {
    /// The world of `seed`.
    pub fn new(seed: u64) -> World {
        World { seed, pins: None }
    }

    /// The world of `seed` with the words of `pins` in place of the drawn
    /// ones.
    pub fn pinned(seed: u64, pins: Pins) -> World {
        World { seed, pins: (!pins.is_empty()).then(|| Arc::new(pins)) }
    }

    /// The pinned word of `kind`'s table at `index`, if any.
    fn pin<K: std::hash::Hash + Eq>(&self, table: impl Fn(&Pins) -> &FxHashMap<K, u32>, index: K) -> Option<u32> {
        self.pins.as_deref().and_then(|p| table(p).get(&index).copied())
    }

    fn draw(&self, kind: Kind, rest: impl IntoIterator<Item = u64>) -> u64 {
        hash([self.seed, kind as u64].into_iter().chain(rest))
    }

    /// `draw(kind, [index])` with the fold written out (the one-index
    /// draws are the frequent ones).
    fn draw1(&self, kind: Kind, index: u64) -> u64 {
        let h = 0x5eed_5eed_5eed_5eed_u64;
        let h = mix(h ^ mix(self.seed));
        let h = mix(h ^ mix(kind as u64));
        mix(h ^ mix(index))
    }

    /// Uniform number `index` (`ldunif index`).
    pub fn uniform(&self, index: u32) -> u32 {
        if let Some(w) = self.pin(|p| &p.uniforms, index) {
            return w;
        }
        input_word(self.draw1(Kind::Uniform, index as u64))
    }

    /// Varying number `index` (`ldvary index`).
    pub fn varying(&self, index: u32) -> u32 {
        if let Some(w) = self.pin(|p| &p.varyings, index) {
            return w;
        }
        input_word(self.draw1(Kind::Varying, index as u64))
    }

    /// Word `word` of the result of a texture sample at the coordinate
    /// words `coords` (a function of the coordinates only).
    pub fn texture(&self, coords: &[u32], word: u32) -> u32 {
        if let Some(w) = self.pins.as_deref().and_then(|p| p.textures.get(&(coords.to_vec(), word)).copied()) {
            return w;
        }
        let parts = [coords.len() as u64, word as u64].into_iter().chain(coords.iter().map(|&c| c as u64));
        input_word(self.draw(Kind::Texture, parts))
    }

    /// The word that input register `reg` holds at entry (a register of a
    /// multi-register input `$g2:2` is asked for one register at a time).
    pub fn input_reg(&self, reg: Reg) -> u32 {
        if let Some(w) = self.pin(|p| &p.input_regs, reg) {
            return w;
        }
        input_word(self.draw1(Kind::InputReg, reg as u64))
    }

    /// The garbage word that register `reg` holds at entry when it is not
    /// declared as an input.
    pub fn garbage_reg(&self, reg: Reg) -> u32 {
        if let Some(w) = self.pin(|p| &p.garbage_regs, reg) {
            return w;
        }
        (self.draw1(Kind::GarbageReg, reg as u64) >> 16) as u32
    }

    /// How many cycles past its earliest landing the `k`-th unknown-landing
    /// result of the run (a kepler `tex`) arrives, in `0..=window`: a quarter
    /// of the draws are 0, a quarter `window`, the rest spread evenly, so
    /// that both a read just after the earliest landing and one just
    /// before the latest see the difference on some seeds.
    pub fn landing_delay(&self, k: u64, window: u32) -> u32 {
        if let Some(d) = self.pin(|p| &p.landings, k) {
            return d.min(window);
        }
        let h = self.draw1(Kind::Landing, k);
        match h & 3 {
            0 => 0,
            1 => window,
            _ => ((h >> 8) % (u64::from(window) + 1)) as u32,
        }
    }

    /// The garbage word of scratch slot `slot` before anything is written
    /// to it.
    pub fn garbage_scratch(&self, slot: u32) -> u32 {
        if let Some(w) = self.pin(|p| &p.garbage_scratch, slot) {
            return w;
        }
        (self.draw1(Kind::GarbageScratch, slot as u64) >> 16) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_index_draws_fold_like_the_general_one() {
        let w = World::new(0xdead_beef);
        for kind in [Kind::Uniform, Kind::Varying, Kind::InputReg, Kind::GarbageReg, Kind::GarbageScratch] {
            for i in [0u64, 1, 7, 1 << 40] {
                assert_eq!(w.draw1(kind, i), w.draw(kind, [i]));
            }
        }
    }

    #[test]
    fn words_are_functions_of_their_arguments() {
        let w = World::new(7);
        assert_eq!(w.uniform(3), World::new(7).uniform(3));
        assert_eq!(w.texture(&[1, 2], 0), w.texture(&[1, 2], 0));
    }

    #[test]
    fn kinds_indices_and_seeds_differ() {
        let w = World::new(1);
        let words: Vec<u32> = (0..4u32)
            .flat_map(|i| [w.uniform(i), w.varying(i), w.garbage_reg(i as Reg), w.garbage_scratch(i), w.texture(&[i], 0)])
            .collect();
        let mut uniq = words.clone();
        uniq.sort();
        uniq.dedup();
        // Collisions between nice inputs are possible but rare; garbage never
        // collides with inputs in this small set.
        assert!(uniq.len() + 3 >= words.len(), "{words:x?}");
        assert_ne!(w.garbage_reg(5), w.input_reg(5));
        let differ = (0..16u32).filter(|&i| World::new(1).uniform(i) != World::new(2).uniform(i)).count();
        assert!(differ >= 12);
    }

    #[test]
    fn texture_depends_on_coordinates_and_word() {
        let w = World::new(3);
        let a: Vec<u32> = (0..4).map(|i| w.texture(&[10, 20], i)).collect();
        let b: Vec<u32> = (0..4).map(|i| w.texture(&[10, 21], i)).collect();
        assert_ne!(a, b);
        assert!(a.windows(2).any(|p| p[0] != p[1]));
    }

    #[test]
    fn pinned_words_replace_drawn_ones_and_nothing_else() {
        let mut pins = Pins::default();
        pins.uniforms.insert(2, 0x3f80_0000);
        pins.varyings.insert(0, 7);
        pins.input_regs.insert(1, 9);
        pins.garbage_regs.insert(5, 11);
        pins.textures.insert((vec![1, 2], 0), 13);
        pins.landings.insert(3, u32::MAX);
        let (w, plain) = (World::pinned(4, pins), World::new(4));
        assert_eq!((w.uniform(2), w.varying(0), w.input_reg(1), w.garbage_reg(5), w.texture(&[1, 2], 0)), (0x3f80_0000, 7, 9, 11, 13));
        assert_eq!((w.uniform(3), w.varying(1), w.input_reg(2), w.garbage_reg(6), w.texture(&[1, 2], 1)), (plain.uniform(3), plain.varying(1), plain.input_reg(2), plain.garbage_reg(6), plain.texture(&[1, 2], 1)));
        assert_eq!((w.landing_delay(3, 400), plain.landing_delay(3, 400) <= 400), (400, true));
        assert_eq!(World::pinned(4, Pins::default()), plain);
    }

    #[test]
    fn inputs_take_zero_sometimes() {
        let w = World::new(0);
        assert!((0..400).any(|i| w.uniform(i) == 0));
        assert!((0..400).any(|i| w.uniform(i) != 0));
    }
}
