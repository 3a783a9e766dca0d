//! `schedra fuzz --merge DIR... --out OUT`: fold the work directories of
//! campaigns run on several machines into one.
//!
//! Every finding directory (one holding `signature.txt`) of the sources and
//! of OUT itself is a candidate for its signature; the one with the
//! smallest reproducer wins — the instruction count of its `min.ir`, or of
//! its `case.ir` when it has no `min.ir` (a directory with neither counts
//! as largest; ties go to the one seen first, OUT's own before the
//! sources', then the sources in order). Winners from the sources are
//! copied into OUT (under a temporary name, then renamed), replacing OUT's
//! directory of the same signature.
//!
//! Invariant: afterwards OUT holds exactly one directory per signature
//! found in any input, and each is the smallest reproducer of that
//! signature among the inputs; the sources are never modified.

use super::workdir::dir_name;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a merge did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MergeReport {
    /// Distinct signatures in OUT afterwards.
    pub signatures: usize,
    /// Finding directories read (OUT's included).
    pub read: usize,
    /// Directories copied into OUT.
    pub copied: usize,
}

/// One finding directory.
#[derive(Clone, Debug)]
struct Entry {
    dir: PathBuf,
    size: usize,
    in_out: bool,
}

/// The instruction count of the smallest reproducer in finding directory
/// `dir` (`usize::MAX` when none parses).
pub fn reproducer_size(dir: &Path) -> usize {
    ["min.ir", "case.ir"]
        .iter()
        .find_map(|f| {
            let text = fs::read(dir.join(f)).ok()?;
            schedra_ir::parse::parse(&text, None).ok().map(|p| p.op_count())
        })
        .unwrap_or(usize::MAX)
}

/// The finding directories under `root`, by signature.
fn findings(root: &Path, in_out: bool, into: &mut BTreeMap<String, Vec<Entry>>) -> io::Result<usize> {
    let mut n = 0;
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for dir in dirs {
        let hidden = dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        let Ok(sig) = fs::read_to_string(dir.join("signature.txt")) else { continue };
        if hidden {
            continue;
        }
        n += 1;
        let size = reproducer_size(&dir);
        into.entry(sig.trim_end().to_string()).or_default().push(Entry { dir, size, in_out });
    }
    Ok(n)
}

/// Merge the work directories `sources` into `out` (created if needed).
pub fn merge(sources: &[PathBuf], out: &Path) -> io::Result<MergeReport> {
    fs::create_dir_all(out)?;
    let mut all = BTreeMap::new();
    let mut read = findings(out, true, &mut all)?;
    for s in sources {
        if fs::canonicalize(s).ok() == fs::canonicalize(out).ok() {
            continue;
        }
        read += findings(s, false, &mut all).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", s.display())))?;
    }
    let mut copied = 0;
    for (sig, entries) in &all {
        let Some(best) = entries.iter().min_by_key(|e| e.size) else { continue };
        if best.in_out {
            continue;
        }
        let kind_target = best.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (kind, target) = split_name(&kind_target);
        let name = dir_name(&kind, &target, sig);
        let tmp = out.join(format!(".tmp-{name}"));
        let _ = fs::remove_dir_all(&tmp);
        copy_dir(&best.dir, &tmp)?;
        for old in entries.iter().filter(|e| e.in_out) {
            fs::remove_dir_all(&old.dir)?;
        }
        let dest = out.join(&name);
        let _ = fs::remove_dir_all(&dest);
        fs::rename(&tmp, &dest)?;
        copied += 1;
    }
    Ok(MergeReport { signatures: all.len(), read, copied })
}

/// The kind and target of a directory named `<kind>-<target>-<hash>`
/// (kinds may hold dashes; the target and hash do not).
fn split_name(name: &str) -> (String, String) {
    let mut parts: Vec<&str> = name.rsplitn(3, '-').collect();
    parts.reverse();
    match parts.as_slice() {
        [kind, target, _hash] => (kind.to_string(), target.to_string()),
        _ => (name.to_string(), "-".to_string()),
    }
}

fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)?.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            copy_dir(&p, &to.join(&name))?;
        } else {
            fs::copy(&p, to.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(root: &Path, name: &str, sig: &str, case_ops: usize, min_ops: Option<usize>) {
        let d = root.join(name);
        fs::create_dir_all(&d).expect("dir");
        fs::write(d.join("signature.txt"), format!("{sig}\n")).expect("sig");
        let prog = |n: usize| {
            let mut s = "target v3d71\nb0:\n".to_string();
            for i in 0..n {
                s += &format!(" %{i} = ldunif {i}\n");
            }
            s + " tlbw %0\n end\n"
        };
        fs::write(d.join("case.ir"), format!("# {sig}\n{}", prog(case_ops))).expect("case");
        if let Some(m) = min_ops {
            fs::write(d.join("min.ir"), prog(m)).expect("min");
        }
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("schedra-merge-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn merge_keeps_the_smallest_reproducer_of_each_signature() {
        let (a, b, out) = (temp("a"), temp("b"), temp("out"));
        finding(&a, &dir_name("latency", "v3d71", "sig one"), "sig one", 9, Some(4));
        finding(&b, &dir_name("latency", "v3d71", "sig one"), "sig one", 7, Some(2));
        finding(&a, &dir_name("clobber", "v3d71", "sig two"), "sig two", 5, None);
        finding(&b, &dir_name("compile-error", "gen8", "sig three"), "sig three", 3, None);
        finding(&out, &dir_name("clobber", "v3d71", "sig two"), "sig two", 6, Some(3));
        fs::create_dir_all(b.join("not-a-finding")).expect("dir");
        let r = merge(&[a.clone(), b.clone()], &out).expect("merges");
        assert_eq!(r, MergeReport { signatures: 3, read: 5, copied: 2 });
        let mut sigs = BTreeMap::new();
        findings(&out, true, &mut sigs).expect("reads");
        assert_eq!(sigs.len(), 3, "one directory per signature: {sigs:?}");
        let size = |s: &str| sigs[s][0].size;
        assert_eq!((size("sig one"), size("sig two"), size("sig three")), (3, 4, 4), "the smallest of each (n ldunif + tlbw)");
        assert!(sigs.values().all(|v| v.len() == 1));
        assert!(sigs["sig three"][0].dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with("compile-error-gen8-")));
        assert_eq!(reproducer_size(&a.join(dir_name("latency", "v3d71", "sig one"))), 5, "sources untouched");
        let again = merge(&[a.clone(), b.clone()], &out).expect("merges again");
        assert_eq!(again.copied, 0, "a second merge changes nothing");
        for d in [a, b, out] {
            let _ = fs::remove_dir_all(d);
        }
    }

    #[test]
    fn names_split_into_kind_and_target() {
        assert_eq!(split_name("compile-error-gen8-0badf00d"), ("compile-error".into(), "gen8".into()));
        assert_eq!(split_name("latency-v3d71-12345678"), ("latency".into(), "v3d71".into()));
        assert_eq!(split_name("odd"), ("odd".into(), "-".into()));
    }
}
