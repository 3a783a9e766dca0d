//! The interestingness of a `timeout` finding: "still does not finish".
//!
//! A stage that loops forever cannot be stopped inside a thread, so each
//! candidate is compiled (or compiled and verified) by a child process —
//! `schedra compile FILE OPTIONS` or `schedra verify FILE OPTIONS` — which
//! is killed at the per-candidate deadline. A candidate is interesting when
//! the child is still running at the deadline; one that exits, whatever its
//! status, is not. With an injected fault, when the input compiles and is
//! proven without it, candidates must be too (checked in this process:
//! without the fault nothing is expected to hang), so the reduction keeps a
//! hang the fault causes.
//!
//! Invariant: every child exits or is killed (with its process group) at
//! the deadline, so a candidate costs at most the deadline; the temporary
//! directory is removed when the [`HangTest`] is dropped.

use super::command::wait_for;
use super::interesting::{failure, Check};
use crate::stage::Stage;
use schedra_ir::{print::print, Program};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// "The child process still runs `stage` on this candidate at the deadline."
#[derive(Debug)]
pub struct HangTest {
    exe: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    file: PathBuf,
    deadline: Duration,
    own: Option<Check>,
}

/// The `schedra` subcommand that runs `stage` of a case on a file, if one
/// does: compile for a compile hang, verify (compile, then verify) for a
/// verify hang.
pub fn subcommand(stage: Stage) -> Option<&'static str> {
    match stage {
        Stage::Compile => Some("compile"),
        Stage::Verify => Some("verify"),
        _ => None,
    }
}

impl HangTest {
    /// The test for a case that hung in `stage` under `check`: `exe` is the
    /// `schedra` binary, `deadline` the time a candidate may take. `None`
    /// when no subcommand runs that stage, or no temporary directory can be
    /// made. `input` decides whether candidates must be proven without the
    /// injected fault (when `input` is).
    pub fn new(exe: &Path, stage: Stage, check: &Check, deadline: Duration, input: &Program) -> Option<HangTest> {
        let sub = subcommand(stage)?;
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("schedra-hang-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let file = dir.join("candidate.ir");
        let mut args = vec![sub.to_string(), file.display().to_string()];
        args.extend(crate::campaign::options_line(&check.options).split_whitespace().map(str::to_string));
        if stage == Stage::Verify {
            args.extend(["--timeout-ms".to_string(), check.verify.timeout_ms.to_string()]);
        }
        let without = Check { options: schedra_compiler::Options { inject: None, ..check.options }, ..check.clone() };
        let own = (check.options.inject.is_some() && failure(input, &without).is_none()).then_some(without);
        Some(HangTest { exe: exe.to_path_buf(), args, dir, file, deadline, own })
    }

    /// The command line a candidate runs (for reports).
    pub fn command_line(&self) -> String {
        let mut s = self.exe.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }

    /// Whether the child still runs at the deadline on `p` (and, when
    /// required, `p` is proven without the fault).
    pub fn is_interesting(&self, p: &Program) -> bool {
        if self.own.as_ref().is_some_and(|c| failure(p, c).is_some()) {
            return false;
        }
        self.hangs(p)
    }

    /// Whether the child still runs at the deadline on `p`.
    pub fn hangs(&self, p: &Program) -> bool {
        if std::fs::write(&self.file, print(p)).is_err() {
            return false;
        }
        let child = Command::new(&self.exe).args(&self.args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0).spawn();
        match child {
            Ok(mut c) => wait_for(&mut c, self.deadline).is_none(),
            Err(_) => false,
        }
    }
}

impl Drop for HangTest {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    fn prog() -> Program {
        parse(b"target v3d71\nb0:\n %a = ldunif 0\n %r = recip %a\n tlbw %r\n end\n", None).expect("parses")
    }

    #[test]
    fn a_child_that_outlives_the_deadline_is_a_hang() {
        // Two stand-ins for schedra: `true` exits at once whatever its
        // arguments; a script that sleeps forever does not.
        let check = Check::default();
        let quick = HangTest::new(Path::new("true"), Stage::Compile, &check, Duration::from_millis(500), &prog()).expect("test");
        assert!(!quick.is_interesting(&prog()), "a child that exits is not a hang");
        let dir = std::env::temp_dir().join(format!("schedra-hang-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let script = dir.join("forever.sh");
        std::fs::write(&script, "#!/bin/sh\nwhile :; do sleep 1; done\n").expect("script");
        let chmod = Command::new("chmod").arg("+x").arg(&script).status().expect("chmod");
        assert!(chmod.success());
        let endless = HangTest::new(&script, Stage::Verify, &check, Duration::from_millis(200), &prog()).expect("test");
        let start = std::time::Instant::now();
        assert!(endless.is_interesting(&prog()), "a child still running at the deadline is a hang");
        assert!(start.elapsed() < Duration::from_secs(3), "killed at the deadline");
        assert!(endless.command_line().contains("forever.sh verify "), "{}", endless.command_line());
        assert!(endless.command_line().ends_with("--timeout-ms 2000"), "{}", endless.command_line());
        assert!(HangTest::new(&script, Stage::Run, &check, Duration::from_millis(200), &prog()).is_none(), "no subcommand runs a run hang");
        let _ = std::fs::remove_dir_all(dir);
    }
}
