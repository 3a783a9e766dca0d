//! The front end's one error type: a location in the user's shader file and
//! one sentence saying what is wrong or unsupported.

/// A located front-end error (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {message}")]
pub struct FrontError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// What is wrong.
    pub message: String,
}

impl FrontError {
    /// An error at `line`:`col`.
    pub fn at(line: u32, col: u32, message: String) -> FrontError {
        FrontError { line: line.max(1), col: col.max(1), message }
    }
    /// The message prefixed with `path:`.
    pub fn with_path(&self, path: &str) -> String {
        format!("{path}:{self}")
    }
}
