//! The storage of Icechunk repositories on local disk (`icechunk:///path`): the crate's
//! own local storage (`object_store`'s `LocalFileSystem`) under a layer that
//!
//! - reads files itself, through a handle on the repository's root (cap-std, as the
//!   directory store): each path is resolved beneath the root, a symbolic link leading
//!   out of it (or any absolute one) is an error naming the path relative to the root,
//!   links that stay inside are followed, files are opened without waiting for a writer
//!   (`O_NONBLOCK`) and anything but a regular file is an error naming it once open;
//! - writes, copies and removes files itself the same way (a write into a new file beside
//!   the target, then renamed in place, directories created beneath the root), and
//!   resolves the directory of a listing the same way before the crate's storage lists
//!   it, refusing links out of the root, and listed names that are no regular files;
//! - makes every file it writes durable before the next file that could name it is
//!   written: chunks are synced (file, then the directories whose entries changed)
//!   before the first file that is no chunk (a manifest, transaction log, snapshot or
//!   the repository's branches and tags) is written, and each of those is synced before
//!   its write returns, so the branch file never names a file not yet on disk, and a
//!   commit is on disk when it returns.
//!
//! Reads, writes and removals have no gap between check and use. A listing is checked
//! before the crate's storage lists by path: a link put in place by another process
//! between the two could be listed (names and sizes only; nothing is read through it).

use super::filesystem::{is_escape, is_missing};
use async_trait::async_trait;
use bytes::Bytes;
use cap_std::fs::Dir;
use chrono::{DateTime, Utc};
use futures_util::stream::{BoxStream, Stream, StreamExt, TryStreamExt};
use icechunk::storage::{
    DeleteObjectsResult, GetModifiedResult, ListInfo, ObjectStorage, RepositoryCreation, Settings,
    Storage, StorageContext, StorageError, StorageErrorKind, StorageInfo, StorageResult,
    VersionInfo, VersionedUpdateResult,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

/// The crate's storage of a repository on local disk, checked and synced (see the module).
#[derive(Debug, Serialize, Deserialize)]
pub struct LocalDisk {
    /// The repository's directory, canonical.
    root: PathBuf,
    /// The crate's local storage of `root`.
    backend: ObjectStorage,
    /// A handle on `root`, through which every path is resolved.
    #[serde(skip)]
    dir: OnceLock<Arc<Dir>>,
    /// Chunks written and not yet synced, each with the directories to sync after it;
    /// held while they are synced, so that no other file is written meanwhile.
    #[serde(skip)]
    pending: tokio::sync::Mutex<Vec<Written>>,
    /// What was written and synced, in order (tests check the order).
    #[cfg(test)]
    #[serde(skip)]
    journal: std::sync::Mutex<Vec<String>>,
}

/// A file written, with the directories whose entries its write changed (its own, and
/// those above each directory it created), `""` for the root.
#[derive(Debug, Clone)]
struct Written {
    path: String,
    dirs: Vec<String>,
}

/// What a call does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Reads the file (or names it in a listing): it must be a regular file.
    Read,
    /// Writes or removes it: whatever is there is replaced or removed, not opened.
    Write,
}

