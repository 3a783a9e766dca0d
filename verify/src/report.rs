//! The verifier's report: the JSON object of `cli.md` (`verify --json`) and
//! a human rendering that shows the offending lines of both files.
//!
//! Invariant: `violations` is sorted most fundamental first — by [`Kind`]
//! rank (structure, register, slot, hazard, then the value kinds latency,
//! clobber, dataflow: a cause before its symptoms), then by position — and
//! the verdict is `violation` iff it is non-empty, else `unknown` iff some
//! obligation was left unknown, else `proven`.

use crate::smt::Counterexample;
use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{emit_into_string, Config};
use serde::Serialize;

/// The kind of a violation (`semantics.md`, "Violation kinds"), in rank
/// order: earlier kinds are more fundamental.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The programs cannot be compared.
    Structure,
    /// A register the op may not use there.
    Register,
    /// A bundle breaks slot, pairing, port, immediate or same-destination rules.
    Slot,
    /// A target sequence rule.
    Hazard,
    /// A read before its write landed, or a write in flight at block end.
    Latency,
    /// A live value overwritten before its last use.
    Clobber,
    /// An effect, branch condition or live-out value differs.
    Dataflow,
}

impl Kind {
    /// The lower-case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Structure => "structure",
            Kind::Register => "register",
            Kind::Slot => "slot",
            Kind::Hazard => "hazard",
            Kind::Latency => "latency",
            Kind::Clobber => "clobber",
            Kind::Dataflow => "dataflow",
        }
    }
}

/// One violation, located in the machine program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// What is wrong.
    pub kind: Kind,
    /// Block label.
    pub block: String,
    /// 0-based bundle index within the block (the bundle count for the block
    /// end / terminator; 0 for whole-program problems).
    pub bundle: usize,
    /// Line in the machine file (0 when there is none).
    pub line: u32,
    /// One or two sentences saying what is wrong.
    pub message: String,
    /// The related line in the source file, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_line: Option<u32>,
    /// For value differences: inputs under which the programs differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
}

impl Violation {
    /// A violation without source line or counterexample.
    pub fn new(kind: Kind, block: &str, bundle: usize, line: u32, message: impl Into<String>) -> Violation {
        Violation { kind, block: block.to_string(), bundle, line, message: message.into(), src_line: None, counterexample: None }
    }
}

/// The overall verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every obligation proven and every rule kept.
    Proven,
    /// At least one violation.
    Violation,
    /// No violation found, but the solver could not decide something.
    Unknown,
}

/// Obligation counts: `total == syntactic + smt`; `unknown` of the `smt`
/// ones were not decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Obligations {
    /// All obligations.
    pub total: usize,
    /// Closed by syntactic equality of hash-consed terms.
    pub syntactic: usize,
    /// Sent to the solver.
    pub smt: usize,
    /// Sent to the solver and not decided.
    pub unknown: usize,
}

/// The result of one verification (`cli.md`'s keys, plus `src_line` and
/// `counterexample` inside violations where present).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// `proven`, `violation` or `unknown`.
    pub verdict: Verdict,
    /// The target's name.
    pub target: String,
    /// Every violation, most fundamental first.
    pub violations: Vec<Violation>,
    /// Obligation counts.
    pub obligations: Obligations,
    /// Issue cycles of the machine program (stalls included), summed over
    /// its reachable blocks.
    pub cycles: u64,
    /// Wall time of the verification.
    pub time_ms: f64,
}

impl Report {
    /// Sort and deduplicate the violations and set the verdict (see the
    /// module invariant).
    pub fn finish(&mut self, block_order: &dyn Fn(&str) -> usize) {
        self.violations.sort_by(|a, b| {
            (a.kind, block_order(&a.block), a.bundle, a.line).cmp(&(b.kind, block_order(&b.block), b.bundle, b.line))
        });
        self.violations.dedup_by(|a, b| a.kind == b.kind && a.block == b.block && a.bundle == b.bundle && a.message == b.message);
        self.verdict = if !self.violations.is_empty() {
            Verdict::Violation
        } else if self.obligations.unknown > 0 {
            Verdict::Unknown
        } else {
            Verdict::Proven
        };
    }

    /// The process exit status of `schedra verify` (cli.md): 0 proven,
    /// 1 violation, 3 unknown.
    pub fn exit_status(&self) -> i32 {
        match self.verdict {
            Verdict::Proven => 0,
            Verdict::Violation => 1,
            Verdict::Unknown => 3,
        }
    }

    /// The JSON object of `verify --json` (one line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"verdict\":\"unknown\",\"error\":\"{e}\"}}"))
    }
}

/// Byte range of 1-based `line` in `text` (without its newline); empty at
/// the end when the line does not exist.
fn line_range(text: &str, line: u32) -> std::ops::Range<usize> {
    if line == 0 {
        return 0..0;
    }
    let mut start = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line as usize {
            let body = l.trim_end_matches(['\n', '\r']);
            let body = body.split('#').next().unwrap_or(body).trim_end();
            let lead = body.len() - body.trim_start().len();
            return start + lead..start + body.len();
        }
        start += l.len();
    }
    text.len()..text.len()
}

/// Most violations [`render_human`] draws in full; `--json` lists them all.
pub const MAX_RENDERED: usize = 20;

