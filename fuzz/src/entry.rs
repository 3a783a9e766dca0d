//! The bodies of the cargo-fuzz targets in `fuzz/fuzz_targets/`, kept here
//! so that each target file is a few lines and `schedra fuzz --decode` can
//! turn an artifact back into the program it stands for.
//!
//! Input layout (all targets except `parse_roundtrip`): one byte of compile
//! options (scheduler, allocator), then a [`GeneratedCase`] (target, swarm
//! configuration, program), then whatever bytes remain (mutations). The
//! environment variable `SCHEDRA_INJECT` names a compiler fault to inject.
//!
//! Invariant: each entry panics exactly when an oracle reports a finding
//! (libFuzzer then saves the input as a crash artifact); the panic message
//! starts with the finding's signature.

use crate::campaign::case;
use crate::gen::GeneratedCase;
use crate::oracle::{self, Finding, Kind};
use arbitrary::{Arbitrary, Unstructured};
use schedra_compiler::{Fault, Options};
use schedra_verify::VerifyOptions;

/// The fault named by `SCHEDRA_INJECT`, if any.
pub fn inject_from_env() -> Option<Fault> {
    std::env::var("SCHEDRA_INJECT").ok().and_then(|n| Fault::from_name(&n))
}

/// Decode a target input: compile options, the case, and the rest.
pub fn decode_case<'a>(data: &'a [u8]) -> Option<(Options, GeneratedCase, Unstructured<'a>)> {
    let mut u = Unstructured::new(data);
    let opts = case::options(&mut u, inject_from_env());
    let c = GeneratedCase::arbitrary(&mut u).ok()?;
    Some((opts, c, u))
}

/// Report a finding to libFuzzer. A panic here is intended: it is how a
/// cargo-fuzz target says "crash" (the finding, not the input, is at fault).
fn fail(f: Finding) -> ! {
    let src = f.source.as_ref().map(schedra_ir::print::print).unwrap_or_default();
    panic!("{}\n{}\n{src}", f.signature(), f.message)
}

const VOPTS: VerifyOptions = VerifyOptions { timeout_ms: 2000 };

/// `compile_verify`: compiling never fails or panics, and the verifier
/// proves the output (an `unknown` verdict is not a crash).
pub fn compile_verify(data: &[u8]) {
    oracle::install_panic_hook();
    let Some((opts, c, _)) = decode_case(data) else { return };
    let compiled = oracle::compile_ok(&c.program, &opts).unwrap_or_else(|f| fail(f));
    match oracle::verify_proves(&c.program, &compiled.program, &VOPTS) {
        Err(f) if f.kind != Kind::Unknown => fail(f),
        _ => {}
    }
}

/// `run_equiv`: the compiler's output behaves like the source on two seeds
/// (no verifier: a fast differential test).
pub fn run_equiv(data: &[u8]) {
    oracle::install_panic_hook();
    let Some((opts, c, _)) = decode_case(data) else { return };
    let compiled = oracle::compile_ok(&c.program, &opts).unwrap_or_else(|f| fail(f));
    oracle::runs_agree(&c.program, &compiled.program, &[1, 2]).unwrap_or_else(|f| fail(f));
}

/// `verifier_soundness`: a mutant of a proven output that behaves
/// differently is never proven.
pub fn verifier_soundness(data: &[u8]) {
    oracle::install_panic_hook();
    let Some((opts, c, mut rest)) = decode_case(data) else { return };
    let Ok(compiled) = oracle::compile_ok(&c.program, &opts) else { return };
    if oracle::verify_proves(&c.program, &compiled.program, &VOPTS).is_err() {
        return;
    }
    if let Err(f) = oracle::soundness(&c.program, &compiled.program, &mut rest, &VOPTS) {
        fail(f);
    }
}

/// `parse_roundtrip`: the parser never panics on any bytes and print/parse
/// round-trips what it accepts.
pub fn parse_roundtrip(data: &[u8]) {
    oracle::install_panic_hook();
    if let Err(f) = oracle::parse_roundtrip(data) {
        // Intended: a finding is reported to libFuzzer as a crash.
        panic!("{}\n{}", f.signature(), f.message);
    }
}

/// The `.ir` text an artifact stands for: the text itself when it parses
/// (a `parse_roundtrip` input), else the generated case's program with its
/// compile options in a comment.
pub fn decode(data: &[u8]) -> Option<String> {
    if let Ok(p) = schedra_ir::parse::parse(data, None) {
        return Some(schedra_ir::print::print(&p));
    }
    let (opts, c, _) = decode_case(data)?;
    Some(format!("# compile with: {}\n{}", crate::campaign::options_line(&opts), schedra_ir::print::print(&c.program)))
}

/// The cargo-fuzz targets whose inputs are generated cases.
pub const CASE_TARGETS: [&str; 3] = ["compile_verify", "run_equiv", "verifier_soundness"];

/// Write seed inputs for the cargo-fuzz targets under `dir`: `n` generated
/// cases (4 KiB of seeded bytes each) for each of [`CASE_TARGETS`], and
/// every `.ir`/`.s` file found (recursively) under `texts` for
/// `parse_roundtrip`. Returns how many files were written.
pub fn write_corpus(dir: &std::path::Path, texts: &[std::path::PathBuf], n: u64) -> std::io::Result<usize> {
    let mut written = 0;
    for t in CASE_TARGETS {
        let d = dir.join(t);
        std::fs::create_dir_all(&d)?;
        for i in 0..n {
            std::fs::write(d.join(format!("seed-{i:04}")), crate::gen::seed_bytes(i, 4096))?;
            written += 1;
        }
    }
    let d = dir.join("parse_roundtrip");
    std::fs::create_dir_all(&d)?;
    let mut stack: Vec<std::path::PathBuf> = texts.to_vec();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p)?.flatten().map(|e| e.path()));
        } else if p.extension().is_some_and(|e| e == "ir" || e == "s") {
            let name = p.to_string_lossy().replace(['/', '.'], "_");
            std::fs::copy(&p, d.join(name))?;
            written += 1;
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_gives_a_valid_program() {
        let data = crate::gen::seed_bytes(11, 2048);
        let text = decode(&data).expect("decodes");
        let p = schedra_ir::parse::parse(text.as_bytes(), None).expect("parses");
        assert!(schedra_ir::validate::validate(&p).is_ok());
    }

    #[test]
    fn write_corpus_writes_cases_and_texts() {
        let dir = std::env::temp_dir().join(format!("schedra-corpus-test-{}", std::process::id()));
        let examples = std::path::PathBuf::from(format!("{}/../corpus/spec", env!("CARGO_MANIFEST_DIR")));
        let n = write_corpus(&dir, &[examples], 2).expect("writes");
        assert!(n >= 6 + 7, "wrote {n}");
        assert!(dir.join("compile_verify/seed-0001").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parse_roundtrip_survives_garbage() {
        for seed in 0..50 {
            parse_roundtrip(&crate::gen::seed_bytes(seed, 300));
        }
    }
}
