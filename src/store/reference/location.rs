//! Where the references of a reference file may point: the one place that decides, and the
//! only way a reference store opens a file.
//!
//! The reference file is read through a handle on its directory, and that same handle is
//! where its references may point by default, so no later lookup of a path can swap in
//! another directory. Further directories are allowed explicitly (the option
//! `allowed_targets`), each opened once. A target is opened beneath the handle of the
//! directory that allows it (`cap_std`), so a symbolic link on the way that leads outside
//! that directory is refused when the file is opened, whenever the link appeared. A target
//! path holding a `..` component is refused before any lookup, and so is every target on
//! another host (`s3://`, `http://`, ...: reading remote targets is not supported yet). A
//! relative target is relative to the reference file's directory.

use super::parse::MAX_FILE_BYTES;
use super::shown::shown_url;
use crate::error::{try_reserve, Error, Result};
use crate::store::filesystem::{is_escape, open_for_reading, Opened};
use cap_fs_ext::MetadataExt;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};

/// The most entries the option `allowed_targets` may list.
pub const MAX_ALLOWED_TARGETS: usize = 1000;

/// A directory that references may point into, opened once.
#[derive(Debug)]
pub struct Root {
    /// The directory as it was named (absolute), for targets named the same way.
    named: PathBuf,
    /// The directory with every link resolved (checked to be the one opened), for targets
    /// named that way.
    canonical: PathBuf,
    /// The directory itself: targets are opened beneath it.
    dir: Dir,
}

/// The directories that the references of one reference file may point into.
#[derive(Debug)]
pub struct Locations {
    /// The reference file's directory as named: relative targets are relative to it.
    base: PathBuf,
    roots: Vec<Root>,
}

/// A target file opened for reading, and its size.
pub type OpenTarget = (File, u64);

/// Reads the reference file at `path` (absolute, without `..`) through a handle on its
/// directory: its text (a regular file of at most [`MAX_FILE_BYTES`], its size checked
/// before it is read) and that directory.
pub fn read_reference_file(path: &Path) -> Result<(Vec<u8>, Root)> {
    let what = || format!("reference file {}", path.display());
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Error::InvalidArg(format!("{}: it names no file", what())));
    };
    let root = Root::open(parent, "the reference file's directory")?;
    let (file, size) = match open_for_reading(&root.dir, name) {
        Ok(Opened::File(file, size)) => (file, size),
        Ok(Opened::Missing) => {
            return Err(Error::io(what(), ErrorKind::NotFound.into()));
        }
        Ok(Opened::Special) => {
            return Err(Error::Io(format!(
                "{}: not a regular file (a FIFO, socket or device): refused without reading it",
                what()
            )))
        }
        Err(e) if is_escape(&e) => {
            return Err(Error::InvalidArg(format!(
                "{}: a symbolic link out of its directory (name the file itself: its \
                 directory is where its references may point)",
                what()
            )))
        }
        Err(e) => return Err(Error::io(what(), e)),
    };
    if size > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    let mut text = Vec::new();
    try_reserve(&mut text, size as usize, &what())?;
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| Error::io(what(), e))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    Ok((text, root))
}

fn too_large(path: &Path) -> Error {
    Error::Metadata(format!(
        "reference file {} is larger than {MAX_FILE_BYTES} bytes",
        path.display()
    ))
}

impl Locations {
    /// The locations of a reference file whose directory is `own` (from
    /// [`read_reference_file`]): that directory, and the directories listed in `allowed`
    /// (absolute paths or `file://` URLs of existing directories). The root directory `/`
    /// is never allowed implicitly: a reference file there needs `allowed`.
    pub fn new(own: Root, allowed: &[String]) -> Result<Self> {
        if allowed.len() > MAX_ALLOWED_TARGETS {
            return Err(Error::InvalidArg(format!(
                "option allowed_targets lists {} locations, more than the {MAX_ALLOWED_TARGETS} \
                 it may",
                allowed.len()
            )));
        }
        let base = own.named.clone();
        let mut roots = Vec::new();
        if own.canonical.parent().is_some() {
            roots.push(own);
        } else if allowed.is_empty() {
            return Err(Error::InvalidArg(format!(
                "the reference file lies in the root directory {}, which would let its \
                 references read every file: list the directories they may point into with \
                 the option allowed_targets",
                own.canonical.display()
            )));
        }
        for entry in allowed {
            roots.push(Root::open(
                &allowed_path(entry)?,
                "option allowed_targets names",
            )?);
        }
        Ok(Locations { base, roots })
    }

