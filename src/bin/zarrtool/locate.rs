//! Paths into stores: `zarrtool info data.zarr/g/a` names the node `g/a` of the store
//! `data.zarr`, as zarr-python and ncdump users write it, beside the two-argument form
//! (`data.zarr g/a`). A store argument that is not itself a store's root is split at its
//! deepest ancestor that is one: a directory (or URL) holding a metadata document
//! (`zarr.json`, `.zgroup`, `.zarray`, `.zattrs`), or a zip file; the rest leads the node
//! path. A store argument that is a root, or has no such ancestor among the parts written,
//! is taken as given (a new store, or a missing one the command then reports).

use crate::cli::{AttrsAction, Command};
use std::io::Read;
use std::path::Path;
use zarr::node::Mode;
use zarr::store::open_url;
use zarr::Result;

/// The metadata documents that make a directory a store's root.
const DOCUMENTS: [&str; 4] = ["zarr.json", ".zgroup", ".zarray", ".zattrs"];

/// Splits every store argument of `command` that reaches into a store (see the module).
pub(crate) fn locate(command: &mut Command) -> Result<()> {
    match command {
        Command::Info { node, .. }
        | Command::Ls { node, .. }
        | Command::Tree { node }
        | Command::Header { node, .. }
        | Command::Meta { node, .. }
        | Command::Dump { node, .. }
        | Command::Create { node, .. }
        | Command::Import { node, .. }
        | Command::Export { node, .. }
        | Command::Consolidate { node, .. }
        | Command::Migrate { node, .. }
        | Command::Rm { node, .. }
        | Command::Validate { node, .. } => split(&mut node.store, &mut node.path),
        Command::Attrs { action } => match action {
            AttrsAction::Get { node, .. } => split(&mut node.store, &mut node.path),
            AttrsAction::Set { store, path, .. } | AttrsAction::Del { store, path, .. } => {
                split(store, path)
            }
        },
        Command::Mv {
            store, from, to, ..
        } => {
            let base = split_store(store);
            *from = join(&base, from);
            *to = join(&base, to);
            Ok(())
        }
        Command::Copy {
            source,
            target,
            from,
            to,
            ..
        } => {
            split(source, from)?;
            split(target, to)
        }
        Command::Diff {
            left,
            right,
            left_path,
            right_path,
            ..
        } => {
            split(left, left_path)?;
            split(right, right_path)
        }
        // Repository URLs name a repository's root and a reference, never a node.
        Command::Log { .. } | Command::Tag { .. } | Command::Branch { .. } => Ok(()),
        Command::Version { .. } | Command::Completions { .. } | Command::Man => Ok(()),
    }
}

/// Moves the part of `store` below its root to the front of `path`.
fn split(store: &mut String, path: &mut String) -> Result<()> {
    let base = split_store(store);
    *path = join(&base, path);
    Ok(())
}

/// `path` below `base` (both node paths; `""` or `/` is the root).
fn join(base: &str, path: &str) -> String {
    let (base, path) = (base.trim_matches('/'), path.trim_matches('/'));
    match (base.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (false, true) => base.to_string(),
        (false, false) => format!("{base}/{path}"),
    }
}

/// Cuts `store` back to its deepest ancestor that is a store's root; returns the node path
/// cut off (`""` when `store` is kept).
fn split_store(store: &mut String) -> String {
    match store.split_once("://") {
        Some((scheme, _)) if is_object_store(scheme) => split_url(store),
        Some(_) => String::new(),
        None => split_local(store),
    }
}

/// Whether `scheme` names an object store or a web server (URL paths split there).
fn is_object_store(scheme: &str) -> bool {
    matches!(
        scheme.to_ascii_lowercase().as_str(),
        "s3" | "s3a" | "gs" | "gcs" | "az" | "azure" | "abfs" | "abfss" | "adl" | "http" | "https"
    )
}

/// [`split_store`] for a local path.
fn split_local(store: &mut String) -> String {
    let mut at = Path::new(store.as_str());
    if is_local_root(at) {
        return String::new();
    }
    let mut below = Vec::new();
    while let (Some(parent), Some(name)) = (at.parent(), at.file_name()) {
        let Some(name) = name.to_str() else {
            return String::new();
        };
        if parent.as_os_str().is_empty() {
            return String::new();
        }
        below.push(name.to_string());
        at = parent;
        if is_local_root(at) {
            below.reverse();
            let root = at.to_string_lossy().into_owned();
            *store = root;
            return below.join("/");
        }
    }
    String::new()
}

/// Whether the local `path` is a store's root: a directory holding a metadata document,
/// or a zip file.
fn is_local_root(path: &Path) -> bool {
    if path.is_dir() {
        return DOCUMENTS.iter().any(|name| path.join(name).is_file());
    }
    let mut magic = [0u8; 4];
    path.is_file()
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && matches!(&magic, b"PK\x03\x04" | b"PK\x05\x06")
}

/// [`split_store`] for an object store's URL: its path is cut back segment by segment
/// (the query and fragment kept) while the documents of a root are asked for. A failed
/// request (not a missing document) stops the search: the URL is kept as given.
fn split_url(store: &mut String) -> String {
    let end = store.find(['?', '#']).unwrap_or(store.len());
    let (head, tail) = store.split_at(end);
    let Some((scheme, rest)) = head.split_once("://") else {
        return String::new();
    };
    let Some((authority, path)) = rest.split_once('/') else {
        return String::new();
    };
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    for keep in (0..=segments.len()).rev() {
        let candidate = format!(
            "{scheme}://{authority}/{}{tail}",
            segments[..keep].join("/")
        );
        match url_is_root(&candidate) {
            Some(true) if keep == segments.len() => return String::new(),
            Some(true) => {
                let below = segments[keep..].join("/");
                *store = candidate;
                return below;
            }
            Some(false) => {}
            None => return String::new(),
        }
    }
    String::new()
}

/// Whether the store at `url` has a metadata document at its root; `None` when a request
/// failed.
fn url_is_root(url: &str) -> Option<bool> {
    let store = open_url(url, Mode::Read, None).ok()?;
    for name in DOCUMENTS {
        if store.size(name).ok()?.is_some() {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_paths_join_below_the_cut() {
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("g", ""), "g");
        assert_eq!(join("g", "/"), "g");
        assert_eq!(join("/g/", "a/b"), "g/a/b");
    }

    #[test]
    fn local_paths_split_at_their_deepest_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s.zarr");
        std::fs::create_dir_all(root.join("g/a/c")).unwrap();
        std::fs::write(root.join("zarr.json"), "{}").unwrap();
        std::fs::write(root.join("g/zarr.json"), "{}").unwrap();
        let cut = |given: &Path| {
            let mut store = given.to_str().unwrap().to_string();
            let below = split_store(&mut store);
            (store, below)
        };
        let g = root.join("g");
        let shown = |p: &Path| p.to_str().unwrap().to_string();
        assert_eq!(cut(&root), (shown(&root), String::new()));
        assert_eq!(cut(&g), (shown(&g), String::new()));
        assert_eq!(cut(&g.join("a/c")), (shown(&g), "a/c".to_string()));
        assert_eq!(cut(&root.join("x/y")), (shown(&root), "x/y".to_string()));
        let plain = dir.path().join("new.zarr");
        assert_eq!(cut(&plain), (shown(&plain), String::new()));
    }
}
