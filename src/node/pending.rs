//! Non-blocking writes and appends: requests queued on an array handle and run in
//! submission order by a thread of the handle's own (the writes themselves use the pool for
//! their chunks), within a process-wide budget of bytes in flight.
//!
//! A thread runs while its handle's queue holds requests and ends when it is empty; it
//! stays inside the fork gate while it runs, so a `fork()` waits until every queue is
//! empty. A request holds its array (and so its store) until it is done.

use super::array::Array;
use crate::dtype::ElementType;
use crate::error::{Error, Result};
use crate::io::region::MemLayout;
use crate::meta::Order;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The work of one request, run by the queue's thread.
type Job = Box<dyn FnOnce() -> Result<()> + Send>;

/// Bytes held by requests in flight across the process, and the budget bounding them.
#[derive(Debug, Default)]
struct Flight {
    /// The most bytes in flight at once (0: no limit).
    budget: usize,
    /// Bytes held by the requests not yet done.
    bytes: usize,
    /// The most bytes that were ever in flight at once (since the last reset).
    peak: usize,
    /// Requests not yet done.
    requests: usize,
}

static FLIGHT: Mutex<Flight> = Mutex::new(Flight {
    budget: 0,
    bytes: 0,
    peak: 0,
    requests: 0,
});

/// Signalled whenever a request is done.
static LANDED: Condvar = Condvar::new();

fn flight() -> MutexGuard<'static, Flight> {
    FLIGHT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets the process-wide budget of bytes in flight (0: no limit). Submissions already
/// waiting see the new budget at once.
pub fn set_budget(bytes: usize) {
    flight().budget = bytes;
    LANDED.notify_all();
}

/// The process-wide budget of bytes in flight (0: no limit).
pub fn budget() -> usize {
    flight().budget
}

/// (bytes in flight now, the most in flight at once since the last reset); resets the most
/// to the bytes now in flight when `reset` is true.
pub fn in_flight(reset: bool) -> (usize, usize) {
    let mut f = flight();
    let answer = (f.bytes, f.peak);
    if reset {
        f.peak = f.bytes;
    }
    answer
}

/// Waits until no request of the process is in flight.
pub fn wait_all_requests() {
    let mut f = flight();
    while f.requests > 0 {
        f = LANDED.wait(f).unwrap_or_else(PoisonError::into_inner);
    }
}

/// A place in the budget for `bytes`, kept by a request until it is done.
#[derive(Debug)]
pub struct Permit {
    bytes: usize,
}

/// Waits until `bytes` more fit in the budget and takes them. A request larger than the
/// whole budget is refused (it could never fit), also when the budget drops below it while
/// it waits.
pub(crate) fn reserve(bytes: usize) -> Result<Permit> {
    let mut f = flight();
    // The budget may drop while this waits: a request it can no longer hold is refused.
    while f.budget > 0 && f.bytes.saturating_add(bytes) > f.budget {
        if bytes > f.budget {
            return Err(Error::InvalidArg(format!(
                "a request of {bytes} bytes is larger than the whole budget of bytes in \
                 flight ({} bytes, zarr_set_async_budget)",
                f.budget
            )));
        }
        f = LANDED.wait(f).unwrap_or_else(PoisonError::into_inner);
    }
    f.bytes += bytes;
    f.peak = f.peak.max(f.bytes);
    f.requests += 1;
    Ok(Permit { bytes })
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut f = flight();
        f.bytes -= self.bytes;
        f.requests -= 1;
        drop(f);
        LANDED.notify_all();
    }
}

/// A submitted request: wait for it, or test whether it is done. Dropping it does not
/// cancel it; its outcome is then lost.
#[derive(Debug, Clone)]
pub struct Request(Arc<Outcome>);

#[derive(Debug, Default)]
struct Outcome {
    result: Mutex<Option<Result<()>>>,
    done: Condvar,
}

