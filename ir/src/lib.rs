//! schedra's shader IR.
//!
//! One set of types serves both forms of a program (see `shared/spec/format.md`):
//! the *source* form (virtual registers, one op per line, before scheduling and
//! register allocation) and the *machine* form (bundles of slot-tagged ops on
//! physical registers). The compiler, the verifier, the interpreters, the
//! fuzzers and the reducer all speak these types; the verifier reuses only
//! these types, the parser and the target descriptions.
//!
//! Modules: [`ir`] (the program types), [`target`] (target descriptions as
//! data plus a small rules module per target), [`parse`] (text → program),
//! [`print`](mod@print) (program → canonical text), [`validate`] (source-form validity),
//! [`error`] (located errors), [`lex`] (the text format's tokens).

#![warn(missing_docs)]

pub mod cfg;
pub mod error;
pub mod ir;
pub mod lex;
pub mod parse;
pub mod print;
pub mod target;
pub mod validate;

pub use error::{Error, Located};
pub use ir::*;
/// The string type of every name in the IR (see the [`ir`] module docs), and
/// its builders, re-exported so that every crate names the same type.
pub use smol_str::{format_smolstr, SmolStr, SmolStrBuilder, ToSmolStr};
pub use target::{OpDesc, Target};
