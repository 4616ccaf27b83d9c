//! Object stores: S3 (and S3-compatible servers), Google Cloud Storage, Azure Blob Storage
//! and plain HTTP(S) servers, through the `object_store` crate.
//!
//! The [`Store`] methods are synchronous: each runs its requests on the process's one
//! asynchronous runtime ([`runtime`]) and waits for them. Every request has a timeout and
//! is retried with back-off on transient failures (5xx, throttling, dropped connections);
//! messages name the URL and key, never a secret.

mod config;
mod connector;
mod listing;
mod reads;
mod redact;
mod runtime;

pub use config::{parse_ini, Provider, Settings};

use super::{
    validate_dir_prefix, validate_key, validate_prefix, DirListing, Durability, Expect, Fetch,
    Fetched, Ranged, Spares, Store, Tail, Version,
};
use crate::error::{Error, Result};
use futures_util::StreamExt;
use object_store::list::PaginatedListStore;
use object_store::path::Path;
use object_store::{
    ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig,
    UpdateVersion, WriteMultipart,
};
use reads::{Part, Window};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

pub(crate) use redact::mask_urls;
#[cfg(feature = "icechunk")]
pub(crate) use runtime::{block_on, install_crypto};

/// `url` as messages may quote it: without user information and query values.
pub(crate) fn shown_url(url: &str) -> String {
    redact::redact(url, &[])
}

/// A message of another library about object storage as the library's messages may quote
/// it: error bodies cut to their code and message, URLs without user information and query
/// values, signing parameters masked (see `redact`).
#[cfg(feature = "icechunk")]
pub(crate) fn scrubbed(message: &str) -> String {
    redact::redact(message, &[])
}

/// The refusal of a web server to list, when that is what `err` comes from.
fn no_listing(err: &object_store::Error) -> Option<&connector::NoListing> {
    let first: &(dyn std::error::Error + 'static) = err;
    std::iter::successors(Some(first), |e| e.source()).find_map(|e| e.downcast_ref())
}

/// A store on an object-storage service or web server.
pub struct CloudStore {
    /// The store's URL as given (without user information), for messages.
    url: String,
    /// The key prefix inside the bucket or container (`""` or ending in `/`).
    root: String,
    writable: bool,
    settings: Arc<Settings>,
    /// The client and the process that built it (a forked child builds its own).
    client: Mutex<Option<(u32, Client)>>,
}

/// A client and the limit on its requests in flight.
#[derive(Clone)]
struct Client {
    store: Arc<dyn ObjectStore>,
    /// The page-by-page listing of S3, GCS and Azure (`None`: a web server).
    lister: Option<Arc<dyn PaginatedListStore>>,
    limit: Arc<Semaphore>,
}

impl std::fmt::Debug for CloudStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudStore")
            .field("url", &self.url)
            .field("writable", &self.writable)
            .finish_non_exhaustive()
    }
}

impl CloudStore {
    /// Opens the store at `url` (`s3://`, `gs://`, `az://`, `abfs(s)://`, `http(s)://`):
    /// `writable` is refused for HTTP servers. Builds the client without any request.
    pub fn open(url: &str, writable: bool, settings: Settings) -> Result<Self> {
        if writable && settings.provider == Provider::Http {
            return Err(Error::ReadOnly(format!(
                "{url} is a web server: it can only be opened read-only"
            )));
        }
        let parsed = ::url::Url::parse(url).map_err(|e| {
            let shown = redact::redact(url, &settings.secrets);
            Error::InvalidArg(format!("malformed URL {shown:?}: {e}"))
        })?;
        let root = match settings.provider {
            Provider::Http => String::new(),
            _ => {
                let path = parsed.path().trim_matches('/');
                let decoded = percent_decode(path);
                let root = if decoded.is_empty() {
                    String::new()
                } else {
                    format!("{}/", validate_key(&decoded)?)
                };
                root
            }
        };
        let mut shown = parsed.clone();
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        shown.set_query(None);
        let store = CloudStore {
            url: shown.as_str().trim_end_matches('/').to_string(),
            root,
            writable,
            settings: Arc::new(settings),
            client: Mutex::new(None),
        };
        store.client()?;
        Ok(store)
    }

    /// The client of this process, built on first use and again after `fork()`.
    fn client(&self) -> Result<Client> {
        let pid = std::process::id();
        let mut slot = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((owner, client)) = slot.as_ref() {
            if *owner == pid {
                return Ok(client.clone());
            }
        }
        if let Some((_, inherited)) = slot.take() {
            // Its connections belong to the parent's runtime, which is gone in this child.
            std::mem::forget(inherited);
        }
        let (store, lister) = build(&self.settings).map_err(|e| self.os_error("", e))?;
        let client = Client {
            store,
            lister,
            limit: Arc::new(Semaphore::new(self.settings.max_requests)),
        };
        *slot = Some((pid, client.clone()));
        Ok(client)
    }

