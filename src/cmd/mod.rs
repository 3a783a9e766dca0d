//! The subcommands, one module each, plus [`input`]: reading and parsing the
//! files they are given.

pub mod compile;
pub mod flags;
pub mod fmt;
pub mod fuzz;
pub mod input;
pub mod lower;
pub mod out;
pub mod reduce;
pub mod run;
pub mod targets;
pub mod verify;
