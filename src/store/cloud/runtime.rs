//! The one asynchronous runtime behind every object store of the process, and the bridge
//! that lets synchronous callers wait for its work.
//!
//! The runtime has its own small pool of threads and is started at the first request.
//! Callers never run futures themselves: they hand the future to the runtime and wait on a
//! channel, so any thread may call (the library's worker pool, threads of the application,
//! even a thread of another async runtime) without re-entering the runtime or starving it.
//! After `fork()` the child has none of the parent's threads: the runtime (and every client
//! built on it) is noticed to belong to another process by its pid and started anew.

use crate::error::{Error, Result};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::runtime::Runtime;

/// The runtime and the process it was started in.
static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);

/// Threads of the runtime: requests wait on the network, not on the CPU, so a few threads
/// keep many requests in flight.
const IO_THREADS: usize = 2;

/// The process's runtime, started (or, in a forked child, restarted) on first use.
pub(crate) fn runtime() -> Result<Arc<Runtime>> {
    let pid = std::process::id();
    let mut slot = RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((owner, runtime)) = slot.as_ref() {
        if *owner == pid {
            return Ok(runtime.clone());
        }
    }
    if let Some((_, inherited)) = slot.take() {
        // The parent's threads do not exist in this child: shutting the runtime down would
        // wait for them, so its memory is left behind instead.
        std::mem::forget(inherited);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(IO_THREADS)
        .thread_name("zarr-io")
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the I/O runtime for object stores", e))?;
    let runtime = Arc::new(runtime);
    *slot = Some((pid, runtime.clone()));
    Ok(runtime)
}

/// Makes rustls use the ring provider (no aws-lc); an application that installed another
/// provider first keeps it. Needed before any client is built.
pub(crate) fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Runs `future` on the runtime and waits for its output on the calling thread.
pub(crate) fn block_on<T, F>(future: F) -> Result<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    use futures_util::FutureExt;
    let runtime = runtime()?;
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = sender.send(std::panic::AssertUnwindSafe(future).catch_unwind().await);
    });
    match receiver.recv() {
        Ok(Ok(output)) => Ok(output),
        // The client's own text, with its URLs' user information and query values and
        // any signing parameters masked (the store's own secrets are not known here; the
        // client's panics seen so far name no value).
        Ok(Err(payload)) => Err(Error::Internal(format!(
            "an object-store request panicked: {}",
            super::redact::redact(&crate::error::panic_text(payload.as_ref()), &[])
        ))),
        Err(_) => Err(Error::Internal(
            "an object-store request ended without an answer".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_that_panics_is_an_error_with_the_panic_text_redacted() {
        let answer: Result<()> = block_on(async {
            panic!("cannot sign https://user:hunter22@example.invalid/k?X-Amz-Signature=abcdef")
        });
        let Err(Error::Internal(message)) = answer else {
            panic!("not an internal error: {answer:?}")
        };
        assert!(message.contains("panicked: cannot sign"), "{message}");
        assert!(!message.contains("hunter22"), "{message}");
        assert!(!message.contains("abcdef"), "{message}");
        // The runtime goes on serving requests.
        assert_eq!(block_on(async { 7 }).unwrap(), 7);
    }
}
