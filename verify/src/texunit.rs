//! The verifier's own model of a texture unit fed by coordinate writes and
//! read back one word at a time (v3d71's TMU: `Sem::TexCoord`, `TexLookup`,
//! `TexResult`), over terms.
//!
//! Coordinate writes latch terms in order; a lookup's coordinates are its
//! own words followed by the latched ones, and its texel word k is the term
//! `Tex(k)(coordinates)` — the same function `Sem::Texture` applies, so a
//! TMU texel and a register send's texel of equal coordinates are equal.
//! Lookups are read first in, first out, [`TEXEL_WORDS`] words each. The
//! machine simulator gives each lookup its landing cycle (issue + the op's
//! latency) and the op that issued it, so that a read too early, a read of
//! an empty unit and a block end with words unread can name both ops.
//!
//! Invariant: never panics; a read of an empty unit returns `None`.

use crate::symbolic::OpAt;
use crate::term::{Fun, Term, Terms};
use schedra_ir::target::TEXEL_WORDS;
use std::collections::VecDeque;

/// One lookup in flight.
#[derive(Clone, Debug)]
struct Lookup {
    coords: Vec<Term>,
    lands: u64,
    at: Option<OpAt>,
    next: u32,
}

/// A result word and the lookup it comes from.
#[derive(Clone, Debug)]
pub struct Popped {
    /// The texel word.
    pub term: Term,
    /// The cycle from which it is readable.
    pub lands: u64,
    /// The op that started its lookup (machine form).
    pub at: Option<OpAt>,
}

/// The unit's contents within one block.
#[derive(Clone, Debug, Default)]
pub struct TexUnit {
    latched: Vec<Term>,
    queue: VecDeque<Lookup>,
}

impl TexUnit {
    /// Latch coordinate terms.
    pub fn coord(&mut self, words: &[Term]) {
        self.latched.extend_from_slice(words);
    }
    /// Start a lookup of `words` and the latched coordinates, readable from
    /// cycle `lands`, started by the op at `at`.
    pub fn lookup(&mut self, words: &[Term], lands: u64, at: Option<OpAt>) {
        let mut coords = words.to_vec();
        coords.append(&mut self.latched);
        self.queue.push_back(Lookup { coords, lands, at, next: 0 });
    }
    /// Pop the next result word; `None` when no lookup has one left.
    pub fn result(&mut self, terms: &mut Terms) -> Option<Popped> {
        let front = self.queue.front_mut()?;
        let k = u8::try_from(front.next).unwrap_or(u8::MAX);
        let term = terms.app_of(Fun::Tex(k), &front.coords);
        let popped = Popped { term, lands: front.lands, at: front.at.clone() };
        front.next += 1;
        if front.next >= TEXEL_WORDS {
            self.queue.pop_front();
        }
        Some(popped)
    }
    /// Words started and not read, and the op that started the oldest
    /// such lookup.
    pub fn unread(&self) -> (u32, Option<&OpAt>) {
        let n = self.queue.iter().map(|l| TEXEL_WORDS.saturating_sub(l.next)).sum();
        (n, self.queue.front().and_then(|l| l.at.as_ref()))
    }
    /// Whether a coordinate is latched with no lookup started.
    pub fn latched(&self) -> bool {
        !self.latched.is_empty()
    }
}