    /// The object path of `key` (validated).
    fn path(&self, key: &str) -> Result<(String, Path)> {
        let key = validate_key(key)?;
        let path = Path::parse(format!("{}{key}", self.root))
            .map_err(|e| Error::InvalidKey(format!("key {key:?}: {e}")))?;
        Ok((key.into_owned(), path))
    }

    /// The object path of a listing prefix (`""` or ending in `/`), `None` for the root.
    fn dir_path(&self, dir: &str) -> Result<Option<Path>> {
        let full = format!("{}{dir}", self.root);
        let full = full.trim_end_matches('/');
        if full.is_empty() {
            return Ok(None);
        }
        Path::parse(full)
            .map(Some)
            .map_err(|e| Error::InvalidKey(format!("prefix {dir:?}: {e}")))
    }

    /// Where `key` is, for messages.
    fn place(&self, key: &str) -> String {
        if key.is_empty() {
            self.url.clone()
        } else {
            format!("{}/{key}", self.url)
        }
    }

    /// Maps an `object_store` error about `key` to the library's error kinds.
    fn os_error(&self, key: &str, err: object_store::Error) -> Error {
        let place = self.place(key);
        let text = self.settings.redact(&err.to_string());
        if let Some(status) = redirect_status(&text) {
            return Error::Io(format!(
                "{place}: the server redirected the request elsewhere ({status}); a redirect \
                 to another scheme, host or port is not followed"
            ));
        }
        if let Some(no) = no_listing(&err) {
            return Error::Unsupported(format!(
                "{place}: {no}; a hierarchy with consolidated metadata opens without listings"
            ));
        }
        use object_store::Error as E;
        match err {
            E::NotFound { .. } if missing_bucket(&text) => Error::NotFound(format!(
                "{place}: the bucket or container does not exist ({text})"
            )),
            E::NotFound { .. } => Error::NotFound(format!("{place}: not found")),
            E::AlreadyExists { .. } | E::Precondition { .. } => {
                Error::Exists(format!("{place}: {text}"))
            }
            E::NotSupported { .. } | E::NotImplemented { .. } => {
                Error::Unsupported(format!("{place}: {text}"))
            }
            E::InvalidPath { .. } => Error::InvalidKey(format!("{place}: {text}")),
            E::UnknownConfigurationKey { .. } => Error::InvalidArg(format!("{place}: {text}")),
            _ => Error::Io(format!("{place}: {text}")),
        }
    }

    /// An internal error of the request for `key` (a panic), named with the key.
    fn with_key(&self, key: &str, error: Error) -> Error {
        match error {
            Error::Internal(m) => Error::Internal(format!("{}: {m}", self.place(key))),
            other => other,
        }
    }

