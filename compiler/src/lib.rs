//! schedra-compiler
