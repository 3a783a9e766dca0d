//! Scratch space kept per thread from compile to compile.
//!
//! The schedulers' bookkeeping (dependency graphs, ready lists, counts)
//! grows to the size of the largest block once; a fuzzing worker compiles
//! thousands of programs on one thread, so each such workspace lives in a
//! thread-local [`Cell`] and is lent to one compile at a time.
//!
//! Invariant: a workspace holds no state between uses that changes a
//! result (every user clears what it reads), only capacity.

use std::cell::Cell;
use std::thread::LocalKey;

/// Run `f` with the workspace kept in `key` for this thread, then keep it
/// for the next call. A nested call (the workspace is lent out) or a call
/// during thread teardown gets a fresh default one.
pub(crate) fn with_kept<T: Default, R>(key: &'static LocalKey<Cell<T>>, f: impl FnOnce(&mut T) -> R) -> R {
    let mut ws = key.try_with(Cell::take).unwrap_or_default();
    let r = f(&mut ws);
    let _ = key.try_with(|c| c.set(ws));
    r
}
