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
    let mut output = None;
    each_as_done(vec![future], |_, answer| output = Some(answer))?;
    output.expect("one answer for one future")
}

/// Runs every future of `futures` on the runtime at once, each as a task of its own, and
/// hands each output (with its position) to `each` on the calling thread as it finishes.
/// A future that panics gives an error with the panic's text, and the others go on.
pub(crate) fn each_as_done<T, F>(
    futures: Vec<F>,
    mut each: impl FnMut(usize, Result<T>),
) -> Result<()>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    use futures_util::FutureExt;
    let runtime = runtime()?;
    let count = futures.len();
    let (sender, receiver) = std::sync::mpsc::channel();
    for (n, future) in futures.into_iter().enumerate() {
        let sender = sender.clone();
        runtime.spawn(async move {
            let _ = sender.send((n, std::panic::AssertUnwindSafe(future).catch_unwind().await));
        });
    }
    drop(sender);
    let mut answered = vec![false; count];
    for (n, outcome) in receiver.iter() {
        answered[n] = true;
        each(n, outcome.map_err(|payload| panicked(payload.as_ref())));
    }
    // A task dropped unfinished (the runtime shutting down) sends nothing.
    for (n, _) in answered.iter().enumerate().filter(|(_, done)| !**done) {
        each(
            n,
            Err(Error::Internal(
                "an object-store request ended without an answer".into(),
            )),
        );
    }
    Ok(())
}

/// The error for a request that panicked: the client's own text, with its URLs' user
/// information and query values and any signing parameters masked (the store's own
/// secrets are not known here; the client's panics seen so far name no value).
fn panicked(payload: &(dyn std::any::Any + Send)) -> Error {
    Error::Internal(format!(
        "an object-store request panicked: {}",
        super::redact::redact(&crate::error::panic_text(payload), &[])
    ))
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

    #[test]
    fn each_future_answers_on_its_own_and_a_panic_fails_only_its_own() {
        // The first future answers only once the caller has seen the other two: 1 when
        // released so, 0 when it gave up waiting.
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let futures: Vec<std::pin::Pin<Box<dyn Future<Output = u32> + Send>>> = vec![
            Box::pin(async {
                let waited = tokio::time::timeout(std::time::Duration::from_secs(20), released);
                match waited.await {
                    Ok(Ok(())) => 1,
                    _ => 0,
                }
            }),
            Box::pin(async { panic!("request 2 failed") }),
            Box::pin(async { 3 }),
        ];
        let mut answers = Vec::new();
        let mut release = Some(release);
        each_as_done(futures, |n, answer| {
            answers.push((n, answer));
            if answers.len() == 2 {
                let _ = release.take().expect("released once").send(());
            }
        })
        .unwrap();
        assert_eq!(answers.len(), 3);
        answers.sort_by_key(|(n, _)| *n);
        assert!(matches!(answers[0], (0, Ok(1))), "{:?}", answers[0]);
        assert!(
            matches!(&answers[1], (1, Err(Error::Internal(m))) if m.contains("request 2 failed"))
        );
        assert!(matches!(answers[2], (2, Ok(3))));
    }
}
