//! Temporary files a killed writer left in a directory store: a write puts its value in
//! `.zarr-tmp.<pid>.<n>` beside its key and renames it into place, so a writer killed
//! between the two leaves the file behind. Listings skip such files; `validate` finds them
//! by walking the directories and, with `--repair`, removes those no writer can be using.
//!
//! A temporary file is stale when the process its name gives is not running on this host
//! and the file has not changed for [`STALE_AFTER`]; a name without a process id is judged
//! by its age alone. The age guards writers on other hosts sharing the filesystem, whose
//! process ids mean nothing here; the process guards a writer that is slow to fill its file.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use zarr::store::{is_temp_name, temp_file_writer};
use zarr::{Error, Result};

/// How long a temporary file must have been left unchanged to be stale (the messages say
/// 10 minutes).
pub const STALE_AFTER: Duration = Duration::from_secs(600);

/// A temporary file found in a store.
pub struct Temporary {
    /// Its path from the store's root, `/`-separated.
    pub key: String,
    /// Its path on disk.
    pub path: PathBuf,
    /// Why a writer may still be using it; `None` when it is stale.
    pub live: Option<String>,
    /// What makes it stale (meaningful when it is).
    pub writer: String,
}

/// The temporary files under the directory of the node `node` of the directory store at
/// `root`, in key order.
pub fn find(root: &Path, node: &str) -> Result<Vec<Temporary>> {
    let node = node.trim_matches('/');
    let mut found = Vec::new();
    let start = match node.is_empty() {
        true => root.to_path_buf(),
        false => root.join(node),
    };
    if start.is_dir() {
        walk(&start, node, &mut found)?;
    }
    found.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(found)
}

/// Collects the temporary files in `dir` (whose key is `key`) and the directories below it,
/// never following a symbolic link.
fn walk(dir: &Path, key: &str, found: &mut Vec<Temporary>) -> Result<()> {
    let io = |e| Error::io(format!("listing {}", dir.display()), e);
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let child = match key.is_empty() {
            true => name.to_string(),
            false => format!("{key}/{name}"),
        };
        let kind = entry.file_type().map_err(io)?;
        if kind.is_dir() {
            walk(&entry.path(), &child, found)?;
        } else if is_temp_name(name) {
            let modified = entry.metadata().and_then(|m| m.modified()).map_err(io)?;
            let age = SystemTime::now()
                .duration_since(modified)
                .unwrap_or(Duration::ZERO);
            let (live, writer) = judge(temp_file_writer(name), age);
            found.push(Temporary {
                key: child,
                path: entry.path(),
                live,
                writer,
            });
        }
    }
    Ok(())
}

/// Whether a temporary file made by process `pid` (when its name gives one) and unchanged
/// for `age` may be in use (why, when it may), and what is known of its writer.
fn judge(pid: Option<u32>, age: Duration) -> (Option<String>, String) {
    let writer = match pid {
        Some(p) => format!("process {p} is not running, unchanged for 10 minutes or more"),
        None => "no process id in its name, unchanged for 10 minutes or more".to_string(),
    };
    let live = match pid.filter(|&p| running(p)) {
        Some(p) => Some(format!("process {p} is running")),
        None if age < STALE_AFTER => Some("changed less than 10 minutes ago".to_string()),
        None => None,
    };
    (live, writer)
}

/// Whether a process of id `pid` is running on this host (as far as this process can
/// tell: one of another user counts). Ids out of range for a process are not.
#[cfg(unix)]
fn running(pid: u32) -> bool {
    let Ok(id) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if id <= 0 {
        // 0 and negative ids name process groups to kill(2), never one process.
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let alive = unsafe { libc::kill(id, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether a process of id `pid` is running: unknown here, so assumed to be.
#[cfg(not(unix))]
fn running(_pid: u32) -> bool {
    true
}
