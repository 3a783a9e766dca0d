//! cargo-fuzz target `verifier_soundness`: see `schedra_fuzz::entry::verifier_soundness`. Run from the
//! repository root with `cargo fuzz run --sanitizer none --features libfuzzer verifier_soundness`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| schedra_fuzz::entry::verifier_soundness(data));
