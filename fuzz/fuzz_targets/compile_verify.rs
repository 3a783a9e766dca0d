//! cargo-fuzz target `compile_verify`: see `schedra_fuzz::entry::compile_verify`. Run from the
//! repository root with `cargo fuzz run --sanitizer none --features libfuzzer compile_verify`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| schedra_fuzz::entry::compile_verify(data));