    /// Opens `target` (the URL or path of the reference at `key`, as written in the
    /// reference file) if it lies where references may point: an error naming the key and
    /// the target otherwise, or when it is missing or not a regular file.
    pub fn open(&self, key: &str, target: &str) -> Result<OpenTarget> {
        let path = self.local_path(key, target)?;
        let (key, shown) = (super::shown::shown(key), shown_url(target));
        let (root, relative) = self
            .roots
            .iter()
            .find_map(|root| root.beneath(&path).map(|relative| (root, relative)))
            .ok_or_else(|| {
                Error::InvalidKey(format!(
                    "reference {key} points to {shown}, outside the directories it may \
                     read (the reference file's own, and those of the option allowed_targets)"
                ))
            })?;
        match open_for_reading(&root.dir, relative) {
            Ok(Opened::File(file, size)) => Ok((file, size)),
            Ok(Opened::Missing) => Err(Error::Io(format!(
                "reference {key} points to {shown}, which does not exist or is a directory"
            ))),
            Ok(Opened::Special) => Err(Error::Io(format!(
                "reference {key} points to {shown}, which is not a regular file (a FIFO, \
                 socket or device): refused without reading it"
            ))),
            Err(e) if is_escape(&e) => Err(Error::InvalidKey(format!(
                "reference {key} points to {shown}, which a symbolic link leads outside \
                 {} (links out of an allowed directory, and absolute links, are refused)",
                root.named.display()
            ))),
            Err(e) => Err(Error::io(
                format_args!("reference {key}: opening {shown}"),
                e,
            )),
        }
    }

    /// The absolute path of the local file that `target` (of the reference at `key`)
    /// names: a path or a `file:` URL, without a trailing `/`; a relative path is relative
    /// to the reference file's directory.
    fn local_path(&self, key: &str, target: &str) -> Result<PathBuf> {
        let key = super::shown::shown(key);
        let Some(path) = local(target) else {
            return Err(Error::Unsupported(format!(
                "reference {key} points to {} on another host: reading remote targets is \
                 not supported yet (only local files)",
                shown_url(target)
            )));
        };
        let path = Path::new(path);
        if path.as_os_str().is_empty() {
            return Err(Error::InvalidArg(format!(
                "reference {key} names no target"
            )));
        }
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(Error::InvalidKey(format!(
                "reference {key} points to {}, whose '..' is refused",
                shown_url(target)
            )));
        }
        Ok(self.base.join(path))
    }
}

impl Root {
    /// The directory at `path` (absolute), which `what` names in messages: opened once, and
    /// its canonical path checked to name the directory opened.
    fn open(path: &Path, what: &str) -> Result<Self> {
        let failed = |e| Error::io(format_args!("{what} {}", path.display()), e);
        let dir = Dir::open_ambient_dir(path, ambient_authority()).map_err(failed)?;
        let canonical = std::fs::canonicalize(path).map_err(failed)?;
        let again = Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(failed)?;
        let (held, found) = (
            dir.dir_metadata().map_err(failed)?,
            again.dir_metadata().map_err(failed)?,
        );
        if (held.dev(), held.ino()) != (found.dev(), found.ino()) {
            return Err(Error::Io(format!(
                "{what} {} was replaced while it was opened",
                path.display()
            )));
        }
        Ok(Root {
            named: path.components().collect(),
            canonical,
            dir,
        })
    }

    /// The part of `path` (absolute, without `..`) below this directory, if it is below
    /// (`.` for the directory itself).
    fn beneath<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        [&self.named, &self.canonical]
            .into_iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .map(|relative| {
                if relative.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    relative
                }
            })
    }
}

/// The directory that an entry of the option `allowed_targets` names.
fn allowed_path(entry: &str) -> Result<PathBuf> {
    let Some(path) = local(entry) else {
        return Err(Error::Unsupported(format!(
            "option allowed_targets: {} is not a local directory (reading remote targets is \
             not supported yet)",
            shown_url(entry)
        )));
    };
    let path = Path::new(path);
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return Err(Error::InvalidArg(format!(
            "option allowed_targets: {} must be an absolute path without '..'",
            shown_url(entry)
        )));
    }
    Ok(path.to_path_buf())
}

/// The local path that `target` names, or `None` for a file of another host. A path is a
/// path (`::` in it chains nothing), and so is a Windows drive (`C:`); `file:` URLs
/// (scheme and host in any case) name local paths: `file:///p`, `file://localhost/p`,
/// `file:/p`. Any other scheme (`s3://`, `https://`, fsspec's chained
/// `simplecache::s3://`) names a file elsewhere. A trailing `/` is dropped, as fsspec does.
pub(crate) fn local(target: &str) -> Option<&str> {
    let path = match scheme(target) {
        None => target,
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => {
            match rest.strip_prefix("//") {
                None => rest,
                Some(rest) => {
                    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                        return None;
                    }
                    path
                }
            }
        }
        Some(_) => return None,
    };
    let trimmed = path.trim_end_matches('/');
    Some(if trimmed.is_empty() && !path.is_empty() {
        "/"
    } else {
        trimmed
    })
}