    /// Runs one operation (`make` builds its future from the client) within the request
    /// limit and the time allowed, and waits for it.
    fn run<T, F, Fut>(&self, key: &str, make: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Arc<dyn ObjectStore>) -> Fut,
        Fut: Future<Output = std::result::Result<T, Failure>> + Send + 'static,
    {
        let client = self.client()?;
        let future = make(client.store.clone());
        let limit = client.limit;
        // Every request is bounded by the client's timeout; this also bounds the retries.
        let deadline = self.settings.retry_timeout + self.settings.timeout * 2;
        let outcome = runtime::block_on(async move {
            let _permit = limit.acquire_owned().await;
            tokio::time::timeout(deadline, future).await
        })
        .map_err(|e| self.with_key(key, e))?;
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(Failure::Store(e))) => Err(self.os_error(key, e)),
            Ok(Err(Failure::Lib(e))) => Err(e),
            Err(_) => Err(Error::Io(format!(
                "{}: no answer within {} s",
                self.place(key),
                deadline.as_secs()
            ))),
        }
    }

    /// Runs many operations at once (each `(key, future)`), each within the request limit
    /// and the time allowed, and waits for all: their outcomes in order.
    fn run_many<T: Send + 'static>(&self, jobs: Vec<(String, Job<T>)>) -> Vec<Result<T>> {
        let mut outcomes: Vec<Option<Result<T>>> = jobs.iter().map(|_| None).collect();
        self.run_each(jobs, |n, outcome| outcomes[n] = Some(outcome));
        outcomes
            .into_iter()
            .map(|outcome| outcome.expect("every operation answers"))
            .collect()
    }

    /// Runs many operations at once (each `(key, future)`), each within the request limit
    /// and the time allowed, and hands each outcome (with its position) to `each` as it
    /// comes.
    fn run_each<T: Send + 'static>(
        &self,
        jobs: Vec<(String, Job<T>)>,
        mut each: impl FnMut(usize, Result<T>),
    ) {
        let client = match self.client() {
            Ok(client) => client,
            Err(e) => {
                let message = e.to_string();
                for n in 0..jobs.len() {
                    each(n, Err(Error::Io(message.clone())));
                }
                return;
            }
        };
        let deadline = self.settings.retry_timeout + self.settings.timeout * 2;
        let (keys, futures): (Vec<String>, Vec<Job<T>>) = jobs.into_iter().unzip();
        let limit = client.limit;
        let futures = futures.into_iter().map(|future| {
            let limit = limit.clone();
            async move {
                let _permit = limit.acquire_owned().await;
                tokio::time::timeout(deadline, future).await
            }
        });
        let ran = runtime::each_as_done(futures.collect(), |n, outcome| {
            let key = &keys[n];
            each(
                n,
                match outcome {
                    Ok(Ok(Ok(value))) => Ok(value),
                    Ok(Ok(Err(Failure::Store(e)))) => Err(self.os_error(key, e)),
                    Ok(Ok(Err(Failure::Lib(e)))) => Err(e),
                    Ok(Err(_)) => Err(Error::Io(format!(
                        "{}: no answer within {} s",
                        self.place(key),
                        deadline.as_secs()
                    ))),
                    Err(e) => Err(self.with_key(key, e)),
                },
            )
        });
        if let Err(e) = ran {
            // The runtime could not start: nothing ran.
            let message = e.to_string();
            for n in 0..keys.len() {
                each(n, Err(Error::Internal(message.clone())));
            }
        }
    }

    /// Reads the value at `key` into `buf` (when it holds at most `max_len` bytes); returns
    /// its version as the server tells it (`None`: the key does not exist).
    fn fetch(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<Option<UpdateVersion>> {
        let (key, path) = self.path(key)?;
        let taken = std::mem::take(buf);
        let label = self.place(&key);
        let (found, taken) = self.run(&key, move |store| {
            reads::whole(store, path, label, max_len, taken, Spares::default())
        })?;
        *buf = taken;
        Ok(found)
    }

    /// How this store uploads values.
    fn uploads(&self) -> Uploads {
        Uploads {
            threshold: self.settings.multipart_threshold,
            part: self.settings.part_size,
            in_flight: self.settings.max_requests.clamp(1, 8),
        }
    }

    /// One read of a batch by the single-read methods.
    fn fetch_one(&self, fetch: &Fetch) -> Result<Fetched> {
        super::fetch_one_by_one(self, std::slice::from_ref(fetch))
            .pop()
            .expect("one answer")
    }

    /// The bytes that `want` names of the value at `key` and its size, from a GET of the
    /// whole value that keeps only those bytes ([`reads::window`]).
    fn window(&self, key: &str, want: Window) -> Result<Option<(u64, Vec<u8>)>> {
        let (key, path) = self.path(key)?;
        let label = self.place(&key);
        self.run(&key, move |store| reads::window(store, path, label, want))
    }

    /// Everything below directory `dir` (`""` or ending in `/`; `what` names it in
    /// messages), grouped by `/` when `delimiter`: full object paths and prefixes (ending
    /// in `/`). S3, GCS and Azure are listed page by page within the bounds of
    /// [`listing`]; a web server's listing is one answer, bounded by `max_list_keys`.
    fn list_below(&self, dir: &str, what: &str, delimiter: bool) -> Result<listing::Listed> {
        let dir_path = self.dir_path(dir)?;
        let max_keys = self.settings.max_list_keys;
        let label = self.place(what);
        let lister = self.client()?.lister;
        self.run(what, move |store| async move {
            if let Some(lister) = lister {
                let prefix = dir_path.map(|p| format!("{p}/"));
                return listing::list(lister, prefix, delimiter, max_keys, label).await;
            }
            let mut listed = listing::Listed::default();
            if delimiter {
                let found = store.list_with_delimiter(dir_path.as_ref()).await?;
                listed.objects = found
                    .objects
                    .iter()
                    .map(|m| m.location.to_string())
                    .collect();
                listed.prefixes = found
                    .common_prefixes
                    .iter()
                    .map(|p| format!("{p}/"))
                    .collect();
            } else {
                let mut stream = store.list(dir_path.as_ref());
                while let Some(meta) = stream.next().await {
                    listed.objects.push(meta?.location.to_string());
                    if listed.objects.len() > max_keys {
                        break;
                    }
                }
            }
            if listed.objects.len() + listed.prefixes.len() > max_keys {
                return Err(Failure::Lib(Error::Io(format!(
                    "{label}: the listing holds more than {max_keys} keys (option max_list_keys)"
                ))));
            }
            Ok(listed)
        })
    }

    /// A range of the value at `key` (`len` > 0), from the object of `version` when given.
    fn range(&self, key: &str, offset: u64, len: u64, version: Option<&Version>) -> Result<Part> {
        let (key, path) = self.path(key)?;
        let label = self.place(&key);
        let e_tag = version.map(|v| e_tag_of(v).to_string());
        let ranged = self.run(&key, move |store| {
            reads::range(store, path, label, offset, len, e_tag, Spares::default())
        });
        match ranged {
            Err(e) if range_refused(&e) => {
                // The server answered with the whole value (200): the range is cut from
                // it as it arrives (such a server gives no versions to check either).
                Ok(match self.window(&key, Window::Range(offset, len))? {
                    Some((_, bytes)) => Part::Bytes(bytes),
                    None => Part::Missing,
                })
            }
            other => other,
        }
    }
}

