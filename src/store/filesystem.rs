//! A store in a filesystem directory: each key is a file below the root, `/` in a key makes
//! directories, and values are written to a temporary file in the same directory and then
//! renamed into place, so a killed process leaves the old value or the new one, never half.
//!
//! Every key is resolved beneath the root at the moment of each operation, through a handle
//! on the root directory opened once (`cap_std::fs::Dir`: `openat2` with `RESOLVE_BENEATH`
//! where the kernel has it, else a walk component by component that never follows a link
//! out). Symbolic links that stay inside the root are followed; a key that would reach
//! outside through a link is refused as an invalid key, for reads, writes, erasures and
//! listings alike, whenever the link appeared (a directory of the store swapped for a link
//! while a handle is open included). Absolute links are refused even when they point inside
//! the root. A link that leads nowhere inside the root (dangling) reads as a missing key and
//! is left out of listings; listings follow links to directories and skip cycles.
//!
//! Only regular files are values: files are opened without blocking and checked once open,
//! so a FIFO, socket or device at a key is an error naming the key, never a hang. A key with
//! a path component longer than the filesystem allows is an invalid key.
//!
//! What survives a power loss is the handle's [`Durability`] (by default
//! [`Durability::Flush`]): the handle remembers the files it wrote, the directories whose
//! entries it changed and those leading to them, and syncs exactly those, so flushing never
//! waits for other users' data on a shared filesystem (as `syncfs` would). It remembers at most
//! [`MAX_UNSYNCED`] of them: the write that reaches that many flushes them.

use super::{
    check_writable, too_large, validate_dir_prefix, validate_key, validate_prefix, DirListing,
    Durability, Expect, Ranged, Store, Tail, ValueWriter, Version,
};
use crate::error::{to_usize, try_reserve, try_resize, Error, Result};
use cap_fs_ext::MetadataExt;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, DirEntry, OpenOptions};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Temporary files start with this; listings skip them.
const TEMP_PREFIX: &str = ".zarr-tmp.";

/// Whether `name` (a file's name, without its directory) is that of a temporary file of
/// the filesystem store's writes, which listings skip and no key may name.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX)
}

/// The id of the process that made the temporary file named `name` (`.zarr-tmp.<pid>.<n>`,
/// as a write names it); `None` for a name of another form.
pub fn temp_file_writer(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix(TEMP_PREFIX)?.split_once('.')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// How often creating a value's temporary file starts over when its directory is removed
/// under it (by an erasure that emptied it), and how often `set` does when an erasure of
/// the directory removes the temporary file with it.
const SET_ATTEMPTS: usize = 64;

/// Under [`Durability::Flush`], how many files and directories a handle remembers before a
/// write flushes them, so a long run of writes without a flush keeps its memory bounded.
const MAX_UNSYNCED: usize = 16384;

/// The most directories a handle remembers as settled ([`SyncState::settled`]); past it
/// the set starts again from nothing (forgetting costs only syncs).
const MAX_SETTLED: usize = 1 << 16;

/// A store rooted at a directory.
#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    /// `root` with every link resolved: the store's [`Store::location`].
    canonical_root: PathBuf,
    /// The root, opened once: every key is resolved beneath it.
    dir: Dir,
    /// The longest file name the root's filesystem allows, when the system tells.
    name_max: Option<u64>,
    writable: bool,
    /// The durability level, what is still to sync at the next flush, and the settled
    /// directories.
    sync: Mutex<SyncState>,
    /// Held by a flush from start to end.
    flushing: Mutex<()>,
    /// How many files and directories the handle remembers before a write flushes them.
    max_unsynced: usize,
}

