//! Icechunk repositories as stores (`icechunk:///path/to/repo` on local disk,
//! `icechunk+s3://bucket/prefix` on S3): the [`Store`] calls run on an Icechunk session
//! (writes stay uncommitted, invisible to every other reader, until
//! [`Repository::commit`]), through the `icechunk` crate on its `object_store` backends.
//!
//! The crate is asynchronous: each call runs on the process's I/O runtime (the one object
//! stores use) and waits for it. Icechunk holds Zarr v3 only: v2 documents are refused.
//!
//! On local disk the crate's storage runs under [`LocalDisk`], which refuses links out of
//! the repository and files that are not regular, and syncs each file before the branch
//! file names it (see `icechunk_disk`).
//!
//! Concurrent commits: Icechunk refuses a commit whose parent is no longer the branch's
//! head ([`Error::Conflict`]). On S3 the branch moves by a conditional write, so of
//! commits racing from anywhere exactly one succeeds. On a local disk the crate moves the
//! branch without a conditional write (it reads the repository's branches, checks the
//! parent, and writes them back), so libzarr makes that step exclusive itself: commits,
//! tags and branches hold an exclusive `flock` on the repository's directory while they
//! update the repository, so of two libzarr writers (threads or processes) racing on one
//! branch exactly one succeeds. Other programs (Python's
//! icechunk) do not take that lock: a commit of theirs at the same instant as one of
//! libzarr's on a local disk may still be lost; object storage has no such gap.

use super::cloud::{block_on, scrubbed, shown_url};
use super::icechunk_disk::LocalDisk;
use super::repository::{Repository, Snapshot};
use super::{
    listing_of, validate_dir_prefix, validate_key, validate_prefix, DirListing, Mode, Store,
};
use crate::error::{Error, Result};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use icechunk::change_set::ChangeSet;
use icechunk::conflicts::detector::ConflictDetector;
use icechunk::format::snapshot::{ArrayShape, NodeData};
use icechunk::format::{
    ByteRange, IcechunkFormatErrorKind, NodeId, Path as IcechunkPath, SnapshotId,
};
use icechunk::refs::RefErrorKind;
use icechunk::repository::{RepositoryErrorKind, VersionInfo};
use icechunk::session::{Session, SessionErrorKind};
use icechunk::storage::{S3Credentials, S3Options, S3StaticCredentials};
use icechunk::store::StoreErrorKind;
use icechunk::Storage;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::RwLock;

/// Where in a repository's history a store is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    /// The head of a branch: writable unless opened read-only.
    Branch(String),
    /// A tag: read-only.
    Tag(String),
    /// A snapshot by id: read-only.
    Snapshot(String),
}

/// Where a repository lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A directory on local disk.
    Disk(PathBuf),
    /// A bucket and a key prefix (without a trailing `/`) on S3 or an S3-compatible server.
    S3 {
        /// The bucket.
        bucket: String,
        /// The prefix of the repository's objects.
        prefix: String,
    },
}

/// A store on one session of an Icechunk repository.
pub struct IcechunkStore {
    /// The URL as given, for messages.
    url: String,
    repo: Arc<icechunk::Repository>,
    session: Arc<RwLock<Session>>,
    store: icechunk::Store,
    /// The branch written to (`None` when read-only).
    branch: Option<String>,
    /// The repository's directory when it is on local disk: locked while the repository's
    /// branches and tags are updated.
    directory: Option<PathBuf>,
    /// The credentials given as options, masked in exported changes.
    secrets: Vec<String>,
    /// The storage of a repository on local disk, which syncs what it writes.
    disk: Option<Arc<LocalDisk>>,
}

impl std::fmt::Debug for IcechunkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IcechunkStore")
            .field("url", &self.url)
            .field("branch", &self.branch)
            .finish_non_exhaustive()
    }
}

/// The kinds of reference `IcechunkStore::create_ref` creates.
#[derive(Debug, Clone, Copy)]
enum Ref {
    Tag,
    Branch,
}

/// The right to update a repository's branches and tags: for a repository on local disk,
/// an exclusive `flock` on its directory (released when dropped, with the descriptor); on
/// object storage nothing, as the branch moves there by a conditional write.
struct UpdateTurn {
    /// The locked directory, held until the turn ends.
    _directory: Option<std::fs::File>,
}

impl UpdateTurn {
    /// Waits for the turn to update the repository at `directory` (`url` in messages).
    /// Each turn opens the directory anew, so turns of one process exclude each other too.
    fn take(directory: Option<&PathBuf>, url: &str) -> Result<UpdateTurn> {
        let Some(dir) = directory else {
            return Ok(UpdateTurn { _directory: None });
        };
        let fail = |e: &dyn std::fmt::Display| {
            Error::Io(format!(
                "{url}: cannot lock the repository's directory: {e}"
            ))
        };
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        // A directory only, and never a wait for a writer (a FIFO put in its place).
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let flags = rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::NONBLOCK;
            options.custom_flags(flags.bits() as i32);
        }
        let file = options.open(dir).map_err(|e| fail(&e))?;
        #[cfg(unix)]
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| fail(&e))?;
        Ok(UpdateTurn {
            _directory: Some(file),
        })
    }
}

/// `text` with each `%XX` replaced by the byte it stands for (`+` stays `+`); `None` when a
/// `%` is not followed by two hexadecimal digits or the bytes are not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// Why no URL can name the branch or tag `name`, if none can: it is empty, or holds a
/// control character (which no URL should carry, even percent-encoded).
fn unreachable_ref_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else {
        None
    }
}

