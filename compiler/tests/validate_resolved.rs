//! `compile` validates through `validate_resolved` with the opcodes and
//! names it has resolved itself; its verdict must be exactly
//! `schedra_ir::validate::validate`'s on every program, valid or not.
use schedra_compiler::{compile, CompileError, Options};
use std::path::Path;

fn ir_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ir_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

#[test]
fn compile_reports_exactly_the_validator_s_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    ir_files(&root.join("tests/malformed"), &mut files);
    ir_files(&root.join("corpus"), &mut files);
    assert!(files.len() > 40, "fixtures not found under {}", root.display());
    let mut invalid = 0;
    for f in &files {
        let Ok(text) = std::fs::read(f) else { continue };
        let Ok(p) = schedra_ir::parse::parse(&text, None) else { continue };
        if p.form != schedra_ir::Form::Source {
            continue;
        }
        let expected = schedra_ir::validate::validate(&p).err().map(|e| format!("invalid program: {e}"));
        let got = match compile(&p, &Options::default()) {
            Err(CompileError::Unsupported(m)) if m.starts_with("invalid program: ") => Some(m),
            _ => None,
        };
        invalid += usize::from(expected.is_some());
        assert_eq!(got, expected, "{}", f.display());
    }
    assert!(invalid > 10, "only {invalid} invalid programs seen");
}