/// A handle's durability level, under [`Durability::Flush`] what it changed since its last
/// flush, and under [`Durability::EachWrite`] which directories it need not sync above.
#[derive(Debug, Default)]
struct SyncState {
    level: Durability,
    /// Keys written.
    files: HashSet<String>,
    /// Directories (below the root; `""` is the root) whose entries changed.
    dirs: HashSet<String>,
    /// Directories whose entry in their parent, and every directory's above, this handle
    /// has synced under [`Durability::EachWrite`] since it last removed them: a change in
    /// one of them needs only its own directory synced (at most [`MAX_SETTLED`]).
    settled: HashSet<String>,
    /// Bumped by every removal of directories through this handle: a change settles its
    /// directory only when the count has not moved since before the change touched it.
    removals: u64,
    /// Removals of whole directories under way ([`FilesystemStore::removing`]): nothing is
    /// settled meanwhile.
    erasing: usize,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// What a directory entry holds, links followed.
enum Entry {
    Value,
    Directory,
    /// A link leading nowhere inside the root.
    Dangling,
}

impl FilesystemStore {
    /// Opens the directory `root`. With `create`, a missing directory is created; with
    /// `writable` false every write is refused.
    pub fn open(root: impl AsRef<Path>, writable: bool, create: bool) -> Result<Self> {
        let root = root.as_ref().to_path_buf();
        match std::fs::metadata(&root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::Io(format!(
                    "{} exists and is not a directory",
                    root.display()
                )))
            }
            Err(e) if e.kind() == ErrorKind::NotFound && create && writable => {
                std::fs::create_dir_all(&root)
                    .map_err(|e| Error::io(format!("creating {}", root.display()), e))?;
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::NotFound(format!(
                    "directory {} does not exist",
                    root.display()
                )))
            }
            Err(e) => return Err(Error::io(root.display(), e)),
        }
        let dir = Dir::open_ambient_dir(&root, ambient_authority())
            .map_err(|e| Error::io(root.display(), e))?;
        let canonical_root =
            std::fs::canonicalize(&root).map_err(|e| Error::io(root.display(), e))?;
        Ok(Self {
            root,
            canonical_root,
            name_max: sys::name_max(&dir),
            dir,
            writable,
            sync: Mutex::default(),
            flushing: Mutex::default(),
            max_unsynced: MAX_UNSYNCED,
        })
    }

    /// The directory this store is rooted at.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `key` normalised, refusing names reserved for temporary files and names longer than
    /// the filesystem allows (checked before any system call, since a missing directory
    /// earlier in the path would hide the length from the system).
    fn checked_key(&self, key: &str) -> Result<String> {
        let key = validate_key(key)?;
        if key
            .split('/')
            .any(|segment| segment.starts_with(TEMP_PREFIX))
        {
            return Err(Error::InvalidKey(format!(
                "key {key:?}: names starting with {TEMP_PREFIX:?} are reserved for temporary files"
            )));
        }
        if let Some(max) = self.name_max {
            if key.split('/').any(|segment| segment.len() as u64 > max) {
                return Err(Error::InvalidKey(self.name_too_long(&key)));
            }
        }
        Ok(key.into_owned())
    }

    /// The library error for `err`, met while `doing` (e.g. "reading") `key`.
    fn fail(&self, doing: &str, key: &str, err: io::Error) -> Error {
        if is_escape(&err) {
            Error::InvalidKey(format!(
                "key {key:?} leads outside the store through a symbolic link (links that \
                 leave the root, and absolute links, are refused)"
            ))
        } else if err.kind() == ErrorKind::InvalidFilename {
            Error::InvalidKey(self.name_too_long(key))
        } else {
            Error::io(format!("{doing} {key:?}"), err)
        }
    }

    /// The message for a key the filesystem refused as too long.
    fn name_too_long(&self, key: &str) -> String {
        let longest = key.split('/').map(str::len).max().unwrap_or(0);
        let limit = self
            .name_max
            .map_or("its limit".to_string(), |n| format!("{n} bytes per name"));
        format!(
            "key {key:?}: its longest component ({longest} bytes) is longer than the \
             filesystem allows ({limit}); chunk keys of many dimensions fit with the '/' \
             dimension separator"
        )
    }

    /// The directory at `path` below the root (`""` for the root itself).
    fn open_dir(&self, path: &str) -> io::Result<Dir> {
        self.dir.open_dir(if path.is_empty() { "." } else { path })
    }

    /// The regular file at `key` opened for reading, with its size; `None` when nothing (or
    /// a directory) is there. Never blocks: a FIFO, socket or device is an error.
    fn open_value(&self, key: &str) -> Result<Option<(File, u64)>> {
        match open_for_reading(&self.dir, key) {
            Ok(Opened::File(file, size)) => Ok(Some((file, size))),
            Ok(Opened::Missing) => Ok(None),
            Ok(Opened::Special) => Err(not_regular(key)),
            Err(e) => Err(self.fail("reading", key, e)),
        }
    }

    /// Reads `len` bytes from `offset` of `file` (the value at `key`, of `size` bytes)
    /// into `buf`; a range past the end is an error.
    fn read_range(
        &self,
        key: &str,
        mut file: File,
        size: u64,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::Io(format!(
                "range {offset}+{len} of {key:?} is past its end ({size} bytes)"
            )));
        }
        // The bytes the buffer already holds are overwritten, not zeroed first: only its
        // growth is (one read call, as `read_to_end` into reserved memory would not make).
        let len = to_usize(len, "range length")?;
        buf.truncate(len);
        try_resize(buf, len, key)?;
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(buf))
            .map_err(|e| self.fail("reading", key, e))
    }

    /// Refuses (with the escape error) a link at `name` in `parent`, which `key` names,
    /// that leads outside the root; writes and erasures replace or remove such a link
    /// itself, but are refused like reads.
    fn refuse_link_outside(&self, parent: &Dir, name: &str, key: &str) -> io::Result<()> {
        match parent.symlink_metadata(name) {
            Ok(m) if m.file_type().is_symlink() => match self.dir.metadata(key) {
                Err(e) if is_escape(&e) => Err(e),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The directory at `path`, created (with its parents) if missing; also whether it was.
    /// `NotFound` when an erasure prunes it again before it is opened.
    fn open_or_create_dir(&self, path: &str) -> io::Result<(Dir, bool)> {
        match self.open_dir(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            opened => return Ok((opened?, false)),
        }
        match self.dir.create_dir_all(path) {
            Ok(()) => {}
            // Another writer created it, and an erasure may have pruned it since
            // (`create_dir_all` then says it exists though it is gone): opening it tells.
            // Only something else in its place (a link to nothing) keeps the error.
            Err(e)
                if e.kind() == ErrorKind::AlreadyExists
                    && !self.dir.symlink_metadata(path).is_ok_and(|m| !m.is_dir()) => {}
            Err(e) => return Err(e),
        }
        Ok((self.open_dir(path)?, true))
    }

    /// A new temporary file in the directory `parent` (created if missing) for the value
    /// `name` (which `key` names): the directory, whether it was created, the file's name and
    /// the file. While the file is there no erasure prunes the directory.
    fn create_temp(
        &self,
        parent: &str,
        name: &str,
        key: &str,
    ) -> io::Result<(Dir, bool, String, File)> {
        let (dir, created) = self.open_or_create_dir(parent)?;
        self.refuse_link_outside(&dir, name, key)?;
        let temp = format!(
            "{TEMP_PREFIX}{}.{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let file = dir.open_with(&temp, &options)?.into_std();
        Ok((dir, created, temp, file))
    }

    /// A value at `key` to write piece by piece: a temporary file next to it.
    fn start_value(&self, key: &str) -> Result<FileValue<'_>> {
        let write = super::writes::Write::begin(self.location());
        check_writable(self, &format!("write {key:?}"))?;
        let key = self.checked_key(key)?;
        let since = self.removals();
        let (dir, created, temp, file) = self.create_temp_retrying(&key)?;
        Ok(FileValue {
            store: self,
            key,
            dir,
            created,
            since,
            temp,
            file,
            placed: false,
            _write: write,
        })
    }

    /// [`Self::create_temp`] for the checked `key`, started over while an erasure prunes
    /// the directory under it.
    fn create_temp_retrying(&self, key: &str) -> Result<(Dir, bool, String, File)> {
        let (parent, name) = split_key(key);
        let mut attempt = 1;
        loop {
            match self.create_temp(parent, name, key) {
                // The directory was pruned by an erasure between creating it and using it.
                Err(e) if e.kind() == ErrorKind::NotFound && attempt < SET_ATTEMPTS => {
                    attempt += 1;
                }
                result => return result.map_err(|e| self.fail("writing", key, e)),
            }
        }
    }

    /// Stores `value` at `key` (replacing a value only when `replace`); `false` when a
    /// value was there and is kept. The value goes to a temporary file that is then put in
    /// place ([`FileValue::try_put_in_place`]), synced before under
    /// [`Durability::EachWrite`], else at the flush. An attempt whose directory an erasure
    /// removed meanwhile starts over.
    fn store(&self, key: &str, value: &[u8], replace: bool) -> Result<bool> {
        let mut attempt = 1;
        loop {
            let mut file = self.start_value(key)?;
            file.append(value)?;
            match file.try_put_in_place(false, replace) {
                // The directory was erased, the temporary file with it.
                Err(e) if e.kind() == ErrorKind::NotFound && attempt < SET_ATTEMPTS => {
                    attempt += 1;
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists && !replace => return Ok(false),
                Err(e) => return Err(self.fail("writing", &file.key, e)),
                Ok(synced) => return file.placed(synced).map(|()| true),
            }
        }
    }

    /// The handle's synchronisation state.
    fn sync_state(&self) -> MutexGuard<'_, SyncState> {
        self.sync.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The durability level in force.
    fn level(&self) -> Durability {
        self.sync_state().level
    }

    /// Makes a change durable as `level` says: `file` (a key, synced already under
    /// [`Durability::EachWrite`]) was written or removed in `dir`, the directory at `path`,
    /// and with `above` the directories above it changed too (created or pruned). Synced
    /// with it are the directories above it up to the first one this handle has settled,
    /// or all of them with `above` ([`leading_to`]): another writer may have created `path`
    /// and not synced it yet. Under [`Durability::Flush`] they are synced at the flush, and
    /// once the handle remembers `max_unsynced` files and directories they are flushed;
    /// under [`Durability::EachWrite`] now, and the directory is settled unless a directory
    /// was removed since `since` ([`Self::removals`] before the change) or is being removed.
    fn changed(
        &self,
        level: Durability,
        file: Option<&str>,
        dir: &Dir,
        path: &str,
        above: bool,
        since: u64,
    ) -> Result<()> {
        let fail = |e| self.fail("syncing", file.unwrap_or(path), e);
        match level {
            Durability::None => Ok(()),
            Durability::Flush => {
                let full = {
                    let mut state = self.sync_state();
                    state.files.extend(file.map(str::to_string));
                    for changed in leading_to(&state, path, above) {
                        if !state.dirs.contains(changed) {
                            state.dirs.insert(changed.to_string());
                        }
                    }
                    state.files.len() + state.dirs.len() >= self.max_unsynced
                };
                if full {
                    self.flush()
                } else {
                    Ok(())
                }
            }
            Durability::EachWrite => {
                let leading = leading_to(&self.sync_state(), path, above);
                sys::sync_dir(dir)
                    .and_then(|()| leading[1..].iter().try_for_each(|dir| self.sync_dir(dir)))
                    .map_err(fail)?;
                let mut state = self.sync_state();
                // A directory removed since the change began, or being removed now, may be
                // this one (a pruned one always is).
                if state.removals == since && state.erasing == 0 && !state.settled.contains(path) {
                    if state.settled.len() >= MAX_SETTLED {
                        state.settled.clear();
                    }
                    state.settled.insert(path.to_string());
                }
                Ok(())
            }
        }
    }

    /// The count of removals ([`SyncState::removals`]), read before a change touches its
    /// directory.
    fn removals(&self) -> u64 {
        self.sync_state().removals
    }

    /// Forgets that the directory at `path` and those under it were settled, before they
    /// are removed; nothing is settled until [`Self::removed`].
    fn removing(&self, path: &str) {
        let mut state = self.sync_state();
        state.removals += 1;
        state.erasing += 1;
        state.settled.retain(|dir| !is_within(dir, path));
    }

    /// The removal [`Self::removing`] announced is done.
    fn removed(&self) {
        self.sync_state().erasing -= 1;
    }

    /// Syncs the file at `key`, if it is still there.
    fn sync_file(&self, key: &str) -> Result<()> {
        match self.open_value(key)? {
            Some((file, _)) => file.sync_all().map_err(|e| self.fail("syncing", key, e)),
            None => Ok(()),
        }
    }

    /// Syncs the directory at `path` (its entries), if it is still there.
    fn sync_dir(&self, path: &str) -> io::Result<()> {
        match self.open_dir(path) {
            Ok(dir) => sys::sync_dir(&dir),
            Err(e) if is_missing(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes the directories at `path` and above that have become empty, up to the root,
    /// so listings never show prefixes without keys; returns whether it removed any.
    fn prune_empty_dirs(&self, path: &str) -> bool {
        let mut pruned = false;
        for dir in std::iter::once(path).chain(ancestors(path)) {
            if dir.is_empty() {
                break;
            }
            // Removed and forgotten under the lock: no write finds it settled once gone.
            let mut state = self.sync_state();
            if self.dir.remove_dir(dir).is_err() {
                break;
            }
            state.removals += 1;
            state.settled.remove(dir);
            pruned = true;
        }
        pruned
    }

    /// Removes everything in the directory `prefix` (`""` or ending in `/`), then the
    /// directory itself unless it is the root.
    fn erase_dir(&self, prefix: &str) -> Result<()> {
        let path = prefix.trim_end_matches('/');
        let fail = |e| self.fail("erasing", prefix, e);
        let since = self.removals();
        let dir = match self.open_dir(path) {
            Ok(dir) => dir,
            Err(e) if is_missing(&e) => return Ok(()),
            Err(e) => return Err(fail(e)),
        };
        let level = self.level();
        self.removing(path);
        let removed = self.remove_entries(&dir, prefix);
        self.removed();
        removed?;
        let pruned = self.prune_empty_dirs(path);
        self.changed(level, None, &dir, path, pruned, since)
    }

    /// Removes every entry of `dir` (the directory `prefix`); links are removed, never
    /// followed.
    fn remove_entries(&self, dir: &Dir, prefix: &str) -> Result<()> {
        let fail = |e| self.fail("erasing", prefix, e);
        for entry in dir.entries().map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name();
            // The entry's own type: a link is removed, never followed.
            let removed = if entry.file_type().map_err(fail)?.is_dir() {
                dir.remove_dir_all(&name)
            } else {
                dir.remove_file(&name)
            };
            match removed {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(fail(e)),
                _ => {}
            }
        }
        Ok(())
    }

    /// The directory `prefix` (`""` or ending in `/`), or `None` when it does not exist.
    fn listed_dir(&self, prefix: &str) -> Result<Option<Dir>> {
        match self.open_dir(prefix.trim_end_matches('/')) {
            Ok(dir) => Ok(Some(dir)),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(self.fail("listing", prefix, e)),
        }
    }

    /// The identity (device, inode) of `dir`, the directory `prefix`.
    fn identity(&self, dir: &Dir, prefix: &str) -> Result<(u64, u64)> {
        let meta = dir
            .dir_metadata()
            .map_err(|e| self.fail("listing", prefix, e))?;
        Ok((meta.dev(), meta.ino()))
    }

    /// The identities of the directories above `prefix` that can be opened: a listing from
    /// `prefix` skips links back to them as cycles too (opening `prefix` itself reports
    /// what is wrong above it).
    fn identities_above(&self, prefix: &str) -> Vec<(u64, u64)> {
        ancestors(prefix.trim_end_matches('/'))
            .filter_map(|path| self.open_dir(path).ok()?.dir_metadata().ok())
            .map(|meta| (meta.dev(), meta.ino()))
            .collect()
    }

    /// The listable entries of `dir`, the directory `prefix`: each name with what it
    /// holds. Temporary files, names that are not UTF-8 and dangling links are left out; a
    /// link leading outside the root is refused.
    fn entries(&self, dir: &Dir, prefix: &str) -> Result<Vec<(String, Entry)>> {
        let fail = |e| self.fail("listing", prefix, e);
        let mut entries = Vec::new();
        for entry in dir.entries().map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            let key = format!("{prefix}{name}");
            let kind = self.entry_kind(&entry, &key)?;
            entries.push((name, kind));
        }
        Ok(entries)
    }

    /// What `entry` (at `key`) holds: links are resolved beneath the root.
    fn entry_kind(&self, entry: &DirEntry, key: &str) -> Result<Entry> {
        let fail = |e| self.fail("listing", key, e);
        let file_type = entry.file_type().map_err(fail)?;
        if !file_type.is_symlink() {
            return Ok(if file_type.is_dir() {
                Entry::Directory
            } else {
                Entry::Value
            });
        }
        match self.dir.metadata(key) {
            Ok(m) if m.is_dir() => Ok(Entry::Directory),
            Ok(_) => Ok(Entry::Value),
            Err(e) if is_missing(&e) || sys::is_link_loop(&e) => Ok(Entry::Dangling),
            Err(e) => Err(fail(e)),
        }
    }

    /// Appends the keys below the directory `prefix` (`""` or ending in `/`) to `out`.
    /// `visited` holds the identities (device, inode) of the directories being walked: a
    /// link back to one of them (a cycle) is skipped.
    fn collect_keys(
        &self,
        prefix: &str,
        visited: &mut Vec<(u64, u64)>,
        out: &mut Vec<String>,
    ) -> Result<()> {
        let Some(dir) = self.listed_dir(prefix)? else {
            return Ok(());
        };
        let identity = self.identity(&dir, prefix)?;
        if visited.contains(&identity) {
            return Ok(());
        }
        visited.push(identity);
        for (name, kind) in self.entries(&dir, prefix)? {
            match kind {
                Entry::Value => out.push(format!("{prefix}{name}")),
                Entry::Directory => self.collect_keys(&format!("{prefix}{name}/"), visited, out)?,
                Entry::Dangling => {}
            }
        }
        visited.pop();
        Ok(())
    }
}

impl Store for FilesystemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self.get_into(key, &mut value, u64::MAX)?.then_some(value))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        let key = self.checked_key(key)?;
        let Some((file, size)) = self.open_value(&key)? else {
            return Ok(false);
        };
        if size > max_len {
            return Err(too_large(&key, size, max_len));
        }
        buf.clear();
        try_reserve(buf, to_usize(size, "value size")?, &key)?;
        file.take(max_len.saturating_add(1))
            .read_to_end(buf)
            .map_err(|e| self.fail("reading", &key, e))?;
        if buf.len() as u64 > max_len {
            return Err(too_large(&key, buf.len() as u64, max_len));
        }
        Ok(true)
    }

    fn read_exact_into(&self, key: &str, out: &mut [u8]) -> Result<Option<bool>> {
        let key = self.checked_key(key)?;
        let Some((mut file, size)) = self.open_value(&key)? else {
            return Ok(Some(false));
        };
        if size != out.len() as u64 {
            return Ok(None);
        }
        file.read_exact(out)
            .map_err(|e| self.fail("reading", &key, e))?;
        Ok(Some(true))
    }

    /// Reads ahead where the system can ask the kernel to (`fadvise(WILLNEED)`).
    fn reads_ahead(&self) -> bool {
        sys::READS_AHEAD
    }

    /// Asks the kernel to start reading the file at `key` into its cache (nothing when it
    /// cannot be opened: the read that follows reports that).
    fn will_read(&self, key: &str) {
        if let Ok(key) = self.checked_key(key) {
            if let Ok(Some((file, _))) = self.open_value(&key) {
                sys::will_need(&file);
            }
        }
    }

    /// Only when files are synced: unsynced, a file's write is a copy into the page cache,
    /// done best by the thread that encoded it (no batch held, no second copy).
    fn writes_behind(&self) -> bool {
        self.level() != Durability::None
    }

    /// Several files written at once on threads of their own, then synced (when the
    /// durability level syncs at all) and renamed into place, 16 at a time:
    /// each value is freed once written, so none is held while the device syncs, and at
    /// most a group's files are open. Every value is tried and the first error returned.
    fn put_many(&self, batch: Vec<(String, Option<Vec<u8>>)>) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        let mut first = Ok(());
        let mut rest = batch.into_iter().peekable();
        while rest.peek().is_some() {
            let group: Vec<_> = rest.by_ref().take(PUT_GROUP).collect();
            let written = Mutex::new(Vec::with_capacity(group.len()));
            let wrote = in_parallel(group, WRITE_THREADS, |(key, value)| match value {
                Some(value) => {
                    let mut file = self.start_value(&key)?;
                    file.append(&value)?;
                    drop(value);
                    written
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(file);
                    Ok(())
                }
                None => self.erase(&key).map(drop),
            });
            let written = written.into_inner().unwrap_or_else(PoisonError::into_inner);
            let placed = in_parallel(written, WRITE_THREADS, |mut file| file.put_in_place(true));
            first = first.and(wrote).and(placed);
        }
        first
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let mut data = Vec::new();
        Ok(self
            .get_range_into(key, offset, len, &mut data)?
            .then_some(data))
    }

    fn get_range_into(&self, key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<bool> {
        let key = self.checked_key(key)?;
        let Some((file, size)) = self.open_value(&key)? else {
            return Ok(false);
        };
        self.read_range(&key, file, size, offset, len, buf)?;
        Ok(true)
    }

    /// The tail read from the one open file, with the file's identity as its version.
    fn get_tail(&self, key: &str, len: u64) -> Result<Option<Tail>> {
        let key = self.checked_key(key)?;
        let Some((mut file, size)) = self.open_value(&key)? else {
            return Ok(None);
        };
        if size < len {
            return Err(Error::Io(format!(
                "the last {len} bytes of {key:?} were asked, but it holds {size}"
            )));
        }
        let version = sys::identity(&file);
        let mut bytes = Vec::new();
        try_resize(&mut bytes, to_usize(len, "range length")?, &key)?;
        file.seek(SeekFrom::Start(size - len))
            .and_then(|_| file.read_exact(&mut bytes))
            .map_err(|e| self.fail("reading", &key, e))?;
        Ok(Some(Tail {
            bytes,
            size,
            version,
        }))
    }

    /// A value is replaced by renaming a new file over it: the file opened now is the
    /// version read before if it is the same file, unchanged.
    fn get_range_if(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        version: &Version,
    ) -> Result<Ranged> {
        let key = self.checked_key(key)?;
        let Some((file, size)) = self.open_value(&key)? else {
            return Ok(Ranged::Missing);
        };
        if sys::identity(&file).as_ref() != Some(version) {
            return Ok(Ranged::Changed);
        }
        self.read_range(&key, file, size, offset, len, buf)?;
        Ok(Ranged::Read)
    }

    /// The value goes to a temporary file as it comes; committing renames it into place.
    fn write_value(&self, key: &str) -> Result<Option<Box<dyn ValueWriter + '_>>> {
        Ok(Some(Box::new(self.start_value(key)?)))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        self.store(key, value, true).map(|_| ())
    }

    /// Creates keys atomically (a second creator finds the first's value); refuses to
    /// replace a value by version: files keep none (lock files synchronise writers here).
    fn set_if(&self, key: &str, value: &[u8], expect: Expect<'_>) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        match expect {
            Expect::Absent => self.store(key, value, false),
            Expect::Version(_) => Err(Error::Unsupported(
                "a directory store keeps no versions of its files: synchronise writers \
                 with lock files instead"
                    .into(),
            )),
        }
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        check_writable(self, &format!("erase {key:?}"))?;
        let key = self.checked_key(key)?;
        let (parent, name) = split_key(&key);
        let fail = |e| self.fail("erasing", &key, e);
        let since = self.removals();
        let dir = match self.open_dir(parent) {
            Ok(dir) => dir,
            Err(e) if is_missing(&e) => return Ok(false),
            Err(e) => return Err(fail(e)),
        };
        self.refuse_link_outside(&dir, name, &key).map_err(fail)?;
        let level = self.level();
        match dir.remove_file(name) {
            Ok(()) => {}
            Err(e) if is_missing(&e) || e.kind() == ErrorKind::IsADirectory => return Ok(false),
            Err(e) => return Err(fail(e)),
        }
        let pruned = self.prune_empty_dirs(parent);
        self.changed(level, None, &dir, parent, pruned, since)?;
        Ok(true)
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        check_writable(self, &format!("erase {prefix:?}"))?;
        let prefix = validate_prefix(prefix)?;
        if prefix.is_empty() || prefix.ends_with('/') {
            return self.erase_dir(&prefix);
        }
        for key in self.list_prefix(&prefix)? {
            self.erase(&key)?;
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        // Walk from the deepest directory the prefix names, then filter by the full prefix.
        let dir_part = prefix.rfind('/').map_or("", |i| &prefix[..=i]);
        let mut keys = Vec::new();
        let mut visited = self.identities_above(dir_part);
        self.collect_keys(dir_part, &mut visited, &mut keys)?;
        keys.retain(|k| k.starts_with(&prefix));
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let prefix = validate_dir_prefix(prefix)?;
        let mut listing = DirListing::default();
        let Some(dir) = self.listed_dir(&prefix)? else {
            return Ok(listing);
        };
        for (name, kind) in self.entries(&dir, &prefix)? {
            match kind {
                Entry::Value => listing.keys.push(name),
                Entry::Directory => listing.prefixes.push(name),
                Entry::Dangling => {}
            }
        }
        listing.keys.sort();
        listing.prefixes.sort();
        Ok(listing)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let key = self.checked_key(key)?;
        match self.dir.metadata(&key) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(m) if m.is_dir() => Ok(None),
            Ok(_) => Err(not_regular(&key)),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(self.fail("inspecting", &key, e)),
        }
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn location(&self) -> Option<PathBuf> {
        Some(self.canonical_root.clone())
    }

    fn close(&self) -> Result<()> {
        self.flush()
    }

    fn flush(&self) -> Result<()> {
        // One flush at a time: a flush that finds nothing to sync returns only when the one
        // syncing what it took is done; the syncs that fail are left to the next one.
        let _one_at_a_time = self.flushing.lock().unwrap_or_else(PoisonError::into_inner);
        let (files, dirs) = {
            let mut state = self.sync_state();
            (
                std::mem::take(&mut state.files),
                std::mem::take(&mut state.dirs),
            )
        };
        if files.is_empty() && dirs.is_empty() {
            return Ok(());
        }
        // Files, then the directories naming them, each many at once on threads of their
        // own (a sync waits on the device, not the processor: many in flight let it merge
        // them); every file and directory is tried, and a failure is reported.
        let failed = Mutex::new((Vec::new(), Vec::new()));
        let lock_failed = || failed.lock().unwrap_or_else(PoisonError::into_inner);
        let synced_files = in_parallel(files.into_iter().collect(), SYNC_THREADS, |key| {
            self.sync_file(&key)
                .inspect_err(|_| lock_failed().0.push(key.clone()))
        });
        let synced_dirs = in_parallel(dirs.into_iter().collect(), SYNC_THREADS, |path| {
            self.sync_dir(&path)
                .map_err(|e| self.fail("syncing the directory", &path, e))
                .inspect_err(|_| lock_failed().1.push(path.clone()))
        });
        let (failed_files, failed_dirs) =
            failed.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut state = self.sync_state();
        state.files.extend(failed_files);
        state.dirs.extend(failed_dirs);
        synced_files.and(synced_dirs)
    }

    fn set_durability(&self, level: Durability) -> Result<()> {
        self.sync_state().level = level;
        Ok(())
    }
}