/// How values are uploaded: one PUT below `threshold` bytes, else a multipart upload of
/// parts of `part` bytes, `in_flight` at a time.
#[derive(Debug, Clone, Copy)]
struct Uploads {
    threshold: usize,
    part: usize,
    in_flight: usize,
}

/// Stores `payload` at `path`: one PUT with its Content-Length (readers see the old or the
/// new object), or above the threshold a multipart upload whose parts go up concurrently
/// and which is aborted (its parts removed) when one fails.
async fn put_value(
    store: Arc<dyn ObjectStore>,
    path: Path,
    payload: bytes::Bytes,
    upload: Uploads,
) -> std::result::Result<(), Failure> {
    if payload.len() < upload.threshold.max(1) {
        store.put(&path, PutPayload::from(payload)).await?;
        return Ok(());
    }
    let multipart = store.put_multipart(&path).await?;
    let mut writer = WriteMultipart::new_with_chunk_size(multipart, upload.part);
    let mut rest = payload;
    while !rest.is_empty() {
        if let Err(e) = writer.wait_for_capacity(upload.in_flight).await {
            let _ = writer.abort().await;
            return Err(Failure::Store(e));
        }
        let take = rest.len().min(upload.part);
        writer.put(rest.split_to(take));
    }
    match writer.finish().await {
        Ok(_) => Ok(()),
        Err(e) => Err(Failure::Store(e)),
    }
}

/// What one request of a batch answered.
enum Answer {
    Whole((Option<UpdateVersion>, Vec<u8>)),
    Tail(Option<Tail>),
    Part(Part),
}

/// One operation of a batch, ready to run on the runtime.
type Job<T> = std::pin::Pin<Box<dyn Future<Output = std::result::Result<T, Failure>> + Send>>;

/// Why an operation failed: an `object_store` error (mapped with the store's URL), or one
/// of the library's own.
enum Failure {
    Store(object_store::Error),
    Lib(Error),
}

impl From<object_store::Error> for Failure {
    fn from(e: object_store::Error) -> Self {
        Failure::Store(e)
    }
}

/// The version of an object: its ETag and version id (GCS's generation), `None` when the
/// server gives neither.
fn version_of(e_tag: Option<String>, id: Option<String>) -> Option<Version> {
    if e_tag.is_none() && id.is_none() {
        return None;
    }
    Some(Version(format!(
        "{}\n{}",
        e_tag.unwrap_or_default(),
        id.unwrap_or_default()
    )))
}

/// The ETag of a version made by [`version_of`].
fn e_tag_of(version: &Version) -> &str {
    version
        .0
        .split_once('\n')
        .map_or(&version.0, |(e_tag, _)| e_tag)
}

/// `Ok(None)` for a missing key, the error otherwise (a missing bucket is an error).
fn missing_or<T>(err: object_store::Error) -> std::result::Result<Option<T>, Failure> {
    match err {
        object_store::Error::NotFound { source, path } => {
            let err = object_store::Error::NotFound { source, path };
            if missing_bucket(&err.to_string()) {
                Err(Failure::Store(err))
            } else {
                Ok(None)
            }
        }
        e => Err(Failure::Store(e)),
    }
}

