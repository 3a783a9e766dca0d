//! Source-form validity (to be written).
