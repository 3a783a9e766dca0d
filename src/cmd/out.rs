//! Writing results to standard output without panicking. `print!` panics
//! when the write fails (a full disk, `> /dev/full`); these functions return
//! the error instead, and [`finish`] turns it into one line on standard
//! error and the bad-usage status 2 (the output was sent somewhere it cannot
//! go). A closed pipe never gets here: `main` restores SIGPIPE's default, so
//! `schedra … | head` ends quietly.

use std::io::Write;

/// Write `s` to standard output and flush it.
pub fn text(s: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()
}

/// Write `s` and a newline to standard output and flush it.
pub fn line(s: &str) -> std::io::Result<()> {
    text(&format!("{s}\n"))
}

/// `status` when the output was written; otherwise a one-line message on
/// standard error and status 2.
pub fn finish(written: std::io::Result<()>, status: i32) -> i32 {
    match written {
        Ok(()) => status,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: cannot write standard output: {e}");
            super::input::BAD_INPUT
        }
    }
}
