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
/// lines otherwise (one per pass that changed the program).
pub struct Display {
    bar: Option<ProgressBar>,
    /// The last pass seen and the instruction count last printed.
    last: Option<(&'static str, usize)>,
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
        Display { bar, last: None }
    }

    /// Show one snapshot.
    pub fn update(&mut self, p: &Progress) {
        let msg = format!("round {} {}: {} -> {} instructions", p.round, p.pass, p.original_instructions, p.instructions);
        match &self.bar {
            Some(b) => {
                b.set_position(p.tests_run as u64);
                b.set_message(msg);
            }
            None => {
                let (pass, shown) = self.last.unwrap_or((p.pass, p.original_instructions));
                if pass != p.pass && shown != p.instructions {
                    eprintln!("reduce: {msg} after {} tests", p.tests_run);
                    self.last = Some((p.pass, p.instructions));
                } else {
                    self.last = Some((p.pass, shown));
                }
            }
        }
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
