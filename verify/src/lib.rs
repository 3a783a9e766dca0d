//! schedra-verify
