//! Non-blocking writes and appends: requests queued on an array handle and run in
//! submission order by threads of the handle's own (the writes themselves use the pool for
//! their chunks), within a process-wide budget of bytes in flight.
//!
//! The request at the head of the queue starts as soon as it touches no stored chunk that
//! a running request touches (an append touches everything), on a new thread while fewer
//! than the pool's worker count run: a loop of writes of one chunk each encodes as many
//! chunks at once as a blocking write of them all would. Requests that share a chunk run
//! one after the other in submission order.
//!
//! A thread runs while its handle's queue holds requests it may start and ends otherwise;
//! it stays inside the fork gate while it runs, so a `fork()` waits until every queue is
//! empty. A request holds its array (and so its store) until it is done.

use super::array::Array;
use crate::dtype::ElementType;
use crate::error::{Error, Result};
use crate::io::region::MemLayout;
use crate::meta::Order;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The work of one request, run by a thread of the queue.
type Job = Box<dyn FnOnce() -> Result<()> + Send>;

/// What a request touches: requests whose footprints are disjoint may run at the same time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Footprint {
    /// The stored chunks (shards, when sharded) of the grid in the box `first..=last`.
    Chunks { first: Vec<u64>, last: Vec<u64> },
    /// Anything: runs after every earlier request and before every later one.
    Everything,
}

impl Footprint {
    /// Whether a request touching `self` and one touching `other` may share a chunk.
    fn meets(&self, other: &Footprint) -> bool {
        match (self, other) {
            (Footprint::Chunks { first, last }, Footprint::Chunks { first: f, last: l }) => {
                first.len() != f.len()
                    || (0..first.len()).all(|d| first[d] <= l[d] && f[d] <= last[d])
            }
            _ => true,
        }
    }
}

/// The work of one request, given the array it was submitted on.
type ArrayJob = Box<dyn FnOnce(&Array) -> Result<()> + Send>;

/// A request's work and what it touches, for [`Array::submit`].
pub(crate) struct Work {
    footprint: Footprint,
    run: ArrayJob,
}

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
    waiting: VecDeque<Queued>,
    /// Requests submitted and not yet done (waiting or running).
    pending: usize,
    /// The footprints of the requests running.
    running: Vec<Footprint>,
    /// Threads running the queue.
    threads: usize,
}

/// A request waiting in the queue.
struct Queued {
    job: Job,
    footprint: Footprint,
    permit: Permit,
    request: Request,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("pending", &self.pending)
            .field("running", &self.running)
            .field("threads", &self.threads)
            .finish()
    }
}

impl State {
    /// Whether the request at the head of the queue may start now: it shares no chunk
    /// with a running request, and fewer than [`max_threads`] run.
    fn head_may_start(&self) -> bool {
        let Some(head) = self.waiting.front() else {
            return false;
        };
        self.running.len() < max_threads() && !self.running.iter().any(|f| f.meets(&head.footprint))
    }
}

/// The most requests of one handle running at once: one per worker of the pool.
fn max_threads() -> usize {
    crate::io::pool::num_threads().max(1)
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a thread that runs the queue's requests, counted in `state.threads`.
    fn start_thread(self: &Arc<Self>, state: &mut State) -> Result<()> {
        let shared = self.clone();
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
        state.threads += 1;
        Ok(())
    }

    /// Runs the queue's requests, each as soon as it may start, until none may.
    fn run(self: &Arc<Self>) {
        loop {
            let Queued {
                job,
                footprint,
                permit,
                request,
            } = {
                let mut state = self.state();
                if !state.head_may_start() {
                    state.threads -= 1;
                    return;
                }
                let queued = state.waiting.pop_front().expect("the queue has a head");
                state.running.push(queued.footprint.clone());
                // The next request may not need to wait for this one: it starts beside it
                // (were no thread to start, it waits for this one).
                if state.head_may_start() {
                    let _ = self.start_thread(&mut state);
                }
                queued
            };
            let result = catch_unwind(AssertUnwindSafe(job))
                .unwrap_or_else(|_| Err(Error::Internal("a non-blocking request panicked".into())));
            // The job (and the array it held) is gone; the budget is given back before the
            // request says it is done, so a waiter finds its bytes free.
            drop(permit);
            request.finish(result);
            let mut state = self.state();
            // Running requests with equal footprints are alike: any one of them goes.
            if let Some(at) = state.running.iter().position(|f| *f == footprint) {
                state.running.swap_remove(at);
            }
            state.pending -= 1;
            if state.pending == 0 {
                self.idle.notify_all();
            }
        }
    }
}