/// Splits `icechunk:///path?branch=NAME` or `icechunk+s3://bucket/prefix?branch=NAME` (or
/// `?tag=`, `?snapshot=`) into the repository's place and the place in its history (the
/// branch `main` when no query names one). Query values are percent-decoded (`%20` for a
/// space, `%26` for `&`, `%23` for `#`, `%3D` for `=`, `%25` for `%`).
pub fn parse_url(url: &str) -> Result<(Place, At)> {
    let shown = shown_url(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        if matches!(scheme.as_deref(), Some("icechunk" | "icechunk+s3")) {
            return Err(Error::InvalidArg(format!(
                "{shown:?}: the repository path must be absolute (icechunk:///abs/path, \
                 icechunk+s3://bucket/prefix)"
            )));
        }
        return Err(Error::InvalidArg(format!(
            "{shown:?} is not an icechunk:// URL"
        )));
    };
    let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
    let place = match scheme.to_ascii_lowercase().as_str() {
        "icechunk" => {
            // The authority is empty (`icechunk:///abs/path`) or `localhost`: a path that
            // does not start with `/` would be relative to the working directory.
            let path = location.strip_prefix("localhost").unwrap_or(location);
            if !path.starts_with('/') {
                return Err(Error::InvalidArg(format!(
                    "{shown:?}: the repository path must be absolute (icechunk:///abs/path)"
                )));
            }
            Place::Disk(PathBuf::from(path))
        }
        "icechunk+s3" => {
            let (bucket, prefix) = location.split_once('/').unwrap_or((location, ""));
            if bucket.contains('@') {
                return Err(Error::InvalidArg(format!(
                    "{shown:?}: credentials go in the options, not in the URL"
                )));
            }
            if bucket.is_empty() {
                return Err(Error::InvalidArg(format!("{shown:?} names no bucket")));
            }
            Place::S3 {
                bucket: bucket.to_string(),
                prefix: prefix.trim_end_matches('/').to_string(),
            }
        }
        other => {
            return Err(Error::InvalidArg(format!(
                "{shown:?}: {other:?} is not an Icechunk scheme (icechunk, icechunk+s3)"
            )))
        }
    };
    let mut at = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decoded(raw).ok_or_else(|| {
            Error::InvalidArg(format!(
                "{shown:?}: the value of {name:?} is not percent-encoded UTF-8 (a % must be \
                 followed by two hexadecimal digits)"
            ))
        })?;
        if value.is_empty() {
            return Err(Error::InvalidArg(format!(
                "{shown:?}: {name:?} has no value"
            )));
        }
        let chosen = match name {
            "branch" => At::Branch(value),
            "tag" => At::Tag(value),
            "snapshot" => At::Snapshot(value),
            other => {
                return Err(Error::InvalidArg(format!(
                    "{shown:?}: unknown query {other:?} (known: branch, tag, snapshot)"
                )))
            }
        };
        if at.replace(chosen).is_some() {
            return Err(Error::InvalidArg(format!(
                "{shown:?} names more than one of branch, tag and snapshot"
            )));
        }
    }
    Ok((place, at.unwrap_or(At::Branch("main".into()))))
}

/// The options of an `icechunk+s3://` repository: `endpoint`, `region`,
/// `access_key_id`, `secret_access_key`, `session_token`, `allow_http` and `anonymous`
/// (without keys, credentials come from the `AWS_*` environment variables).
fn s3_settings(options: Option<&Map<String, Value>>) -> Result<(S3Options, S3Credentials)> {
    let empty = Map::new();
    let options = options.unwrap_or(&empty);
    let text = |name: &str| -> Result<Option<String>> {
        match options.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Error::InvalidArg(format!("option {name} must be a string"))),
        }
    };
    let flag = |name: &str| -> Result<bool> {
        match options.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Error::InvalidArg(format!(
                "option {name} must be true or false"
            ))),
        }
    };
    const KNOWN: [&str; 7] = [
        "endpoint",
        "region",
        "access_key_id",
        "secret_access_key",
        "session_token",
        "allow_http",
        "anonymous",
    ];
    if let Some(name) = options.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(Error::InvalidArg(format!(
            "option {name:?} does not apply to icechunk+s3:// (known: {})",
            KNOWN.join(", ")
        )));
    }
    let endpoint = text("endpoint")?;
    let mut settings = S3Options::default();
    settings.region = text("region")?;
    settings.allow_http = flag("allow_http")?
        || endpoint
            .as_deref()
            .is_some_and(|e| e.starts_with("http://"));
    settings.anonymous = flag("anonymous")?;
    // Servers other than AWS (MinIO, Ceph, moto) name buckets in the path.
    settings.force_path_style = endpoint.is_some();
    settings.endpoint_url = endpoint;
    let credentials = match (text("access_key_id")?, text("secret_access_key")?) {
        (Some(access_key_id), Some(secret_access_key)) => {
            S3Credentials::Static(S3StaticCredentials {
                access_key_id,
                secret_access_key,
                session_token: text("session_token")?,
                expires_after: None,
            })
        }
        (None, None) if settings.anonymous => S3Credentials::Anonymous,
        (None, None) => S3Credentials::FromEnv,
        _ => {
            return Err(Error::InvalidArg(
                "options access_key_id and secret_access_key go together".into(),
            ))
        }
    };
    Ok((settings, credentials))
}

impl IcechunkStore {
    /// Opens the repository `url` names (see `parse_url`) with `mode`: `r` opens a read-only
    /// session; `r+` a writable one on the branch (the repository must exist); `a`, `w`
    /// and `w-` a writable one, creating the repository (in a missing or empty directory,
    /// or an empty prefix) when there is none. Nothing is erased at store level. Tags and
    /// snapshots open read-only only; a missing repository, branch, tag or snapshot is
    /// [`Error::NotFound`] naming it. `options` apply to S3 only: `endpoint`, `region`,
    /// `access_key_id`, `secret_access_key`, `session_token`, `allow_http`, `anonymous`.
    /// On local disk the repository's path may go through symbolic links (it is resolved
    /// once, here); inside the repository, a link leading outside it (or an absolute one)
    /// and anything but a regular file where a file is read are errors naming the path.
    pub fn open(url: &str, mode: Mode, options: Option<&Map<String, Value>>) -> Result<Self> {
        let (place, at) = parse_url(url)?;
        let directory = match &place {
            Place::Disk(path) => Some(path.clone()),
            Place::S3 { .. } => None,
        };
        let containers = virtual_chunk_containers(options)?;
        let mut options = options.cloned().unwrap_or_default();
        options.shift_remove(CONTAINERS_OPTION);
        let s3 = match &place {
            Place::Disk(_) => {
                if let Some(name) = options.keys().next() {
                    return Err(Error::InvalidArg(format!(
                        "option {name:?} does not apply to {url:?} (known: {CONTAINERS_OPTION})"
                    )));
                }
                None
            }
            Place::S3 { .. } => Some(s3_settings(Some(&options))?),
        };
        let secrets = match &s3 {
            Some((_, S3Credentials::Static(keys))) => [
                Some(&keys.access_key_id),
                Some(&keys.secret_access_key),
                keys.session_token.as_ref(),
            ]
            .into_iter()
            .flatten()
            .filter(|key| !key.is_empty())
            .cloned()
            .collect(),
            _ => Vec::new(),
        };
        let shown = shown_url(url);
        let writable = mode != Mode::Read;
        if writable && !matches!(at, At::Branch(_)) {
            return Err(Error::ReadOnly(format!(
                "{shown}: a tag or snapshot can only be opened read-only (open a branch to write)"
            )));
        }
        let create = !matches!(mode, Mode::Read | Mode::ReadWrite);
        let snapshot =
            match &at {
                At::Snapshot(id) => Some(SnapshotId::try_from(id.as_str()).map_err(|_| {
                    Error::InvalidArg(format!("{shown}: {id:?} is not a snapshot id"))
                })?),
                _ => None,
            };
        let branch = match (&at, writable) {
            (At::Branch(name), true) => Some(name.clone()),
            _ => None,
        };
        let task_url = shown.clone();
        let (repo, session, disk) = block_on(async move {
            let (storage, disk) = open_storage(&task_url, place, s3, create).await?;
            let opening = Opening {
                url: &task_url,
                create,
                at: &at,
                snapshot,
                writable,
                containers: &containers,
            };
            let (repo, session) = open_session(storage, opening).await?;
            Ok::<_, Error>((repo, session, disk))
        })??;
        // Locked by its real path, whatever the working directory later becomes.
        let directory = directory.map(|d| d.canonicalize().unwrap_or(d));
        let session = Arc::new(RwLock::new(session));
        let concurrency = repo.config().get_partial_values_concurrency();
        let store = icechunk::Store::from_session_and_config(session.clone(), concurrency);
        Ok(IcechunkStore {
            url: shown,
            repo: Arc::new(repo),
            session,
            store,
            branch,
            directory,
            secrets,
            disk,
        })
    }

