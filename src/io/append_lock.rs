//! The append lock: one writer at a time grows an array, as netCDF-4 refuses a second
//! writer. A handle takes it at its first append or resize and keeps it until freed; a
//! second appender (another process, or another handle of this one) is refused with
//! [`Error::Conflict`] naming the holder, instead of both being told their steps were
//! stored while half of them are lost. Region writes take no lock.
//!
//! The lock is a small document at `<array>/.zarr-append.lock` naming the holder (host,
//! process id, a token unique to the handle, the time taken), created only where absent in
//! one atomic step ([`Store::set_if`]: an exclusive create on disk, a conditional PUT on
//! object stores). A lock left by a process that no longer runs on this host is taken over,
//! with a notice; one held on another host cannot be checked, so its message says which
//! file to remove once that process is known to be gone. Stores that cannot create
//! conditionally (zip archives, written whole by one handle) and Icechunk repositories,
//! whose commits refuse a conflicting writer themselves, need no lock file.

use crate::error::{notice, Error, Result};
use crate::store::{join_key, Expect, Store};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The lock document's name inside the array's directory.
pub const LOCK_NAME: &str = ".zarr-append.lock";

/// Longest lock document read back (anything longer is not one of ours).
const MAX_LOCK_BYTES: u64 = 4096;

/// Tokens of the locks held by handles of this process.
static HELD: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Counts the locks this process took, so that each has its own token.
static TAKEN: AtomicU64 = AtomicU64::new(0);

/// An append lock held by one array handle; released (its document erased, if still its
/// own) when dropped.
#[derive(Debug)]
pub struct AppendLock {
    store: Arc<dyn Store>,
    key: String,
    token: String,
}

/// Who holds a lock, as its document says.
struct Holder {
    host: String,
    pid: u32,
    token: String,
    since: u64,
}

impl Holder {
    fn parse(bytes: &[u8]) -> Option<Holder> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        Some(Holder {
            host: value.get("host")?.as_str()?.to_string(),
            pid: u32::try_from(value.get("pid")?.as_u64()?).ok()?,
            token: value.get("token")?.as_str()?.to_string(),
            since: value.get("since")?.as_u64()?,
        })
    }
}

/// This machine's host name (empty when it cannot be told).
#[cfg(unix)]
fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[cfg(not(unix))]
fn host_name() -> String {
    String::new()
}

/// Whether process `pid` runs on this host (a process we may not signal runs too).
#[cfg(unix)]
fn runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Elsewhere than Unix a process cannot be checked: it is taken to run.
#[cfg(not(unix))]
fn runs(_pid: u32) -> bool {
    true
}

fn held() -> std::sync::MutexGuard<'static, Option<HashSet<String>>> {
    HELD.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read_holder(store: &dyn Store, key: &str) -> Result<Option<Option<Holder>>> {
    let mut buf = Vec::new();
    match store.get_into(key, &mut buf, MAX_LOCK_BYTES) {
        Ok(true) => Ok(Some(Holder::parse(&buf))),
        Ok(false) => Ok(None),
        // Longer than any lock of ours: held by something we cannot read.
        Err(Error::Io(_)) | Err(Error::BufferSize(_)) => Ok(Some(None)),
        Err(e) => Err(e),
    }
}

impl AppendLock {
    /// Takes the append lock of the array at `path` in `store` for one handle; `None` when
    /// the store needs none (see the module's description).
    pub fn take(store: &Arc<dyn Store>, path: &str) -> Result<Option<AppendLock>> {
        if store.repository().is_some() {
            return Ok(None);
        }
        let key = join_key(path, LOCK_NAME);
        let host = host_name();
        let pid = std::process::id();
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let token = format!(
            "{host}:{pid}:{since}:{}",
            TAKEN.fetch_add(1, Ordering::Relaxed)
        );
        let document =
            json!({"host": host, "pid": pid, "token": token, "since": since}).to_string();
        // A lock vanishing between a failed create and its read, or taken over from a dead
        // process, is tried again, a few times.
        for _ in 0..4 {
            match store.set_if(&key, document.as_bytes(), Expect::Absent) {
                Ok(true) => {
                    held()
                        .get_or_insert_with(HashSet::new)
                        .insert(token.clone());
                    return Ok(Some(AppendLock {
                        store: store.clone(),
                        key,
                        token,
                    }));
                }
                Ok(false) => {}
                Err(Error::Unsupported(_)) => return Ok(None),
                Err(e) => return Err(e),
            }
            let holder = match read_holder(store.as_ref(), &key)? {
                None => continue,
                Some(None) => {
                    return Err(Error::Conflict(format!(
                        "array {path:?} has an append lock {key:?} that is not libzarr's or \
                         cannot be read: remove it once no writer of the array runs"
                    )))
                }
                Some(Some(holder)) => holder,
            };
            let ours = held()
                .as_ref()
                .is_some_and(|tokens| tokens.contains(&holder.token));
            if ours {
                return Err(Error::Conflict(format!(
                    "array {path:?} is being appended to or resized through another handle \
                     of this process: append through one handle at a time (free the other \
                     first), or turn the append lock off on handles whose writers \
                     coordinate (zarr_array_set_append_lock)"
                )));
            }
            let dead = holder.host == host && (holder.pid == pid || !runs(holder.pid));
            if !dead {
                return Err(Error::Conflict(format!(
                    "array {path:?} is being appended to or resized by process {} on host \
                     {:?} (its append lock {key:?}, taken at {} seconds since 1970): wait \
                     for that writer to finish, or remove {key:?} if it no longer runs",
                    holder.pid, holder.host, holder.since
                )));
            }
            notice(&format!(
                "taking over the append lock of array {path:?} left by process {} on this \
                 host, which no longer runs",
                holder.pid
            ));
            store.erase(&key)?;
        }
        Err(Error::Conflict(format!(
            "array {path:?}: its append lock {key:?} changed hands repeatedly while being \
             taken; another writer is starting"
        )))
    }

    /// Releases the lock: erases its document if it is still this handle's (a lock taken
    /// over meanwhile is left to its new holder).
    pub fn release(mut self) -> Result<()> {
        let token = std::mem::take(&mut self.token);
        Self::erase_own(self.store.as_ref(), &self.key, &token)
    }

    fn erase_own(store: &dyn Store, key: &str, token: &str) -> Result<()> {
        if let Some(tokens) = held().as_mut() {
            tokens.remove(token);
        }
        match read_holder(store, key)? {
            Some(Some(holder)) if holder.token == token => store.erase(key).map(|_| ()),
            _ => Ok(()),
        }
    }
}

impl Drop for AppendLock {
    fn drop(&mut self) {
        if !self.token.is_empty() {
            let _ = Self::erase_own(self.store.as_ref(), &self.key, &self.token);
        }
    }
}