impl Queue {
    /// Queues `job` behind the requests already submitted, starting a thread for it when
    /// it may start at once beside the running ones (or none runs).
    fn submit(&self, permit: Permit, footprint: Footprint, job: Job) -> Result<Request> {
        let request = Request(Arc::default());
        let mut state = self.0.state();
        state.waiting.push_back(Queued {
            job,
            footprint,
            permit,
            request: request.clone(),
        });
        if state.threads == 0 || (state.waiting.len() == 1 && state.head_may_start()) {
            if let Err(e) = self.0.start_thread(&mut state) {
                if state.threads == 0 {
                    // Nothing would run it: take it back.
                    state.waiting.pop_back();
                    return Err(e);
                }
            }
        }
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
    /// Queues `work` on this handle with `permit` (see [`reserve`]): it runs behind the
    /// earlier requests it shares a chunk with; the request holds the array until it is
    /// done. The work must not wait for this handle's requests (a flush would wait for
    /// itself).
    pub(crate) fn submit(self: &Arc<Self>, permit: Permit, work: Work) -> Result<Request> {
        use super::Node;
        self.check_writable("write")?;
        let array = self.clone();
        let Work { footprint, run } = work;
        self.requests()
            .submit(permit, footprint, Box::new(move || run(&array)))
    }

    /// Writes `buf` into the region `start`/`count` (as [`Array::write`]) without waiting:
    /// the write runs behind this handle's earlier requests that share a chunk with it, and
    /// `buf` is held (counted in the budget) until it is done. Waits first while the budget
    /// is full.
    pub fn write_async(
        self: &Arc<Self>,
        start: Vec<u64>,
        count: Vec<u64>,
        elem: ElementType,
        layout: Layout,
        buf: Payload,
    ) -> Result<Request> {
        let permit = reserve((*buf).as_ref().len())?;
        let work = write_job(self, start, count, elem, layout, buf);
        self.submit(permit, work)
    }

    /// Appends `buf` along `axis` (as [`Array::append`], or [`Array::append_from`] for a
    /// converted layout) without waiting: appends run in submission order, each after
    /// every earlier request of this handle and before every later one.
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

    /// What a write of the region `start`/`count` touches: the box of the grid's chunks
    /// (shards, when sharded) it meets, or everything when the region is not one this
    /// array can hold (the write then fails in its turn).
    fn write_footprint(&self, start: &[u64], count: &[u64]) -> Footprint {
        match self.region_chunk_box(start, count) {
            Ok(Some((first, last))) => Footprint::Chunks { first, last },
            _ => Footprint::Everything,
        }
    }
}

/// The work of a non-blocking write on `array` (see [`Array::write_async`]), for
/// [`Array::submit`].
pub(crate) fn write_job(
    array: &Array,
    start: Vec<u64>,
    count: Vec<u64>,
    elem: ElementType,
    layout: Layout,
    buf: Payload,
) -> Work {
    let footprint = array.write_footprint(&start, &count);
    let run = move |a: &Array| {
        let bytes = (*buf).as_ref();
        match &layout {
            Layout::Dense(order) => a.write(&start, &count, elem, *order, bytes),
            Layout::Converted(order) => a.write_from(&start, &count, elem, *order, bytes),
            Layout::Strided(strides) => {
                a.write(&start, &count, elem, MemLayout::Strided(strides), bytes)
            }
        }
    };
    Work {
        footprint,
        run: Box::new(run),
    }
}

/// The work of a non-blocking append (see [`Array::append_async`]), for [`Array::submit`].
pub(crate) fn append_job(
    axis: usize,
    count: Vec<u64>,
    elem: ElementType,
    layout: Layout,
    buf: Payload,
) -> Work {
    let run = move |a: &Array| {
        let bytes = (*buf).as_ref();
        match &layout {
            Layout::Dense(order) => a.append(axis, &count, elem, *order, bytes),
            Layout::Converted(order) => a.append_from(axis, &count, elem, *order, bytes),
            Layout::Strided(strides) => {
                a.append(axis, &count, elem, MemLayout::Strided(strides), bytes)
            }
        }
        .map(drop)
    };
    Work {
        footprint: Footprint::Everything,
        run: Box::new(run),
    }
}
