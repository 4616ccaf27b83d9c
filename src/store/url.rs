//! Opening a store by URL: local directories, zip files and memory, and (with the `cloud`
//! feature) S3, Google Cloud Storage, Azure Blob Storage and HTTP servers.

use super::Mode;
use super::{FilesystemStore, MemoryStore, Store, ZipMode, ZipStore};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The store kinds of a URL's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Directory,
    Memory,
    Zip,
    Cloud,
    Icechunk,
    Reference,
}

/// Opens the store that `url` names with `mode` (`r` read-only; `r+` read-write, needing
/// it to exist where that can be told without a request; `a`, `w`, `w-` read-write,
/// creating local directories and zip files):
///
/// - a plain path or `file://PATH`: a directory (as [`FilesystemStore`]); a plain path
///   ending in `.zip` that is not a directory is a zip file, as in zarr-python;
/// - `memory://`: a new, empty memory store;
/// - `zip://PATH`: a zip file (modes as [`ZipStore`]; option `deflate` compresses new
///   entries);
/// - `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`, `az://CONTAINER/PREFIX`,
///   `abfs[s]://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX`, and `http(s)://…`
///   (read-only) with the `cloud` feature;
/// - `icechunk:///PATH` and `icechunk+s3://BUCKET/PREFIX` with the `icechunk` feature: an
///   Icechunk repository on local disk or S3 (queries `?branch=NAME`, default `main`,
///   `?tag=NAME`, `?snapshot=ID`, percent-decoded; modes and options as
///   `IcechunkStore::open` says). `icechunk:relative/path` is refused (the path must be
///   absolute), not taken for a directory of that name;
/// - `reference:///PATH`: the kerchunk reference file (JSON) at PATH, read-only (mode
///   `r` only), as [`ReferenceStore`](super::ReferenceStore); option `allowed_targets`, a
///   list of absolute directories that its references may point into besides the reference
///   file's own. `reference:relative/path` is refused (the path must be absolute).
///
/// `options` is `None` or a JSON object of settings (see `zarr_store_open_url` in the C
/// API for the names); a setting a store kind does not use is an error.
pub fn open_url(url: &str, mode: Mode, options: Option<&str>) -> Result<Arc<dyn Store>> {
    let options = match options {
        None => None,
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Some(map),
            Ok(_) => return Err(Error::InvalidArg("options must be a JSON object".into())),
            Err(e) => {
                return Err(Error::InvalidArg(format!(
                    "options are not valid JSON: {e}"
                )))
            }
        },
    };
    let (kind, rest) = classify(url)?;
    let writable = mode != Mode::Read;
    match kind {
        Kind::Directory => {
            refuse_options(options.as_ref(), &[], url)?;
            let create = !matches!(mode, Mode::Read | Mode::ReadWrite);
            Ok(Arc::new(FilesystemStore::open(rest, writable, create)?))
        }
        Kind::Memory => {
            refuse_options(options.as_ref(), &[], url)?;
            Ok(Arc::new(MemoryStore::new()))
        }
        Kind::Zip => {
            refuse_options(options.as_ref(), &["deflate"], url)?;
            let deflate = match options.as_ref().and_then(|o| o.get("deflate")) {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(Error::InvalidArg(
                        "option deflate must be true or false".into(),
                    ))
                }
            };
            let zip_mode = match mode {
                Mode::Read => ZipMode::Read,
                Mode::Overwrite => ZipMode::Create { overwrite: true },
                Mode::CreateNew => ZipMode::Create { overwrite: false },
                Mode::Append => ZipMode::Append,
                Mode::ReadWrite if std::path::Path::new(rest).exists() => ZipMode::Append,
                Mode::ReadWrite => {
                    return Err(Error::NotFound(format!("zip {rest} does not exist")))
                }
            };
            Ok(Arc::new(ZipStore::open(rest, zip_mode, deflate)?))
        }
        Kind::Cloud => open_cloud(url, writable, options.as_ref()),
        Kind::Icechunk => open_icechunk(url, mode, options.as_ref()),
        Kind::Reference => open_reference(url, mode, options.as_ref()),
    }
}

/// The file or directory that `url` names when it names a local store (a directory or a
/// zip file), without opening it; `None` for memory and object stores.
pub fn local_path(url: &str) -> Result<Option<&str>> {
    Ok(match classify(url)? {
        (Kind::Directory | Kind::Zip, path) => Some(path),
        _ => None,
    })
}

/// A plain path: a zip file when it ends in `.zip` and is not a directory, else a directory.
fn plain_path(path: &str) -> (Kind, &str) {
    let zip = path.to_ascii_lowercase().ends_with(".zip") && !std::path::Path::new(path).is_dir();
    (if zip { Kind::Zip } else { Kind::Directory }, path)
}

