//! Round trip over every real program we have: the spec's examples
//! (`corpus/spec/*/{src.ir,out.s}`) and whatever other `corpus/**/*.ir`
//! and `corpus/**/*.s` exist. For each: it parses, `print` is a fixed point
//! (`print(parse(print(p))) == print(p)`) and `parse(print(p))` is `p` up to
//! spans; source-form files are also valid programs of their target.

use schedra_ir::{parse::parse, print::print, validate::validate, Form};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("ir" | "s")) {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn check(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let p = parse(&bytes, None).map_err(|e| e.at(&path.display().to_string()).to_string())?;
    if p.form == Form::Source {
        validate(&p).map_err(|e| e.at(&path.display().to_string()).to_string())?;
    }
    let once = print(&p);
    let q = parse(once.as_bytes(), None).map_err(|e| format!("{}: reparse of printed text failed: {e}\n{once}", path.display()))?;
    if !q.same_as(&p) {
        return Err(format!("{}: parse(print(p)) differs from p", path.display()));
    }
    let twice = print(&q);
    if twice != once {
        return Err(format!("{}: print is not a fixed point:\n{once}\n---\n{twice}", path.display()));
    }
    Ok(())
}

#[test]
fn spec_examples_round_trip() {
    let mut files = Vec::new();
    files_under(&root().join("corpus/spec"), &mut files);
    assert!(files.len() >= 14, "expected the spec examples, found {} files", files.len());
    let errs: Vec<String> = files.iter().filter_map(|f| check(f).err()).collect();
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// Corpus files that are not meant to parse live under a directory whose
/// name contains `malformed` or `bad`; every other file must round-trip
/// (`corpus/spec` is checked once, by `spec_examples_round_trip`).
#[test]
fn corpus_round_trips() {
    let mut files = Vec::new();
    files_under(&root().join("corpus"), &mut files);
    let spec = root().join("corpus/spec");
    let good = files.iter().filter(|f| !f.starts_with(&spec) && !f.to_string_lossy().contains("malformed") && !f.to_string_lossy().contains("/bad"));
    let errs: Vec<String> = good.filter_map(|f| check(f).err()).collect();
    assert!(errs.is_empty(), "{} corpus files fail:\n{}", errs.len(), errs.join("\n"));
}