    /// Runs `call` with the crate's store on the runtime and waits for it.
    fn run<T, F, Fut>(&self, call: F) -> Result<T>
    where
        F: FnOnce(icechunk::Store, String) -> Fut,
        Fut: std::future::Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        block_on(call(self.store.clone(), self.url.clone()))?
    }

    /// The value at `key` in `range`, `None` when the key does not exist.
    fn read(&self, key: &str, range: ByteRange) -> Result<Option<Bytes>> {
        let key = validate_key(key)?.into_owned();
        self.run(move |store, url| async move {
            match store.get(&key, &range).await {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if absent(&e.kind) => Ok(None),
                Err(e) => Err(store_error(&url, &format!("cannot read {key:?}"), e.kind)),
            }
        })
    }

    /// Every key of the session, sorted.
    fn all_keys(&self) -> Result<Vec<String>> {
        self.run(|store, url| async move {
            let listing = store
                .list()
                .await
                .map_err(|e| store_error(&url, "cannot list the keys", e.kind))?;
            let mut keys: Vec<String> = listing
                .map_ok(|key| key.trim_start_matches('/').to_string())
                .try_collect()
                .await
                .map_err(|e| store_error(&url, "cannot list the keys", e.kind))?;
            keys.sort();
            Ok(keys)
        })
    }

    /// The writable branch, or [`Error::ReadOnly`] naming `what`.
    fn branch(&self, what: &str) -> Result<&str> {
        self.branch.as_deref().ok_or_else(|| {
            Error::ReadOnly(format!(
                "{}: cannot {what}: the repository is open read-only",
                self.url
            ))
        })
    }

    /// Creates the tag or branch `name` at the current snapshot, in the update turn.
    fn create_ref(&self, kind: Ref, name: &str) -> Result<()> {
        if let Some(why) = unreachable_ref_name(name) {
            let what = match kind {
                Ref::Tag => "tag",
                Ref::Branch => "branch",
            };
            return Err(Error::InvalidArg(format!(
                "{}: cannot create {what} {name:?}: {why}, so no URL could open it",
                self.url
            )));
        }
        let _turn = UpdateTurn::take(self.directory.as_ref(), &self.url)?;
        let (repo, session, url) = (self.repo.clone(), self.session.clone(), self.url.clone());
        let owned = name.to_string();
        block_on(async move {
            let id = session.read().await.snapshot_id().clone();
            let (created, what) = match kind {
                Ref::Tag => (repo.create_tag(&owned, &id).await, "tag"),
                Ref::Branch => (repo.create_branch(&owned, &id).await, "branch"),
            };
            created
                .map(|_| ())
                .map_err(|e| repo_error(&url, &format!("cannot create {what} {owned:?}"), e.kind))
        })?
    }
}

/// Overwrites each of `secrets` in `bytes` with as many `*`: a serialized session holds
/// its storage's credentials, which a merge never uses, and the same length keeps the
/// serialization valid.
fn mask(bytes: &mut [u8], secrets: &[String]) {
    // Longest first: a shorter one inside a longer one would leave the longer's rest.
    let mut secrets: Vec<&[u8]> = secrets.iter().map(String::as_bytes).collect();
    secrets.retain(|secret| !secret.is_empty());
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    for secret in secrets {
        let mut from = 0;
        while let Some(at) = bytes[from..]
            .windows(secret.len())
            .position(|window| window == secret)
        {
            let start = from + at;
            bytes[start..start + secret.len()].fill(b'*');
            from = start + secret.len();
        }
    }
}

/// The crate's storage for `place` (a directory is created when missing and `create`),
/// and, on local disk, the same as libzarr's layer over it.
async fn open_storage(
    url: &str,
    place: Place,
    s3: Option<(S3Options, S3Credentials)>,
    create: bool,
) -> Result<(Arc<dyn Storage + Send + Sync>, Option<Arc<LocalDisk>>)> {
    let failed = |e: icechunk::StorageError| {
        Error::Io(format!(
            "{url}: cannot open the storage: {}",
            scrubbed(&e.kind.to_string())
        ))
    };
    match (place, s3) {
        (Place::Disk(path), _) => {
            if !path.is_dir() {
                if !create {
                    return Err(Error::NotFound(format!("no Icechunk repository at {url}")));
                }
                create_directory(&path)
                    .map_err(|e| Error::io(format!("{url}: cannot create the directory"), e))?;
            }
            let disk = Arc::new(LocalDisk::new(&path).await.map_err(failed)?);
            Ok((disk.clone(), Some(disk)))
        }
        (Place::S3 { bucket, prefix }, Some((settings, credentials))) => {
            super::cloud::install_crypto();
            let prefix = (!prefix.is_empty()).then_some(prefix);
            let storage = icechunk::storage::new_s3_object_store_storage(
                settings,
                bucket,
                prefix,
                Some(credentials),
                Vec::new(),
                Vec::new(),
            )
            .await
            .map_err(failed)?;
            Ok((storage, None))
        }
        (Place::S3 { .. }, None) => Err(Error::Internal("S3 settings were not parsed".into())),
    }
}

/// Creates the directory `path` and those missing above it, and syncs the directory
/// above each one created, so that the repository's directory is found after a power cut.
fn create_directory(path: &std::path::Path) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut at = Some(path);
    while let Some(dir) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        missing.push(dir);
        at = dir.parent();
    }
    std::fs::create_dir_all(path)?;
    for dir in missing.iter().rev() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::File::open(parent)?.sync_all()?;
        }
    }
    Ok(())
}

/// The store option naming the directories virtual chunks may be read from.
const CONTAINERS_OPTION: &str = "virtual_chunk_containers";

