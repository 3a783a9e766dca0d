//! Writes generated source programs as `.ir` files, for byte-identity checks
//! of compiler changes (`compiler/examples/compile_dump.rs` compiles them).
//!
//! `cargo run --release -p schedra-fuzz --example gen_dump -- DIR [N]`
//! writes `N` (default 2000) programs: even seeds use the fuzz bench's
//! configuration (v3d71, body budget 50), odd seeds a swarm configuration
//! on each target in turn (sizes 8..500, spills, multi-register values).
//! The bytes are read through `SeedStream` (made only as far as read), so
//! the programs also check that it gives what the full 16 KiB would;
//! `GEN_DUMP_HINT=N` makes every read expect only N bytes, so that the
//! stream's rerun on a short read is what gets checked.
//! `GEN_DUMP_TARGETS=v3d71,gen8` cycles through those targets instead of
//! every generated one (to compare one target's programs across a change
//! to the set of generated targets).

use schedra_fuzz::gen::{generate, Config, SeedStream};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: gen_dump DIR [N]");
        std::process::exit(2);
    };
    let n: u64 = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(2000);
    let chosen: Option<Vec<&'static schedra_ir::Target>> = std::env::var("GEN_DUMP_TARGETS").ok().map(|v| v.split(',').filter_map(schedra_ir::target::by_name).collect());
    let targets: &[&'static schedra_ir::Target] = chosen.as_deref().unwrap_or(schedra_ir::target::generated());
    let forced: Option<usize> = std::env::var("GEN_DUMP_HINT").ok().and_then(|v| v.parse().ok());
    let mut written = 0;
    for seed in 0..n {
        let mut bytes = SeedStream::new(seed, 16 * 1024);
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
            let Ok(c) = bytes.draw(forced.unwrap_or(64), Config::swarm) else {
                continue;
            };
            (t, c)
        };
        let Ok(p) = bytes.draw(forced.unwrap_or(cfg.byte_hint()), |u| generate(u, target, &cfg)) else {
            continue;
        };
        let path = format!("{dir}/g{seed:05}.ir");
        if std::fs::write(&path, schedra_ir::print::print(&p)).is_ok() {
            written += 1;
        }
    }
    println!("{written} programs written to {dir}");
}
