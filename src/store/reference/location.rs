//! Where the references of a reference file may point: the one place that decides, and the
//! only way a reference store opens a target.
//!
//! By default a reference may name only files beneath the directory of the reference file
//! itself. Further directories are allowed explicitly (the option `allowed_targets`). A
//! target is opened through a handle on the directory that allows it (`cap_std`), so a
//! symbolic link on the way that leads outside that directory is refused when the file is
//! opened, whenever the link appeared. A target path holding a `..` component is refused
//! before any lookup, and so is every target on another host (`s3://`, `http://`, ...:
//! reading remote targets is not supported yet).

use crate::error::{Error, Result};
use crate::store::filesystem::{is_escape, open_for_reading, Opened};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// The most entries the option `allowed_targets` may list.
pub const MAX_ALLOWED_TARGETS: usize = 1000;

/// A directory that references may point into.
#[derive(Debug)]
struct Root {
    /// The directory as it was named (absolute), for targets named the same way.
    named: PathBuf,
    /// The directory with every link resolved, for targets named that way.
    canonical: PathBuf,
    /// The directory itself: targets are opened beneath it.
    dir: Dir,
}

/// The directories that the references of one reference file may point into.
#[derive(Debug)]
pub struct Locations {
    roots: Vec<Root>,
}

/// A target file opened for reading, and its size.
pub type OpenTarget = (File, u64);

impl Locations {
    /// The locations of the reference file at `reference_file` (an absolute path): its own
    /// directory, and the directories listed in `allowed` (absolute paths or `file://`
    /// URLs of existing directories).
    pub fn new(reference_file: &Path, allowed: &[String]) -> Result<Self> {
        if allowed.len() > MAX_ALLOWED_TARGETS {
            return Err(Error::InvalidArg(format!(
                "option allowed_targets lists {} locations, more than the {MAX_ALLOWED_TARGETS} \
                 it may",
                allowed.len()
            )));
        }
        let own = reference_file.parent().ok_or_else(|| {
            Error::InvalidArg(format!(
                "reference file {} has no directory",
                reference_file.display()
            ))
        })?;
        let mut roots = vec![Root::open(own, "the reference file's directory")?];
        for entry in allowed {
            let path = allowed_path(entry)?;
            roots.push(Root::open(&path, "option allowed_targets names")?);
        }
        Ok(Locations { roots })
    }

    /// Opens `target` (the URL or path of the reference at `key`, as written in the
    /// reference file) if it lies where references may point: an error naming the key and
    /// the target otherwise, or when it is missing or not a regular file.
    pub fn open(&self, key: &str, target: &str) -> Result<OpenTarget> {
        let path = local_path(key, target)?;
        let (root, relative) = self
            .roots
            .iter()
            .find_map(|root| root.beneath(&path).map(|relative| (root, relative)))
            .ok_or_else(|| {
                Error::InvalidKey(format!(
                    "reference {key:?} points to {target:?}, outside the directories it may \
                     read (the reference file's own, and those of the option allowed_targets)"
                ))
            })?;
        match open_for_reading(&root.dir, relative) {
            Ok(Opened::File(file, size)) => Ok((file, size)),
            Ok(Opened::Missing) => Err(Error::Io(format!(
                "reference {key:?} points to {target:?}, which does not exist or is a directory"
            ))),
            Ok(Opened::Special) => Err(Error::Io(format!(
                "reference {key:?} points to {target:?}, which is not a regular file (a FIFO, \
                 socket or device): refused without reading it"
            ))),
            Err(e) if is_escape(&e) => Err(Error::InvalidKey(format!(
                "reference {key:?} points to {target:?}, which a symbolic link leads outside \
                 {} (links out of an allowed directory, and absolute links, are refused)",
                root.named.display()
            ))),
            Err(e) => Err(Error::io(
                format_args!("reference {key:?}: opening {target:?}"),
                e,
            )),
        }
    }
}

impl Root {
    /// The directory at `path` (absolute), which `what` names in messages.
    fn open(path: &Path, what: &str) -> Result<Self> {
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| Error::io(format_args!("{what} {}", path.display()), e))?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())
            .map_err(|e| Error::io(format_args!("{what} {}", path.display()), e))?;
        Ok(Root {
            named: path.to_path_buf(),
            canonical,
            dir,
        })
    }

    /// The part of `path` (absolute, without `..`) below this directory, if it is below.
    fn beneath<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        [&self.named, &self.canonical]
            .into_iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .filter(|relative| !relative.as_os_str().is_empty())
    }
}

/// The directory that an entry of the option `allowed_targets` names.
fn allowed_path(entry: &str) -> Result<PathBuf> {
    let path = without_file_scheme(entry);
    if is_remote(path) {
        return Err(Error::Unsupported(format!(
            "option allowed_targets: {:?} is not a local directory (reading remote targets \
             is not supported yet)",
            shown_remote(entry)
        )));
    }
    let path = Path::new(path);
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return Err(Error::InvalidArg(format!(
            "option allowed_targets: {entry:?} must be an absolute path without '..'"
        )));
    }
    Ok(path.to_path_buf())
}