/// The option `virtual_chunk_containers`: absolute directories (`/data/archive` or
/// `file:///data/archive/`), as Icechunk's container URL prefixes (`file:///data/archive/`).
fn virtual_chunk_containers(options: Option<&Map<String, Value>>) -> Result<Vec<String>> {
    let Some(value) = options.and_then(|o| o.get(CONTAINERS_OPTION)) else {
        return Ok(Vec::new());
    };
    let bad = |why: String| Error::InvalidArg(format!("option {CONTAINERS_OPTION}: {why}"));
    let items = value
        .as_array()
        .ok_or_else(|| bad("a list of absolute directories".into()))?;
    let mut prefixes = Vec::new();
    for item in items {
        let text = item
            .as_str()
            .ok_or_else(|| bad(format!("{item} is not a directory's path")))?;
        let path = local_absolute(text).map_err(|why| match why {
            NotLocal => Error::Unsupported(format!(
                "option {CONTAINERS_OPTION}: {:?}: virtual chunks are read from local files \
                 only so far",
                shown_url(text)
            )),
            NotAbsolute => bad(format!(
                "{text:?} is not an absolute directory without '.' or '..' (nor the root)"
            )),
        })?;
        if path == "/" {
            return Err(bad(format!(
                "{text:?} is not an absolute directory without '.' or '..' (nor the root)"
            )));
        }
        prefixes.push(format!("file://{path}/"));
    }
    Ok(prefixes)
}

/// Why a location is no local absolute path.
enum NotLocalPath {
    /// It names another host (`s3://`, `https://`, `file://host/`).
    NotLocal,
    /// It is relative, or holds `.` or `..`.
    NotAbsolute,
}
use NotLocalPath::{NotAbsolute, NotLocal};

/// The local absolute path that `text` (a path or a `file:` URL, read as reference files
/// read them) names, without `.` or `..` and without a trailing `/`.
fn local_absolute(text: &str) -> std::result::Result<&str, NotLocalPath> {
    let path = super::reference::location::local(text).ok_or(NotLocal)?;
    let clean = std::path::Path::new(path).components().all(|c| {
        matches!(
            c,
            std::path::Component::RootDir | std::path::Component::Normal(_)
        )
    });
    match path.starts_with('/') && clean {
        true => Ok(path),
        false => Err(NotAbsolute),
    }
}

/// What [`open_session`] opens.
struct Opening<'a> {
    /// The repository's URL, for messages.
    url: &'a str,
    /// Whether a missing repository is created.
    create: bool,
    at: &'a At,
    snapshot: Option<SnapshotId>,
    writable: bool,
    /// The virtual chunk containers (URL prefixes) the caller allows reading from; a
    /// writable store declares those the repository lacks in its configuration.
    containers: &'a [String],
}

/// Opens (or creates) the repository in `storage` and the session the opening names.
async fn open_session(
    storage: Arc<dyn Storage + Send + Sync>,
    opening: Opening<'_>,
) -> Result<(icechunk::Repository, Session)> {
    let Opening {
        url,
        create,
        at,
        snapshot,
        writable,
        containers,
    } = opening;
    let exists = icechunk::Repository::exists(storage.clone(), None)
        .await
        .map_err(|e| repo_error(url, "cannot read the repository", e.kind))?;
    let allowed: HashMap<String, Option<icechunk::config::Credentials>> = containers
        .iter()
        .map(|c| {
            (
                c.clone(),
                Some(icechunk::config::Credentials::LocalFileSystemAccess),
            )
        })
        .collect();
    let mut repo = match (exists, create) {
        (true, _) => {
            icechunk::Repository::open(storage)
                .authorize_virtual_chunk_access(allowed.clone())
                .execute()
                .await
        }
        (false, true) => {
            icechunk::Repository::create(storage)
                .authorize_virtual_chunk_access(allowed.clone())
                .execute()
                .await
        }
        (false, false) => return Err(Error::NotFound(format!("no Icechunk repository at {url}"))),
    }
    .map_err(|e| repo_error(url, "cannot open the repository", e.kind))?;
    let declared: Vec<String> = repo
        .config()
        .virtual_chunk_containers()
        .map(|c| c.url_prefix().to_string())
        .collect();
    let missing: Vec<&String> = containers
        .iter()
        .filter(|c| !declared.contains(c))
        .collect();
    if writable && !missing.is_empty() {
        let mut config = repo.config().clone();
        for prefix in missing {
            let dir = PathBuf::from(prefix.trim_start_matches("file://"));
            let container = icechunk::virtual_chunks::VirtualChunkContainer::new(
                prefix.clone(),
                icechunk::ObjectStoreConfig::LocalFileSystem(dir),
            )
            .map_err(|e| Error::InvalidArg(format!("{url}: container {prefix:?}: {e}")))?;
            config
                .set_virtual_chunk_container(container)
                .map_err(|e| Error::InvalidArg(format!("{url}: container {prefix:?}: {e}")))?;
        }
        let what = "cannot declare its virtual chunk containers";
        repo = repo
            .reopen(Some(config), Some(allowed))
            .await
            .map_err(|e| repo_error(url, what, e.kind))?;
        repo.save_config()
            .await
            .map_err(|e| repo_error(url, what, e.kind))?;
    }
    let session = match (at, writable) {
        (At::Branch(branch), true) => repo.writable_session(branch).await,
        (At::Branch(branch), false) => {
            repo.readonly_session(&VersionInfo::BranchTipRef(branch.clone()))
                .await
        }
        (At::Tag(tag), _) => {
            repo.readonly_session(&VersionInfo::TagRef(tag.clone()))
                .await
        }
        (At::Snapshot(_), _) => {
            let id = snapshot.ok_or_else(|| Error::Internal("snapshot id not parsed".into()))?;
            repo.lookup_snapshot(&id)
                .await
                .map_err(|e| repo_error(url, &format!("no snapshot {id}"), e.kind))?;
            repo.readonly_session(&VersionInfo::SnapshotId(id)).await
        }
    }
    .map_err(|e| repo_error(url, &format!("cannot open {at:?}"), e.kind))?;
    Ok((repo, session))
}

/// The length of a range read, checked: a range past a value's end is an error.
fn checked_range(key: &str, offset: u64, len: u64) -> Result<ByteRange> {
    offset
        .checked_add(len)
        .map(|end| ByteRange::Bounded(offset..end))
        .ok_or_else(|| Error::OutOfBounds(format!("range {offset}+{len} of {key:?} overflows")))
}

/// Refuses a `zarr.json` whose `node_type` the crate cannot store (it takes "array" and
/// "group" only).
fn check_document(key: &str, value: &[u8]) -> Result<()> {
    if key != "zarr.json" && !key.ends_with("/zarr.json") {
        return Ok(());
    }
    let node_type = serde_json::from_slice::<serde_json::Value>(value)
        .ok()
        .and_then(|doc| {
            doc.get("node_type")
                .and_then(|t| t.as_str().map(String::from))
        });
    match node_type.as_deref() {
        Some("array" | "group") => Ok(()),
        _ => Err(Error::Metadata(format!(
            "{key:?} is not a Zarr v3 array or group document"
        ))),
    }
}

