//! SIGINT, SIGTERM and SIGHUP while an export writes its temporary file: the file is
//! removed and the process ends with status 128 + the signal's number (130, 143, 129), as
//! shells report a command a signal ended.
//!
//! The handler does only what is async-signal-safe: `unlink` of a path made beforehand,
//! then `_exit`. So it works wherever the signal finds the process (inside the netCDF
//! library, waiting on a read), which a flag checked between chunks would not. The path is
//! a C string kept for the life of the process, so a handler running on another thread
//! never reads freed memory. A signal ignored when the export starts (`nohup`) stays
//! ignored.

use std::ffi::{c_char, c_int, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The file the handler removes; null when there is none.
static PATH: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());

/// The signals that end an export.
const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(signal: c_int) {
    let path = PATH.load(Ordering::SeqCst);
    // SAFETY: `path` is null or a C string never freed; unlink and _exit are
    // async-signal-safe.
    unsafe {
        if !path.is_null() {
            libc::unlink(path);
        }
        libc::_exit(128 + signal);
    }
}

/// While alive, the signals remove the file given to [`Guard::new`] and end the process;
/// dropped, the signals' earlier handling is back.
pub struct Guard {
    /// Each signal handled, with its handling before.
    previous: Vec<(c_int, libc::sigaction)>,
}

impl Guard {
    /// Makes the signals remove `path` (a file about to be created) and end the process.
    pub fn new(path: &CString) -> Guard {
        // Kept for the life of the process (see the module's text): one path per export.
        PATH.store(path.clone().into_raw(), Ordering::SeqCst);
        let mut previous = Vec::new();
        for signal in SIGNALS {
            // SAFETY: zeroed sigaction structures are valid; the handler has the signature
            // sa_handler expects; the pointers are valid for the calls.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(c_int) as libc::sighandler_t;
                libc::sigfillset(&mut action.sa_mask);
                let mut before: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut before) != 0
                    || before.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                if libc::sigaction(signal, &action, &mut before) == 0 {
                    previous.push((signal, before));
                }
            }
        }
        Guard { previous }
    }

    /// The file is no longer the handler's to remove (renamed into place, or removed).
    pub fn release(&self) {
        PATH.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release();
        for (signal, before) in &self.previous {
            // SAFETY: restores a handling sigaction returned.
            unsafe { libc::sigaction(*signal, before, std::ptr::null_mut()) };
        }
    }
}
