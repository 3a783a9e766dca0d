//! Property: every program the generator makes, for every target and every
//! swarm configuration, is a valid source program (`validate` accepts it),
//! prints and parses back to itself, and runs to completion under the
//! source interpreter with at least one effect. The body's executions are
//! counted: a property that never ran its body would prove nothing.

use arbitrary::Unstructured;
use schedra_fuzz::gen::{generate_with_features, seed_bytes, seed_of, Config, Features};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn check(bytes: &[u8], seen: &Mutex<Features>) {
    // Bolero's inputs are short; they seed a long stream instead.
    let data = seed_bytes(seed_of(bytes), 32 * 1024);
    let mut u = Unstructured::new(&data);
    for t in schedra_ir::target::generated() {
        let Ok(cfg) = Config::swarm(&mut u) else { return };
        let (p, f) = match generate_with_features(&mut u, t, &cfg) {
            Ok(x) => x,
            Err(e) => panic!("{}: generation failed: {e}", t.name),
        };
        let text = schedra_ir::print::print(&p);
        if let Err(e) = schedra_ir::validate::validate(&p) {
            panic!("{}: generated program is invalid: {e}\n{text}", t.name);
        }
        match schedra_ir::parse::parse(text.as_bytes(), None) {
            Ok(q) => assert!(q.same_as(&p), "{}: print/parse changed the program\n{text}", t.name),
            Err(e) => panic!("{}: printed program does not parse: {e}\n{text}", t.name),
        }
        match schedra_fuzz::interp::run(&p, 7, 1_000_000) {
            Ok(o) => assert!(!o.effects.is_empty(), "{}: no effect\n{text}", t.name),
            Err(e) => panic!("{}: source run failed: {e}\n{text}", t.name),
        }
        if let Ok(mut s) = seen.lock() {
            s.insert(f);
        }
        RUNS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn generated_programs_are_valid() {
    let seen = Mutex::new(Features::default());
    bolero::check!().with_max_len(16 * 1024).with_iterations(300).for_each(|bytes: &[u8]| check(bytes, &seen));
    let runs = RUNS.load(Ordering::Relaxed);
    assert!(runs >= 300, "the property body ran only {runs} times");
    let seen = seen.lock().map(|s| *s).unwrap_or_default();
    // Every feature of the generator shows up within a few hundred cases.
    let missing: Vec<&str> = Features::ALL.iter().filter(|(f, _)| !seen.contains(*f)).map(|(_, n)| *n).collect();
    assert!(missing.is_empty(), "features never generated: {missing:?}");
}