impl Store for IcechunkStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.read(key, ByteRange::From(0))?.map(|b| b.to_vec()))
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let range = checked_range(key, offset, len)?;
        let Some(bytes) = self.read(key, range)? else {
            return Ok(None);
        };
        if bytes.len() as u64 != len {
            return Err(Error::Io(format!(
                "range {offset}+{len} of {key:?} is past its end"
            )));
        }
        Ok(Some(bytes.to_vec()))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        super::check_writable(self, "write")?;
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?.into_owned();
        check_document(&key, value)?;
        let value = Bytes::copy_from_slice(value);
        self.run(move |store, url| async move {
            store
                .set(&key, value)
                .await
                .map_err(|e| store_error(&url, &format!("cannot write {key:?}"), e.kind))
        })
    }

    fn erase(&self, key: &str) -> Result<bool> {
        super::check_writable(self, "erase")?;
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?.into_owned();
        self.run(move |store, url| async move {
            let what = format!("cannot erase {key:?}");
            let existed = match store.exists(&key).await {
                Ok(existed) => existed,
                Err(e) if absent(&e.kind) => false,
                Err(e) => return Err(store_error(&url, &what, e.kind)),
            };
            if existed {
                store
                    .delete(&key)
                    .await
                    .map_err(|e| store_error(&url, &what, e.kind))?;
            }
            Ok(existed)
        })
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        super::check_writable(self, "erase")?;
        let _write = super::writes::Write::begin(self.location());
        let prefix = validate_prefix(prefix)?;
        if prefix.is_empty() || prefix.ends_with('/') {
            // A node's directory: the crate drops the node and everything below it.
            let dir = prefix.clone();
            self.run(move |store, url| async move {
                let what = format!("cannot erase {dir:?}");
                match dir.is_empty() {
                    true => store.clear().await,
                    false => store.delete_dir(&dir).await,
                }
                .map_err(|e| store_error(&url, &what, e.kind))
            })?;
        }
        // What the crate leaves (keys below a prefix that is no node: nodes written
        // without the groups above them) goes key by key.
        for key in self.list_prefix(&prefix)? {
            self.erase(&key)?;
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        let mut keys = self.all_keys()?;
        keys.retain(|k| k.starts_with(&prefix));
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let prefix = validate_dir_prefix(prefix)?;
        let keys = self.list_prefix(&prefix)?;
        Ok(listing_of(&prefix, keys.iter().map(String::as_str)))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let key = validate_key(key)?.into_owned();
        self.run(move |store, url| async move {
            // The crate sizes a chunk never written as 0 bytes: ask whether it exists first.
            match store.exists(&key).await {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) if absent(&e.kind) => return Ok(None),
                Err(e) => return Err(store_error(&url, &format!("cannot find {key:?}"), e.kind)),
            }
            match store.getsize(&key).await {
                Ok(size) => Ok(Some(size)),
                Err(e) if absent(&e.kind) => Ok(None),
                Err(e) => Err(store_error(&url, &format!("cannot size {key:?}"), e.kind)),
            }
        })
    }

    fn writable(&self) -> bool {
        self.branch.is_some()
    }

    fn zarr_format_hint(&self) -> Option<u8> {
        Some(3)
    }

    fn repository(&self) -> Option<&dyn Repository> {
        Some(self)
    }
}

impl Repository for IcechunkStore {
    fn set_virtual_ref(&self, key: &str, location: &str, offset: u64, length: u64) -> Result<()> {
        super::check_writable(self, "write")?;
        let key = validate_key(key)?.into_owned();
        let bad = |why: &str| {
            Error::InvalidArg(format!(
                "{}: virtual chunk {key:?} at {:?}: {why}",
                self.url,
                shown_url(location)
            ))
        };
        let path = match local_absolute(location) {
            Ok(path) => path,
            Err(NotLocal) => {
                return Err(Error::Unsupported(format!(
                    "{}: virtual chunk {key:?}: {:?}: virtual chunks are read from local files \
                     only so far",
                    self.url,
                    shown_url(location)
                )))
            }
            Err(NotAbsolute) => return Err(bad("not an absolute path without '.' or '..'")),
        };
        let end = offset
            .checked_add(length)
            .ok_or_else(|| bad(&format!("{offset} + {length} bytes overflows")))?;
        let size = std::fs::metadata(path)
            .map_err(|e| bad(&format!("cannot be read: {e}")))?
            .len();
        if end > size {
            return Err(bad(&format!(
                "{length} bytes at {offset} run past its end ({size} bytes)"
            )));
        }
        let url = format!("file://{path}");
        let location = icechunk::format::manifest::VirtualChunkLocation::from_url(&url)
            .map_err(|e| bad(&scrubbed(&e.kind.to_string())))?;
        let reference = icechunk::format::manifest::VirtualChunkRef {
            location,
            offset,
            length,
            checksum: None,
        };
        let _write = super::writes::Write::begin(self.location());
        let path = path.to_string();
        self.run(move |store, url| async move {
            store
                .set_virtual_ref(&key, reference, true)
                .await
                .map_err(|e| match e.kind {
                    StoreErrorKind::InvalidVirtualChunkContainer { .. } => {
                        Error::InvalidArg(format!(
                            "{url}: virtual chunk {key:?}: {path:?} lies beneath none of the \
                         directories of the option {CONTAINERS_OPTION}"
                        ))
                    }
                    kind => store_error(&url, &format!("cannot write virtual chunk {key:?}"), kind),
                })
        })
    }

    fn commit(&self, message: &str) -> Result<String> {
        // The storage on local disk syncs each file the commit writes before the next,
        // which may name it, and the branch file before the commit returns.
        let _turn = UpdateTurn::take(self.directory.as_ref(), &self.url)?;
        let (repo, session, url) = (self.repo.clone(), self.session.clone(), self.url.clone());
        let branch = self.branch("commit")?.to_string();
        let message = message.to_string();
        let id = block_on(async move {
            let mut session = session.write().await;
            if !session.has_uncommitted_changes() {
                return Err(Error::InvalidArg(format!(
                    "{url}: nothing to commit: nothing was written since the last commit"
                )));
            }
            let id = session
                .commit(message)
                .execute()
                .await
                .map_err(|e| session_error(&url, "cannot commit", e.kind))?;
            // A committed session only reads: writing goes on in a new one at the commit.
            // The commit stands even when that one cannot be opened (later writes then
            // fail as read-only, and reopening the store goes on from the commit).
            if let Ok(next) = repo.writable_session(&branch).await {
                *session = next;
            }
            Ok(id.to_string())
        })??;
        Ok(id)
    }

    fn discard(&self) -> Result<()> {
        self.branch("discard changes")?;
        let _write = super::writes::Write::begin(self.location());
        let session = self.session.clone();
        let url = self.url.clone();
        block_on(async move {
            session
                .write()
                .await
                .discard_changes()
                .map_err(|e| session_error(&url, "cannot discard the changes", e.kind))
        })?
    }