impl Request {
    /// Waits until the request is done and returns its result (the same at every call).
    pub fn wait(&self) -> Result<()> {
        let mut result = self.0.result.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(r) = &*result {
                return r.clone();
            }
            result = self
                .0
                .done
                .wait(result)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The request's result if it is done, without waiting.
    pub fn test(&self) -> Option<Result<()>> {
        self.0
            .result
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn finish(&self, result: Result<()>) {
        *self.0.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        self.0.done.notify_all();
    }
}

/// The ordered queue of one array handle.
#[derive(Debug, Default)]
pub struct Queue(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when the queue becomes empty.
    idle: Condvar,
}

#[derive(Default)]
struct State {
    /// Requests submitted and not yet started, oldest first.
    waiting: VecDeque<(Job, Permit, Request)>,
    /// Requests submitted and not yet done (waiting or running).
    pending: usize,
    /// Whether a thread runs the queue.
    running: bool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("pending", &self.pending)
            .field("running", &self.running)
            .finish()
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the queue's requests in order until it is empty.
    fn run(&self) {
        loop {
            let (job, permit, request) = {
                let mut state = self.state();
                match state.waiting.pop_front() {
                    Some(next) => next,
                    None => {
                        state.running = false;
                        return;
                    }
                }
            };
            let result = catch_unwind(AssertUnwindSafe(job))
                .unwrap_or_else(|_| Err(Error::Internal("a non-blocking request panicked".into())));
            // The job (and the array it held) is gone; the budget is given back before the
            // request says it is done, so a waiter finds its bytes free.
            drop(permit);
            request.finish(result);
            let mut state = self.state();
            state.pending -= 1;
            if state.pending == 0 {
                self.idle.notify_all();
            }
        }
    }
}

impl Queue {
    /// Queues `job` behind the requests already submitted, starting the queue's thread
    /// when none runs.
    fn submit(&self, permit: Permit, job: Job) -> Result<Request> {
        let request = Request(Arc::default());
        let mut state = self.0.state();
        if !state.running {
            let shared = self.0.clone();
            // A fork waits for the thread as for a call: it holds the store's locks.
            let held = crate::io::gate::hold();
            std::thread::Builder::new()
                .name("zarr-requests".into())
                .spawn(move || {
                    shared.run();
                    // What the thread owns is freed before it leaves the gate.
                    drop(shared);
                    drop(held);
                })
                .map_err(|e| Error::Internal(format!("cannot start a request thread: {e}")))?;
            state.running = true;
        }
        state.waiting.push_back((job, permit, request.clone()));
        state.pending += 1;
        Ok(request)
    }

    /// Waits until every request submitted so far is done.
    pub fn wait_idle(&self) {
        let mut state = self.0.state();
        while state.pending > 0 {
            state = self
                .0
                .idle
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The layout of a non-blocking write's or append's buffer (owned: the request outlives
/// the call).
#[derive(Debug, Clone)]
pub enum Layout {
    /// Dense, in C or F order.
    Dense(Order),
    /// Dense, in C or F order, of a numeric type converted to the array's as
    /// [`Array::write_from`] and [`Array::append_from`] do (nothing is stored when a value
    /// does not fit).
    Converted(Order),
    /// Element strides per dimension, as for a strided write.
    Strided(Vec<i64>),
}

/// A buffer a request reads from until it is done.
pub type Payload = Box<dyn AsRef<[u8]> + Send>;

impl Array {
    /// Queues `job` on this handle (behind its earlier requests) with `permit` (see
    /// [`reserve`]); the request holds the array until it is done. The job must not wait
    /// for this handle's requests (a flush would wait for itself).
    pub(crate) fn submit(
        self: &Arc<Self>,
        permit: Permit,
        job: impl FnOnce(&Array) -> Result<()> + Send + 'static,
    ) -> Result<Request> {
        use super::Node;
        self.check_writable("write")?;
        let array = self.clone();
        self.requests()
            .submit(permit, Box::new(move || job(&array)))
    }

    /// Writes `buf` into the region `start`/`count` (as [`Array::write`]) without waiting:
    /// the write runs behind this handle's earlier requests, and `buf` is held (counted in
    /// the budget) until it is done. Waits first while the budget is full.
    pub fn write_async(
        self: &Arc<Self>,
        start: Vec<u64>,
        count: Vec<u64>,
        elem: ElementType,
        layout: Layout,
        buf: Payload,
    ) -> Result<Request> {
        let permit = reserve((*buf).as_ref().len())?;
        self.submit(permit, write_job(start, count, elem, layout, buf))
    }

    /// Appends `buf` along `axis` (as [`Array::append`], or [`Array::append_from`] for a
    /// converted layout) without waiting: appends run in submission order behind this
    /// handle's earlier requests.
    pub fn append_async(
        self: &Arc<Self>,
        axis: usize,
        count: Vec<u64>,
        elem: ElementType,
        layout: Layout,
        buf: Payload,
    ) -> Result<Request> {
        let permit = reserve((*buf).as_ref().len())?;
        self.submit(permit, append_job(axis, count, elem, layout, buf))
    }

    /// Waits until every request submitted on this handle so far is done.
    pub fn wait_requests(&self) {
        self.requests().wait_idle();
    }
}

/// The work of a non-blocking write (see [`Array::write_async`]), for [`Array::submit`].
pub(crate) fn write_job(
    start: Vec<u64>,
    count: Vec<u64>,
    elem: ElementType,
    layout: Layout,
    buf: Payload,
) -> impl FnOnce(&Array) -> Result<()> + Send + 'static {
    move |a| {
        let bytes = (*buf).as_ref();
        match &layout {
            Layout::Dense(order) => a.write(&start, &count, elem, *order, bytes),
            Layout::Converted(order) => a.write_from(&start, &count, elem, *order, bytes),
            Layout::Strided(strides) => {
                a.write(&start, &count, elem, MemLayout::Strided(strides), bytes)
            }
        }
    }
}

/// The work of a non-blocking append (see [`Array::append_async`]), for [`Array::submit`].
pub(crate) fn append_job(
    axis: usize,
    count: Vec<u64>,
    elem: ElementType,
    layout: Layout,
    buf: Payload,
) -> impl FnOnce(&Array) -> Result<()> + Send + 'static {
    move |a| {
        let bytes = (*buf).as_ref();
        match &layout {
            Layout::Dense(order) => a.append(axis, &count, elem, *order, bytes),
            Layout::Converted(order) => a.append_from(axis, &count, elem, *order, bytes),
            Layout::Strided(strides) => {
                a.append(axis, &count, elem, MemLayout::Strided(strides), bytes)
            }
        }
        .map(drop)
    }
}
