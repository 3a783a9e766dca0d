//! cargo-fuzz target `run_equiv`: see `schedra_fuzz::entry::run_equiv`. Run from the
//! repository root with `cargo fuzz run --sanitizer none --features libfuzzer run_equiv`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| schedra_fuzz::entry::run_equiv(data));