    fn rebase(&self) -> Result<()> {
        self.branch("rebase")?;
        let _write = super::writes::Write::begin(self.location());
        let session = self.session.clone();
        let url = self.url.clone();
        block_on(async move {
            session
                .write()
                .await
                .rebase(&ConflictDetector)
                .await
                .map_err(|e| session_error(&url, "cannot rebase", e.kind))
        })?
    }

    fn create_tag(&self, name: &str) -> Result<()> {
        self.create_ref(Ref::Tag, name)
    }

    fn create_branch(&self, name: &str) -> Result<()> {
        self.create_ref(Ref::Branch, name)
    }

    fn snapshot_id(&self) -> Result<String> {
        let session = self.session.clone();
        block_on(async move { session.read().await.snapshot_id().to_string() })
    }

    fn history(&self) -> Result<Vec<Snapshot>> {
        let (repo, session, url) = (self.repo.clone(), self.session.clone(), self.url.clone());
        block_on(async move {
            let id = session.read().await.snapshot_id().clone();
            let what = "cannot read the history";
            let ancestry = repo
                .ancestry(&VersionInfo::SnapshotId(id))
                .await
                .map_err(|e| repo_error(&url, what, e.kind))?;
            ancestry
                .map(|info| {
                    info.map(|info| Snapshot {
                        id: info.id.to_string(),
                        parent: info.parent_id.map(|p| p.to_string()),
                        time: info.flushed_at.to_rfc3339(),
                        message: info.message,
                    })
                    .map_err(|e| repo_error(&url, what, e.kind))
                })
                .try_collect()
                .await
        })?
    }

    fn export_changes(&self) -> Result<Vec<u8>> {
        self.branch("export changes")?;
        // The chunks the bytes name reach the disk before any commit names them.
        if let Some(disk) = self.disk.clone() {
            let url = self.url.clone();
            block_on(async move {
                disk.sync_pending().await.map_err(|e| {
                    Error::Io(format!(
                        "{url}: nothing was exported: {}",
                        scrubbed(&e.kind.to_string())
                    ))
                })
            })??;
        }
        let (session, url) = (self.session.clone(), self.url.clone());
        let mut bytes = block_on(async move {
            session
                .read()
                .await
                .as_bytes()
                .map_err(|e| session_error(&url, "cannot export the changes", e.kind))
        })??;
        mask(&mut bytes, &self.secrets);
        Ok(bytes)
    }

    fn merge_changes(&self, changes: &[u8]) -> Result<()> {
        self.branch("merge changes")?;
        let _write = super::writes::Write::begin(self.location());
        let (session, url) = (self.session.clone(), self.url.clone());
        let changes = changes.to_vec();
        block_on(async move {
            let what = "cannot merge changes";
            let other = Session::from_bytes(&changes)
                .ok()
                .filter(|other| !other.read_only() && other.branch().is_some())
                .ok_or_else(|| {
                    Error::InvalidArg(format!(
                        "{url}: {what}: the {} bytes are not the changes a writable \
                         Icechunk store exported",
                        changes.len()
                    ))
                })?;
            let mut session = session.write().await;
            if session.snapshot_id().is_initial() {
                // Every repository starts at the same snapshot id: changes written there
                // could name chunks of another repository.
                return Err(Error::InvalidArg(format!(
                    "{url}: {what}: the store is at the repository's first snapshot; \
                     commit the arrays and groups first, then let the writers start"
                )));
            }
            if other.snapshot_id() != session.snapshot_id() {
                return Err(Error::Conflict(format!(
                    "{url}: {what}: they were written on snapshot {}, this store is on {}: \
                     every writer must start from the same commit (commit here after the \
                     merges, then let each writer discard and rebase)",
                    other.snapshot_id(),
                    session.snapshot_id()
                )));
            }
            check_chunk_references(&url, what, &changes, &session).await?;
            session
                .merge(other)
                .await
                .map_err(|e| session_error(&url, what, e.kind))
        })?
    }
}

/// A serialized session (the crate's `Session`, whose fields `rmp_serde` writes in order)
/// read for its changes alone.
#[derive(serde::Deserialize)]
struct ExportedChanges(
    IgnoredAny,
    IgnoredAny,
    IgnoredAny,
    IgnoredAny,
    IgnoredAny,
    IgnoredAny,
    IgnoredAny,
    IgnoredAny,
    ChangeSet,
    IgnoredAny,
);

/// Checks each chunk the exported `changes` write against the array it belongs to in
/// `session` with those changes: an array of the session or one they create or resize,
/// the chunk's indices as many as its dimensions and inside its grid. Any other is
/// [`Error::InvalidArg`] naming the node and the chunk (`url`, `what` in messages).
async fn check_chunk_references(
    url: &str,
    what: &str,
    changes: &[u8],
    session: &Session,
) -> Result<()> {
    let theirs = rmp_serde::from_slice::<ExportedChanges>(changes)
        .map_err(|_| {
            Error::InvalidArg(format!(
                "{url}: {what}: the {} bytes are not the changes a writable Icechunk store \
                 exported",
                changes.len()
            ))
        })?
        .8;
    let listing = session
        .list_nodes(&IcechunkPath::root())
        .await
        .map_err(|e| session_error(url, what, e.kind))?;
    let mut nodes: HashMap<NodeId, (String, Option<ArrayShape>)> = HashMap::new();
    for node in listing {
        let node = node.map_err(|e| session_error(url, what, e.kind))?;
        let shape = match node.node_data {
            NodeData::Array { shape, .. } => Some(shape),
            NodeData::Group => None,
        };
        nodes.insert(node.id, (node.path.to_string(), shape));
    }
    for (path, id, data) in theirs.new_arrays() {
        nodes.insert(id.clone(), (path.to_string(), Some(data.shape.clone())));
    }
    for (id, chunks) in theirs.changed_chunks() {
        let Some((path, shape)) = nodes.get(id) else {
            return Err(Error::InvalidArg(format!(
                "{url}: {what}: they write chunks of node {id}, which is no array or group \
                 of this store (removed here, or never in the repository)"
            )));
        };
        let shape = theirs
            .get_updated_array(id)
            .map(|data| &data.shape)
            .or(shape.as_ref())
            .ok_or_else(|| {
                Error::InvalidArg(format!(
                    "{url}: {what}: they write chunks of the group {path:?}"
                ))
            })?;
        for chunk in chunks {
            if chunk.0.len() != shape.len() {
                return Err(Error::InvalidArg(format!(
                    "{url}: {what}: they write chunk {:?} of {path:?}, which has {} \
                     dimensions",
                    chunk.0,
                    shape.len()
                )));
            }
            if !shape.valid_chunk_coord(chunk) {
                return Err(Error::InvalidArg(format!(
                    "{url}: {what}: they write chunk {:?} of {path:?}, outside its grid of \
                     {:?} chunks",
                    chunk.0,
                    shape.num_chunks().collect::<Vec<_>>()
                )));
            }
        }
    }
    Ok(())
}

