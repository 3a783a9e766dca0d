//! Root causes: the findings of a campaign grouped by what fixes them, not
//! by the shape of their messages.
//!
//! One wrong dependency edge shows as many signatures (a `latency` here, a
//! `clobber` there, a value missing at a block boundary elsewhere). Two
//! findings are taken to have one root cause when
//!
//! 1. they stop failing under the same single change of compile options
//!    ([`fix_key`]): without the injected fault (then the fault is the
//!    cause, whatever else also helps), or else the same set among the
//!    other scheduler, the other allocator, and no `--stress-regalloc`; or
//! 2. no single change fixes them and their reduced programs are the same
//!    up to renaming ([`program_key`]: the reducer's canonical names make
//!    that plain text equality).
//!
//! A finding that cannot be reduced and that no single change fixes is its
//! own root cause (keyed by its signature).
//!
//! Invariant: every signature is in exactly one group; groups only merge,
//! so a count never goes down.

use crate::oracle::Kind;
use crate::reduce::interesting::{failure, Check};
use schedra_compiler::{Options, Ra, Sched};
use schedra_ir::Program;

/// The single changes of `opts` tried by [`fix_key`], with their labels.
pub fn single_changes(opts: &Options) -> Vec<(String, Options)> {
    let mut v = Vec::new();
    if let Some(f) = opts.inject {
        v.push((format!("without --inject {f}"), Options { inject: None, ..*opts }));
    }
    let (sched, name) = match opts.sched {
        Sched::TopDown => (Sched::BottomUp, "bottomup"),
        Sched::BottomUp => (Sched::TopDown, "topdown"),
    };
    v.push((format!("--sched {name}"), Options { sched, ..*opts }));
    let (ra, name) = match opts.ra {
        Ra::Split => (Ra::Graph, "graph"),
        Ra::Graph => (Ra::Split, "split"),
    };
    v.push((format!("--ra {name}"), Options { ra, ..*opts }));
    if let Some(n) = opts.stress_regalloc {
        v.push((format!("without --stress-regalloc {n}"), Options { stress_regalloc: None, ..*opts }));
    }
    v
}

/// The root-cause key "fixed by": `fault NAME` when `src` passes every
/// check without the injected fault, otherwise `fixed by: A; B` for the
/// single changes under which it passes, `None` when none does. A timeout
/// is only tried without the fault (the other changes keep the fault, and
/// could hang this thread).
pub fn fix_key(src: &Program, check: &Check, kind: Kind) -> Option<String> {
    let changes = single_changes(&check.options);
    let passes = |o: &Options| failure(src, &Check { options: *o, ..check.clone() }).is_none();
    if let (Some(f), Some((_, without))) = (check.options.inject, changes.first()) {
        if passes(without) {
            return Some(format!("fault {f}"));
        }
    }
    if kind == Kind::Timeout {
        return None;
    }
    let fixed: Vec<&str> = changes.iter().filter(|(label, _)| !label.starts_with("without --inject")).filter(|(_, o)| passes(o)).map(|(l, _)| l.as_str()).collect();
    (!fixed.is_empty()).then(|| format!("fixed by: {}", fixed.join("; ")))
}

/// The root-cause key of a reduced program: its text without comments
/// (the reducer has made its names canonical), hashed.
pub fn program_key(reduced: &Program) -> String {
    let text = schedra_ir::print::print(reduced);
    let body: String = text.lines().filter(|l| !l.trim_start().starts_with('#')).map(|l| format!("{l}\n")).collect();
    format!("program {} {:016x}", reduced.target.name, crate::gen::seed_of(body.as_bytes()))
}

/// One root cause: its key, the signatures that showed it, how many cases.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Group {
    /// The key (`fault NAME`, `fixed by: ...`, `program ...`, or
    /// `signature ...`).
    pub cause: String,
    /// Its distinct signatures, in the order found.
    pub signatures: Vec<String>,
    /// Cases that failed with any of them.
    pub cases: u64,
    /// The directory of its first finding.
    pub dir: String,
    /// Instructions of the smallest reduced program among its findings.
    pub minimized_instructions: Option<usize>,
}

/// The campaign's root causes.
#[derive(Clone, Debug, Default)]
pub struct RootCauses {
    /// The groups, in the order their first finding was classified.
    pub groups: Vec<Group>,
}

