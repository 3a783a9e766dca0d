//! Progress display: an indicatif bar on a terminal (execs/s, findings,
//! generator-feature coverage, time left), plain lines on standard error
//! every few seconds otherwise.
//!
//! The line also says when a thread stalls: how many were abandoned, and
//! the stage that has run longest when that is over a second.
//!
//! Invariant: the display only reads the campaign's counters; it never
//! blocks the workers.

use super::supervise::Role;
use crate::gen::Features;
use crate::phase::Phase;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::{Duration, Instant};

/// A snapshot of the campaign's counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    /// Cases run.
    pub execs: u64,
    /// New findings written.
    pub findings: usize,
    /// Root causes among them, as classified so far.
    pub root_causes: usize,
    /// Features seen so far.
    pub features: Features,
    /// Time since the start.
    pub elapsed: Duration,
    /// Planned duration.
    pub total: Duration,
    /// Threads abandoned (stalled past a deadline).
    pub stalled: usize,
    /// The live thread whose stage has run longest, when over a second.
    pub slowest: Option<(Role, usize, Phase, Duration)>,
    /// Findings waiting for the reducer.
    pub queued: usize,
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
    /// One line: `execs 1200 (400/s), findings 2 (1 root cause), features
    /// 17/20, 25s left`, then `, 1 queued`, `, stalled 1` and `, worker 0
    /// in verify 3s` when they apply.
    pub fn line(&self) -> String {
        let left = self.total.saturating_sub(self.elapsed).as_secs();
        let mut l = format!(
            "execs {} ({:.0}/s), findings {} ({} root cause{}), features {}/{}, {}s left",
            self.execs,
            self.rate(),
            self.findings,
            self.root_causes,
            if self.root_causes == 1 { "" } else { "s" },
            self.features.count(),
            Features::ALL.len(),
            left
        );
        if self.queued > 0 {
            l += &format!(", {} queued", self.queued);
        }
        if self.stalled > 0 {
            l += &format!(", stalled {}", self.stalled);
        }
        if let Some((role, n, stage, age)) = self.slowest {
            let who = match role {
                Role::Worker => format!("worker {n}"),
                Role::Reducer => "reducer".to_string(),
            };
            l += &format!(", {who} in {} {}s", stage.as_str(), age.as_secs());
        }
        l
    }
}

/// Executions over time, one sample per second (the first sample of each
/// second), for the windows around the first finding.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    samples: Vec<(f64, u64)>,
}

impl Timeline {
    /// Note `execs` cases run by `t` seconds.
    pub fn record(&mut self, t: f64, execs: u64) {
        let second = t.floor();
        if self.samples.last().is_none_or(|&(u, _)| u.floor() < second) {
            self.samples.push((t, execs));
        }
    }
    /// Cases run by `t` (the sample nearest before it; 0 before any).
    fn at(&self, t: f64) -> (f64, u64) {
        let i = self.samples.partition_point(|&(u, _)| u <= t);
        if i == 0 {
            (0.0, 0)
        } else {
            self.samples[i - 1]
        }
    }
    /// The windows of `span` seconds before and after `first` (clipped to
    /// the start and to `end`, where `execs` had run).
    pub fn window(&self, first: f64, span: f64, end: f64, execs: u64) -> super::FirstFindingWindow {
        let (t0, e0) = self.at((first - span).max(0.0));
        let (t1, e1) = self.at(first);
        let (t2, e2) = if first + span >= end { (end, execs) } else { self.at(first + span) };
        let (before_s, after_s) = (t1 - t0, t2 - t1);
        let rate = |e: u64, s: f64| (s > 0.0).then(|| e as f64 / s);
        let ratio = match (rate(e1 - e0, before_s), rate(e2.saturating_sub(e1), after_s)) {
            (Some(b), Some(a)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        super::FirstFindingWindow { execs_before: e1 - e0, before_s, execs_after: e2.saturating_sub(e1), after_s, rate_ratio: ratio }
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
        let s = Snapshot { execs: 100, findings: 1, root_causes: 1, features: Features::BRANCH, elapsed: Duration::from_secs(10), total: Duration::from_secs(30), ..Snapshot::default() };
        let l = s.line();
        assert!(l.contains("(10/s)") && l.contains("20s left") && l.contains("features 1/"), "{l}");
        assert!(l.contains("findings 1 (1 root cause)") && !l.contains("stalled"), "{l}");
    }

    #[test]
    fn line_says_when_a_thread_stalls() {
        let slowest = Some((Role::Worker, 0, Phase::Compile, Duration::from_secs(3)));
        let s = Snapshot { execs: 10, elapsed: Duration::from_secs(5), total: Duration::from_secs(30), stalled: 2, slowest, queued: 1, ..Snapshot::default() };
        let l = s.line();
        assert!(l.contains(", 1 queued, stalled 2, worker 0 in compile 3s"), "{l}");
    }

    #[test]
    fn windows_around_the_first_finding() {
        let mut t = Timeline::default();
        for sec in 0..=90u64 {
            t.record(sec as f64 + 0.05, sec * 100);
            t.record(sec as f64 + 0.5, sec * 100 + 7);
        }
        let w = t.window(40.3, 30.0, 91.0, 9100);
        assert_eq!((w.execs_before, w.execs_after), (3000, 3000));
        assert!((w.before_s - 30.0).abs() < 1e-9 && (w.after_s - 30.0).abs() < 1e-9, "{w:?}");
        assert!((w.rate_ratio.expect("ratio") - 1.0).abs() < 1e-9);
        let early = t.window(2.5, 30.0, 61.0, 6100);
        assert!((early.before_s - 2.05).abs() < 1e-9, "clipped at the start: {early:?}");
        let late = t.window(50.2, 30.0, 55.0, 5600);
        assert_eq!(late.execs_after, 5600 - 5000, "clipped at the end");
    }
}
