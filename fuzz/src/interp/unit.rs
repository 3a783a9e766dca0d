//! A texture unit fed by coordinate writes and read back one word at a time
//! (v3d71's TMU, `Sem::TexCoord`, `TexLookup`, `TexResult`), as both
//! interpreters run it.
//!
//! Model: coordinate writes latch words in order; a lookup takes its own
//! words followed by the latched ones (clearing them) and queues a texel of
//! [`TEXEL_WORDS`] words, word k being `world.texture(coordinates, k)`,
//! that lands at a given cycle. A result read pops the next word of the
//! oldest lookup. Read at or after its lookup's landing it is that word;
//! read earlier (machine form only) it is a word the program cannot know:
//! the texel word with every bit inverted, so that a read too early always
//! changes what the program computes. A read with no word queued, or a
//! block that ends with a word queued or a coordinate latched, is an
//! error (the run stops).
//!
//! Invariant: the unit never panics; its state is empty after a successful
//! [`Unit::end_block`].

use super::world::World;
use schedra_ir::target::TEXEL_WORDS;
use std::collections::VecDeque;

/// One lookup in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Lookup {
    coords: Vec<u32>,
    lands: u64,
    next: u32,
}

/// The unit's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unit {
    latched: Vec<u32>,
    queue: VecDeque<Lookup>,
}

impl Unit {
    /// A coordinate write of `words`.
    pub fn coord(&mut self, words: &[u32]) {
        self.latched.extend_from_slice(words);
    }
    /// A lookup of `words` and the latched coordinates, landing at `lands`.
    pub fn lookup(&mut self, words: &[u32], lands: u64) {
        let mut coords = words.to_vec();
        coords.append(&mut self.latched);
        self.queue.push_back(Lookup { coords, lands, next: 0 });
    }
    /// The next result word, read at cycle `now` (the source form reads at
    /// cycle `u64::MAX`: never early).
    pub fn result(&mut self, world: &World, now: u64) -> Result<u32, String> {
        let Some(front) = self.queue.front_mut() else {
            return Err("the texture unit is read while no lookup has a word left to read".to_string());
        };
        let word = world.texture(&front.coords, front.next);
        let early = now < front.lands;
        front.next += 1;
        if front.next >= TEXEL_WORDS {
            self.queue.pop_front();
        }
        Ok(if early { !word } else { word })
    }
    /// The end of a block: the unit must be empty.
    pub fn end_block(&mut self) -> Result<(), String> {
        if !self.queue.is_empty() {
            let unread: u32 = self.queue.iter().map(|l| TEXEL_WORDS.saturating_sub(l.next)).sum();
            self.queue.clear();
            return Err(format!("the block ends with {unread} word(s) of a texture lookup unread"));
        }
        if !self.latched.is_empty() {
            self.latched.clear();
            return Err("the block ends with a texture coordinate written and no lookup started".to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_come_back_in_order_and_early_reads_are_wrong() {
        let w = World::new(9);
        let mut u = Unit::default();
        u.coord(&[7]);
        u.lookup(&[3], 100);
        u.lookup(&[5], 200);
        let want: Vec<u32> = (0..4).map(|k| w.texture(&[3, 7], k)).collect();
        let got: Vec<u32> = (0..4).map(|_| u.result(&w, 100).expect("queued")).collect();
        assert_eq!(got, want);
        assert_eq!(u.result(&w, 150), Ok(!w.texture(&[5], 0)), "read before the second lookup lands");
        assert!(u.end_block().is_err(), "three words unread");
        assert!(u.result(&w, 0).is_err(), "nothing queued after the block end");
        u.coord(&[1]);
        assert!(u.end_block().is_err(), "a coordinate latched");
        assert_eq!(u.end_block(), Ok(()));
    }
}