/// Whether a read failed only because the key holds nothing: it is missing (or the node
/// it would belong to is), or it is not a key of the Zarr v3 layout Icechunk holds (the documents of other formats that opening a
/// node looks for), which therefore cannot exist.
fn absent(kind: &StoreErrorKind) -> bool {
    matches!(
        kind,
        StoreErrorKind::NotFound(_)
            | StoreErrorKind::InvalidKey { .. }
            | StoreErrorKind::SessionError(SessionErrorKind::NodeNotFound { .. })
    )
}

/// The library's error for a failed store call of the crate.
fn store_error(url: &str, what: &str, kind: StoreErrorKind) -> Error {
    let shown = scrubbed(&kind.to_string());
    match kind {
        StoreErrorKind::SessionError(kind) => session_error(url, what, kind),
        StoreErrorKind::RepositoryError(kind) => repo_error(url, what, kind),
        StoreErrorKind::RefError(kind) => ref_error(url, what, kind),
        StoreErrorKind::ReadOnly => Error::ReadOnly(format!("{url}: {what}: {shown}")),
        StoreErrorKind::Unimplemented(_) => Error::Unsupported(format!(
            "{url}: {what}: {shown} (an Icechunk repository holds Zarr v3 only)"
        )),
        StoreErrorKind::InvalidKey { .. }
        | StoreErrorKind::PathError(_)
        | StoreErrorKind::BadKeyPrefix { .. } => {
            Error::InvalidKey(format!("{url}: {what}: {shown}"))
        }
        StoreErrorKind::InvalidIndex { .. } => {
            Error::OutOfBounds(format!("{url}: {what}: {shown}"))
        }
        StoreErrorKind::BadMetadata(_) | StoreErrorKind::BadChunkGridMetadata(_) => {
            Error::Metadata(format!("{url}: {what}: {shown}"))
        }
        StoreErrorKind::NotFound(_) => Error::NotFound(format!("{url}: {what}: {shown}")),
        _ => Error::Io(format!("{url}: {what}: {shown}")),
    }
}

/// The library's error for a failed session call of the crate.
fn session_error(url: &str, what: &str, kind: SessionErrorKind) -> Error {
    let shown = scrubbed(&kind.to_string());
    match kind {
        SessionErrorKind::RepositoryError(kind) => repo_error(url, what, kind),
        SessionErrorKind::FormatError(kind) => format_error(url, what, kind),
        SessionErrorKind::RefError(kind) => ref_error(url, what, kind),
        SessionErrorKind::Conflict { .. } => Error::Conflict(format!(
            "{url}: {what}: another writer committed on the branch since this session \
             started ({shown}); rebase, then commit again"
        )),
        SessionErrorKind::RebaseFailed { ref conflicts, .. } => Error::Conflict(format!(
            "{url}: {what}: the changes overlap those committed meanwhile: {conflicts:?}"
        )),
        SessionErrorKind::SessionMerge(_) => Error::Conflict(format!(
            "{url}: {what}: the writers changed the same array or group differently \
             ({shown}); create arrays and groups in a commit before the writers start"
        )),
        SessionErrorKind::ReadOnlySession => Error::ReadOnly(format!("{url}: {what}: {shown}")),
        SessionErrorKind::NoChangesToCommit => Error::InvalidArg(format!("{url}: {what}: {shown}")),
        SessionErrorKind::SnapshotNotFound { .. } | SessionErrorKind::NodeNotFound { .. } => {
            Error::NotFound(format!("{url}: {what}: {shown}"))
        }
        SessionErrorKind::AlreadyExists { .. } => Error::Exists(format!("{url}: {what}: {shown}")),
        SessionErrorKind::InvalidIndex { .. } => {
            Error::OutOfBounds(format!("{url}: {what}: {shown}"))
        }
        _ => Error::Io(format!("{url}: {what}: {shown}")),
    }
}

/// The library's error for a failed repository call of the crate.
fn repo_error(url: &str, what: &str, kind: RepositoryErrorKind) -> Error {
    let shown = scrubbed(&kind.to_string());
    match kind {
        RepositoryErrorKind::FormatError(kind) => format_error(url, what, kind),
        RepositoryErrorKind::Ref(kind) => ref_error(url, what, kind),
        RepositoryErrorKind::Conflict { .. } => Error::Conflict(format!(
            "{url}: {what}: another writer moved the branch ({shown})"
        )),
        RepositoryErrorKind::SnapshotNotFound { .. }
        | RepositoryErrorKind::RepositoryDoesntExist => {
            Error::NotFound(format!("{url}: {what}: {shown}"))
        }
        RepositoryErrorKind::InvalidSnapshotId(_) => {
            Error::InvalidArg(format!("{url}: {what}: {shown}"))
        }
        RepositoryErrorKind::ParentDirectoryNotClean => Error::Exists(format!(
            "{url}: {what}: the directory holds other files (a repository is created only \
             in a missing or empty directory)"
        )),
        RepositoryErrorKind::ReadonlyStorage(_) | RepositoryErrorKind::ReadonlyRepository(_) => {
            Error::ReadOnly(format!("{url}: {what}: {shown}"))
        }
        _ => Error::Io(format!("{url}: {what}: {shown}")),
    }
}

/// The library's error for a failed branch or tag call of the crate.
fn ref_error(url: &str, what: &str, kind: RefErrorKind) -> Error {
    let shown = scrubbed(&kind.to_string());
    match kind {
        RefErrorKind::RefNotFound(_) => Error::NotFound(format!("{url}: {what}: {shown}")),
        RefErrorKind::TagAlreadyExists(_) => Error::Exists(format!("{url}: {what}: {shown}")),
        RefErrorKind::InvalidRefName(_) | RefErrorKind::InvalidRefType(_) => {
            Error::InvalidArg(format!("{url}: {what}: {shown}"))
        }
        _ => Error::Io(format!("{url}: {what}: {shown}")),
    }
}

