//! Program generators: valid-by-construction source programs for any target
//! from `arbitrary` bytes, driven by the target's description (its opcode
//! table, operand kinds, sizes, `rules.imm_ok`, payload registers) rather
//! than by hand-written templates per target.
//!
//! Algorithm: choose the inputs and the preallocated pool, optionally define
//! a burst of values that stay live to the end (register pressure), then
//! generate a region of straight-line ops, if/else diamonds, counted loops
//! and register swaps until the budget or the bytes run out, and finish with
//! outputs of every value never read plus the target's final output. See
//! `build` for how each op is made valid and `shape` for control flow.
//!
//! Invariant: every program returned passes `schedra_ir::validate::validate`
//! (a bolero property in `fuzz/tests/` checks it), has no critical edge,
//! terminates under the interpreters within a small fuel, and has at least
//! one observable effect.

mod build;
pub mod config;
mod draw;
pub mod features;
mod profile;
mod scope;
mod shape;
pub mod stream;

pub use config::Config;
pub use features::Features;
pub use stream::SeedStream;

use arbitrary::{Arbitrary, Unstructured};
use schedra_ir::target::Sem;
use schedra_ir::{Form, Program, Stage, Target};

/// Generate a valid source program for `target` under `cfg` from `u`.
/// Never fails for lack of bytes: when `u` runs out, the program is closed
/// deterministically.
pub fn generate(u: &mut Unstructured, target: &'static Target, cfg: &Config) -> arbitrary::Result<Program> {
    generate_with_features(u, target, cfg).map(|(p, _)| p)
}

/// [`generate`], also returning the features the program exercises.
pub fn generate_with_features(u: &mut Unstructured, target: &'static Target, cfg: &Config) -> arbitrary::Result<(Program, Features)> {
    // The generator reads through a `draw::Cursor`, which takes bytes
    // exactly as `u` would; `u` then skips what it took.
    let rest = u.peek_bytes(u.len()).unwrap_or(&[]);
    let mut cursor = draw::Cursor::new(rest);
    let generated = generate_from(&mut cursor, target, cfg);
    u.bytes(rest.len() - cursor.len())?;
    generated
}

/// [`generate_with_features`] reading from `u`.
fn generate_from(u: &mut draw::Cursor, target: &'static Target, cfg: &Config) -> arbitrary::Result<(Program, Features)> {
    let mut g = build::Gen::new(u, target, cfg);
    g.gen_inputs()?;
    g.gen_pool()?;
    g.gen_pressure()?;
    g.region(0)?;
    g.finish()?;
    let program = Program { name: Some("gen".to_string()), target, stage: stage_of(target, cfg), form: Form::Source, inputs: g.inputs, blocks: g.blocks };
    Ok((program, g.features))
}

/// The stage of a program generated for `t` under `cfg`: the target's
/// default stage, or the fragment stage when `cfg.fragment` asks for it
/// and `t` has a fragment discard ([`Sem::Discard`]) that only a fragment
/// program may hold. Registers, inputs and allocation are the default
/// stage's either way (no target that switches here has a stage payload).
pub fn stage_of(t: &Target, cfg: &Config) -> Stage {
    if cfg.fragment && t.default_stage != Stage::Fragment && t.payload(t.default_stage).is_empty() && t.payload(Stage::Fragment).is_empty() && t.ops.iter().any(|o| o.sem == Sem::Discard) {
        Stage::Fragment
    } else {
        t.default_stage
    }
}

/// `len` pseudo-random bytes determined by `seed` (SplitMix64): the input
/// the campaign, the benchmarks and the properties feed to [`generate`]
/// when they start from a seed rather than from a fuzzer's bytes.
/// [`SeedStream`] makes the same bytes only as far as they are read.
pub fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    stream::extend(seed, &mut out, len);
    out
}