/// The kind of store `url` names and the part that locates it (a path for local stores).
fn classify(url: &str) -> Result<(Kind, &str)> {
    if url.is_empty() {
        return Err(Error::InvalidArg("the store URL is empty".into()));
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        // `icechunk:relative/path`: refused by the Icechunk store, which asks for an
        // absolute path, rather than taken for a directory of that name.
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("icechunk:") || lower.starts_with("icechunk+s3:") {
            return Ok((Kind::Icechunk, url));
        }
        // Likewise `reference:relative/path`, refused by the reference store.
        if lower.starts_with("reference:") {
            return Ok((Kind::Reference, url));
        }
        return Ok(plain_path(url));
    };
    // A Windows drive path ("C://x") is a path, not a URL.
    if scheme.len() == 1 && scheme.as_bytes()[0].is_ascii_alphabetic() {
        return Ok(plain_path(url));
    }
    let local_path = |kind: Kind| -> Result<(Kind, &str)> {
        let path = rest
            .strip_prefix("localhost/")
            .map_or(rest, |_| &rest["localhost".len()..]);
        if path.is_empty() {
            return Err(Error::InvalidArg(format!("{url:?} names no path")));
        }
        Ok((kind, path))
    };
    match scheme.to_ascii_lowercase().as_str() {
        "file" => local_path(Kind::Directory),
        "zip" => local_path(Kind::Zip),
        "memory" => Ok((Kind::Memory, rest)),
        "icechunk" | "icechunk+s3" => Ok((Kind::Icechunk, rest)),
        "reference" => Ok((Kind::Reference, rest)),
        "s3" | "s3a" | "gs" | "gcs" | "az" | "azure" | "abfs" | "abfss" | "adl" | "http"
        | "https" => Ok((Kind::Cloud, rest)),
        other => Err(Error::InvalidArg(format!(
            "unknown URL scheme {other:?} in {url:?} (known: file, memory, zip, s3, gs, az, \
             abfs, abfss, http, https, icechunk, reference)"
        ))),
    }
}

fn refuse_options(options: Option<&Map<String, Value>>, allowed: &[&str], url: &str) -> Result<()> {
    if let Some(name) = options
        .into_iter()
        .flat_map(|o| o.keys())
        .find(|k| !allowed.contains(&k.as_str()))
    {
        return Err(Error::InvalidArg(format!(
            "option {name:?} does not apply to {url:?}"
        )));
    }
    Ok(())
}

/// Opens a kerchunk reference file, read-only, with the option `allowed_targets`.
fn open_reference(
    url: &str,
    mode: Mode,
    options: Option<&Map<String, Value>>,
) -> Result<Arc<dyn Store>> {
    refuse_options(options, &["allowed_targets"], url)?;
    let path = super::reference::parse_url(url)?;
    if mode != Mode::Read {
        return Err(Error::ReadOnly(format!(
            "{url:?}: reference files are read-only (open them with mode r)"
        )));
    }
    let allowed = match options.and_then(|o| o.get("allowed_targets")) {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| {
                Error::InvalidArg("option allowed_targets must be a list of paths".into())
            })?,
        Some(_) => {
            return Err(Error::InvalidArg(
                "option allowed_targets must be a list of paths".into(),
            ))
        }
    };
    Ok(Arc::new(super::ReferenceStore::open(path, &allowed)?))
}

#[cfg(feature = "icechunk")]
fn open_icechunk(
    url: &str,
    mode: Mode,
    options: Option<&Map<String, Value>>,
) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(super::IcechunkStore::open(url, mode, options)?))
}

#[cfg(not(feature = "icechunk"))]
fn open_icechunk(
    url: &str,
    _mode: Mode,
    _options: Option<&Map<String, Value>>,
) -> Result<Arc<dyn Store>> {
    Err(Error::Unsupported(format!(
        "{url:?}: this build of libzarr has no Icechunk repositories (built without the \
         icechunk feature)"
    )))
}

#[cfg(feature = "cloud")]
fn open_cloud(
    url: &str,
    writable: bool,
    options: Option<&Map<String, Value>>,
) -> Result<Arc<dyn Store>> {
    use super::cloud::{CloudStore, Provider, Settings};
    let scheme = url.split("://").next().unwrap_or("").to_ascii_lowercase();
    let provider = match scheme.as_str() {
        "s3" | "s3a" => Provider::S3,
        "gs" | "gcs" => Provider::Gcs,
        "az" | "azure" | "abfs" | "abfss" | "adl" => Provider::Azure,
        _ => Provider::Http,
    };
    let rest = url.split_once("://").map_or("", |(_, rest)| rest);
    if rest.is_empty() || rest.starts_with('/') {
        let what = match provider {
            Provider::S3 | Provider::Gcs => "bucket",
            Provider::Azure => "container",
            Provider::Http => "host",
        };
        let shown = super::cloud::shown_url(url);
        return Err(Error::InvalidArg(format!("{shown:?} names no {what}")));
    }
    let parsed = ::url::Url::parse(url).map_err(|e| {
        let shown = super::cloud::shown_url(url);
        Error::InvalidArg(format!("malformed URL {shown:?}: {e}"))
    })?;
    let base_url = match provider {
        // The web server's URL is the store's root, path included.
        Provider::Http => parsed.as_str().trim_end_matches('/').to_string(),
        _ => {
            let mut base = parsed.clone();
            base.set_path("");
            base.set_query(None);
            base.to_string()
        }
    };
    let settings = Settings::new(provider, &base_url, options)?;
    Ok(Arc::new(CloudStore::open(url, writable, settings)?))
}

