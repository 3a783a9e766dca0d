//! Pre-RA list scheduler (identity for now; replaced below).

use crate::Options;
use schedra_ir::Program;

/// The source program with instructions reordered within blocks.
pub fn schedule_program(src: &Program, _opts: &Options) -> Program {
    src.clone()
}