/// The scheme of `text` and what follows its `:`, if it starts with one: a letter, then
/// letters, digits, `+`, `-` and `.`, at least two characters (one is a Windows drive).
fn scheme(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && scheme.len() > 1;
    valid.then_some((scheme, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The locations of a reference file in `dir`, with `allowed`.
    fn locations(dir: &Path, allowed: &[&str]) -> Result<Locations> {
        std::fs::write(dir.join("refs.json"), b"{}").unwrap();
        let (_, own) = read_reference_file(&dir.join("refs.json"))?;
        let allowed: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
        Locations::new(own, &allowed)
    }

    #[test]
    fn local_paths_and_file_urls() {
        for (target, path) in [
            ("/data/x.nc", Some("/data/x.nc")),
            ("file:///x", Some("/x")),
            ("file://localhost/x", Some("/x")),
            ("FILE://LocalHost/x", Some("/x")),
            ("file:/x", Some("/x")),
            ("/data/a::b.nc", Some("/data/a::b.nc")),
            ("/data/x.nc/", Some("/data/x.nc")),
            ("file:///", Some("/")),
            ("rel/x.nc", Some("rel/x.nc")),
            ("C:/x.nc", Some("C:/x.nc")),
            ("file://otherhost/etc/passwd", None),
            ("file://user:pw@host/x", None),
            ("s3://bucket/key", None),
            ("simplecache::s3://b/k", None),
            ("https://h/x", None),
        ] {
            assert_eq!(local(target), path, "{target}");
        }
    }

    #[test]
    fn targets_resolve_beneath_the_allowed_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data.bin"), b"0123456789").unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("x.bin"), b"xyz").unwrap();
        let own = locations(dir.path(), &[]).unwrap();
        let data = dir.path().join("data.bin");
        let (_, size) = own.open("a/0", data.to_str().unwrap()).unwrap();
        assert_eq!(size, 10);
        let url = format!("file://{}", data.display());
        assert_eq!(own.open("a/0", &url).unwrap().1, 10);
        // Relative to the reference file's directory, whatever the working directory.
        assert_eq!(own.open("a/0", "data.bin").unwrap().1, 10);
        assert_eq!(own.open("a/0", "data.bin/").unwrap().1, 10);
        let outside = other.path().join("x.bin");
        let err = own.open("a/1", outside.to_str().unwrap()).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidKey(m) if m.contains("\"a/1\"") && m.contains("x.bin"))
        );
        let wider = locations(dir.path(), &[other.path().to_str().unwrap()]).unwrap();
        assert_eq!(wider.open("a/1", outside.to_str().unwrap()).unwrap().1, 3);
        // The allowed directory itself is that directory, no file, and not outside.
        for target in [dir.path().to_str().unwrap(), "file:///"] {
            let err = own.open("a/2", target).unwrap_err();
            let expected = if target == "file:///" {
                "outside"
            } else {
                "is a directory"
            };
            assert!(err.to_string().contains(expected), "{target}: {err}");
        }
    }

    #[test]
    fn the_root_directory_is_never_allowed_implicitly() {
        let root = Root::open(Path::new("/"), "test").unwrap();
        let err = Locations::new(root, &[]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArg(m) if m.contains("root directory")
                && m.contains("allowed_targets")),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.bin"), b"xyz").unwrap();
        let root = Root::open(Path::new("/"), "test").unwrap();
        let explicit = Locations::new(root, &[dir.path().to_str().unwrap().to_string()]).unwrap();
        let x = dir.path().join("x.bin");
        assert_eq!(explicit.open("k", x.to_str().unwrap()).unwrap().1, 3);
        assert!(explicit.open("k", "/etc/hostname").is_err());
    }

    #[test]
    fn the_reference_file_is_read_through_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("refs.json");
        std::fs::write(&path, b"{}").unwrap();
        let (text, root) = read_reference_file(&path).unwrap();
        assert_eq!(text, b"{}");
        assert_eq!(root.named, dir.path());
        let err = read_reference_file(&dir.path().join("missing.json")).unwrap_err();
        assert!(err.to_string().contains("missing.json"), "{err}");
        // A directory is no reference file.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(read_reference_file(&dir.path().join("sub")).is_err());
        #[cfg(unix)]
        {
            let other = tempfile::tempdir().unwrap();
            std::fs::write(other.path().join("r.json"), b"{}").unwrap();
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(other.path().join("r.json"), &link).unwrap();
            let err = read_reference_file(&link).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidArg(m) if m.contains("symbolic link")),
                "{err}"
            );
            let fifo = dir.path().join("fifo.json");
            assert!(std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success());
            let err = read_reference_file(&fifo).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
            let err = read_reference_file(Path::new("/dev/zero")).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
    }

    #[test]
    fn allowed_entries_must_be_absolute_local_directories() {
        let dir = tempfile::tempdir().unwrap();
        for (entry, remote) in [
            ("relative/dir", false),
            ("/a/../b", false),
            ("s3://bucket/prefix", true),
            ("https://u:secret@host/p", true),
            ("https://u:p/secret@host/p", true),
        ] {
            let err = locations(dir.path(), &[entry]).unwrap_err();
            assert_eq!(
                matches!(err, Error::Unsupported(_)),
                remote,
                "{entry}: {err}"
            );
            assert!(!err.to_string().contains("secret"));
        }
        let missing = dir.path().join("missing");
        assert!(locations(dir.path(), &[missing.to_str().unwrap()]).is_err());
    }
}
