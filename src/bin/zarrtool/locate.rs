//! Paths into stores: `zarrtool info data.zarr/g/a` names the node `g/a` of the store
//! `data.zarr`, as zarr-python and ncdump users write it, beside the two-argument form
//! (`data.zarr g/a`). A store argument is split at its deepest part that is a store's
//! root: a directory (or URL) holding a metadata document (`zarr.json`, `.zgroup`,
//! `.zarray`, `.zattrs`), or a zip file; a local directory is then cut further up while
//! its parent directory is a group of the same hierarchy, so a node is always addressed
//! inside its hierarchy. The rest leads the node path. A store argument with no root among
//! the parts written is taken as given (a new store, or a missing one the command reports).

use crate::cli::{AttrsAction, Command};
use std::io::Read;
use std::path::Path;
use zarr::node::Mode;
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
        Command::Version { .. } | Command::Completions { .. } | Command::Man { .. } => Ok(()),
        // Files and a file to write, no store.
        Command::Virtualize { .. } => Ok(()),
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

/// Cuts `store` back to the root it reaches into (see the module); returns the node path
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

/// [`split_store`] for a local path: cut back to its deepest root, then further up while
/// the parent directory is a group of the same hierarchy, so that a node of a hierarchy is
/// addressed inside it (and writes refresh its consolidated metadata).
fn split_local(store: &mut String) -> String {
    let given = store.clone();
    let mut at = Path::new(&given);
    let mut below = Vec::new();
    while !is_local_root(at) {
        let Some((parent, name)) = step_up(at) else {
            return String::new();
        };
        below.push(name);
        at = parent;
    }
    while let Some((parent, name)) = step_up(at).filter(|(parent, _)| is_parent_group(parent, at)) {
        below.push(name);
        at = parent;
    }
    if below.is_empty() {
        return String::new();
    }
    below.reverse();
    *store = at.to_string_lossy().into_owned();
    below.join("/")
}

/// The parent of `path` and the name of `path`, among the parts written; `None` at the
/// first part or for a name that is not UTF-8.
fn step_up(path: &Path) -> Option<(&Path, String)> {
    let (parent, name) = (path.parent()?, path.file_name()?.to_str()?);
    (!parent.as_os_str().is_empty()).then(|| (parent, name.to_string()))
}

/// Whether the directory `parent` is a group of the same hierarchy as the node directory
/// `child`: a v3 group (`zarr.json` with `node_type` `group`) above a v3 node, or a v2
/// group (`.zgroup`) above a v2 node.
fn is_parent_group(parent: &Path, child: &Path) -> bool {
    if !child.is_dir() {
        return false;
    }
    if child.join("zarr.json").is_file() {
        let Ok(text) = std::fs::read(parent.join("zarr.json")) else {
            return false;
        };
        return serde_json::from_slice::<serde_json::Value>(&text)
            .is_ok_and(|doc| doc["node_type"] == "group");
    }
    parent.join(".zgroup").is_file()
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
    let store = crate::nodes::open_with_options(url, Mode::Read).ok()?;
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
    fn local_paths_split_at_their_outermost_root() {
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
        // Under a group of the same hierarchy, the cut goes up to the outermost one.
        let group = r#"{"zarr_format": 3, "node_type": "group"}"#;
        std::fs::write(root.join("zarr.json"), group).unwrap();
        assert_eq!(cut(&root), (shown(&root), String::new()));
        assert_eq!(cut(&g), (shown(&root), "g".to_string()));
        assert_eq!(cut(&g.join("a/c")), (shown(&root), "g/a/c".to_string()));
        // A v2 node under a v3 group is a hierarchy of its own.
        std::fs::remove_file(root.join("g/zarr.json")).unwrap();
        std::fs::write(root.join("g/.zgroup"), r#"{"zarr_format": 2}"#).unwrap();
        assert_eq!(cut(&g), (shown(&g), String::new()));
    }
}
