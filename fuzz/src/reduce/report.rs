//! What the user sees of a reduction: a unified diff of the result against
//! the input, and a progress display (an indicatif bar on a terminal, a few
//! plain lines otherwise).
//!
//! Invariant: nothing here affects the reduction; the display only reads
//! [`Progress`] snapshots, and the diff only reads two texts.

use super::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use similar::TextDiff;

/// A unified diff (3 lines of context) from `old` to `new`, with `---`/`+++`
/// headers naming them; empty when the texts are equal.
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new).unified_diff().context_radius(3).header(old_name, new_name).to_string()
}

/// A one-line summary: `reduced 300 -> 2 instructions (99.3% smaller) in 41 tests`.
pub fn summary(original: usize, reduced: usize, tests: usize) -> String {
    let pct = if original == 0 { 0.0 } else { 100.0 * (original.saturating_sub(reduced)) as f64 / original as f64 };
    format!("reduced {original} -> {reduced} instructions ({pct:.1}% smaller) in {tests} tests")
}

/// Shows progress on standard error: a bar when it is a terminal, plain
/// lines otherwise (one per pass that made the program smaller).
pub struct Display {
    bar: Option<ProgressBar>,
    /// Plain mode: the pass, round and instruction count of the last
    /// snapshot, and the count last printed.
    last: Option<(&'static str, usize, usize)>,
    printed: Option<usize>,
}

impl Display {
    /// A display; `terminal` selects the bar.
    pub fn new(terminal: bool, max_tests: usize) -> Display {
        let bar = terminal.then(|| {
            let b = ProgressBar::with_draw_target(Some(max_tests as u64), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} reduce [{elapsed_precise}] {msg} ({pos} tests)").unwrap_or_else(|_| ProgressStyle::default_spinner());
            b.set_style(style);
            b
        });
        Display { bar, last: None, printed: None }
    }

    /// Show one snapshot.
    pub fn update(&mut self, p: &Progress) {
        if let Some(b) = &self.bar {
            b.set_position(p.tests_run as u64);
            b.set_message(format!("round {} {}: {} -> {} instructions", p.round, p.pass, p.original_instructions, p.instructions));
            return;
        }
        if let Some((pass, round, n)) = self.last {
            let shown = self.printed.unwrap_or(p.original_instructions);
            if pass != p.pass && n != shown {
                eprintln!("reduce: round {round} {pass}: {} -> {n} instructions after {} tests", p.original_instructions, p.tests_run.saturating_sub(1));
                self.printed = Some(n);
            }
        }
        self.last = Some((p.pass, p.round, p.instructions));
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_shows_removed_lines() {
        let d = unified_diff("a\nb\nc\n", "a\nc\n", "orig", "min");
        assert!(d.contains("--- orig") && d.contains("+++ min") && d.contains("-b"));
        assert!(unified_diff("x\n", "x\n", "o", "m").is_empty());
    }

    #[test]
    fn summary_counts() {
        assert_eq!(summary(300, 3, 40), "reduced 300 -> 3 instructions (99.0% smaller) in 40 tests");
    }
}
