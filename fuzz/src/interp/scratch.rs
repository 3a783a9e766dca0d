//! Private scratch memory (spill slots): word-addressed, one 32-bit word per
//! slot. A slot never written reads as the world's garbage word for it, so a
//! fill from a slot that was never spilled shows up as different behaviour.
//!
//! Invariant: reads and writes touch only this map; scratch is not
//! observable (semantics.md), so it is not part of a run's effects.

use super::world::World;
use rustc_hash::FxHashMap;

/// The scratch memory of one run.
#[derive(Clone, Debug)]
pub struct Scratch {
    world: World,
    slots: FxHashMap<u32, u32>,
}

impl Scratch {
    /// Empty scratch memory whose unwritten slots read as `world`'s garbage.
    pub fn new(world: World) -> Scratch {
        Scratch { world, slots: FxHashMap::default() }
    }

    /// Make this memory empty again, its unwritten slots reading as
    /// `world`'s garbage (its room kept for the next run).
    pub fn renew(&mut self, world: World) {
        self.world = world;
        self.slots.clear();
    }

    /// The word in `slot`.
    pub fn read(&self, slot: u32) -> u32 {
        self.slots.get(&slot).copied().unwrap_or_else(|| self.world.garbage_scratch(slot))
    }

    /// Store `words` in consecutive slots from `first` (wrapping at 2^32).
    pub fn write(&mut self, first: u32, words: &[u32]) {
        for (i, &w) in words.iter().enumerate() {
            self.slots.insert(first.wrapping_add(i as u32), w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_slots_read_back_and_others_are_garbage() {
        let w = World::new(9);
        let mut s = Scratch::new(w.clone());
        assert_eq!(s.read(4), w.garbage_scratch(4));
        s.write(3, &[10, 11]);
        assert_eq!((s.read(3), s.read(4)), (10, 11));
        assert_eq!(s.read(5), w.garbage_scratch(5));
        let v = World::new(10);
        s.renew(v.clone());
        assert_eq!((s.read(3), s.read(4)), (v.garbage_scratch(3), v.garbage_scratch(4)));
    }
}