#[cfg(not(feature = "cloud"))]
fn open_cloud(
    url: &str,
    _writable: bool,
    _options: Option<&Map<String, Value>>,
) -> Result<Arc<dyn Store>> {
    Err(Error::Unsupported(format!(
        "{:?}: this build of libzarr has no object stores (built without the cloud feature)",
        url.split('?').next().unwrap_or(url)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_paths() {
        assert_eq!(classify("a/b").unwrap(), (Kind::Directory, "a/b"));
        assert_eq!(classify("a/b.ZIP").unwrap(), (Kind::Zip, "a/b.ZIP"));
        assert_eq!(local_path("zip://x.zip").unwrap(), Some("x.zip"));
        assert_eq!(local_path("file:///tmp/x").unwrap(), Some("/tmp/x"));
        assert_eq!(local_path("memory://").unwrap(), None);
        assert_eq!(local_path("s3://bucket/p").unwrap(), None);
        let dir = tempfile::tempdir().unwrap();
        let named_zip = dir.path().join("d.zip");
        std::fs::create_dir(&named_zip).unwrap();
        let named_zip = named_zip.to_str().unwrap();
        assert_eq!(classify(named_zip).unwrap(), (Kind::Directory, named_zip));
        assert_eq!(
            classify("file:///tmp/x.zip").unwrap(),
            (Kind::Directory, "/tmp/x.zip")
        );
        assert_eq!(
            classify("file:///tmp/x").unwrap(),
            (Kind::Directory, "/tmp/x")
        );
        assert_eq!(
            classify("file://localhost/tmp/x").unwrap(),
            (Kind::Directory, "/tmp/x")
        );
        assert_eq!(
            classify("zip:///tmp/x.zip").unwrap(),
            (Kind::Zip, "/tmp/x.zip")
        );
        assert_eq!(classify("memory://").unwrap().0, Kind::Memory);
        assert_eq!(classify("s3://b/p").unwrap().0, Kind::Cloud);
        assert!(matches!(classify("ftp://x/y"), Err(Error::InvalidArg(_))));
        assert!(matches!(classify(""), Err(Error::InvalidArg(_))));
        assert!(matches!(classify("file://"), Err(Error::InvalidArg(_))));
        assert_eq!(
            classify("reference:///a/r.json").unwrap(),
            (Kind::Reference, "/a/r.json")
        );
        assert_eq!(classify("reference:r.json").unwrap().0, Kind::Reference);
    }

    #[test]
    fn reference_urls_are_absolute_read_only_and_take_their_option() {
        let err = open_url("reference:refs.json", Mode::Read, None).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArg(m) if m.contains("must be absolute")),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let refs = dir.path().join("refs.json");
        std::fs::write(&refs, r#"{"a": "x"}"#).unwrap();
        let url = format!("reference://{}", refs.display());
        let store = open_url(&url, Mode::Read, None).unwrap();
        assert_eq!(store.get("a").unwrap().unwrap(), b"x");
        assert!(matches!(
            open_url(&url, Mode::Append, None),
            Err(Error::ReadOnly(_))
        ));
        for bad in [
            r#"{"deflate": true}"#,
            r#"{"allowed_targets": "/x"}"#,
            r#"{"allowed_targets": [1]}"#,
        ] {
            assert!(
                matches!(
                    open_url(&url, Mode::Read, Some(bad)),
                    Err(Error::InvalidArg(_))
                ),
                "{bad}"
            );
        }
        let other = tempfile::tempdir().unwrap();
        let options = serde_json::json!({ "allowed_targets": [other.path()] }).to_string();
        assert!(open_url(&url, Mode::Read, Some(&options)).is_ok());
    }

    #[test]
    fn options_are_checked() {
        assert!(matches!(
            open_url("memory://", Mode::Append, Some("{\"region\": \"x\"}")),
            Err(Error::InvalidArg(_))
        ));
        assert!(matches!(
            open_url("memory://", Mode::Append, Some("[1]")),
            Err(Error::InvalidArg(_))
        ));
        assert!(open_url("memory://", Mode::Append, Some("{}")).is_ok());
    }

    #[cfg(not(feature = "cloud"))]
    #[test]
    fn object_stores_need_the_cloud_feature() {
        for url in ["s3://b/p", "gs://b", "az://c/p", "https://example.org/x"] {
            assert!(matches!(
                open_url(url, Mode::Read, None),
                Err(Error::Unsupported(_))
            ));
        }
    }
}
