//! Progress display: an indicatif bar on a terminal (execs/s, findings,
//! generator-feature coverage, time left), plain lines on standard error
//! every few seconds otherwise.
//!
//! Invariant: the display only reads the campaign's counters; it never
//! blocks the workers.

use crate::gen::Features;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::{Duration, Instant};

/// A snapshot of the campaign's counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    /// Cases run.
    pub execs: u64,
    /// New findings written.
    pub findings: usize,
    /// Features seen so far.
    pub features: Features,
    /// Time since the start.
    pub elapsed: Duration,
    /// Planned duration.
    pub total: Duration,
}

impl Snapshot {
    /// Cases per second so far.
    pub fn rate(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.execs as f64 / s
        } else {
            0.0
        }
    }
    /// One line: `execs 1200 (400/s), findings 2, features 17/19, 25s left`.
    pub fn line(&self) -> String {
        let left = self.total.saturating_sub(self.elapsed).as_secs();
        format!(
            "execs {} ({:.0}/s), findings {}, features {}/{}, {}s left",
            self.execs,
            self.rate(),
            self.findings,
            self.features.count(),
            Features::ALL.len(),
            left
        )
    }
}

/// Where progress goes.
pub enum Display {
    /// A progress bar (terminal).
    Bar(ProgressBar),
    /// Plain lines, at most one per interval.
    Lines {
        /// When the last line was printed.
        last: Instant,
    },
    /// Nothing.
    Quiet,
}

impl Display {
    /// A bar on a terminal, plain lines otherwise; `quiet` shows nothing.
    pub fn new(total: Duration, terminal: bool, quiet: bool) -> Display {
        if quiet {
            return Display::Quiet;
        }
        if !terminal {
            return Display::Lines { last: Instant::now() };
        }
        let bar = ProgressBar::with_draw_target(Some(total.as_secs().max(1)), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {msg}") {
            bar.set_style(style);
        }
        Display::Bar(bar)
    }
    /// Show `s`.
    pub fn update(&mut self, s: &Snapshot) {
        match self {
            Display::Bar(b) => {
                b.set_position(s.elapsed.as_secs());
                b.set_message(s.line());
            }
            Display::Lines { last } if last.elapsed() >= Duration::from_secs(5) => {
                *last = Instant::now();
                eprintln!("fuzz: {}", s.line());
            }
            _ => {}
        }
    }
    /// Print a message above the bar (or as a line).
    pub fn note(&self, msg: &str) {
        match self {
            Display::Bar(b) => b.println(msg),
            Display::Lines { .. } => eprintln!("{msg}"),
            Display::Quiet => {}
        }
    }
    /// Remove the bar.
    pub fn finish(&self) {
        if let Display::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_rate_and_time_left() {
        let s = Snapshot { execs: 100, findings: 1, features: Features::BRANCH, elapsed: Duration::from_secs(10), total: Duration::from_secs(30) };
        let l = s.line();
        assert!(l.contains("(10/s)") && l.contains("20s left") && l.contains("features 1/"), "{l}");
    }
}
