//! Compiles every `.ir` file named on the command line in the four modes
//! (`--sched topdown|bottomup` × `--ra split|graph`) and prints each machine
//! program and shader-db line (or the error), and for files under a `corpus` directory also with each
//! compiler fault of their target injected, so that two builds of the
//! compiler can be compared byte for byte:
//!
//! `cargo run --release -p schedra-compiler --example compile_dump -- FILES... > out.txt`
//!
//! With `COMPILE_DUMP_STRESS=1` in the environment every compile is
//! additionally repeated under `--stress-regalloc N` for N in 1, 2, 4, 8
//! (the fuzz campaign's way of making small programs spill), each printed
//! with its N.

use schedra_compiler::{compile, Options, Ra, Sched};

fn main() {
    let modes = [
        (Sched::TopDown, Ra::Split),
        (Sched::BottomUp, Ra::Split),
        (Sched::TopDown, Ra::Graph),
        (Sched::BottomUp, Ra::Graph),
    ];
    let stress: &[Option<u16>] = if std::env::var_os("COMPILE_DUMP_STRESS").is_some() {
        &[None, Some(1), Some(2), Some(4), Some(8)]
    } else {
        &[None]
    };
    for path in std::env::args().skip(1) {
        let Ok(text) = std::fs::read(&path) else {
            println!("== {path}: unreadable");
            continue;
        };
        let p = match schedra_ir::parse::parse(&text, None) {
            Ok(p) => p,
            Err(e) => {
                println!("== {path}: parse error {e}");
                continue;
            }
        };
        let faults = schedra_compiler::Fault::all()
            .iter()
            .filter(|f| f.target().is_none_or(|t| t == p.target.name));
        let injects: Vec<Option<schedra_compiler::Fault>> = if path.contains("corpus") {
            std::iter::once(None)
                .chain(faults.map(|&f| Some(f)))
                .collect()
        } else {
            vec![None]
        };
        for &stress_regalloc in stress {
            for (sched, ra) in modes {
                for &inject in &injects {
                    match stress_regalloc {
                        None => println!("== {path} {sched:?} {ra:?} {inject:?}"),
                        Some(n) => println!("== {path} {sched:?} {ra:?} {inject:?} stress {n}"),
                    }
                    let opts = Options { sched, ra, inject, stress_regalloc, post: Default::default() };
                    match compile(&p, &opts) {
                        Ok(c) => {
                            print!("{}", schedra_ir::print::print(&c.program));
                            println!("{}", c.stats.shader_db_line(&path, p.target.name));
                        }
                        Err(e) => println!("error: {e}"),
                    }
                }
            }
        }
    }
}
