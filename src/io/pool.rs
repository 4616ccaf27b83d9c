//! libzarr's own thread pool (never rayon's global one), sized by `zarr_set_num_threads`,
//! the `ZARR_NUM_THREADS` environment variable, or the cores this process may use.
//!
//! Worker threads start and end only inside calls: a new pool returns once every worker
//! has started and run a first job (a worker's first job allocates its per-thread state),
//! and a pool replaced by `set_num_threads` is joined when its last user drops it. Between
//! calls the workers sleep, so a `fork()` (which `io::gate` lets happen only between calls)
//! never copies a worker in the middle of starting, ending or allocating.

use crate::error::{Error, Result};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;

/// A rayon pool with the handles of its worker threads, which its drop joins.
pub struct Workers {
    pool: Option<ThreadPool>,
    threads: Vec<JoinHandle<()>>,
}

impl std::ops::Deref for Workers {
    type Target = ThreadPool;
    fn deref(&self) -> &ThreadPool {
        self.pool.as_ref().expect("the pool lives until dropped")
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        drop(self.pool.take()); // tells the workers to end
                                // Every user holds its `Arc` for a whole `install`, so the last one is dropped by a
                                // thread outside this pool after its work is done: the workers are idle here.
        let me = std::thread::current().id();
        for thread in self.threads.drain(..) {
            // Defensive: a worker dropping its own pool cannot wait for itself.
            if thread.thread().id() != me {
                let _ = thread.join();
            }
        }
    }
}

/// The pool and the process that built it: a child made by `fork()` has none of its
/// worker threads, so it builds its own.
static POOL: RwLock<Option<(u32, Arc<Workers>)>> = RwLock::new(None);

/// The default size: `ZARR_NUM_THREADS` if set to a positive integer, else the number of
/// cores available to this process (which respects CPU affinity masks).
pub fn default_num_threads() -> usize {
    std::env::var("ZARR_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

/// Starts a pool of `threads` workers and returns once each has run a first job.
fn build(threads: usize) -> Result<Arc<Workers>> {
    let handles = Mutex::new(Vec::with_capacity(threads));
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .spawn_handler(|worker| {
            let name = format!("zarr-worker-{}", worker.index());
            let mut builder = std::thread::Builder::new().name(name);
            if let Some(size) = worker.stack_size() {
                builder = builder.stack_size(size);
            }
            let handle = builder.spawn(|| worker.run())?;
            handles
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(handle);
            Ok(())
        })
        .build()
        .map_err(|e| Error::Internal(format!("cannot start the thread pool: {e}")))?;
    pool.broadcast(|_| ());
    Ok(Arc::new(Workers {
        pool: Some(pool),
        threads: handles.into_inner().unwrap_or_else(PoisonError::into_inner),
    }))
}

/// The pool, created on first use.
pub fn pool() -> Result<Arc<Workers>> {
    let pid = std::process::id();
    let current = |slot: &Option<(u32, Arc<Workers>)>| {
        slot.as_ref()
            .filter(|(owner, _)| *owner == pid)
            .map(|(_, pool)| pool.clone())
    };
    if let Some(pool) = POOL.read().ok().and_then(|p| current(&p)) {
        return Ok(pool);
    }
    let mut slot = POOL
        .write()
        .map_err(|_| Error::Internal("thread pool lock poisoned".into()))?;
    if let Some(pool) = current(&slot) {
        return Ok(pool);
    }
    // After a fork the parent's size is kept; the parent's pool object is left alone.
    let threads = slot
        .as_ref()
        .map(|(_, p)| p.current_num_threads())
        .unwrap_or_else(default_num_threads);
    let pool = build(threads)?;
    if let Some(old) = slot.take() {
        // The parent's pool has no threads in this process: never drop it here.
        std::mem::forget(old);
    }
    *slot = Some((pid, pool.clone()));
    Ok(pool)
}

/// Replaces the pool with one of `threads` workers (0 = the default size). Work already
/// running finishes on the old pool, whose workers end when its last user is done (at
/// once when nothing uses it).
pub fn set_num_threads(threads: usize) -> Result<()> {
    if threads > 4096 {
        return Err(Error::InvalidArg(format!(
            "{threads} threads is more than 4096"
        )));
    }
    let n = if threads == 0 {
        default_num_threads()
    } else {
        threads
    };
    let pool = build(n)?;
    let old = POOL
        .write()
        .map_err(|_| Error::Internal("thread pool lock poisoned".into()))?
        .replace((std::process::id(), pool));
    match old {
        // A fork() child's copy of the parent's pool has no threads here.
        Some((owner, old)) if owner != std::process::id() => std::mem::forget(old),
        old => drop(old), // joined here unless a call still uses it
    }
    Ok(())
}

/// The number of workers the pool has (or will have when first used).
pub fn num_threads() -> usize {
    POOL.read()
        .ok()
        .and_then(|p| p.as_ref().map(|(_, p)| p.current_num_threads()))
        .unwrap_or_else(default_num_threads)
}

/// Applies `f` to every item, on the pool when there is more than one (a single item runs
/// in the calling thread), and collects the results in order; the first error wins.
pub fn map_each<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    use rayon::prelude::*;
    if items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    pool()?.install(|| items.par_iter().map(&f).collect())
}

/// Values (workers' buffers) reused across the jobs of one call: rayon starts a fresh
/// per-job state for every piece of work it splits off, so state kept in `*_init` closures
/// alone would be rebuilt (and its buffers reallocated) many times per call.
#[derive(Debug, Default)]
pub struct Reuse<T>(std::sync::Mutex<Vec<T>>);

impl<T: Default> Reuse<T> {
    /// A value to work with, returned here when the lease is dropped.
    pub fn lease(&self) -> Lease<'_, T> {
        self.lease_or(T::default)
    }

    /// As [`Reuse::lease`], with `fresh()` when none is free.
    pub fn lease_or(&self, fresh: impl FnOnce() -> T) -> Lease<'_, T> {
        let value = self
            .0
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_else(fresh);
        Lease {
            value: Some(value),
            home: self,
        }
    }
}

impl<T> Reuse<T> {
    /// The values returned so far, leaving none.
    pub fn take_all(&self) -> Vec<T> {
        self.0
            .lock()
            .map(|mut free| std::mem::take(&mut *free))
            .unwrap_or_default()
    }
}

/// A value leased from a [`Reuse`].
#[derive(Debug)]
pub struct Lease<'a, T> {
    value: Option<T>,
    home: &'a Reuse<T>,
}

impl<T> std::ops::Deref for Lease<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.as_ref().expect("leased until dropped")
    }
}

impl<T> std::ops::DerefMut for Lease<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value.as_mut().expect("leased until dropped")
    }
}

impl<T> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        if let (Some(value), Ok(mut free)) = (self.value.take(), self.home.0.lock()) {
            free.push(value);
        }
    }
}
