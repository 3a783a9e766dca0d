//! The campaign's work directory: one sub-directory per finding, named
//! `<kind>-<target>-<hash of signature>`, holding `signature.txt`,
//! `case.ir` (the source), `out.s` (the machine program), `report.json` and
//! `report.txt` (the verifier's report or the failure message), once
//! classified `root-cause.txt` (its root-cause key) and, once reduced,
//! `min.ir`.
//!
//! Invariant: a finding directory appears complete or not at all (written
//! under a temporary name, then renamed), so a campaign stopped at any
//! moment leaves a directory that [`WorkDir::open`] can resume from: the
//! signatures of every finding in it are loaded and not written again.

use crate::oracle::Finding;
use schedra_verify::render_human;
use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A work directory.
#[derive(Clone, Debug)]
pub struct WorkDir {
    /// Its path.
    pub root: PathBuf,
}

/// The directory name of a finding with this signature.
pub fn dir_name(kind: &str, target: &str, signature: &str) -> String {
    let h = crate::gen::seed_of(signature.as_bytes());
    let clean = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect::<String>();
    format!("{}-{}-{:08x}", clean(kind), clean(target), h as u32)
}

impl WorkDir {
    /// Open (creating it if needed) the work directory at `root` and load
    /// the signatures of the findings already in it.
    pub fn open(root: &Path) -> io::Result<(WorkDir, HashSet<String>)> {
        fs::create_dir_all(root)?;
        let mut seen = HashSet::new();
        for entry in fs::read_dir(root)?.flatten() {
            if let Ok(sig) = fs::read_to_string(entry.path().join("signature.txt")) {
                seen.insert(sig.trim_end().to_string());
            }
        }
        Ok((WorkDir { root: root.to_path_buf() }, seen))
    }

    /// Write a new finding; returns its directory.
    pub fn write(&self, f: &Finding, options_line: &str) -> io::Result<PathBuf> {
        let sig = f.signature();
        let name = dir_name(&f.kind_name(), &f.target, &sig);
        let dir = self.root.join(&name);
        let tmp = self.root.join(format!(".tmp-{name}"));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp)?;
        fs::write(tmp.join("signature.txt"), format!("{sig}\n"))?;
        let src_text = f.source.as_ref().map(schedra_ir::print::print).unwrap_or_default();
        let mach_text = f.machine.as_ref().map(schedra_ir::print::print).unwrap_or_default();
        if f.source.is_some() {
            let header = format!("# {sig}\n# reproduce: schedra verify case.ir {options_line}\n");
            fs::write(tmp.join("case.ir"), format!("{header}{src_text}"))?;
        }
        if f.machine.is_some() {
            fs::write(tmp.join("out.s"), &mach_text)?;
        }
        let text = match &f.report {
            Some(r) => {
                fs::write(tmp.join("report.json"), format!("{}\n", r.to_json()))?;
                format!("{}\n\n{}\n", f.message, render_human(r, "case.ir", &src_text, "out.s", &mach_text))
            }
            None => format!("{}\n", f.message),
        };
        fs::write(tmp.join("report.txt"), text)?;
        let _ = fs::remove_dir_all(&dir);
        fs::rename(&tmp, &dir)?;
        Ok(dir)
    }

    /// Write (replacing) the small file `name` in a finding's directory.
    pub fn write_note(&self, dir: &Path, name: &str, text: &str) -> io::Result<()> {
        let tmp = dir.join(format!(".{name}.tmp"));
        fs::write(&tmp, text)?;
        fs::rename(tmp, dir.join(name))
    }

    /// Add the minimized source to a finding's directory.
    pub fn write_min(&self, dir: &Path, text: &str) -> io::Result<()> {
        let tmp = dir.join(".min.ir.tmp");
        fs::write(&tmp, text)?;
        fs::rename(tmp, dir.join("min.ir"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_and_safe() {
        let a = dir_name("latency", "v3d71", "violation/v3d71: latency: x");
        assert_eq!(a, dir_name("latency", "v3d71", "violation/v3d71: latency: x"));
        assert!(a.starts_with("latency-v3d71-"));
        assert!(!dir_name("a/b", "t", "s").contains('/'));
    }
}