impl LocalDisk {
    /// The storage of the repository at `root` (an existing directory).
    pub async fn new(root: &Path) -> StorageResult<LocalDisk> {
        let root = root.canonicalize().map_err(|e| io_error(e, ""))?;
        let backend = ObjectStorage::new_local_filesystem(&root).await?;
        Ok(LocalDisk {
            root,
            backend,
            dir: OnceLock::new(),
            pending: tokio::sync::Mutex::new(Vec::new()),
            #[cfg(test)]
            journal: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The handle on the root, opened on first use.
    fn dir(&self) -> StorageResult<Arc<Dir>> {
        if let Some(dir) = self.dir.get() {
            return Ok(dir.clone());
        }
        let dir = Dir::open_ambient_dir(&self.root, cap_std::ambient_authority())
            .map_err(|e| io_error(e, ""))?;
        Ok(self.dir.get_or_init(|| Arc::new(dir)).clone())
    }

    /// Checks `path` (relative to the root) for `what`: refuses a link leading outside
    /// the root on the way or at the end, and, to read, anything but a regular file
    /// (a missing path passes: the crate reports it missing). Returns the directories a
    /// write of `path` changes the entries of: its own, and, from the first one missing,
    /// the one above each it would create.
    fn check(&self, path: &str, what: Use) -> StorageResult<Vec<String>> {
        let dir = self.dir()?;
        let path = path.trim_matches('/');
        let names: Vec<&str> = path.split('/').filter(|n| !n.is_empty()).collect();
        let Some((_, above)) = names.split_last() else {
            return Ok(Vec::new());
        };
        let mut dirs = vec![String::new()];
        let mut missing = None;
        for (depth, name) in above.iter().enumerate() {
            let here = match dirs.last() {
                Some(parent) if !parent.is_empty() => format!("{parent}/{name}"),
                _ => name.to_string(),
            };
            if missing.is_none() {
                match dir.metadata(&here) {
                    Ok(m) if m.is_dir() => {}
                    // Not a directory: the crate's own call fails on it.
                    Ok(_) => return Ok(Vec::new()),
                    Err(e) if is_escape(&e) => return Err(outside(&here)),
                    Err(e) if is_missing(&e) => missing = Some(depth),
                    Err(e) => return Err(io_error(e, &here)),
                }
            }
            dirs.push(here);
        }
        if missing.is_none() {
            match dir.metadata(path) {
                Ok(m) if m.is_file() => {}
                Ok(m) if what == Use::Read && !m.is_dir() => return Err(not_regular(path)),
                Ok(_) => {}
                Err(e) if is_escape(&e) => return Err(outside(path)),
                Err(e) if is_missing(&e) => {}
                Err(e) => return Err(io_error(e, path)),
            }
        }
        // `dirs` runs from the root to the file's directory: a write changes the last
        // one, and the one above each directory it creates.
        let first = missing.unwrap_or(dirs.len() - 1);
        Ok(dirs.split_off(first))
    }

    /// Syncs the chunks written since the last sync, then the directories they changed;
    /// other writes wait meanwhile. On an error they stay to be synced again.
    pub async fn sync_pending(&self) -> StorageResult<()> {
        let mut pending = self.pending.lock().await;
        if pending.is_empty() {
            return Ok(());
        }
        let dir = self.dir()?;
        let files: Vec<String> = pending.iter().map(|w| w.path.clone()).collect();
        let dirs: BTreeSet<String> = pending.iter().flat_map(|w| w.dirs.clone()).collect();
        let done = tokio::task::spawn_blocking(move || sync_all(&dir, &files, &dirs))
            .await
            .map_err(|e| other(format!("syncing the written chunks failed: {e}")))??;
        pending.clear();
        self.note(done);
        Ok(())
    }

    /// `path` opened for reading beneath the root (see [`open_beneath`]).
    async fn open(&self, path: &str) -> StorageResult<std::fs::File> {
        let (dir, path) = (self.dir()?, path.trim_matches('/').to_string());
        tokio::task::spawn_blocking(move || open_beneath(&dir, &path))
            .await
            .map_err(|e| other(format!("opening a file failed: {e}")))?
    }

    /// The bytes of `path` in `range` and its version, read beneath the root (see
    /// [`read_beneath`]).
    async fn read(
        &self,
        path: &str,
        range: Option<Range<u64>>,
    ) -> StorageResult<(Bytes, VersionInfo)> {
        let (dir, path) = (self.dir()?, path.trim_matches('/').to_string());
        tokio::task::spawn_blocking(move || read_beneath(&dir, &path, range))
            .await
            .map_err(|e| other(format!("reading a file failed: {e}")))?
    }

    /// Syncs the file at `path` just written, then the directories `dirs`.
    async fn sync_written(&self, path: &str, dirs: Vec<String>) -> StorageResult<()> {
        let dir = self.dir()?;
        let files = vec![path.to_string()];
        let dirs: BTreeSet<String> = dirs.into_iter().collect();
        let done = tokio::task::spawn_blocking(move || sync_all(&dir, &files, &dirs))
            .await
            .map_err(|e| other(format!("syncing {path:?} failed: {e}")))??;
        self.note(done);
        Ok(())
    }

    /// After a file was written at `path`: a chunk waits to be synced with the others;
    /// anything else is synced now.
    async fn written(&self, path: &str, dirs: Vec<String>) -> StorageResult<()> {
        #[cfg(test)]
        lock(&self.journal).push(format!("write {path}"));
        if is_chunk(path) {
            self.pending.lock().await.push(Written {
                path: path.to_string(),
                dirs,
            });
            return Ok(());
        }
        self.sync_written(path, dirs).await
    }

    /// Records what was synced, in order, for the tests.
    #[cfg(test)]
    fn note(&self, done: Vec<String>) {
        lock(&self.journal).extend(done);
    }

    /// Nothing is recorded outside the tests.
    #[cfg(not(test))]
    fn note(&self, _done: Vec<String>) {}

    /// Before writing at `path`: checks it and, unless it is a chunk, syncs the chunks
    /// written before, which it may name. Returns the directories the write changes.
    async fn before_write(&self, path: &str) -> StorageResult<Vec<String>> {
        let dirs = self.check(path, Use::Write)?;
        if !is_chunk(path) {
            self.sync_pending().await?;
        }
        Ok(dirs)
    }

    /// What was written and synced so far, in order.
    #[cfg(test)]
    pub fn journal(&self) -> Vec<String> {
        lock(&self.journal).clone()
    }
}

/// Whether `path` is a chunk (a file no other names before a manifest does).
fn is_chunk(path: &str) -> bool {
    path.trim_start_matches('/').starts_with("chunks/")
}

/// Locks `mutex`, whatever a panicking holder left (a list of paths stays valid).
#[cfg(test)]
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Syncs each of `files`, then each of `dirs` (`""` is the root), beneath `dir`; returns
/// what it synced, in order.
fn sync_all(dir: &Dir, files: &[String], dirs: &BTreeSet<String>) -> StorageResult<Vec<String>> {
    let mut done = Vec::with_capacity(files.len() + dirs.len());
    for path in files {
        let file = open_beneath(dir, path)?;
        file.sync_all().map_err(|e| sync_error(e, path))?;
        done.push(format!("sync {path}"));
    }
    // Deepest first: a directory's own entry is synced after what it holds.
    for path in dirs.iter().rev() {
        let name = if path.is_empty() { "." } else { path.as_str() };
        dir.open(name)
            .and_then(|d| d.sync_all())
            .map_err(|e| sync_error(e, name))?;
        done.push(format!("sync {name}/"));
    }
    Ok(done)
}

/// The error for a path leading outside the repository.
fn outside(path: &str) -> StorageError {
    other(format!(
        "{path:?} leads outside the repository through a symbolic link (links that leave \
         the repository's directory, and absolute ones, are refused)"
    ))
}

/// The error for something that is no regular file where a file is read.
fn not_regular(path: &str) -> StorageError {
    other(format!(
        "{path:?} in the repository is not a regular file (a FIFO, socket or device): \
         refused without reading it"
    ))
}

/// The error for a failed sync of `path`.
fn sync_error(e: io::Error, path: &str) -> StorageError {
    other(format!(
        "{path:?} in the repository could not be synced to disk: {e}"
    ))
}

/// The error for a failed look at `path` (`""`: the root).
fn io_error(e: io::Error, path: &str) -> StorageError {
    match path {
        "" => other(format!("the repository's directory: {e}")),
        _ => other(format!("{path:?} in the repository: {e}")),
    }
}

/// A storage error saying `message`.
fn other(message: String) -> StorageError {
    StorageError::capture(StorageErrorKind::Other(message))
}

impl fmt::Display for LocalDisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LocalDisk(path={})", self.root.display())
    }
}

impl icechunk_storage::sealed::Sealed for LocalDisk {}

#[async_trait]
#[typetag::serde(name = "libzarr_local_disk")]
impl Storage for LocalDisk {
    fn storage_info(&self) -> StorageInfo {
        self.backend.storage_info()
    }

