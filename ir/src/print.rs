//! [`Program`] → canonical text (to be written).
use crate::ir::Program;
/// Print a program in canonical form.
pub fn print(_p: &Program) -> String {
    String::new()
}