/// The absolute path of the local file that `target` (of the reference at `key`) names: a
/// path or a `file://` URL; a relative path is relative to the working directory, as
/// fsspec's reference file system reads it.
fn local_path(key: &str, target: &str) -> Result<PathBuf> {
    if is_remote(target) && !target.starts_with("file://") {
        return Err(on_another_host(key, target));
    }
    let path = without_file_scheme(target);
    if target.starts_with("file://") && !path.starts_with('/') {
        return Err(on_another_host(key, target));
    }
    let path = Path::new(path);
    if path.as_os_str().is_empty() {
        return Err(Error::InvalidArg(format!(
            "reference {key:?} names no target"
        )));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(Error::InvalidKey(format!(
            "reference {key:?} points to {target:?}, whose '..' is refused"
        )));
    }
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Error::io(format_args!("reference {key:?}: the working directory"), e))?;
    Ok(cwd.join(path))
}

/// The refusal of the reference at `key` to `target`, on another host.
fn on_another_host(key: &str, target: &str) -> Error {
    Error::Unsupported(format!(
        "reference {key:?} points to {:?} on another host: reading remote targets is not \
         supported yet (only local files)",
        shown_remote(target)
    ))
}

/// The path of a `file://` URL (`file:///p` or `file://localhost/p`); other text as it is.
fn without_file_scheme(url: &str) -> &str {
    match url.strip_prefix("file://") {
        Some(path) => path
            .strip_prefix("localhost")
            .filter(|p| p.starts_with('/'))
            .unwrap_or(path),
        None => url,
    }
}

/// Whether `target` is a URL of another file system than the local one (`s3://…`,
/// `https://…`, fsspec's chained `simplecache::s3://…`).
fn is_remote(target: &str) -> bool {
    target.contains("://") || target.contains("::")
}

/// A remote URL as messages show it: without user information, query or fragment (which
/// may hold credentials or a signature).
fn shown_remote(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let host = match rest[..authority_end].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    format!("{scheme}://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_are_shown_without_secrets() {
        assert_eq!(
            shown_remote("https://user:pw@host/a/b?X-Amz-Signature=s#f"),
            "https://host/a/b"
        );
        assert_eq!(shown_remote("s3://bucket/key"), "s3://bucket/key");
        assert!(is_remote("simplecache::s3://b/k"));
        assert!(!is_remote("/data/x.nc"));
        let err = local_path("k", "file://otherhost/etc/passwd").unwrap_err();
        assert!(
            matches!(&err, Error::Unsupported(m) if m.contains("another host")),
            "{err}"
        );
        assert_eq!(
            local_path("k", "file://localhost/x").unwrap(),
            Path::new("/x")
        );
    }

    #[test]
    fn targets_resolve_beneath_the_allowed_directories() {
        let dir = tempfile::tempdir().unwrap();
        let refs = dir.path().join("refs.json");
        std::fs::write(dir.path().join("data.bin"), b"0123456789").unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("x.bin"), b"xyz").unwrap();
        let own = Locations::new(&refs, &[]).unwrap();
        let data = dir.path().join("data.bin");
        let (_, size) = own.open("a/0", data.to_str().unwrap()).unwrap();
        assert_eq!(size, 10);
        let url = format!("file://{}", data.display());
        assert_eq!(own.open("a/0", &url).unwrap().1, 10);
        let outside = other.path().join("x.bin");
        let err = own.open("a/1", outside.to_str().unwrap()).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidKey(m) if m.contains("\"a/1\"") && m.contains("x.bin"))
        );
        let wider = Locations::new(&refs, &[other.path().to_str().unwrap().to_string()]).unwrap();
        assert_eq!(wider.open("a/1", outside.to_str().unwrap()).unwrap().1, 3);
        // The allowed directory itself is no file.
        assert!(own.open("a/2", dir.path().to_str().unwrap()).is_err());
    }

    #[test]
    fn allowed_entries_must_be_absolute_local_directories() {
        let dir = tempfile::tempdir().unwrap();
        let refs = dir.path().join("refs.json");
        for (entry, remote) in [
            ("relative/dir", false),
            ("/a/../b", false),
            ("s3://bucket/prefix", true),
            ("https://u:secret@host/p", true),
        ] {
            let err = Locations::new(&refs, &[entry.to_string()]).unwrap_err();
            assert_eq!(
                matches!(err, Error::Unsupported(_)),
                remote,
                "{entry}: {err}"
            );
            assert!(!err.to_string().contains("secret"));
        }
        let missing = dir.path().join("missing");
        assert!(Locations::new(&refs, &[missing.to_str().unwrap().to_string()]).is_err());
    }
}
