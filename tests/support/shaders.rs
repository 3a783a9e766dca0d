//! The shaders every end-to-end test walks: each `.ir` under `corpus/`
//! (regressions, bug zoo and each spec example's `src.ir` under
//! `corpus/spec` included), in sorted order, so that a test's output is the
//! same on every machine.
//! Shared by the root crate's test files (`#[path = "support/shaders.rs"]
//! mod shaders;`) instead of one copy per file.
#![allow(dead_code)] // each test file uses a different subset

use schedra_ir::Program;
use std::path::{Path, PathBuf};

/// The repository root (the root package's manifest directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Append every `.ir` file below `dir` to `out`, depth first, sorted.
pub fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "ir") {
            out.push(p);
        }
    }
}

/// Every corpus shader, the spec example sources (`corpus/spec/*/src.ir`)
/// included.
pub fn shaders() -> Vec<PathBuf> {
    let mut v = Vec::new();
    collect(&root().join("corpus"), &mut v);
    v
}

/// Parse the shader at `path`; a test failure naming the file if it cannot.
pub fn load(path: &Path) -> Program {
    let bytes = std::fs::read(path).expect("read shader");
    schedra_ir::parse::parse(&bytes, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
