//! The corpus programs the unit tests walk (tests only).

use schedra_ir::Program;
use std::path::PathBuf;

/// Every program under `corpus/{v3d71,gen8,r600}` that parses, with its
/// path (for assertion messages), in directory order.
pub(crate) fn programs() -> Vec<(PathBuf, Program)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut out = Vec::new();
    for dir in ["v3d71", "gen8", "r600"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in entries.flatten() {
            let Ok(text) = std::fs::read(e.path()) else { continue };
            if let Ok(p) = schedra_ir::parse::parse(&text, None) {
                out.push((e.path(), p));
            }
        }
    }
    out
}