/// The seed that a short byte string stands for (FNV-1a), so that a
/// property test's few bytes can drive a long [`seed_bytes`] stream.
pub fn seed_of(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A whole fuzz case: a target, a swarm configuration and the program they
/// generate. Its `Debug` prints the program's text, so that libFuzzer's
/// crash reports show the shader.
pub struct GeneratedCase {
    /// The target the program is for.
    pub target: &'static Target,
    /// The configuration it was generated under.
    pub config: Config,
    /// The generated source program (valid for `target`).
    pub program: Program,
    /// The features the program exercises.
    pub features: Features,
}

impl GeneratedCase {
    /// A case for a fixed target (for campaigns on one target).
    pub fn for_target(u: &mut Unstructured, target: &'static Target) -> arbitrary::Result<GeneratedCase> {
        let config = Config::swarm(u)?;
        let (program, features) = generate_with_features(u, target, &config)?;
        Ok(GeneratedCase { target, config, program, features })
    }
}

impl<'a> Arbitrary<'a> for GeneratedCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<GeneratedCase> {
        let all = schedra_ir::target::generated();
        let target = all[u.choose_index(all.len())?];
        GeneratedCase::for_target(u, target)
    }
}

impl std::fmt::Debug for GeneratedCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", schedra_ir::print::print(&self.program))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        seed_bytes(seed, n)
    }

    #[test]
    fn seed_bytes_are_deterministic_and_varied() {
        assert_eq!(seed_bytes(3, 100), seed_bytes(3, 100));
        // A shorter stream is a prefix of a longer one (also mid-word).
        assert_eq!(seed_bytes(3, 100)[..], seed_bytes(3, 4096)[..100]);
        assert_eq!(seed_bytes(3, 0), Vec::<u8>::new());
        // SplitMix64's first output for seed 0, little-endian.
        assert_eq!(seed_bytes(0, 8), 0xe220_a839_7b1d_cdafu64.to_le_bytes());
        assert_ne!(seed_bytes(3, 100), seed_bytes(4, 100));
        assert_ne!(seed_of(b"a"), seed_of(b"b"));
    }

    #[test]
    fn fragment_programs_draw_discards_on_every_target_that_has_one() {
        for t in schedra_ir::target::all().iter().filter(|t| t.ops.iter().any(|o| o.sem == Sem::Discard)) {
            let cfg = Config::default();
            assert_eq!(stage_of(t, &cfg), Stage::Fragment, "{}", t.name);
            let found = (0..200).any(|seed| {
                let data = bytes(seed, 4096);
                let mut u = Unstructured::new(&data);
                let p = generate(&mut u, t, &cfg).expect("generate");
                assert_eq!(p.stage, Stage::Fragment);
                p.blocks.iter().flat_map(|b| b.insts()).any(|i| t.op(&i.opcode).is_some_and(|o| o.sem == Sem::Discard))
            });
            assert!(found, "{}: no discard in 200 programs", t.name);
            let vertex = Config { fragment: false, ..Config::default() };
            assert_eq!(stage_of(t, &vertex) == Stage::Fragment, t.default_stage == Stage::Fragment, "{}", t.name);
        }
    }

    #[test]
    fn programs_end_and_have_outputs() {
        for t in schedra_ir::target::all() {
            for seed in 0..50 {
                let data = bytes(seed, 4096);
                let mut u = Unstructured::new(&data);
                let p = generate(&mut u, t, &Config::default()).expect("generate");
                let last = p.blocks.last().expect("a block");
                assert_eq!(last.term.kind, schedra_ir::TermKind::End);
                let outputs = p.blocks.iter().flat_map(|b| b.insts()).filter(|i| t.op(&i.opcode).is_some_and(|o| matches!(o.sem, schedra_ir::target::Sem::Output(..)))).count();
                assert!(outputs > 0, "{}: no output\n{}", t.name, schedra_ir::print::print(&p));
            }
        }
    }

    /// On a target whose values live in one block (a bypass network), no
    /// generated program reads a virtual register its block does not
    /// define, and the campaign's configurations reach loops, branches,
    /// complex sequences, registers read in a later block and pressure
    /// beyond the network.
    #[test]
    fn network_programs_keep_values_in_their_block() {
        for t in schedra_ir::target::generated().iter().filter(|t| t.network.is_some()) {
            let net = t.network.expect("a network");
            let mut seen = Features::default();
            let (mut complex, mut crossing) = (false, false);
            for seed in 0..300 {
                let data = bytes(seed, 16 * 1024);
                let mut u = Unstructured::new(&data);
                let cfg = Config::swarm(&mut u).expect("config");
                let (p, f) = generate_with_features(&mut u, t, &cfg).expect("generate");
                assert!(schedra_ir::validate::validate(&p).is_ok(), "{}", schedra_ir::print::print(&p));
                seen.insert(f);
                for (k, b) in p.blocks.iter().enumerate() {
                    let mut defined: Vec<&str> = Vec::new();
                    for i in b.insts() {
                        for o in &i.srcs {
                            if let schedra_ir::Operand::Virt(v) = o {
                                assert!(defined.contains(&v.name.as_str()), "%{} read in a block that does not define it\n{}", v.name, schedra_ir::print::print(&p));
                            }
                            crossing |= k > 0 && matches!(o, schedra_ir::Operand::Phys(_));
                        }
                        if let Some(schedra_ir::Operand::Virt(v)) = &i.dest {
                            defined.push(v.name.as_str());
                        }
                        complex |= net.sequence(&i.opcode).is_some();
                    }
                }
            }
            for f in [Features::LOOP, Features::BRANCH, Features::PRESSURE, Features::PREALLOC_READ] {
                assert!(seen.contains(f), "{}: never generated {:?}", t.name, f.names());
            }
            assert!(complex && crossing, "{}: complex sequences {complex}, registers read in a later block {crossing}", t.name);
        }
    }

    /// Most virtual registers live at once in block `b` in source order.
    fn source_live(b: &schedra_ir::Block) -> usize {
        let last: std::collections::HashMap<&str, usize> = b.insts().iter().enumerate().flat_map(|(k, i)| i.srcs.iter().filter_map(move |o| if let schedra_ir::Operand::Virt(v) = o { Some((v.name.as_str(), k)) } else { None })).collect();
        let (mut live, mut most) = (0usize, 0usize);
        for (k, i) in b.insts().iter().enumerate() {
            live -= i.srcs.iter().filter_map(|o| if let schedra_ir::Operand::Virt(v) = o { Some(v.name.as_str()) } else { None }).collect::<std::collections::HashSet<_>>().into_iter().filter(|v| last.get(v) == Some(&k)).count();
            if let Some(schedra_ir::Operand::Virt(v)) = &i.dest {
                live += usize::from(last.get(v.name.as_str()).is_some_and(|&l| l > k));
            }
            most = most.max(live);
        }
        most
    }

    /// On a bypass-network target the campaign's configurations make
    /// blocks that keep more values live in source order than the network
    /// and the register file hold together, with part of the pressure
    /// burst read by later code and the rest only output at the end.
    #[test]
    fn network_programs_reach_pressure_beyond_the_machine() {
        for t in schedra_ir::target::generated().iter().filter(|t| t.network.is_some()) {
            let net = t.network.expect("a network");
            let machine = usize::from(t.regs.count) + net.value_regs;
            let most = (0..300u64)
                .filter_map(|seed| {
                    let data = bytes(seed, 16 * 1024);
                    let mut u = Unstructured::new(&data);
                    let cfg = Config::swarm(&mut u).ok()?;
                    let p = generate(&mut u, t, &cfg).ok()?;
                    p.blocks.iter().map(source_live).max()
                })
                .max()
                .unwrap_or(0);
            assert!(most > machine, "{}: at most {most} values live at once, the machine holds {machine}", t.name);
        }
    }

    #[test]
    fn empty_bytes_still_make_a_program() {
        for t in schedra_ir::target::all() {
            let mut u = Unstructured::new(&[]);
            let p = generate(&mut u, t, &Config::default()).expect("generate");
            assert!(!p.blocks.is_empty());
        }
    }
}
