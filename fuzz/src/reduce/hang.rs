//! The interestingness of a `timeout` finding: "still does not finish".
//!
//! A stage that loops forever cannot be stopped inside a thread, so
//! candidates are checked by a child process — `schedra fuzz --serve-hang
//! "STAGE OPTIONS"`, which reads programs from its standard input and
//! compiles (or compiles and verifies) each one, answering one line per
//! program ([`serve`]). The child stays up while candidates finish, so a
//! candidate that does not hang costs its compile, not a process start. A
//! candidate is interesting when no answer comes by the per-candidate
//! deadline, counted from when the child has said it is ready (so a slow
//! process start is never taken for a hang); then the child is killed with
//! its process group and a fresh one starts at once. The reduced program
//! is checked once more with the stage's full deadline
//! ([`HangTest::confirm`]). With an injected fault, when the input passes
//! every check without it, candidates must also compile without it
//! (checked in this process: without the fault nothing is expected to
//! hang), so the reduction keeps a hang the fault causes; and the
//! per-candidate deadline is then calibrated to the input ([`calibrated`]:
//! twenty times the fault-free stage's time on it, at least 50 ms), since
//! every kept candidate costs the whole deadline.
//!
//! Protocol: the child writes `ready\n` once it runs; then the parent
//! writes `<n>\n` and the `n` bytes of a program's text, and the child
//! answers `done\n` once it has parsed, compiled (and, for a verify hang,
//! verified) it, whatever the outcome. A child that is not ready within
//! [`START_WAIT`] is no hang.
//!
//! Invariant: every child answers or is killed at the deadline, so a
//! candidate costs at most the deadline; the child is killed when the
//! [`HangTest`] is dropped.

use super::interesting::{failure, Check};
use crate::oracle;
use crate::phase::Phase;
use schedra_ir::{print::print, Program};
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// "The child process still runs `stage` on this candidate at the deadline."
#[derive(Debug)]
pub struct HangTest {
    exe: PathBuf,
    args: Vec<String>,
    deadline: Duration,
    own: Option<Check>,
    server: Option<Server>,
}

/// The least time a candidate is given.
pub const LEAST_WAIT: Duration = Duration::from_millis(50);

/// How long a child may take to say it is ready.
pub const START_WAIT: Duration = Duration::from_secs(10);

/// A running `--serve-hang` child.
#[derive(Debug)]
struct Server {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<()>,
    /// It has said `ready`.
    ready: bool,
}

