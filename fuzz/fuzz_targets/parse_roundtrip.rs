//! cargo-fuzz target `parse_roundtrip`: see `schedra_fuzz::entry::parse_roundtrip`. Run from the
//! repository root with `cargo fuzz run --sanitizer none --features libfuzzer parse_roundtrip`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| schedra_fuzz::entry::parse_roundtrip(data));
