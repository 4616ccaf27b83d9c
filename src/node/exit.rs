//! What a program that ends without closing its handles would otherwise lose. C's stdio
//! flushes `FILE` buffers at `exit()` and HDF5 flushes open files: libzarr does the same for
//! the handles the C API gave out and that are still open when the process ends normally
//! (`exit()`, a return from `main`, Fortran's `end program`): it waits for their
//! non-blocking requests, stores the steps appends buffered, releases append locks
//! ([`crate::io::append_lock`]) and flushes (zip: writes) their stores, as freeing them
//! would. `_exit`, a signal or a crash still lose what was not flushed.
//!
//! The registry holds the handles weakly (freeing one is unchanged), and only the process
//! that opened a handle finishes it: a `fork()` child that calls `exit()` leaves its
//! parent's buffers alone. The work runs on a thread of its own, because by the time
//! `atexit` handlers run the exiting thread's thread-locals are already gone.

use super::{Array, Node};
use crate::store::Store;
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};

/// The handles to finish at exit, and the process that opened them.
struct Live {
    pid: u32,
    arrays: Vec<Weak<Array>>,
    stores: Vec<Weak<dyn Store>>,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    pid: 0,
    arrays: Vec::new(),
    stores: Vec::new(),
});

static INSTALL: Once = Once::new();

/// Keeps `list` from growing with handles long freed: drops the dead entries whenever the
/// list doubles.
fn prune<T: ?Sized>(list: &mut Vec<Weak<T>>) {
    if list.len() >= 64 && list.len().is_power_of_two() {
        list.retain(|w| w.strong_count() > 0);
    }
}

fn live() -> std::sync::MutexGuard<'static, Live> {
    INSTALL.call_once(|| {
        extern "C" {
            /// The C library's `atexit` (the handler runs at `exit()` and, for a shared
            /// library unloaded earlier, when it is unloaded).
            fn atexit(handler: extern "C" fn()) -> std::ffi::c_int;
        }
        // SAFETY: registers a function of this library that takes no arguments.
        unsafe { atexit(finish_at_exit) };
    });
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if live.pid != pid {
        // A fork child: its parent's handles are the parent's to finish.
        live.pid = pid;
        live.arrays.clear();
        live.stores.clear();
    }
    live
}

/// Finishes `array` at process exit if it is still open then.
pub fn watch_array(array: &Arc<Array>) {
    let mut live = live();
    prune(&mut live.arrays);
    live.arrays.push(Arc::downgrade(array));
}

/// Flushes `store` at process exit if it is still open then.
pub fn watch_store(store: &Arc<dyn Store>) {
    let mut live = live();
    prune(&mut live.stores);
    live.stores.push(Arc::downgrade(store));
}

/// The `atexit` handler: finishes every open handle on a thread of its own and waits for
/// it. Nothing unwinds out of it.
extern "C" fn finish_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if let Ok(worker) = std::thread::Builder::new()
            .name("zarr-exit".into())
            .spawn(finish_open_handles)
        {
            let _ = worker.join();
        }
    });
}

/// Waits for every non-blocking request, stores what open array handles buffered and
/// releases their append locks, then flushes the open stores and those of the arrays.
/// Failures go to standard error: there is no caller left to tell.
fn finish_open_handles() {
    let _inside = crate::io::gate::enter();
    let (arrays, mut stores) = {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        if live.pid != std::process::id() {
            return;
        }
        let arrays: Vec<Arc<Array>> = live.arrays.drain(..).filter_map(|w| w.upgrade()).collect();
        let stores: Vec<Arc<dyn Store>> =
            live.stores.drain(..).filter_map(|w| w.upgrade()).collect();
        (arrays, stores)
    };
    super::pending::wait_all_requests();
    for array in &arrays {
        if let Err(e) = array.finish() {
            crate::error::notice(&format!(
                "at exit, array {:?} was not fully stored: {e}",
                array.path()
            ));
        }
        stores.push(array.store().clone());
    }
    let mut flushed: Vec<*const ()> = Vec::new();
    for store in stores {
        let id = Arc::as_ptr(&store) as *const ();
        if flushed.contains(&id) {
            continue;
        }
        flushed.push(id);
        if let Err(e) = store.close() {
            crate::error::notice(&format!("at exit, a store was not fully flushed: {e}"));
        }
    }
}
