//! schedra-fuzz: interpreters, generators, oracles and the reducer.

#![warn(missing_docs)]

pub mod interp;
pub mod gen;
pub mod reduce;
pub mod oracle;
pub mod mutate;
pub mod campaign;
pub mod targets;