    async fn default_settings(&self) -> StorageResult<Settings> {
        self.backend.default_settings().await
    }

    async fn can_write(&self) -> StorageResult<bool> {
        self.backend.can_write().await
    }

    async fn can_create_repository(&self) -> StorageResult<RepositoryCreation> {
        self.backend.can_create_repository().await
    }

    async fn create_location_if_needed(&self) -> StorageResult<()> {
        self.backend.create_location_if_needed().await
    }

    async fn put_object(
        &self,
        ctx: &StorageContext<'_>,
        path: &str,
        bytes: Bytes,
        _content_type: Option<&str>,
        _metadata: Vec<(String, String)>,
        previous_version: Option<&VersionInfo>,
    ) -> StorageResult<VersionedUpdateResult> {
        let dirs = self.before_write(path).await?;
        // As the crate's local storage: a write meant to create fails when the file
        // exists; any other replaces it (local disk has no conditional update).
        let create = previous_version.is_some_and(VersionInfo::is_create)
            && ctx.settings.unsafe_use_conditional_create();
        let (dir, rel) = (self.dir()?, path.trim_matches('/').to_string());
        let put = tokio::task::spawn_blocking(move || write_beneath(&dir, &rel, &bytes, create))
            .await
            .map_err(|e| other(format!("writing {path:?} failed: {e}")))??;
        let Some(new_version) = put else {
            return Ok(VersionedUpdateResult::NotOnLatestVersion);
        };
        self.written(path, dirs).await?;
        Ok(VersionedUpdateResult::Updated { new_version })
    }

