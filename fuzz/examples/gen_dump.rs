//! Writes generated source programs as `.ir` files, for byte-identity checks
//! of compiler changes (`compiler/examples/compile_dump.rs` compiles them).
//!
//! `cargo run --release -p schedra-fuzz --example gen_dump -- DIR [N]`
//! writes `N` (default 2000) programs: even seeds use the fuzz bench's
//! configuration (v3d71, body budget 50), odd seeds a swarm configuration
//! on each target in turn (sizes 8..500, spills, multi-register values).

use arbitrary::Unstructured;
use schedra_fuzz::gen::{generate, seed_bytes, Config};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: gen_dump DIR [N]");
        std::process::exit(2);
    };
    let n: u64 = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(2000);
    let targets = schedra_ir::target::all();
    let mut written = 0;
    for seed in 0..n {
        let data = seed_bytes(seed, 16 * 1024);
        let mut u = Unstructured::new(&data);
        let (target, cfg) = if seed % 2 == 0 {
            let Some(t) = schedra_ir::target::by_name("v3d71") else {
                return;
            };
            (
                t,
                Config {
                    max_insts: 50,
                    pressure: 0,
                    ..Config::default()
                },
            )
        } else {
            let Some(&t) = targets.get((seed / 2) as usize % targets.len()) else {
                return;
            };
            let Ok(c) = Config::swarm(&mut u) else {
                continue;
            };
            (t, c)
        };
        let Ok(p) = generate(&mut u, target, &cfg) else {
            continue;
        };
        let path = format!("{dir}/g{seed:05}.ir");
        if std::fs::write(&path, schedra_ir::print::print(&p)).is_ok() {
            written += 1;
        }
    }
    println!("{written} programs written to {dir}");
}