/// Whether `err` says that the server answered a range request with the whole value
/// (status 200, as servers without range support and nginx for several ranges do), as
/// `object_store` words it for web servers and for S3, GCS and Azure.
fn range_refused(err: &Error) -> bool {
    match err {
        Error::Unsupported(m) => m.contains("Range request not supported"),
        Error::Io(m) => m.contains("Received non-partial response when range requested"),
        _ => false,
    }
}

/// The status of a redirect answer that was not followed ("307 Temporary Redirect"), as
/// `object_store` words it.
fn redirect_status(text: &str) -> Option<&str> {
    let marker = "status code: ";
    let status = &text[text.find(marker)? + marker.len()..];
    let status = status.split(": ").next().unwrap_or(status);
    (status.starts_with('3') && !status.starts_with("304")).then_some(status.trim())
}

/// Whether a not-found answer is about the bucket or container rather than the key.
fn missing_bucket(text: &str) -> bool {
    [
        "NoSuchBucket",
        "ContainerNotFound",
        "The specified bucket does not exist",
    ]
    .iter()
    .any(|s| text.contains(s))
}

fn percent_decode(text: &str) -> String {
    ::url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// The store and (but for web servers) page-by-page lister of a client.
type Built = (Arc<dyn ObjectStore>, Option<Arc<dyn PaginatedListStore>>);

/// Builds the `object_store` client that `settings` describe.
fn build(settings: &Settings) -> object_store::Result<Built> {
    runtime::install_crypto();
    let options = ClientOptions::new()
        .with_timeout(settings.timeout)
        .with_connect_timeout(settings.connect_timeout)
        .with_allow_http(settings.allow_http);
    let connector = || connector::Connector {
        timeout: settings.timeout,
        connect_timeout: settings.connect_timeout,
    };
    let retry = RetryConfig {
        max_retries: settings.max_retries,
        retry_timeout: settings.retry_timeout,
        ..RetryConfig::default()
    };
    let url = settings.base_url.as_str();
    // The three providers' builders share no trait: one shape, written once.
    macro_rules! configured {
        ($builder:expr) => {{
            let mut builder = $builder.with_url(url);
            for (key, value) in &settings.config {
                builder = builder.with_config(key.parse()?, value);
            }
            let store = Arc::new(
                builder
                    .with_client_options(options)
                    .with_http_connector(connector())
                    .with_retry(retry)
                    .build()?,
            );
            let lister: Arc<dyn PaginatedListStore> = store.clone();
            (store as Arc<dyn ObjectStore>, Some(lister))
        }};
    }
    Ok(match settings.provider {
        Provider::S3 => configured!(object_store::aws::AmazonS3Builder::new()),
        Provider::Gcs => configured!(object_store::gcp::GoogleCloudStorageBuilder::new()),
        Provider::Azure => configured!(object_store::azure::MicrosoftAzureBuilder::new()),
        Provider::Http => (
            Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(url)
                    .with_client_options(options)
                    .with_http_connector(connector())
                    .with_retry(retry)
                    .build()?,
            ),
            None,
        ),
    })
}