    async fn copy_object(
        &self,
        ctx: &StorageContext<'_>,
        from: &str,
        to: &str,
        _content_type: Option<&str>,
        version: &VersionInfo,
    ) -> StorageResult<VersionedUpdateResult> {
        let dirs = self.before_write(to).await?;
        // Read and written through the handle, as the crate's local storage copies: only
        // the version asked for when conditional updates are on.
        let (bytes, read) = self.read(from, None).await?;
        if ctx.settings.unsafe_use_conditional_update()
            && version.etag.is_some()
            && version.etag != read.etag
        {
            return Ok(VersionedUpdateResult::NotOnLatestVersion);
        }
        let (dir, rel) = (self.dir()?, to.trim_matches('/').to_string());
        tokio::task::spawn_blocking(move || write_beneath(&dir, &rel, &bytes, false))
            .await
            .map_err(|e| other(format!("copying to {to:?} failed: {e}")))??;
        self.written(to, dirs).await?;
        Ok(VersionedUpdateResult::Updated {
            new_version: version.clone(),
        })
    }

    async fn list_objects<'a>(
        &'a self,
        ctx: &StorageContext<'_>,
        prefix: &str,
    ) -> StorageResult<BoxStream<'a, StorageResult<ListInfo<String>>>> {
        // The prefix as a directory: a link on the way out of the root is refused.
        let base = prefix.trim_matches('/').to_string();
        self.check(&format!("{base}/."), Use::Write)?;
        let listing = self.backend.list_objects(ctx, prefix).await?;
        Ok(listing
            .and_then(move |info| {
                let path = match base.is_empty() {
                    true => info.id.clone(),
                    false => format!("{base}/{}", info.id),
                };
                std::future::ready(self.check(&path, Use::Read).map(|_| info))
            })
            .boxed())
    }

    async fn delete_batch(
        &self,
        _ctx: &StorageContext<'_>,
        prefix: &str,
        batch: Vec<(String, u64)>,
    ) -> StorageResult<DeleteObjectsResult> {
        let (dir, base) = (self.dir()?, prefix.trim_matches('/').to_string());
        tokio::task::spawn_blocking(move || delete_beneath(&dir, &base, &batch))
            .await
            .map_err(|e| other(format!("deleting files failed: {e}")))?
    }

    async fn get_object_last_modified(
        &self,
        _ctx: &StorageContext<'_>,
        path: &str,
    ) -> StorageResult<DateTime<Utc>> {
        let (file, path) = (self.open(path).await?, path.to_string());
        let modified = file
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| io_error(e, &path))?;
        Ok(DateTime::<Utc>::from(modified))
    }

    async fn get_object_conditional(
        &self,
        _ctx: &StorageContext<'_>,
        path: &str,
        previous_version: Option<&VersionInfo>,
    ) -> StorageResult<GetModifiedResult> {
        let (bytes, version) = self.read(path, None).await?;
        if previous_version.is_some_and(|v| v.etag.is_some() && v.etag == version.etag) {
            return Ok(GetModifiedResult::OnLatestVersion);
        }
        Ok(GetModifiedResult::Modified {
            data: Box::pin(std::io::Cursor::new(bytes)),
            new_version: version,
        })
    }

    async fn get_object_range(
        &self,
        _ctx: &StorageContext<'_>,
        path: &str,
        range: Option<&Range<u64>>,
    ) -> StorageResult<(
        Pin<Box<dyn Stream<Item = Result<Bytes, StorageError>> + Send>>,
        VersionInfo,
    )> {
        let (bytes, version) = self.read(path, range.cloned()).await?;
        let stream = futures_util::stream::once(std::future::ready(Ok(bytes)));
        Ok((Box::pin(stream), version))
    }
}