/// A human rendering of the report: one diagnostic per violation showing the
/// offending machine line and the related source line (the first
/// [`MAX_RENDERED`] violations, then a count of the rest, so the output stays
/// linear in the input), then a summary line.
pub fn render_human(report: &Report, src_path: &str, src_text: &str, mach_path: &str, mach_text: &str) -> String {
    let mut files = SimpleFiles::new();
    let src_id = files.add(src_path.to_string(), src_text.to_string());
    let mach_id = files.add(mach_path.to_string(), mach_text.to_string());
    let config = Config::default();
    let mut out = String::new();
    let rest = report.violations.len().saturating_sub(MAX_RENDERED);
    if rest > 0 {
        out.push_str(&format!("({} violations; the first {MAX_RENDERED} are shown, `--json` lists them all)\n", report.violations.len()));
    }
    for v in report.violations.iter().take(MAX_RENDERED) {
        let mut labels = Vec::new();
        if v.line > 0 {
            labels.push(Label::primary(mach_id, line_range(mach_text, v.line)).with_message(format!("block {}, bundle {}", v.block, v.bundle)));
        }
        if let Some(sl) = v.src_line.filter(|l| *l > 0) {
            labels.push(Label::secondary(src_id, line_range(src_text, sl)).with_message("in the source"));
        }
        let mut notes = Vec::new();
        if let Some(c) = &v.counterexample {
            notes.push(format!("counterexample {}", c.describe()));
            let target = schedra_ir::target::by_name(&report.target);
            let words: Vec<String> = c.words.iter().map(|w| target.map(|t| w.describe(t)).unwrap_or_else(|| format!("{:?} {} = {:#x}", w.input, w.index, w.word))).collect();
            let words = if words.is_empty() { "none (every input word is free)".to_string() } else { words.join(", ") };
            notes.push(format!("input words: {words}"));
        }
        let diag = Diagnostic::error().with_message(format!("{}: {}", v.kind.as_str(), v.message)).with_labels(labels).with_notes(notes);
        match emit_into_string(&config, &files, &diag) {
            Ok(s) => out.push_str(&s),
            Err(_) => out.push_str(&format!("error: {}: {} ({mach_path}:{})\n", v.kind.as_str(), v.message, v.line)),
        }
    }
    let o = &report.obligations;
    let verdict = match report.verdict {
        Verdict::Proven => "proven",
        Verdict::Violation => "violation",
        Verdict::Unknown => "unknown (the solver could not decide every obligation)",
    };
    out.push_str(&format!(
        "{verdict}: {mach_path} against {src_path} ({}), {} obligations ({} syntactic, {} smt, {} unknown), {} cycles, {:.1} ms\n",
        report.target, o.total, o.syntactic, o.smt, o.unknown, report.cycles, report.time_ms
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(vs: Vec<Violation>, unknown: usize) -> Report {
        let mut r = Report {
            verdict: Verdict::Proven,
            target: "v3d71".into(),
            violations: vs,
            obligations: Obligations { total: 2, syntactic: 1, smt: 1, unknown },
            cycles: 3,
            time_ms: 0.5,
        };
        r.finish(&|b| if b == "b0" { 0 } else { 1 });
        r
    }

    #[test]
    fn verdicts_and_exit_statuses() {
        assert_eq!(report(vec![], 0).exit_status(), 0);
        assert_eq!(report(vec![], 1).exit_status(), 3);
        let r = report(vec![Violation::new(Kind::Dataflow, "b0", 1, 3, "x")], 1);
        assert_eq!(r.exit_status(), 1);
    }

    #[test]
    fn most_fundamental_first_and_json_keys() {
        let r = report(
            vec![Violation::new(Kind::Dataflow, "b0", 0, 2, "d"), Violation::new(Kind::Structure, "b1", 3, 9, "s")],
            0,
        );
        assert_eq!(r.violations[0].kind, Kind::Structure);
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).expect("valid json");
        assert_eq!(v["verdict"], "violation");
        assert_eq!(v["violations"][0]["kind"], "structure");
        assert_eq!(v["violations"][0]["bundle"], 3);
        assert_eq!(v["obligations"]["smt"], 1);
        assert!(v["time_ms"].is_number() && v["cycles"].is_number() && v["target"] == "v3d71");
    }

    #[test]
    fn human_output_shows_both_lines() {
        let mut v = Violation::new(Kind::Latency, "b0", 1, 2, "reads too soon");
        v.src_line = Some(1);
        let r = report(vec![v], 0);
        let s = render_human(&r, "a.ir", "%a = ldunif 0\n", "a.s", "b0:\n  { mul: fmul $rf5, $rf4, $rf0 }\n");
        assert!(s.contains("fmul $rf5"), "{s}");
        assert!(s.contains("ldunif 0"), "{s}");
        assert!(s.contains("latency"), "{s}");
    }

    #[test]
    fn human_output_is_capped() {
        let many: Vec<Violation> = (0..MAX_RENDERED + 5).map(|i| Violation::new(Kind::Slot, "b0", i, 2, format!("bad bundle {i}"))).collect();
        let r = report(many, 0);
        let s = render_human(&r, "a.ir", "", "a.s", "b0:\n  { }\n");
        assert!(s.contains("bad bundle 0") && s.contains(&format!("bad bundle {}", MAX_RENDERED - 1)), "{s}");
        assert!(!s.contains(&format!("bad bundle {MAX_RENDERED}")), "{s}");
        assert!(s.contains(&format!("{} violations", MAX_RENDERED + 5)), "{s}");
    }
}
