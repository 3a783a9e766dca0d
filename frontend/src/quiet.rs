//! Running a third-party parser that may panic, without its panic message.
//!
//! [`catch`] runs a closure under `catch_unwind` with a thread-local flag
//! set; the process-wide panic hook installed (once) here prints nothing
//! while the flag is set on the panicking thread and hands every other
//! panic to the hook it replaced, so panics elsewhere in the process are
//! reported exactly as before.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// `f()`, or `None` if it panicked; a panic inside `f` prints nothing.
pub fn catch<T>(f: impl FnOnce() -> T) -> Option<T> {
    install_hook();
    let was = QUIET.with(|q| q.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_is_none_and_a_value_is_kept() {
        assert_eq!(super::catch(|| 7), Some(7));
        assert_eq!(super::catch(|| -> u8 { panic!("inside") }), None);
        assert!(!super::QUIET.with(std::cell::Cell::get), "the flag is restored after a panic");
    }
}