/// Opens `path` beneath `dir` to read it, without following a link out of `dir` and
/// without waiting for a writer (a FIFO) or a device; anything but a regular file is
/// refused once open, a directory reads as missing (as the crate's local storage has it).
fn open_beneath(dir: &Dir, path: &str) -> StorageResult<std::fs::File> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits() as i32);
    }
    let file = match dir.open_with(path, &options) {
        Ok(file) => file.into_std(),
        Err(e) if is_escape(&e) => return Err(outside(path)),
        Err(e) if is_missing(&e) => {
            return Err(StorageError::capture(StorageErrorKind::ObjectNotFound))
        }
        // A socket, or a device without a driver.
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
            return Err(not_regular(path))
        }
        Err(e) => return Err(io_error(e, path)),
    };
    let metadata = file.metadata().map_err(|e| io_error(e, path))?;
    if metadata.is_dir() {
        return Err(StorageError::capture(StorageErrorKind::ObjectNotFound));
    }
    if !metadata.is_file() {
        return Err(not_regular(path));
    }
    Ok(file)
}

/// The bytes of `path` beneath `dir` in `range` (all when `None`; a range past the end
/// is cut there, one starting past it is an error), with its version: the entity tag
/// the crate's local storage gives (inode, modification time and size).
fn read_beneath(
    dir: &Dir,
    path: &str,
    range: Option<Range<u64>>,
) -> StorageResult<(Bytes, VersionInfo)> {
    let file = open_beneath(dir, path)?;
    let metadata = file.metadata().map_err(|e| io_error(e, path))?;
    let len = metadata.len();
    let range = range.unwrap_or(0..len);
    if range.start > len || (range.start == len && range.end > range.start) {
        return Err(other(format!(
            "{path:?} in the repository: bytes {}..{} asked of {len}",
            range.start, range.end
        )));
    }
    let end = range.end.min(len);
    let mut bytes = vec![0u8; end.saturating_sub(range.start) as usize];
    read_exact_at(&file, &mut bytes, range.start).map_err(|e| io_error(e, path))?;
    Ok((
        Bytes::from(bytes),
        VersionInfo::from_etag_only(etag(&metadata)),
    ))
}

/// Writes `bytes` as the file `path` beneath `dir`, creating the directories above it
/// beneath `dir` (none through a link out of it): into a new file beside it, then put in
/// its place by a rename (by a link when `create`, so that an existing file stays and
/// `None` says so). Returns the file's version. Nothing is synced here.
fn write_beneath(
    dir: &Dir,
    path: &str,
    bytes: &[u8],
    create: bool,
) -> StorageResult<Option<VersionInfo>> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    /// Numbers the files being written, so that none is written twice at once.
    static STAGED: AtomicU64 = AtomicU64::new(0);
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    let failed = |e: io::Error, at: &str| match is_escape(&e) {
        true => outside(at),
        false => io_error(e, at),
    };
    let parent_dir = match parent {
        "" => dir.try_clone().map_err(|e| failed(e, path))?,
        _ => match dir.open_dir(parent) {
            Ok(opened) => opened,
            Err(e) if is_missing(&e) => {
                // Created meanwhile by another write is as good.
                dir.create_dir_all(parent)
                    .or_else(|e| match e.kind() {
                        io::ErrorKind::AlreadyExists => Ok(()),
                        _ => Err(e),
                    })
                    .map_err(|e| failed(e, parent))?;
                dir.open_dir(parent).map_err(|e| failed(e, parent))?
            }
            Err(e) => return Err(failed(e, parent)),
        },
    };
    // Digits only after the `#`: the crate's local storage lists no such name.
    let staged = format!(
        "{name}#{}{}",
        std::process::id(),
        STAGED.fetch_add(1, Ordering::Relaxed)
    );
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = parent_dir
        .open_with(&staged, &options)
        .map_err(|e| failed(e, path))?;
    let placed = file.write_all(bytes).and_then(|()| match create {
        true => parent_dir
            .hard_link(&staged, &parent_dir, name)
            .map(|()| true)
            .or_else(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => Ok(false),
                _ => Err(e),
            }),
        false => parent_dir.rename(&staged, &parent_dir, name).map(|()| true),
    });
    if create || placed.is_err() {
        parent_dir.remove_file(&staged).ok();
    }
    if !placed.map_err(|e| failed(e, path))? {
        return Ok(None);
    }
    let metadata = file.into_std().metadata().map_err(|e| io_error(e, path))?;
    Ok(Some(VersionInfo::from_etag_only(etag(&metadata))))
}