impl RootCauses {
    /// File `signature` (a new finding in `dir`) under `cause`; whether it
    /// is the first finding of its root cause.
    pub fn join(&mut self, cause: &str, signature: &str, dir: &str) -> bool {
        if let Some(g) = self.groups.iter_mut().find(|g| g.cause == cause) {
            if !g.signatures.iter().any(|s| s == signature) {
                g.signatures.push(signature.to_string());
                g.cases += 1;
            }
            return false;
        }
        self.groups.push(Group { cause: cause.to_string(), signatures: vec![signature.to_string()], cases: 1, dir: dir.to_string(), minimized_instructions: None });
        true
    }

    /// Move `signature`'s group under `cause` (merging it into the group
    /// already there, if any).
    pub fn rekey(&mut self, signature: &str, cause: &str) {
        let Some(from) = self.position(signature) else { return };
        if self.groups[from].cause == cause {
            return;
        }
        match self.groups.iter().position(|g| g.cause == cause) {
            Some(to) => {
                let g = self.groups.remove(from);
                let to = if to > from { to - 1 } else { to };
                let into = &mut self.groups[to];
                into.signatures.extend(g.signatures);
                into.cases += g.cases;
                into.minimized_instructions = min_opt(into.minimized_instructions, g.minimized_instructions);
            }
            None => self.groups[from].cause = cause.to_string(),
        }
    }

    /// Count another case failing with the known `signature`.
    pub fn hit(&mut self, signature: &str) {
        if let Some(i) = self.position(signature) {
            self.groups[i].cases += 1;
        }
    }

    /// Record that a finding with `signature` was reduced to `n`
    /// instructions.
    pub fn reduced(&mut self, signature: &str, n: usize) {
        if let Some(i) = self.position(signature) {
            let g = &mut self.groups[i];
            g.minimized_instructions = min_opt(g.minimized_instructions, Some(n));
        }
    }

    /// The cause `signature` is filed under.
    pub fn cause_of(&self, signature: &str) -> Option<&str> {
        self.position(signature).map(|i| self.groups[i].cause.as_str())
    }

    fn position(&self, signature: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.signatures.iter().any(|s| s == signature))
    }
}

fn min_opt(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_compiler::Fault;
    use schedra_ir::parse::parse;

    #[test]
    fn groups_merge_and_count() {
        let mut rc = RootCauses::default();
        assert!(rc.join("fault x", "a", "d1"));
        assert!(!rc.join("fault x", "b", "d2"));
        assert!(rc.join("signature c", "c", "d3"));
        rc.hit("a");
        rc.reduced("c", 4);
        assert_eq!(rc.groups.len(), 2);
        assert_eq!(rc.groups[0].cases, 3);
        rc.rekey("c", "fault x");
        assert_eq!(rc.groups.len(), 1);
        assert_eq!(rc.groups[0].signatures, ["a", "b", "c"]);
        assert_eq!((rc.groups[0].cases, rc.groups[0].minimized_instructions), (4, Some(4)));
        assert_eq!(rc.cause_of("c"), Some("fault x"));
        rc.rekey("a", "program p");
        assert_eq!(rc.groups[0].cause, "program p", "a group without a match is renamed");
    }

    #[test]
    fn a_fault_finding_is_keyed_by_its_fault() {
        let src = "target gen8\ninput %0 = $g0\nb0:\n $g20 = add %0, 0\n %1 = mov $g20\n $g20 = mov 0\n send.eot %1\n end\n";
        let p = parse(src.as_bytes(), None).expect("parses");
        let check = Check { options: Options { inject: Some(Fault::SchedIgnoreWar), ..Options::default() }, ..Check::default() };
        assert!(failure(&p, &check).is_some(), "the zoo case fails with its fault");
        assert_eq!(fix_key(&p, &check, Kind::Violation).as_deref(), Some("fault sched-ignore-war"));
        let no_fault = Check { options: Options::default(), ..Check::default() };
        let all = fix_key(&p, &no_fault, Kind::Violation);
        assert_eq!(all.as_deref(), Some("fixed by: --sched bottomup; --ra graph"), "(on a program that passes, every change passes)");
    }

    #[test]
    fn program_keys_ignore_comments_only() {
        let a = parse(b"target v3d71\nb0:\n %0 = ldunif 0\n tlbw %0\n end\n", None).expect("parses");
        let b = parse(b"# a note\ntarget v3d71\nb0:\n %0 = ldunif 0\n tlbw %0\n end\n", None).expect("parses");
        let c = parse(b"target v3d71\nb0:\n %0 = ldunif 1\n tlbw %0\n end\n", None).expect("parses");
        assert_eq!(program_key(&a), program_key(&b));
        assert_ne!(program_key(&a), program_key(&c));
    }
}
