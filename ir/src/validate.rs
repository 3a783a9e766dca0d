//! Source-form validity (to be written).
use crate::{error::Located, ir::Program};
/// Check that a source-form program is valid for its target.
pub fn validate(_p: &Program) -> Result<(), Located> {
    Ok(())
}