/// Removes each file of `batch` (ids below `base`, with their sizes) beneath `dir`: a
/// path through a link out of `dir` is refused before anything is removed; a file
/// already missing, or one that cannot be removed, is not counted (as the crate's local
/// storage does).
fn delete_beneath(
    dir: &Dir,
    base: &str,
    batch: &[(String, u64)],
) -> StorageResult<DeleteObjectsResult> {
    let path = |id: &str| match base {
        "" => id.to_string(),
        _ => format!("{base}/{id}"),
    };
    for (id, _) in batch {
        let path = path(id);
        if let Some((parent, _)) = path.rsplit_once('/') {
            if matches!(dir.open_dir(parent), Err(ref e) if is_escape(e)) {
                return Err(outside(parent));
            }
        }
    }
    let mut deleted = DeleteObjectsResult::default();
    for (id, size) in batch {
        if dir.remove_file(path(id)).is_ok() {
            deleted.deleted_objects += 1;
            deleted.deleted_bytes += size;
        }
    }
    Ok(deleted)
}

/// Reads `buf.len()` bytes of `file` from `offset`.
#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Reads `buf.len()` bytes of `file` from `offset`.
#[cfg(not(unix))]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// The entity tag `object_store`'s local storage gives a file, so that versions read here
/// and versions its writes return compare equal.
fn etag(metadata: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(metadata);
    #[cfg(not(unix))]
    let inode = 0u64;
    let mtime = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default()
        .as_micros();
    format!("\"{inode:x}-{mtime:x}-{:x}\"", metadata.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_and_their_changed_directories_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("snapshots")).unwrap();
        std::fs::write(dir.path().join("secret"), b"s").unwrap();
        std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink("../../secret", root.join("snapshots/out")).unwrap();
            symlink("../elsewhere", root.join("chunks")).unwrap();
        }
        let at = root.clone();
        let disk = super::super::cloud::block_on(async move { LocalDisk::new(&at).await })
            .unwrap()
            .unwrap();
        let dirs = |path: &str| disk.check(path, Use::Write).unwrap();
        assert_eq!(dirs("repo"), vec![String::new()]);
        assert_eq!(dirs("snapshots/ABC"), vec!["snapshots".to_string()]);
        assert_eq!(
            dirs("manifests/x/y"),
            vec![String::new(), "manifests".into(), "manifests/x".into()]
        );
        #[cfg(unix)]
        for (path, what) in [
            ("snapshots/out", Use::Read),
            ("snapshots/out", Use::Write),
            ("chunks/A", Use::Write),
            ("chunks/A", Use::Read),
        ] {
            let message = disk.check(path, what).unwrap_err().to_string();
            assert!(
                message.contains("leads outside the repository"),
                "{message}"
            );
        }
    }

    /// Reads need no check before them: opening beneath the root refuses links out, and a
    /// FIFO is opened without waiting and refused once open.
    #[cfg(unix)]
    #[test]
    fn reads_refuse_fifos_and_links_out_by_themselves() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("chunks")).unwrap();
        std::fs::write(dir.path().join("secret"), b"secret").unwrap();
        std::fs::write(root.join("chunks/A"), b"0123456789").unwrap();
        symlink("../../secret", root.join("chunks/out")).unwrap();
        symlink("A", root.join("chunks/in")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("chunks/fifo"))
            .status()
            .unwrap();
        assert!(made.success());
        let handle = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).unwrap();
        let read = |path: &str, range: Option<Range<u64>>| {
            read_beneath(&handle, path, range).map(|(bytes, _)| bytes.to_vec())
        };
        assert_eq!(read("chunks/A", Some(2..5)).unwrap(), b"234");
        assert_eq!(read("chunks/in", Some(8..20)).unwrap(), b"89");
        assert_eq!(read("chunks/A", None).unwrap(), b"0123456789");
        assert!(read("chunks/A", Some(11..12)).is_err());
        let message = read("chunks/out", None).unwrap_err().to_string();
        assert!(
            message.contains("\"chunks/out\" leads outside"),
            "{message}"
        );
        let message = read("chunks/fifo", None).unwrap_err().to_string();
        assert!(
            message.contains("\"chunks/fifo\" in the repository is not a regular file"),
            "{message}"
        );
        assert!(matches!(
            read("chunks/missing", None).unwrap_err().kind,
            StorageErrorKind::ObjectNotFound
        ));
        // A file read here has the version the crate's local storage gave when writing it.
        let at = root.clone();
        let (written, read) = super::super::cloud::block_on(async move {
            let disk = LocalDisk::new(&at).await.unwrap();
            let settings = disk.default_settings().await.unwrap();
            let ctx = StorageContext::unattributed(&settings);
            let bytes = Bytes::from_static(b"xyz");
            let put = disk.put_object(&ctx, "chunks/B", bytes, None, Vec::new(), None);
            let written = put.await.unwrap();
            (written, disk.read("chunks/B", None).await.unwrap())
        })
        .unwrap();
        assert_eq!(&read.0[..], b"xyz");
        match written {
            VersionedUpdateResult::Updated { new_version } => {
                assert!(new_version.etag.is_some());
                assert_eq!(new_version.etag, read.1.etag);
            }
            other => panic!("{other:?}"),
        }
    }

    /// Writes go through the handle too: a directory linked out of the root is neither
    /// written into nor created through; a write meant to create keeps an existing file;
    /// no staged file stays behind.
    #[cfg(unix)]
    #[test]
    fn writes_stay_beneath_the_root_and_create_only_once() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        symlink("../outside", root.join("chunks")).unwrap();
        let handle = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).unwrap();
        for path in ["chunks/A", "chunks/new/B"] {
            let message = write_beneath(&handle, path, b"x", false)
                .unwrap_err()
                .to_string();
            assert!(message.contains("leads outside"), "{path}: {message}");
        }
        assert_eq!(
            std::fs::read_dir(dir.path().join("outside"))
                .unwrap()
                .count(),
            0
        );
        assert!(write_beneath(&handle, "snapshots/S", b"first", true)
            .unwrap()
            .is_some());
        assert!(write_beneath(&handle, "snapshots/S", b"second", true)
            .unwrap()
            .is_none());
        assert_eq!(std::fs::read(root.join("snapshots/S")).unwrap(), b"first");
        assert!(write_beneath(&handle, "snapshots/S", b"third", false)
            .unwrap()
            .is_some());
        assert_eq!(std::fs::read(root.join("snapshots/S")).unwrap(), b"third");
        let names: Vec<String> = std::fs::read_dir(root.join("snapshots"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["S"]);
        // Removals: nothing through the link out; the file inside, counted once.
        std::fs::write(dir.path().join("outside/C"), b"c").unwrap();
        let message = delete_beneath(&handle, "chunks", &[("C".into(), 1)])
            .unwrap_err()
            .to_string();
        assert!(message.contains("\"chunks\" leads outside"), "{message}");
        assert!(dir.path().join("outside/C").exists());
        let batch = [("S".to_string(), 5), ("missing".to_string(), 7)];
        let deleted = delete_beneath(&handle, "snapshots", &batch).unwrap();
        assert_eq!((deleted.deleted_objects, deleted.deleted_bytes), (1, 5));
        assert!(!root.join("snapshots/S").exists());
    }
}
