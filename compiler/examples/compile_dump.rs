//! Compiles every `.ir` file named on the command line in the four modes
//! (`--sched topdown|bottomup` × `--ra split|graph`) and prints each machine
//! program and shader-db line (or the error), and for files under a `corpus` directory also with each
//! compiler fault of their target injected, so that two builds of the
//! compiler can be compared byte for byte:
//!
//! `cargo run --release -p schedra-compiler --example compile_dump -- FILES... > out.txt`

use schedra_compiler::{compile, Options, Ra, Sched};

fn main() {
    let modes = [
        (Sched::TopDown, Ra::Split),
        (Sched::BottomUp, Ra::Split),
        (Sched::TopDown, Ra::Graph),
        (Sched::BottomUp, Ra::Graph),
    ];
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
        for (sched, ra) in modes {
            for &inject in &injects {
                println!("== {path} {sched:?} {ra:?} {inject:?}");
                match compile(&p, &Options { sched, ra, inject, stress_regalloc: None }) {
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