impl Drop for FilesystemStore {
    /// Flushes what is still to sync; call [`Store::close`] to see its errors.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// A value of a [`FilesystemStore`] being written ([`Store::write_value`], and each of
/// [`Store::put_many`]): a temporary file next to its key, renamed into place when
/// committed and removed when dropped before.
struct FileValue<'s> {
    store: &'s FilesystemStore,
    /// The checked key.
    key: String,
    /// The key's directory, and whether it was created for the value.
    dir: Dir,
    created: bool,
    /// [`FilesystemStore::removals`] before the directory was opened.
    since: u64,
    /// The temporary file and its name.
    temp: String,
    file: File,
    /// Renamed into place: nothing to remove.
    placed: bool,
    _write: super::writes::Write,
}

impl ValueWriter for FileValue<'_> {
    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| self.store.fail("writing", &self.key, e))
    }

    fn overwrite(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        let end = self
            .file
            .stream_position()
            .map_err(|e| self.store.fail("writing", &self.key, e))?;
        if offset
            .checked_add(bytes.len() as u64)
            .is_none_or(|last| last > end)
        {
            return Err(Error::Internal(format!(
                "overwriting bytes of {:?} not written yet",
                self.key
            )));
        }
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.write_all(bytes))
            .and_then(|()| self.file.seek(SeekFrom::Start(end)))
            .map(drop)
            .map_err(|e| self.store.fail("writing", &self.key, e))
    }

    fn commit(mut self: Box<Self>, sync_now: bool) -> Result<()> {
        self.put_in_place(sync_now)
    }
}