impl Server {
    fn start(exe: &Path, args: &[String]) -> Option<Server> {
        let mut child = Command::new(exe).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).process_group(0).spawn().ok()?;
        let stdin = child.stdin.take()?;
        let stdout = child.stdout.take()?;
        let (tx, answers) = mpsc::channel();
        std::thread::Builder::new()
            .name("hang-answers".into())
            .spawn(move || {
                for line in std::io::BufReader::new(stdout).lines() {
                    if line.is_err() || tx.send(()).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Server { child, stdin, answers, ready: false })
    }
    /// Kill the child's whole process group.
    fn kill(mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How many times the fault-free stage's time on the input a candidate is
/// given before it counts as hanging.
pub const CALIBRATION: u32 = 20;

/// The per-candidate deadline for an input whose stage takes `spent`
/// without the fault: [`CALIBRATION`] times that, at least [`LEAST_WAIT`],
/// at most `deadline`. Candidates are no larger than the input, so one that
/// does not finish in twenty times the input's own time is spinning.
pub fn calibrated(deadline: Duration, spent: Duration) -> Duration {
    spent.saturating_mul(CALIBRATION).clamp(LEAST_WAIT, deadline.max(LEAST_WAIT))
}

/// How long the child's work on `p` ([`serve`]) takes in this process
/// under `check` (which must not hang: the fault-free options).
fn stage_time(stage: Phase, p: &Program, check: &Check) -> Duration {
    let start = std::time::Instant::now();
    if let Ok(compiled) = oracle::compile_ok(p, &check.options) {
        if stage == Phase::Verify {
            let _ = oracle::verify_guarded(p, &compiled.program, &check.verify);
        }
    }
    start.elapsed()
}

/// The stages a child can run on a file: compile, verify (compile, then
/// verify).
pub fn servable(stage: Phase) -> bool {
    matches!(stage, Phase::Compile | Phase::Verify)
}

impl HangTest {
    /// The test for a case that hung in `stage` under `check`: `exe` is the
    /// `schedra` binary, `deadline` the time a candidate may take. `None`
    /// when no child runs that stage. `input` decides whether candidates
    /// must compile without the injected fault (when `input` passes without
    /// it).
    pub fn new(exe: &Path, stage: Phase, check: &Check, deadline: Duration, input: &Program) -> Option<HangTest> {
        if !servable(stage) {
            return None;
        }
        let spec = format!("{} {}", stage.as_str(), crate::campaign::options_line(&check.options));
        let args = vec!["fuzz".to_string(), "--serve-hang".to_string(), spec, "--timeout-ms".to_string(), check.verify.timeout_ms.to_string()];
        let without = Check { options: schedra_compiler::Options { inject: None, ..check.options }, ..check.clone() };
        let own = (check.options.inject.is_some() && failure(input, &without).is_none()).then_some(without);
        let deadline = match &own {
            Some(c) => calibrated(deadline, stage_time(stage, input, c)),
            None => deadline,
        };
        Some(HangTest { exe: exe.to_path_buf(), args, deadline: deadline.max(LEAST_WAIT), own, server: None })
    }

    /// The time a candidate is given (after calibration).
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Whether `p` still runs after `full` (the stage's own deadline, for
    /// the end of a reduction).
    pub fn confirm(&mut self, p: &Program, full: Duration) -> bool {
        self.ask(p, full.max(LEAST_WAIT))
    }

    /// The command line of the child (for reports).
    pub fn command_line(&self) -> String {
        let mut s = self.exe.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(&crate::reduce::command::shell_quote(a));
        }
        s
    }

    /// Whether the child does not finish `p` by the deadline and, when
    /// required, `p` compiles without the fault (asked second: most
    /// candidates do not hang, and the child answers that alone).
    pub fn is_interesting(&mut self, p: &Program) -> bool {
        self.is_interesting_after(p, self.deadline)
    }

    /// [`HangTest::is_interesting`] with `wait` instead of the deadline (a
    /// longer one makes sure of the input before a reduction starts).
    pub fn is_interesting_after(&mut self, p: &Program, wait: Duration) -> bool {
        self.ask(p, wait.max(LEAST_WAIT)) && self.own.as_ref().is_none_or(|c| oracle::compile_ok(p, &c.options).is_ok())
    }

    /// Whether the child does not finish `p` within `wait` of being ready.
    /// A child that cannot be started, is not ready in [`START_WAIT`], or
    /// dies, is no hang.
    fn ask(&mut self, p: &Program, wait: Duration) -> bool {
        if self.server.is_none() {
            self.server = Server::start(&self.exe, &self.args);
        }
        let Some(server) = self.server.as_mut() else { return false };
        if !server.ready {
            if server.answers.recv_timeout(START_WAIT).is_err() {
                self.stop_child();
                return false;
            }
            server.ready = true;
        }
        let text = print(p);
        let sent = writeln!(server.stdin, "{}", text.len()).and_then(|_| server.stdin.write_all(text.as_bytes())).and_then(|_| server.stdin.flush());
        let answer = if sent.is_ok() { server.answers.recv_timeout(wait) } else { Err(RecvTimeoutError::Disconnected) };
        match answer {
            Ok(()) => false,
            Err(e) => {
                self.stop_child();
                // The next child starts now, while the next candidate is made.
                self.server = Server::start(&self.exe, &self.args);
                e == RecvTimeoutError::Timeout
            }
        }
    }

    /// Kill the running child, if any.
    fn stop_child(&mut self) {
        if let Some(s) = self.server.take() {
            s.kill();
        }
    }
}

impl Drop for HangTest {
    fn drop(&mut self) {
        self.stop_child();
    }
}

/// Make this process (a `--serve-hang` child, possibly about to spin
/// forever) be killed when the thread that started it ends, so that a
/// campaign's end never leaves it running (Linux; elsewhere the parent's
/// kill at drop is all there is). For the child's `main`, before [`serve`].
pub fn die_with_parent() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a signal number on the
        // calling process; getppid cannot fail.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() == 1 {
                libc::_exit(0);
            }
        }
    }
}

