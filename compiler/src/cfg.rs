//! The control-flow graph of a program and the dense sets its dataflow
//! problems work on, shared by the pre-RA scheduler, the allocator and the
//! bundler (defined in the allocator's liveness).

pub(crate) use crate::allocate::liveness::{
    live_out_of, successor_labels, word_bits, BitSet, BlockIndex, BlockSets, Successors,
};
#[cfg(test)]
pub(crate) use crate::allocate::liveness::{program_live_out, UseDef};
