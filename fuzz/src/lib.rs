//! schedra-fuzz: interpreters, generators, oracles and the reducer.

pub mod interp;
pub mod gen;
pub mod reduce;