/// The child's side: read programs from `input` ([protocol](self)), run
/// `stage` on each under `check`, answer `done` after each. Ends at the end
/// of `input` or when `output` is closed.
pub fn serve(stage: Phase, check: &Check, input: &mut dyn BufRead, output: &mut dyn Write) -> std::io::Result<()> {
    output.write_all(b"ready\n")?;
    output.flush()?;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let n: usize = line.trim().parse().map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "expected a length"))?;
        let mut text = vec![0; n];
        input.read_exact(&mut text)?;
        if let Ok(p) = schedra_ir::parse::parse(&text, None) {
            if let Ok(compiled) = oracle::compile_ok(&p, &check.options) {
                if stage == Phase::Verify {
                    let _ = oracle::verify_guarded(&p, &compiled.program, &check.verify);
                }
            }
        }
        output.write_all(b"done\n")?;
        output.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    fn prog() -> Program {
        parse(b"target v3d71\nb0:\n %a = ldunif 0\n %r = recip %a\n tlbw %r\n end\n", None).expect("parses")
    }

    fn script(name: &str, body: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("schedra-hang-test-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("child.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
        assert!(Command::new("chmod").arg("+x").arg(&path).status().expect("chmod").success());
        (dir, path)
    }

    #[test]
    fn a_child_that_does_not_answer_by_the_deadline_is_a_hang() {
        let check = Check::default();
        // Answers every request: reads the length line, then the text.
        let (d1, answers) = script("answers", "echo ready; while read n; do head -c \"$n\" >/dev/null; echo done; done");
        let mut quick = HangTest::new(&answers, Phase::Compile, &check, Duration::from_secs(2), &prog()).expect("test");
        assert!(!quick.is_interesting(&prog()), "a child that answers is not a hang");
        assert!(!quick.is_interesting(&prog()), "and it answers again, the same child");
        let (d2, silent) = script("silent", "echo ready; while :; do sleep 1; done");
        let mut endless = HangTest::new(&silent, Phase::Verify, &check, Duration::from_millis(200), &prog()).expect("test");
        let start = std::time::Instant::now();
        assert!(endless.is_interesting(&prog()), "no answer by the deadline is a hang");
        assert!(endless.is_interesting(&prog()), "a fresh child after the kill, again a hang");
        assert!(start.elapsed() < Duration::from_secs(3), "killed at the deadline");
        assert!(endless.command_line().contains("'--serve-hang' 'verify --sched topdown --ra split'"), "{}", endless.command_line());
        assert!(HangTest::new(&silent, Phase::Run, &check, Duration::from_millis(200), &prog()).is_none(), "no child runs a run hang");
        let (d3, dies) = script("dies", "exit 3");
        let mut dead = HangTest::new(&dies, Phase::Compile, &check, Duration::from_secs(2), &prog()).expect("test");
        assert!(!dead.is_interesting(&prog()), "a child that dies is no hang");
        for d in [d1, d2, d3] {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    #[test]
    fn a_candidate_deadline_is_twenty_times_the_input_s_own_time_within_bounds() {
        let ms = Duration::from_millis;
        assert_eq!(calibrated(ms(250), ms(5)), ms(100));
        assert_eq!(calibrated(ms(250), ms(1)), LEAST_WAIT, "at least LEAST_WAIT");
        assert_eq!(calibrated(ms(250), ms(40)), ms(250), "at most the given deadline");
        assert_eq!(calibrated(ms(10), ms(40)), LEAST_WAIT, "a deadline below LEAST_WAIT is raised to it");
        let check = Check { options: schedra_compiler::Options { inject: schedra_compiler::Fault::from_name("sched-stuck-ready"), ..Default::default() }, ..Check::default() };
        let (d, answers) = script("calibrated", "while read n; do head -c \"$n\" >/dev/null; echo done; done");
        let t = HangTest::new(&answers, Phase::Compile, &check, ms(250), &prog()).expect("test");
        assert!(t.deadline() < ms(250), "a fault-free input compiling in well under 12 ms calibrates the deadline: {:?}", t.deadline());
        let plain = HangTest::new(&answers, Phase::Compile, &Check::default(), ms(250), &prog()).expect("test");
        assert_eq!(plain.deadline(), ms(250), "without an injected fault nothing can be timed");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn the_server_answers_every_program() {
        let text = print(&prog());
        let input = format!("{}\n{text}{}\n{text}3\nbad", text.len(), text.len());
        let mut out = Vec::new();
        serve(Phase::Verify, &Check::default(), &mut input.as_bytes(), &mut out).expect("serves");
        assert_eq!(String::from_utf8_lossy(&out), "ready\ndone\ndone\ndone\n", "ready, then two programs and one that does not parse");
        let mut out = Vec::new();
        assert!(serve(Phase::Compile, &Check::default(), &mut "x\n".as_bytes(), &mut out).is_err(), "a bad length ends the server");
    }
}
