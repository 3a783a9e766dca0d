//! schedra-fuzz: interpreters, generators, oracles and the reducer — the
//! parts of schedra that look for bugs rather than prove their absence.
//!
//! - [`interp`]: the ground truth. A source interpreter and a cycle-accurate
//!   machine simulator that draw every outside word from one seeded
//!   [`interp::world`], so a source and a correct machine program print the
//!   same effects for the same seed (semantics.md).
//! - [`gen`]: valid-by-construction source programs from `arbitrary` bytes,
//!   driven by the target description (the same bytes give the same program).
//! - [`oracle`]: one promise each (compiles, is proven, runs agree, a
//!   behaviour-changing [`mutate`] mutant is not proven, parse/print round
//!   trip); a broken promise is a `Finding` with a signature for dedup.
//! - [`campaign`]: `schedra fuzz` — threads, dedup, work directory, progress.
//! - [`reduce`]: the IR-aware reducer (C-Reduce / llvm-reduce style passes
//!   to a fixpoint under a test budget); every candidate it tests is a valid
//!   program.
//! - [`replay`]: a verifier counterexample's input words fed to both
//!   interpreters, and the first effect that differs.
//! - [`quality`]: shader-db totals over a fixed sample, compared with a
//!   committed baseline (the kill-rate test's quality check).
//! - [`stage`]: which stage each campaign thread is in, for the
//!   campaign's supervisor (deadlines, `timeout` findings).
//! - [`targets`]: the cargo-fuzz entry points and `--decode` of artifacts.
//!
//! Invariant across the crate: nothing here panics on any input — the
//! oracles catch the compiler's and verifier's panics and report them as
//! findings (only the cargo-fuzz entry points panic, on purpose, to report a
//! finding to libFuzzer).

#![warn(missing_docs)]

pub mod interp;
pub mod gen;
pub mod reduce;
pub mod oracle;
pub mod mutate;
pub mod campaign;
pub mod entry;
pub mod phase;
pub mod replay;
pub mod quality;