impl FileValue<'_> {
    /// Renames the file into place (see [`place`] for `replace` false), synced before
    /// under [`Durability::EachWrite`], and under [`Durability::Flush`] too with
    /// `sync_now`; whether it was synced.
    fn try_put_in_place(&mut self, sync_now: bool, replace: bool) -> io::Result<bool> {
        let level = self.store.level();
        let synced = level == Durability::EachWrite || (sync_now && level == Durability::Flush);
        if synced {
            self.file.sync_all()?;
        }
        place(&self.dir, &self.temp, split_key(&self.key).1, replace)?;
        self.placed = true;
        Ok(synced)
    }

    /// Makes the value put in place durable as the level says: the file (unless `synced`
    /// already) and its directory are synced at the flush, or now under
    /// [`Durability::EachWrite`], with the directories leading to it
    /// ([`FilesystemStore::changed`]).
    fn placed(&self, synced: bool) -> Result<()> {
        let file = (!synced).then_some(self.key.as_str());
        let parent = split_key(&self.key).0;
        let level = self.store.level();
        if level == Durability::EachWrite && !synced {
            // The level was raised since the file was put in place.
            self.file
                .sync_all()
                .map_err(|e| self.store.fail("syncing", &self.key, e))?;
        }
        self.store
            .changed(level, file, &self.dir, parent, self.created, self.since)
    }

    /// [`Self::try_put_in_place`], replacing any value, then [`Self::placed`].
    fn put_in_place(&mut self, sync_now: bool) -> Result<()> {
        let synced = self
            .try_put_in_place(sync_now, true)
            .map_err(|e| self.store.fail("writing", &self.key, e))?;
        self.placed(synced)
    }
}