/// The library's error for a format-level failure of the crate.
fn format_error(url: &str, what: &str, kind: IcechunkFormatErrorKind) -> Error {
    let shown = scrubbed(&kind.to_string());
    match kind {
        IcechunkFormatErrorKind::SnapshotIdNotFound { .. }
        | IcechunkFormatErrorKind::BranchNotFound { .. }
        | IcechunkFormatErrorKind::TagNotFound { .. }
        | IcechunkFormatErrorKind::NodeNotFound { .. } => {
            Error::NotFound(format!("{url}: {what}: {shown}"))
        }
        IcechunkFormatErrorKind::BranchAlreadyExists { .. }
        | IcechunkFormatErrorKind::TagAlreadyExists { .. }
        | IcechunkFormatErrorKind::TagPreviouslyDeleted { .. } => {
            Error::Exists(format!("{url}: {what}: {shown}"))
        }
        _ => Error::Io(format!("{url}: {what}: {shown}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exported_bytes_lose_every_credential_even_nested_ones() {
        let mut bytes = b"id testing, key testing-secret, token t, again testing-secret".to_vec();
        let keys = ["testing", "testing-secret", ""].map(String::from);
        mask(&mut bytes, &keys);
        assert_eq!(
            bytes,
            b"id *******, key **************, token t, again **************".to_vec()
        );
    }

    /// A one-dimensional array of 1000 bytes in one chunk, stored as a file of its own
    /// (Icechunk keeps chunks under 512 bytes inside its manifests).
    const ARRAY: &[u8] = br#"{"zarr_format":3,"node_type":"array","shape":[1000],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1000]}},"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,"codecs":[{"name":"bytes"}]}"#;

    #[test]
    fn a_commit_syncs_each_file_before_the_branch_file_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("icechunk://{}", dir.path().join("repo").display());
        let store = IcechunkStore::open(&url, Mode::Append, None).unwrap();
        store
            .set("zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#)
            .unwrap();
        store.set("a/zarr.json", ARRAY).unwrap();
        let chunk: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        store.set("a/c/0", &chunk).unwrap();
        let disk = store.disk.clone().unwrap();
        let before = disk.journal().len();
        let id = store.commit("one").unwrap();
        let journal = disk.journal();
        let journal = &journal[before - 1..];
        let at = |entry: &str| {
            journal
                .iter()
                .position(|e| e == entry)
                .unwrap_or_else(|| panic!("no {entry:?} in {journal:#?}"))
        };
        let written: Vec<&str> = journal
            .iter()
            .filter_map(|e| e.strip_prefix("write "))
            .collect();
        // The chunk was written before the commit, which synced it (and the directory
        // `chunks/`, which it created, and the root) before writing any other file.
        let chunk = journal[0].strip_prefix("write chunks/").unwrap();
        let first_other = at(&format!("write {}", written[1]));
        assert_eq!(
            journal[1..first_other],
            [
                format!("sync chunks/{chunk}"),
                "sync chunks/".to_string(),
                "sync ./".to_string()
            ]
        );
        // Every file of the commit was synced before the branch file was written last,
        // and the branch file and the root's entries after it.
        let branch = at("write repo");
        assert_eq!(written.last(), Some(&"repo"));
        for kind in ["manifests/", "transactions/", "snapshots/"] {
            assert!(written.iter().any(|w| w.starts_with(kind)), "{journal:#?}");
        }
        for file in &written[..written.len() - 1] {
            assert!(at(&format!("sync {file}")) < branch, "{file}: {journal:#?}");
        }
        assert!(at(&format!("sync snapshots/{id}")) < branch);
        assert_eq!(journal[branch + 1..], ["sync repo", "sync ./"]);
    }

    #[test]
    fn query_values_are_percent_decoded_and_shown_unless_unknown() {
        for (query, at) in [
            ("?tag=a%20b", At::Tag("a b".into())),
            ("?branch=x%26y%23z%3D1%25", At::Branch("x&y#z=1%".into())),
            ("?branch=caf%C3%A9+1", At::Branch("café+1".into())),
            ("?tag=%E2%82%AC", At::Tag("€".into())),
        ] {
            assert_eq!(parse_url(&format!("icechunk:///r{query}")).unwrap().1, at);
        }
        for bad in ["?tag=%zz", "?tag=a%2", "?tag=%E9", "?tag=%"] {
            match parse_url(&format!("icechunk:///r{bad}")) {
                Err(Error::InvalidArg(m)) => assert!(m.contains("percent-encoded"), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        // Ref names and snapshot ids are shown; any other value is masked.
        assert_eq!(
            shown_url("icechunk:///r?tag=a%20b&secret=s3cr3t&branch"),
            "icechunk:///r?tag=a%20b&secret=***&***"
        );
        assert_eq!(
            shown_url("error at ICECHUNK+S3://b/p?branch=dev%20x: gone"),
            "error at ICECHUNK+S3://b/p?branch=dev%20x: gone"
        );
        // In URLs of other schemes every value stays masked.
        assert_eq!(shown_url("s3://b/k?tag=v1"), "s3://b/k?tag=***");
        match parse_url("icechunk:///r?tag=v1&token=s3cr3t") {
            Err(Error::InvalidArg(m)) => {
                assert!(m.contains("tag=v1") && !m.contains("s3cr3t"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        for relative in [
            "icechunk:relpath",
            "ICECHUNK:rel/path?tag=v1",
            "icechunk://data/r",
        ] {
            match parse_url(relative) {
                Err(Error::InvalidArg(m)) => assert!(m.contains("must be absolute"), "{m}"),
                other => panic!("{relative}: {other:?}"),
            }
        }
    }

    #[test]
    fn ref_names_no_url_reaches_are_named() {
        assert_eq!(unreachable_ref_name(""), Some("it is empty"));
        assert!(unreachable_ref_name("a\nb").is_some());
        assert!(unreachable_ref_name("\u{7f}").is_some());
        for fine in ["a b", "x&y#z=1%", "v1.0", "café", "a/b"] {
            assert_eq!(unreachable_ref_name(fine), None, "{fine}");
        }
    }

    #[test]
    fn urls_name_a_path_and_a_place_in_the_history() {
        assert_eq!(
            parse_url("icechunk:///data/repo").unwrap(),
            (
                Place::Disk(PathBuf::from("/data/repo")),
                At::Branch("main".into())
            )
        );
        assert_eq!(
            parse_url("icechunk+s3://bucket/runs/a/?branch=dev").unwrap(),
            (
                Place::S3 {
                    bucket: "bucket".into(),
                    prefix: "runs/a".into()
                },
                At::Branch("dev".into())
            )
        );
        assert_eq!(
            parse_url("icechunk:///r?tag=v1").unwrap().1,
            At::Tag("v1".into())
        );
        assert_eq!(
            parse_url("icechunk://localhost/r?snapshot=ABC").unwrap(),
            (Place::Disk(PathBuf::from("/r")), At::Snapshot("ABC".into()))
        );
        for bad in [
            "icechunk://",
            "icechunk+s3:///prefix",
            "icechunk:///r?tag=a&branch=b",
            "icechunk:///r?colour=red",
            "icechunk:///r?branch=",
            // A host or a relative path would name a directory below the working one.
            "icechunk://data/repo",
            "icechunk://localhost",
            "icechunk+s3://key:secret@bucket/p",
        ] {
            match parse_url(bad) {
                Err(Error::InvalidArg(m)) => assert!(!m.contains("secret"), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
