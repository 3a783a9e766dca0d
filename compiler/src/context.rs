//! The buffers that one compile lends to the next.
//!
//! The schedulers' bookkeeping (dependency graphs, ready lists, counts,
//! lowered ops) grows to the size of the largest block once. A caller that
//! compiles many programs (a fuzzing worker, a bench) keeps one
//! [`Context`] and passes it by `&mut` to each [`crate::compile_with`], so
//! that those buffers are allocated once instead of once per compile.
//!
//! Invariant: a context holds no state between compiles that changes a
//! result (every user clears what it reads), only capacity; a compile with
//! a used context equals one with a new context.

/// Reusable buffers of the pre-RA scheduler and the bundler.
#[derive(Default)]
pub struct Context {
    /// The pre-RA scheduler's per-block structures.
    pub(crate) schedule: crate::schedule::ScheduleBuffers,
    /// The bundler's per-block structures.
    pub(crate) bundle: crate::bundle::Workspace,
}

impl Context {
    /// A context with no buffers yet.
    pub fn new() -> Context {
        Context::default()
    }
}
