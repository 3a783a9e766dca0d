//! schedra-fuzz: interpreters, generators, oracles and the reducer.

pub mod interp;
pub mod reduce;