impl Drop for FileValue<'_> {
    /// A value never committed leaves nothing behind: neither its file nor the directories
    /// it leaves empty (made for it, or for another value dropped meanwhile).
    fn drop(&mut self) {
        if !self.placed {
            let _ = self.dir.remove_file(&self.temp);
            self.store.prune_empty_dirs(split_key(&self.key).0);
        }
    }
}

/// The most threads syncing files at once.
const SYNC_THREADS: usize = 16;

/// The most threads writing files of one [`Store::put_many`] at once.
const WRITE_THREADS: usize = 4;

/// The most files of one [`Store::put_many`] written before they are synced and renamed
/// (each open until then).
const PUT_GROUP: usize = 16;

/// Runs `work` for every item on up to `threads` threads of their own, each item handed
/// over whole (so that it is freed as soon as its work is done with it); every item is
/// tried and the first error is returned.
fn in_parallel<T: Send>(
    items: Vec<T>,
    threads: usize,
    work: impl Fn(T) -> Result<()> + Sync,
) -> Result<()> {
    if items.len() <= 1 {
        return items.into_iter().map(&work).fold(Ok(()), Result::and);
    }
    let workers = items.len().min(threads);
    let queue = Mutex::new(items.into_iter());
    let worker = || {
        let mut first = Ok(());
        loop {
            let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some(item) = next else {
                return first;
            };
            first = first.and(work(item));
        }
    };
    std::thread::scope(|scope| {
        let running: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
        running
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a storing thread panicked".into())))
            })
            .fold(Ok(()), Result::and)
    })
}

/// Puts the written temporary file `temp` of `dir` in place as `name`: renamed over any
/// value there when `replace`, else linked, failing with [`ErrorKind::AlreadyExists`] when
/// a value is there (on a filesystem without hard links: checked, then renamed, which is
/// not atomic).
fn place(dir: &Dir, temp: &str, name: &str, replace: bool) -> io::Result<()> {
    if replace {
        return dir.rename(temp, dir, name);
    }
    let linked = match dir.hard_link(temp, dir, name) {
        Err(e) if e.kind() != ErrorKind::AlreadyExists && !is_missing(&e) => {
            match dir.symlink_metadata(name) {
                Ok(_) => Err(ErrorKind::AlreadyExists.into()),
                Err(_) => dir.rename(temp, dir, name),
            }
        }
        linked => linked,
    };
    let _ = dir.remove_file(temp);
    linked
}

/// A key's directory (`""` at the root) and name.
fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

/// The directories above `path` (a directory below the root), deepest first, ending with
/// the root (`""`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.rmatch_indices('/')
        .map(|(i, _)| &path[..i])
        .chain((!path.is_empty()).then_some(""))
}

