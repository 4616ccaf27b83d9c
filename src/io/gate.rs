//! The call gate that makes `fork()` safe for the C API's handles. Every C call runs inside
//! the gate (entered by the FFI guard), and so does each thread a call leaves working behind
//! it (the shard-storing thread of appends, the thread running an array handle's
//! non-blocking requests; they free what they own before leaving). The thread pool's
//! workers work only for calls inside and sleep between them (`io::pool` starts and
//! joins them inside calls). A `fork()` (its `pthread_atfork` prepare
//! handler) closes the gate and waits until no thread is inside, then keeps it closed until
//! the fork is done: no thread of the parent holds a lock of a handle, a store, a cache or
//! the pool at that moment, so the child, whose only thread is the one that forked, never
//! inherits a lock that nobody will release. New calls of other threads wait while the gate
//! is closed. A thread that forks from inside a call (the C API has no callbacks, so only a
//! Rust caller nesting calls could) does not wait, which would never end: its child is not
//! covered.

use std::cell::{Cell, RefCell};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Threads inside the gate, and whether a fork is waiting for them to leave.
struct State {
    inside: usize,
    forking: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    inside: 0,
    forking: false,
});

/// Signalled when the last thread leaves while a fork waits, and when a fork is done.
static CHANGED: Condvar = Condvar::new();

thread_local! {
    /// How deeply this thread is inside the gate (calls nest in Rust callers).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The gate closed by this thread's fork, from the prepare handler to the parent's or
    /// the child's handler.
    static CLOSED: RefCell<Option<MutexGuard<'static, State>>> = const { RefCell::new(None) };
}

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This thread's stay inside the gate, from [`enter`] until dropped.
#[must_use]
pub struct Inside(());

/// Enters the gate for the calling thread (at once when it is already inside; else after a
/// fork in progress is done).
pub fn enter() -> Inside {
    install();
    let depth = DEPTH.get();
    if depth == 0 {
        let mut s = state();
        while s.forking {
            s = CHANGED.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.inside += 1;
    }
    DEPTH.set(depth + 1);
    Inside(())
}

impl Drop for Inside {
    fn drop(&mut self) {
        let depth = DEPTH.get() - 1;
        DEPTH.set(depth);
        if depth == 0 {
            leave();
        }
    }
}

/// A place inside the gate taken by a thread that is inside for a thread it starts, which
/// the started thread keeps until it is done; a fork then waits for that thread too.
#[must_use]
pub struct Held(());

/// Takes a place inside the gate for a thread the caller starts. It never waits: a fork
/// already waiting for the threads inside then waits for the started thread too.
pub fn hold() -> Held {
    state().inside += 1;
    Held(())
}

impl Drop for Held {
    fn drop(&mut self) {
        leave();
    }
}

fn leave() {
    let mut s = state();
    s.inside -= 1;
    // Only a fork waits for the gate to empty: without one, no wake-up (a system call) is
    // spent on every call.
    if s.inside == 0 && s.forking {
        CHANGED.notify_all();
    }
}

/// Registers the fork handlers, once per process.
fn install() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            type Handler = Option<unsafe extern "C" fn()>;
            extern "C" {
                fn pthread_atfork(prepare: Handler, parent: Handler, child: Handler) -> i32;
            }
            // SAFETY: the handlers are plain functions that live as long as the process.
            unsafe { pthread_atfork(Some(prepare), Some(reopen), Some(reopen)) };
        });
    }
}

/// Before a fork: closes the gate and waits until no thread is inside, keeping it closed.
extern "C" fn prepare() {
    if DEPTH.get() > 0 {
        return;
    }
    let mut s = state();
    s.forking = true;
    while s.inside > 0 {
        s = CHANGED.wait(s).unwrap_or_else(PoisonError::into_inner);
    }
    CLOSED.with(|c| *c.borrow_mut() = Some(s));
}

/// After a fork, in the parent and in the child: opens the gate again.
extern "C" fn reopen() {
    if let Some(mut s) = CLOSED.with(|c| c.borrow_mut().take()) {
        s.forking = false;
        drop(s);
        CHANGED.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_waits_for_the_threads_inside_and_blocks_new_ones() {
        let inside = enter();
        let nested = enter();
        drop(nested);
        let forker = std::thread::spawn(|| {
            prepare();
            let closed = CLOSED.with(|c| c.borrow().is_some());
            reopen();
            closed
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !forker.is_finished(),
            "the fork did not wait for the thread inside"
        );
        drop(inside);
        assert!(forker.join().unwrap());
        drop(enter()); // the gate is open again
    }
}
