//! Located errors: every rejection of input text or of an invalid program
//! carries a line and column and one sentence.

use crate::ir::Span;

/// An error at a position of a text whose path is not known here.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{}:{}: {message}", span.line, span.col)]
pub struct Located {
    /// Where the problem is (1-based; line 0 = no position).
    pub span: Span,
    /// One sentence saying what was expected.
    pub message: String,
}

impl Located {
    /// An error at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Located {
        Located { span, message: message.into() }
    }
    /// Attach the path of the file the text came from.
    pub fn at(self, path: &str) -> Error {
        Error { path: path.to_string(), span: self.span, message: self.message }
    }
}

/// A located error with the path of its file: prints as
/// `path:line:col: message`.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{path}:{}:{}: {message}", span.line, span.col)]
pub struct Error {
    /// The file's path as given by the user (`-` for standard input).
    pub path: String,
    /// Where the problem is.
    pub span: Span,
    /// One sentence saying what was expected.
    pub message: String,
}
