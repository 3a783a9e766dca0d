//! The outside-command predicate (`--test 'CMD {}'`), as in C-Reduce's
//! interestingness scripts: the candidate's printed text goes into a
//! temporary file, `{}` in the command is replaced by that file's
//! shell-quoted path, and `sh -c` runs the result; exit status 0 means
//! "still interesting".
//!
//! Invariant: every run either exits or is killed at the timeout (then the
//! candidate counts as not interesting), so a hanging command cannot hang
//! the reducer; the temporary directory is removed when the
//! [`CommandTest`] is dropped.

use schedra_ir::{print::print, Program};
use std::path::{Path, PathBuf};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Why the command predicate could not be set up.
#[derive(thiserror::Error, Debug)]
pub enum CommandError {
    /// The command has no `{}` placeholder.
    #[error("the test command must contain `{{}}` where the candidate's path goes")]
    NoPlaceholder,
    /// The temporary directory could not be made.
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[from] std::io::Error),
}

/// A `sh -c` interestingness test over a temporary file.
#[derive(Debug)]
pub struct CommandTest {
    template: String,
    dir: PathBuf,
    file: PathBuf,
    timeout: Duration,
}

impl CommandTest {
    /// Prepare `template` (which must contain `{}`), killing each run after
    /// `timeout`.
    pub fn new(template: &str, timeout: Duration) -> Result<CommandTest, CommandError> {
        if !template.contains("{}") {
            return Err(CommandError::NoPlaceholder);
        }
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("schedra-reduce-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("candidate.ir");
        Ok(CommandTest { template: template.to_string(), dir, file, timeout })
    }

    /// The command line run for a candidate at `path`.
    pub fn command_line(&self, path: &Path) -> String {
        self.template.replace("{}", &shell_quote(&path.to_string_lossy()))
    }

    /// Whether the command exits 0 on `p`'s printed text. I/O failures and
    /// timeouts count as "not interesting".
    pub fn is_interesting(&self, p: &Program) -> bool {
        if std::fs::write(&self.file, print(p)).is_err() {
            return false;
        }
        let child = Command::new("sh")
            .arg("-c")
            .arg(self.command_line(&self.file))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match child {
            Ok(mut c) => wait(&mut c, self.timeout),
            Err(_) => false,
        }
    }
}

impl Drop for CommandTest {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Wait for `c` up to `timeout`, polling with a growing pause; kill it on
/// timeout. True iff it exited with status 0.
fn wait(c: &mut std::process::Child, timeout: Duration) -> bool {
    wait_for(c, timeout).is_some_and(|s| s.success())
}

/// Wait for `c` (spawned in its own process group) up to `timeout`; kill
/// its whole group on timeout. Its exit status, or `None` when it was
/// killed at the timeout (or could not be waited for).
pub(crate) fn wait_for(c: &mut std::process::Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(50);
    loop {
        match c.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if start.elapsed() < timeout => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(1));
            }
            _ => {
                // The command runs in its own process group: end the whole
                // group, so that its children do not outlive it.
                let group = format!("-{}", c.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
                let _ = c.kill();
                let _ = c.wait();
                return None;
            }
        }
    }
}

/// `s` in single quotes, safe for `sh`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedra_ir::parse::parse;

    fn prog() -> Program {
        parse(b"target v3d71\nb0:\n %a = ldunif 0\n %r = recip %a\n tlbw %r\n end\n", None).expect("parses")
    }

    #[test]
    fn exit_status_decides() {
        let yes = CommandTest::new("grep -q recip {}", Duration::from_secs(10)).expect("temp dir");
        let no = CommandTest::new("grep -q rsqrt {}", Duration::from_secs(10)).expect("temp dir");
        assert!(yes.is_interesting(&prog()));
        assert!(!no.is_interesting(&prog()));
    }

    #[test]
    fn hanging_command_times_out() {
        let t = CommandTest::new("sleep 5; true {}", Duration::from_millis(100)).expect("temp dir");
        let start = Instant::now();
        assert!(!t.is_interesting(&prog()));
        assert!(start.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn placeholder_is_required_and_quoted() {
        assert!(matches!(CommandTest::new("true", Duration::from_secs(1)), Err(CommandError::NoPlaceholder)));
        assert_eq!(shell_quote("a'b"), "'a'\\''b'");
    }
}