impl Store for CloudStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        Ok(self.fetch(key, &mut buf, u64::MAX)?.map(|_| buf))
    }

    /// The number of requests in flight that the options allow (`max_requests`).
    fn concurrency(&self) -> usize {
        self.settings.max_requests
    }

    /// The option `zarr_format`.
    fn zarr_format_hint(&self) -> Option<u8> {
        self.settings.zarr_format
    }

    fn fetch_many(&self, batch: &[Fetch], spares: &Spares) -> Vec<Result<Fetched>> {
        let mut results: Vec<Option<Result<Fetched>>> = batch.iter().map(|_| None).collect();
        self.fetch_each(batch, spares, &mut |i, result| results[i] = Some(result));
        results
            .into_iter()
            .map(|result| result.expect("every read answers"))
            .collect()
    }

    /// Every read of the batch in flight at once (up to `max_requests`); ranges of one
    /// object that lie close together (within a mebibyte) go as one request. Reads the
    /// server answers in a way only the single-read methods handle (a whole value for a
    /// range; Azure tails) are done by those when the rest of their read has answered.
    fn fetch_each(
        &self,
        batch: &[Fetch],
        spares: &Spares,
        each: &mut dyn FnMut(usize, Result<Fetched>),
    ) {
        /// Where each request's answer goes: the batch entry, and for a merged range
        /// request the first byte it read and the ranges it holds.
        enum Slot {
            Whole(usize),
            Tail(usize),
            Ranges(usize, u64, Vec<usize>),
        }
        impl Slot {
            /// The batch entry the answer goes to.
            fn read(&self) -> usize {
                match self {
                    Slot::Whole(i) | Slot::Tail(i) | Slot::Ranges(i, ..) => *i,
                }
            }
        }
        let store = match self.client() {
            Ok(client) => client.store,
            Err(e) => {
                let message = e.to_string();
                for i in 0..batch.len() {
                    each(i, Err(Error::Io(message.clone())));
                }
                return;
            }
        };
        let mut jobs: Vec<(String, Job<Answer>)> = Vec::new();
        let mut slots = Vec::new();
        let mut results: Vec<Option<Result<Fetched>>> = batch.iter().map(|_| None).collect();
        for (i, fetch) in batch.iter().enumerate() {
            let key = match fetch {
                Fetch::Whole(key, _) | Fetch::Tail(key, _) | Fetch::Ranges(key, _, _) => key,
            };
            let (key, path) = match self.path(key) {
                Ok(found) => found,
                Err(e) => {
                    results[i] = Some(Err(e));
                    continue;
                }
            };
            let label = self.place(&key);
            match fetch {
                Fetch::Whole(_, max_len) => {
                    let job = reads::whole(
                        store.clone(),
                        path,
                        label,
                        *max_len,
                        Vec::new(),
                        spares.clone(),
                    );
                    jobs.push((key, Box::pin(async move { job.await.map(Answer::Whole) })));
                    slots.push(Slot::Whole(i));
                }
                Fetch::Tail(_, len) if *len > 0 && self.settings.provider != Provider::Azure => {
                    let job = reads::tail(store.clone(), path, label, *len);
                    jobs.push((key, Box::pin(async move { job.await.map(Answer::Tail) })));
                    slots.push(Slot::Tail(i));
                }
                Fetch::Tail(..) => {}
                Fetch::Ranges(_, ranges, version) => {
                    results[i] = Some(Ok(Fetched::Ranges(Ok(vec![
                        Default::default();
                        ranges.len()
                    ]))));
                    let e_tag = version.as_ref().map(|v| e_tag_of(v).to_string());
                    for (start, end, members) in
                        super::merge_ranges(ranges, super::MERGE_GAP, super::MERGED_MAX)
                    {
                        if start == end {
                            continue;
                        }
                        let job = reads::range(
                            store.clone(),
                            path.clone(),
                            label.clone(),
                            start,
                            end - start,
                            e_tag.clone(),
                            spares.clone(),
                        );
                        jobs.push((
                            key.clone(),
                            Box::pin(async move { job.await.map(Answer::Part) }),
                        ));
                        slots.push(Slot::Ranges(i, start, members));
                    }
                }
            }
        }
        // Requests still to answer for each read; a read is handed on when none are left.
        let mut waiting = vec![0usize; batch.len()];
        for slot in &slots {
            waiting[slot.read()] += 1;
        }
        // What the batch could not do is done one by one.
        let finish = |i: usize, result: Option<Result<Fetched>>| match result {
            Some(Err(e)) if range_refused(&e) => self.fetch_one(&batch[i]),
            Some(result) => result,
            None => self.fetch_one(&batch[i]),
        };
        // Reads without a request, done one by one once the requests have answered.
        let alone: Vec<usize> = (0..batch.len()).filter(|&i| waiting[i] == 0).collect();
        let mut slots: Vec<Option<Slot>> = slots.into_iter().map(Some).collect();
        self.run_each(jobs, |n, answer| {
            let slot = slots[n].take().expect("one answer per request");
            let i = slot.read();
            match (slot, answer) {
                (Slot::Whole(_), Ok(Answer::Whole((found, value)))) => {
                    results[i] = Some(Ok(Fetched::Whole(found.map(|_| value))));
                }
                (Slot::Tail(_), Ok(Answer::Tail(tail))) => {
                    results[i] = Some(Ok(Fetched::Tail(tail)));
                }
                (Slot::Ranges(_, start, members), Ok(Answer::Part(part))) => {
                    let Fetch::Ranges(_, ranges, _) = &batch[i] else {
                        unreachable!("a range slot belongs to a range fetch")
                    };
                    // Else it already failed or changed.
                    if let Some(Ok(Fetched::Ranges(Ok(parts)))) = &mut results[i] {
                        match part {
                            // The ranges one request read share its buffer, or are copied
                            // out of it when they fill less than half of it.
                            Part::Bytes(bytes) => {
                                let within: Vec<_> = members
                                    .iter()
                                    .map(|&m| {
                                        let at = (ranges[m].0 - start) as usize;
                                        at..at + ranges[m].1 as usize
                                    })
                                    .collect();
                                for (m, piece) in members
                                    .into_iter()
                                    .zip(super::pieces(bytes, &within, spares))
                                {
                                    parts[m] = piece;
                                }
                            }
                            Part::Missing => {
                                results[i] = Some(Ok(Fetched::Ranges(Err(Ranged::Missing))))
                            }
                            Part::Changed => {
                                results[i] = Some(Ok(Fetched::Ranges(Err(Ranged::Changed))))
                            }
                        }
                    }
                }
                (_, Err(e)) => {
                    if !matches!(results[i], Some(Err(_))) {
                        results[i] = Some(Err(e));
                    }
                }
                (_, Ok(_)) => {
                    results[i] = Some(Err(Error::Internal("an answer of another kind".into())));
                }
            }
            waiting[i] -= 1;
            if waiting[i] == 0 {
                each(i, finish(i, results[i].take()));
            }
        });
        for i in alone {
            each(i, finish(i, results[i].take()));
        }
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        Ok(self.fetch(key, buf, max_len)?.is_some())
    }

    /// The object's ETag (and version id, where the bucket keeps versions).
    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<Option<Version>> {
        let Some(found) = self.fetch(key, buf, max_len)? else {
            return Ok(None);
        };
        version_of(found.e_tag, found.version)
            .map(Some)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "{}: the server gives no ETag, so updates cannot be checked",
                    self.place(key)
                ))
            })
    }

    fn versioned(&self) -> bool {
        self.writable
    }

    /// A conditional PUT (`If-None-Match: *` to create, `If-Match: <ETag>` to replace; the
    /// generation on Google Cloud Storage), never a multipart upload.
    fn set_if(&self, key: &str, value: &[u8], expect: Expect<'_>) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        super::check_writable(self, "write")?;
        let (key, path) = self.path(key)?;
        let mode = match expect {
            Expect::Absent => PutMode::Create,
            Expect::Version(version) => {
                let field = |s: &str| (!s.is_empty()).then(|| s.to_string());
                PutMode::Update(UpdateVersion {
                    e_tag: field(e_tag_of(version)),
                    version: field(version.0.split_once('\n').map_or("", |(_, id)| id)),
                })
            }
        };
        let updating = matches!(mode, PutMode::Update(_));
        let payload = PutPayload::from(bytes::Bytes::copy_from_slice(value));
        self.run(&key, move |store| async move {
            let options = PutOptions {
                mode,
                ..PutOptions::default()
            };
            match store.put_opts(&path, payload, options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. })
                | Err(object_store::Error::Precondition { .. }) => Ok(false),
                // Erased since it was read: also a change.
                Err(object_store::Error::NotFound { .. }) if updating => Ok(false),
                Err(e) => Err(Failure::Store(e)),
            }
        })
    }

    /// The last `len` bytes of the value at `key` with one suffix-range request (Azure,
    /// which has none: a size query, then a range request), the value's size and ETag;
    /// `None` when the key does not exist. A value shorter than `len` is an error naming
    /// the key.
    fn get_tail(&self, key: &str, len: u64) -> Result<Option<Tail>> {
        let short = |size: u64| {
            Error::Io(format!(
                "{}: the last {len} bytes were asked of a value of {size} bytes",
                self.place(key)
            ))
        };
        if len == 0 || self.settings.provider == Provider::Azure {
            // Azure Blob Storage has no suffix ranges: the size first, then the range.
            let Some(size) = self.size(key)? else {
                return Ok(None);
            };
            if size < len {
                return Err(short(size));
            }
            return Ok(self.get_range(key, size - len, len)?.map(|bytes| Tail {
                bytes,
                size,
                version: None,
            }));
        }
        let (key, path) = self.path(key)?;
        let label = self.place(&key);
        let ranged = self.run(&key, move |store| reads::tail(store, path, label, len));
        match ranged {
            Err(e) if range_refused(&e) => {
                // The server answered with the whole value (200): the tail is cut from it
                // as it arrives.
                Ok(self
                    .window(&key, Window::Tail(len))?
                    .map(|(size, bytes)| Tail {
                        bytes,
                        size,
                        version: None,
                    }))
            }
            other => other,
        }
    }

    /// A range request with `If-Match: <ETag>`: a changed object answers 412, read as
    /// [`Ranged::Changed`].
    fn get_range_if(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        version: &Version,
    ) -> Result<Ranged> {
        if len == 0 {
            return self
                .get_range_into(key, offset, len, buf)
                .map(|found| match found {
                    true => Ranged::Read,
                    false => Ranged::Missing,
                });
        }
        Ok(match self.range(key, offset, len, Some(version))? {
            Part::Bytes(bytes) => {
                *buf = bytes;
                Ranged::Read
            }
            Part::Missing => Ranged::Missing,
            Part::Changed => Ranged::Changed,
        })
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        if len == 0 {
            let Some(size) = self.size(key)? else {
                return Ok(None);
            };
            if offset > size {
                return Err(Error::Io(format!(
                    "range {offset}+0 of {key:?} is past its end ({size} bytes)"
                )));
            }
            return Ok(Some(Vec::new()));
        }
        Ok(match self.range(key, offset, len, None)? {
            Part::Bytes(bytes) => Some(bytes),
            // Without a version to insist on nothing can have changed.
            Part::Missing | Part::Changed => None,
        })
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        super::check_writable(self, "write")?;
        let (key, path) = self.path(key)?;
        let payload = bytes::Bytes::copy_from_slice(value);
        let upload = self.uploads();
        self.run(&key, move |store| put_value(store, path, payload, upload))
    }

    /// Every write and erasure of the batch in flight at once (up to `max_requests`).
    fn put_many(&self, batch: Vec<(String, Option<Vec<u8>>)>) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        super::check_writable(self, "write")?;
        let upload = self.uploads();
        let store = self.client()?.store;
        let mut jobs: Vec<(String, Job<()>)> = Vec::with_capacity(batch.len());
        for (key, value) in batch {
            let (key, path) = self.path(&key)?;
            let store = store.clone();
            let job: Job<()> = match value {
                Some(value) => Box::pin(put_value(store, path, value.into(), upload)),
                None => Box::pin(async move {
                    match store.delete(&path).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                        Err(e) => Err(Failure::Store(e)),
                    }
                }),
            };
            jobs.push((key, job));
        }
        self.run_many(jobs).into_iter().collect()
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        super::check_writable(self, "erase")?;
        if self.size(key)?.is_none() {
            return Ok(false);
        }
        let (key, path) = self.path(key)?;
        self.run(&key, move |store| async move {
            match store.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(true),
                Err(e) => Err(Failure::Store(e)),
            }
        })
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        super::check_writable(self, "erase")?;
        let keys = self.list_prefix(prefix)?;
        if keys.is_empty() {
            return Ok(());
        }
        let paths = keys
            .iter()
            .map(|k| self.path(k).map(|(_, p)| p))
            .collect::<Result<Vec<_>>>()?;
        let prefix = validate_prefix(prefix)?;
        // Batch deletes (1000 keys a request on S3).
        self.run(&prefix, move |store| async move {
            let stream = futures_util::stream::iter(paths.into_iter().map(Ok)).boxed();
            let mut results = store.delete_stream(stream);
            while let Some(result) = results.next().await {
                match result {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(Failure::Store(e)),
                }
            }
            Ok(())
        })
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        // Object listings match whole segments: list the directory holding the prefix
        // and keep the keys that start with it.
        let dir = match prefix.rfind('/') {
            Some(i) => &prefix[..=i],
            None => "",
        };
        let listed = self.list_below(dir, &prefix, false)?;
        let mut keys: Vec<String> = listed
            .objects
            .iter()
            .filter_map(|path| path.strip_prefix(self.root.as_str()).map(str::to_string))
            .collect();
        keys.retain(|k| k.starts_with(&prefix));
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let prefix = validate_dir_prefix(prefix)?;
        let listed = self.list_below(&prefix, &prefix, true)?;
        let mut listing = DirListing::default();
        let below = |path: &String| {
            path.strip_prefix(self.root.as_str())
                .and_then(|k| k.strip_prefix(prefix.as_str()))
                .map(|rest| rest.trim_end_matches('/').to_string())
                .filter(|rest| !rest.is_empty())
        };
        listing.keys = listed.objects.iter().filter_map(below).collect();
        listing.prefixes = listed.prefixes.iter().filter_map(below).collect();
        for list in [&mut listing.keys, &mut listing.prefixes] {
            list.sort();
            list.dedup();
        }
        Ok(listing)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let (key, path) = self.path(key)?;
        self.run(&key, move |store| async move {
            match store.head(&path).await {
                Ok(meta) => Ok(Some(meta.size)),
                Err(object_store::Error::NotFound { source, path }) => {
                    let err = object_store::Error::NotFound { source, path };
                    if missing_bucket(&err.to_string()) {
                        return Err(Failure::Store(err));
                    }
                    Ok(None)
                }
                Err(e) => Err(Failure::Store(e)),
            }
        })
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn set_durability(&self, _level: Durability) -> Result<()> {
        // A PUT is durable when the service answers it: every level already holds.
        Ok(())
    }
}
