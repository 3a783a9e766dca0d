//! `schedra fuzz --merge DIR... --out OUT` end to end: two campaigns'
//! work directories with one signature in common fold into one directory
//! per signature, the smaller reproducer kept (docs/fuzzing.md, "Merging
//! work directories").

use std::path::{Path, PathBuf};
use std::process::Command;

fn finding(root: &Path, name: &str, sig: &str, ops: usize) {
    let d = root.join(name);
    std::fs::create_dir_all(&d).expect("dir");
    std::fs::write(d.join("signature.txt"), format!("{sig}\n")).expect("signature");
    let mut p = "target v3d71\nb0:\n".to_string();
    for i in 0..ops {
        p += &format!(" %{i} = ldunif {i}\n");
    }
    p += " tlbw %0\n end\n";
    std::fs::write(d.join("case.ir"), p).expect("case");
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedra-merge-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn merge_folds_campaigns_into_one_directory_per_signature() {
    let (a, b, out) = (temp("a"), temp("b"), temp("out"));
    finding(&a, "latency-v3d71-00000001", "violation/v3d71: latency: x", 6);
    finding(&b, "latency-v3d71-00000001", "violation/v3d71: latency: x", 2);
    finding(&b, "clobber-v3d71-00000002", "violation/v3d71: clobber: y", 3);
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let o = Command::new(env!("CARGO_BIN_EXE_schedra")).args(["fuzz", "--merge", &s(&a), &s(&b), "--out", &s(&out), "--json"]).output().expect("schedra runs");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!((r["signatures"].as_u64(), r["read"].as_u64(), r["copied"].as_u64()), (Some(2), Some(3), Some(2)), "{r}");
    let dirs: Vec<_> = std::fs::read_dir(&out).expect("out").flatten().map(|e| e.path()).collect();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    let latency = dirs.iter().find(|d| std::fs::read_to_string(d.join("signature.txt")).is_ok_and(|t| t.contains("latency"))).expect("latency kept");
    let case = std::fs::read_to_string(latency.join("case.ir")).expect("case.ir");
    assert_eq!(case.matches("ldunif").count(), 2, "the smaller reproducer is kept");
    let missing = Command::new(env!("CARGO_BIN_EXE_schedra")).args(["fuzz", "--merge", "/nonexistent-schedra-dir", "--out", &s(&out)]).output().expect("schedra runs");
    assert_eq!(missing.status.code(), Some(2), "an unreadable source is a usage error");
    for d in [a, b, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}
