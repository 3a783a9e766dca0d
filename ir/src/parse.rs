//! Text → [`Program`] (to be written).
use crate::{error::Located, ir::Program, target::Target};
/// Parse a program.
pub fn parse(_text: &[u8], _default_target: Option<&'static Target>) -> Result<Program, Located> {
    Err(Located::new(Default::default(), "parser not written yet"))
}
