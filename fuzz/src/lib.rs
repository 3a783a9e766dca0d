//! schedra-fuzz