/// The directory at `path` and those above it whose entries lead to it, up to and with the
/// first one `state` says is settled; all of them (the root last) when `above` (the
/// directories above changed) or none is settled.
fn leading_to<'p>(state: &SyncState, path: &'p str, above: bool) -> Vec<&'p str> {
    let mut leading = vec![path];
    if above || !state.settled.contains(path) {
        for dir in ancestors(path) {
            leading.push(dir);
            if !above && state.settled.contains(dir) {
                break;
            }
        }
    }
    leading
}

/// Whether the directory at `dir` is the one at `path` or below it.
fn is_within(dir: &str, path: &str) -> bool {
    path.is_empty()
        || dir
            .strip_prefix(path)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether `err` says nothing is at a path (or a component of it is not a directory).
pub(super) fn is_missing(err: &io::Error) -> bool {
    matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

/// What [`open_for_reading`] found at a path.
pub(super) enum Opened {
    /// A regular file, open for reading, and its size.
    File(File, u64),
    /// Nothing, or a directory.
    Missing,
    /// A FIFO, socket or device: not opened for reading.
    Special,
}

/// Opens the file at `path` beneath `dir` for reading without ever waiting on a FIFO or a
/// device (opened without blocking, checked once open). A path leading outside `dir`
/// gives cap-std's escape error ([`is_escape`]).
pub(super) fn open_for_reading(dir: &Dir, path: impl AsRef<Path>) -> io::Result<Opened> {
    let mut options = OpenOptions::new();
    options.read(true);
    sys::never_block(&mut options);
    let file = match dir.open_with(path, &options) {
        Ok(file) => file.into_std(),
        Err(e) if is_missing(&e) => return Ok(Opened::Missing),
        Err(e) if sys::is_special_file_error(&e) => return Ok(Opened::Special),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    Ok(if meta.is_dir() {
        Opened::Missing
    } else if meta.is_file() {
        Opened::File(file, meta.len())
    } else {
        Opened::Special
    })
}

/// Whether `err` is cap-std's refusal of a path that leads outside the root (a
/// `PermissionDenied` error of its own, which carries no operating-system code).
pub(super) fn is_escape(err: &io::Error) -> bool {
    err.kind() == ErrorKind::PermissionDenied && err.raw_os_error().is_none()
}

/// The error for a key that holds something other than a regular file or directory.
fn not_regular(key: &str) -> Error {
    Error::Io(format!(
        "{key:?} is not a regular file (a FIFO, socket or device): refused without reading it"
    ))
}

/// What differs between operating systems.
#[cfg(unix)]
mod sys {
    use crate::store::Version;
    use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
    use rustix::io::Errno;
    use std::fs::File;
    use std::io;

    /// Opens without waiting for a writer (FIFOs) or a device, and without making a
    /// terminal the controlling one.
    /// The identity of an open file as a version: device, inode, change time and size
    /// (a value rewritten in place, or a new file reusing the inode, differs in these).
    pub(super) fn identity(file: &File) -> Option<Version> {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata().ok()?;
        Some(Version(format!(
            "{}:{}:{}.{}:{}",
            m.dev(),
            m.ino(),
            m.ctime(),
            m.ctime_nsec(),
            m.size()
        )))
    }

    pub(super) fn never_block(options: &mut OpenOptions) {
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits() as i32);
    }

    /// Whether opening failed because the file is a socket or a device without a driver.
    pub(super) fn is_special_file_error(err: &io::Error) -> bool {
        err.raw_os_error() == Some(Errno::NXIO.raw_os_error())
    }

    /// Syncs the entries of `dir` (names created, renamed or removed in it), through a
    /// handle opened for reading (a `Dir` may be open only for lookups).
    pub(super) fn sync_dir(dir: &Dir) -> io::Result<()> {
        dir.open(".")?.sync_all()
    }

    /// Whether resolving met a loop of links.
    pub(super) fn is_link_loop(err: &io::Error) -> bool {
        err.raw_os_error() == Some(Errno::LOOP.raw_os_error())
    }

    /// The longest file name the filesystem of `dir` allows.
    pub(super) fn name_max(dir: &Dir) -> Option<u64> {
        rustix::fs::fstatvfs(dir).ok().map(|s| s.f_namemax)
    }

    /// Whether [`will_need`] reads ahead here.
    pub(super) const READS_AHEAD: bool = cfg!(any(target_os = "linux", target_os = "freebsd"));

    /// Asks the kernel to read `file` into its cache in the background.
    pub(super) fn will_need(file: &File) {
        #[cfg(any(target_os = "linux", target_os = "freebsd"))]
        let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::WillNeed);
        #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
        let _ = file;
    }
}

/// What differs between operating systems.
#[cfg(not(unix))]
mod sys {
    use crate::store::Version;
    use cap_std::fs::{Dir, OpenOptions};
    use std::fs::File;
    use std::io;

    /// Files have no identity to check here: reads take whatever is there.
    pub(super) fn identity(_: &File) -> Option<Version> {
        None
    }

    /// No reading ahead here.
    pub(super) const READS_AHEAD: bool = false;

    pub(super) fn will_need(_: &File) {}

    pub(super) fn never_block(_: &mut OpenOptions) {}

    pub(super) fn is_special_file_error(_: &io::Error) -> bool {
        false
    }

    /// Directories cannot be synced here: renames rely on the filesystem's journal.
    pub(super) fn sync_dir(_: &Dir) -> io::Result<()> {
        Ok(())
    }

    pub(super) fn is_link_loop(_: &io::Error) -> bool {
        false
    }

    pub(super) fn name_max(_: &Dir) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn nested_keys_make_directories_and_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path().join("s"), true, true).unwrap();
        store.set("a/b/0.0", b"x").unwrap();
        store.set("a/.zarray", b"{}").unwrap();
        store.set("top", b"t").unwrap();
        assert!(dir.path().join("s/a/b/0.0").is_file());
        assert_eq!(store.get("a/b/0.0").unwrap().unwrap(), b"x");
        assert_eq!(store.get("a/b").unwrap(), None);
        assert_eq!(store.list().unwrap(), vec!["a/.zarray", "a/b/0.0", "top"]);
        assert_eq!(store.list_prefix("a/b").unwrap(), vec!["a/b/0.0"]);
        let l = store.list_dir("a/").unwrap();
        assert_eq!(l.keys, vec![".zarray"]);
        assert_eq!(l.prefixes, vec!["b"]);
        store.erase_prefix("a/").unwrap();
        assert_eq!(store.list().unwrap(), vec!["top"]);
        assert!(store.erase("top").unwrap());
        assert!(!store.erase("top").unwrap());
    }

    #[test]
    fn read_only_refuses_writes_and_keys_cannot_escape() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), false, false).unwrap();
        assert!(matches!(store.set("k", b"v"), Err(Error::ReadOnly(_))));
        let rw = FilesystemStore::open(dir.path(), true, false).unwrap();
        assert!(matches!(
            rw.set("../escape", b"v"),
            Err(Error::InvalidKey(_))
        ));
        assert!(matches!(rw.set("/abs", b"v"), Err(Error::InvalidKey(_))));
        assert!(!dir.path().parent().unwrap().join("escape").exists());
    }

    /// A store at `dir/store` holding `a/x`, next to `dir/outside/secret`, with links
    /// `file_out` (to the secret file), `dir_out` (to `outside/`), `file_in` (to `a/x`),
    /// `dir_in` (to `a/`) and `a/loop` (to `a/`, a cycle).
    fn linked_store(dir: &Path) -> FilesystemStore {
        use std::os::unix::fs::symlink;
        let root = dir.join("store");
        fs::create_dir_all(dir.join("outside")).unwrap();
        fs::write(dir.join("outside/secret"), b"s").unwrap();
        let store = FilesystemStore::open(&root, true, true).unwrap();
        store.set("a/x", b"inside").unwrap();
        symlink(dir.join("outside/secret"), root.join("file_out")).unwrap();
        symlink(dir.join("outside"), root.join("dir_out")).unwrap();
        symlink("a/x", root.join("file_in")).unwrap();
        symlink("a", root.join("dir_in")).unwrap();
        symlink("..", root.join("a/loop")).unwrap();
        store
    }

    #[test]
    fn symlinks_leading_outside_the_root_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = linked_store(dir.path());
        let refused = |r: Result<()>, key: &str| match r {
            Err(Error::InvalidKey(m)) => assert!(m.contains(key) && m.contains("outside"), "{m}"),
            other => panic!("{key}: expected InvalidKey, got {other:?}"),
        };
        for key in ["file_out", "dir_out/secret", "dir_out/new"] {
            refused(store.get(key).map(drop), key);
            refused(store.get_range(key, 0, 1).map(drop), key);
            refused(store.size(key).map(drop), key);
            refused(store.set(key, b"x"), key);
            refused(store.erase(key).map(drop), key);
            refused(store.list_prefix(&format!("{key}/")).map(drop), key);
        }
        refused(store.list_dir("dir_out/").map(drop), "dir_out");
        refused(store.erase_prefix("dir_out/"), "dir_out");
        // Whole-store listings meet the links and refuse too.
        refused(store.list().map(drop), "_out");
        refused(store.list_dir("").map(drop), "_out");
        // Nothing outside was read, written or removed.
        assert_eq!(fs::read(dir.path().join("outside/secret")).unwrap(), b"s");
        assert!(!dir.path().join("outside/new").exists());
    }

    #[test]
    fn a_directory_removed_and_replaced_by_a_link_is_checked_again() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(dir.path().join("outside")).unwrap();
        fs::write(dir.path().join("outside/x"), b"s").unwrap();
        let store = FilesystemStore::open(&root, true, true).unwrap();
        store.set("a/b/x", b"inside").unwrap();
        assert_eq!(store.get("a/b/x").unwrap().unwrap(), b"inside");
        store.erase_prefix("a/").unwrap();
        symlink(dir.path().join("outside"), root.join("a")).unwrap();
        assert!(matches!(store.get("a/x"), Err(Error::InvalidKey(_))));
    }

    #[test]
    fn symlinks_inside_the_root_are_followed_and_cycles_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = linked_store(dir.path());
        use std::os::unix::fs::symlink;
        let root = dir.path().join("store");
        fs::remove_file(root.join("file_out")).unwrap();
        fs::remove_file(root.join("dir_out")).unwrap();
        assert_eq!(store.get("file_in").unwrap().unwrap(), b"inside");
        assert_eq!(store.get("dir_in/x").unwrap().unwrap(), b"inside");
        store.set("dir_in/y", b"via link").unwrap();
        assert_eq!(store.get("a/y").unwrap().unwrap(), b"via link");
        assert_eq!(
            store.list().unwrap(),
            vec!["a/x", "a/y", "dir_in/x", "dir_in/y", "file_in"]
        );
        // From a subdirectory, a link back to a directory above the start is a cycle too.
        assert_eq!(store.list_prefix("a/").unwrap(), vec!["a/x", "a/y"]);
        let l = store.list_dir("").unwrap();
        assert_eq!(l.keys, vec!["file_in"]);
        assert_eq!(l.prefixes, vec!["a", "dir_in"]);
        // A dangling link reads as missing and is not listed; one leading outside is refused.
        symlink("missing", root.join("dangling")).unwrap();
        assert_eq!(store.get("dangling").unwrap(), None);
        assert_eq!(store.size("dangling").unwrap(), None);
        assert_eq!(store.list_dir("").unwrap().keys, vec!["file_in"]);
        symlink("../../missing", root.join("a/dangling_out")).unwrap();
        assert!(matches!(
            store.get("a/dangling_out"),
            Err(Error::InvalidKey(_))
        ));
        // A value below a dangling link is refused at once, naming its key, and nothing
        // is created where the link leads.
        match store.set("dangling/k", b"v") {
            Err(Error::Io(m)) => assert!(m.contains("dangling/k") && m.contains("exists"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(!root.join("missing").exists());
    }

    #[test]
    fn flush_syncs_what_the_handle_changed_and_forgets_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = FilesystemStore::open(dir.path(), true, false).unwrap();
        store.max_unsynced = 8;
        let store = store;
        let pending = || {
            let state = store.sync_state();
            let mut files: Vec<String> = state.files.iter().cloned().collect();
            let mut dirs: Vec<String> = state.dirs.iter().cloned().collect();
            files.sort();
            dirs.sort();
            (files, dirs)
        };
        assert_eq!(store.level(), Durability::Flush);
        store.set("a/b/c", b"1").unwrap();
        store.set("a/b/d", b"2").unwrap();
        store.set("top", b"3").unwrap();
        assert_eq!(pending().0, vec!["a/b/c", "a/b/d", "top"]);
        assert_eq!(pending().1, vec!["", "a", "a/b"]);
        store.flush().unwrap();
        assert_eq!(pending(), (vec![], vec![]));
        // An erasure records its directory and those above (pruned ones among them).
        store.erase("a/b/c").unwrap();
        assert_eq!(pending().1, vec!["", "a", "a/b"]);
        store.erase("a/b/d").unwrap();
        assert_eq!(pending().1, vec!["", "a", "a/b"]);
        // Files erased or replaced since they were written are skipped by the flush.
        store.set("gone/x", b"4").unwrap();
        store.erase_prefix("gone/").unwrap();
        store.close().unwrap();
        assert_eq!(pending(), (vec![], vec![]));
        // A long run of writes without a flush is flushed every `max_unsynced` entries.
        for i in 0..7 {
            store.set(&format!("many/{i}"), b"m").unwrap();
        }
        assert_eq!(pending().0.len(), 1);
        store.erase_prefix("many/").unwrap();
        store.flush().unwrap();
        for level in [Durability::None, Durability::EachWrite] {
            store.set_durability(level).unwrap();
            store.set("n/x", b"5").unwrap();
            assert!(store.erase("n/x").unwrap());
            store.set("n/y", b"6").unwrap();
            store.erase_prefix("n/").unwrap();
            assert_eq!(pending(), (vec![], vec![]), "{level:?}");
        }
        assert_eq!(store.list().unwrap(), vec!["top"]);
    }

    #[test]
    fn writes_into_directories_another_handle_made_sync_the_directories_above() {
        let dir = tempfile::tempdir().unwrap();
        let maker = FilesystemStore::open(dir.path(), true, false).unwrap();
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        // The maker has created `a/b` and not flushed: the other handle's flush must sync
        // the entries leading to it too.
        maker.set("a/b/c", b"1").unwrap();
        store.set("a/b/d", b"2").unwrap();
        let mut dirs: Vec<String> = store.sync_state().dirs.iter().cloned().collect();
        dirs.sort();
        assert_eq!(dirs, vec!["", "a", "a/b"]);
        store.flush().unwrap();
        // Under EachWrite the directories above are synced by the first write into a
        // directory, up to one settled, remembered, and forgotten when removed.
        store.set_durability(Durability::EachWrite).unwrap();
        let settled = || {
            let mut dirs: Vec<String> = store.sync_state().settled.iter().cloned().collect();
            dirs.sort();
            dirs
        };
        let leading = |path| leading_to(&store.sync_state(), path, false);
        assert_eq!(leading("a/b"), vec!["a/b", "a", ""]);
        store.set("a/b/e", b"3").unwrap();
        assert_eq!(settled(), vec!["a/b"]);
        assert_eq!(leading("a/b"), vec!["a/b"]);
        assert_eq!(leading("a/b/x"), vec!["a/b/x", "a/b"]);
        assert_eq!(
            leading_to(&store.sync_state(), "a/b/x", true),
            vec!["a/b/x", "a/b", "a", ""]
        );
        store.set("a/b/x/y", b"4").unwrap();
        assert_eq!(settled(), vec!["a/b", "a/b/x"]);
        assert!(store.erase("a/b/x/y").unwrap());
        assert_eq!(settled(), vec!["a/b"]);
        for key in ["a/b/c", "a/b/d", "a/b/e"] {
            assert!(store.erase(key).unwrap());
        }
        assert!(settled().is_empty());
        store.set("a/b/f", b"5").unwrap();
        store.set("a/g", b"6").unwrap();
        assert_eq!(settled(), vec!["a", "a/b"]);
        store.erase_prefix("a/").unwrap();
        assert!(settled().is_empty());
        assert!(store.list().unwrap().is_empty());
        assert!(is_within("a/b", "a") && is_within("a", "a") && is_within("a", ""));
        assert!(!is_within("ab", "a") && !is_within("a", "a/b"));
    }

    #[test]
    fn writers_and_erasers_racing_never_leave_a_removed_directory_settled() {
        const THREADS: usize = 4;
        const ROUNDS: usize = 300;
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        store.set_durability(Durability::EachWrite).unwrap();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let mut checks = 0;
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (store, done) = (&store, &done);
                // Each erases its neighbour's value, maybe while that write still syncs.
                s.spawn(move || {
                    for _ in 0..ROUNDS {
                        store.set(&format!("d/e/k{t}"), b"x").unwrap();
                        store.erase(&format!("d/e/k{}", (t + 1) % THREADS)).unwrap();
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
            // Directories are removed under the lock: holding it, every settled one is there.
            while done.load(Ordering::Relaxed) < THREADS {
                let state = store.sync_state();
                for settled in state.settled.iter() {
                    assert!(dir.path().join(settled).is_dir(), "{settled} is gone");
                }
                checks += 1;
            }
        });
        assert!(checks > 0);
        for t in 0..THREADS {
            store.erase(&format!("d/e/k{t}")).unwrap();
        }
        assert!(!dir.path().join("d").exists());
        assert!(store.sync_state().settled.is_empty());
    }

    #[test]
    fn a_flush_that_fails_leaves_only_the_failed_syncs_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        store.set("a/f", b"1").unwrap();
        store.set("a/g", b"2").unwrap();
        // A FIFO now stands where `a/f` was: it cannot be synced as a value.
        std::fs::remove_file(dir.path().join("a/f")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("a/f"))
            .status()
            .unwrap();
        assert!(made.success());
        let err = store.flush().unwrap_err().to_string();
        assert!(err.contains("a/f"), "{err}");
        let pending = |state: &SyncState| (state.files.len(), state.dirs.len());
        assert_eq!(pending(&store.sync_state()), (1, 0));
        assert!(store.sync_state().files.contains("a/f"));
        std::fs::remove_file(dir.path().join("a/f")).unwrap();
        store.flush().unwrap();
        assert_eq!(pending(&store.sync_state()), (0, 0));
    }

    #[test]
    fn stores_that_cannot_sync_accept_only_no_durability() {
        let store = crate::store::MemoryStore::new();
        store.set_durability(Durability::None).unwrap();
        for level in [Durability::Flush, Durability::EachWrite] {
            assert!(matches!(
                store.set_durability(level),
                Err(Error::Unsupported(_))
            ));
        }
        store.flush().unwrap();
    }

    #[test]
    fn leftover_temporary_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        store.set("a/0.0", b"new").unwrap();
        // What a writer killed between writing and renaming leaves behind.
        fs::write(dir.path().join("a/.zarr-tmp.123.4"), b"half").unwrap();
        fs::write(dir.path().join(".zarr-tmp.123.5"), b"half").unwrap();
        assert_eq!(store.list().unwrap(), vec!["a/0.0"]);
        let l = store.list_dir("a/").unwrap();
        assert_eq!((l.keys, l.prefixes), (vec!["0.0".to_string()], vec![]));
        assert!(matches!(
            store.get("a/.zarr-tmp.123.4"),
            Err(Error::InvalidKey(_))
        ));
        store.erase_prefix("a/").unwrap();
        assert_eq!(store.list().unwrap(), Vec::<String>::new());
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn values_written_piece_by_piece_replace_the_old_one_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        for level in [Durability::None, Durability::Flush, Durability::EachWrite] {
            let store = FilesystemStore::open(dir.path(), true, false).unwrap();
            store.set_durability(level).unwrap();
            store.set("a/0", b"old").unwrap();
            let mut value = store.write_value("a/0").unwrap().unwrap();
            value.append(b"xxxxx ").unwrap();
            value.append(b"world").unwrap();
            value.overwrite(0, b"hello").unwrap();
            // Past what was appended: refused, and the value is as it was.
            assert!(matches!(
                value.overwrite(8, b"1234"),
                Err(Error::Internal(_))
            ));
            value.append(b"!").unwrap();
            // Nothing is in place before the commit, and listings skip the temporary file.
            assert_eq!(store.get("a/0").unwrap().unwrap(), b"old");
            assert_eq!(store.list().unwrap(), vec!["a/0"]);
            value.commit(false).unwrap();
            assert_eq!(
                store.get("a/0").unwrap().unwrap(),
                b"hello world!",
                "{level:?}"
            );
            // A value dropped before its commit leaves the old one and no file behind; a
            // new key's directory too.
            let mut value = store.write_value("a/0").unwrap().unwrap();
            value.append(b"half").unwrap();
            drop(value);
            let mut value = store.write_value("b/0").unwrap().unwrap();
            value.append(b"half").unwrap();
            drop(value);
            assert_eq!(store.get("a/0").unwrap().unwrap(), b"hello world!");
            assert_eq!(names(&dir.path().join("a")), vec!["0"]);
            assert_eq!(names(dir.path()), vec!["a"]);
            assert_eq!(store.list().unwrap(), vec!["a/0"]);
            store.flush().unwrap();
            store.erase_prefix("").unwrap();
        }
        // Keys are checked, and a read-only store refuses.
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        assert!(matches!(
            store.write_value("../x").map(drop),
            Err(Error::InvalidKey(_))
        ));
        let store = FilesystemStore::open(dir.path(), false, false).unwrap();
        assert!(store.write_value("a/0").is_err());
        assert_eq!(names(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn many_values_are_stored_by_groups_and_erasures_among_them_done() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        for i in 0..40 {
            store.set(&format!("c/{i}"), b"old").unwrap();
        }
        // More values than a group, every fourth key erased.
        let batch: Vec<(String, Option<Vec<u8>>)> = (0..2 * PUT_GROUP + 8)
            .map(|i| (format!("c/{i}"), (i % 4 != 0).then(|| vec![i as u8; i + 1])))
            .collect();
        store.put_many(batch).unwrap();
        for i in 0..40 {
            let expected = match i {
                i if i < 2 * PUT_GROUP + 8 && i % 4 == 0 => None,
                i if i < 2 * PUT_GROUP + 8 => Some(vec![i as u8; i + 1]),
                _ => Some(b"old".to_vec()),
            };
            assert_eq!(store.get(&format!("c/{i}")).unwrap(), expected, "{i}");
        }
        assert!(names(&dir.path().join("c"))
            .iter()
            .all(|n| !n.starts_with(TEMP_PREFIX)));
    }
}
