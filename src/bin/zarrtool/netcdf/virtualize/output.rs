//! Writes a virtual hierarchy: as a kerchunk reference file (JSON, version 1: documents as
//! text, copied chunks as `base64:`, referenced chunks as `[path, offset, length]`), or into
//! an Icechunk repository as virtual chunks, committed at once.

use super::combine::{Hierarchy, Values};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::node::{Array, Group, Mode};
use zarr::store::{join_key, open_url, repository_of, MemoryStore, Store};
use zarr::{Error, Result};

/// Whether `key` names a metadata document (kept as text in a reference file).
fn is_document(key: &str) -> bool {
    let name = key.rsplit('/').next().unwrap_or(key);
    matches!(name, ".zarray" | ".zattrs" | ".zgroup" | "zarr.json")
}

/// Creates the groups and arrays of `h` in `store` (the root group with `root_mode`),
/// writes the copied values and calls `reference` for each referenced chunk (its key, file,
/// offset and length). Returns the number of references and of files they point into.
fn build(
    h: &Hierarchy,
    store: &Arc<dyn Store>,
    root_mode: Mode,
    mut reference: impl FnMut(String, &str, u64, u64) -> Result<()>,
) -> Result<(usize, usize)> {
    for (i, g) in h.groups.iter().enumerate() {
        let mode = if i == 0 { root_mode } else { Mode::CreateNew };
        Group::open_with(store.clone(), &g.path, mode, h.format, &g.attrs)?;
    }
    let mut count = 0;
    let mut targets = std::collections::BTreeSet::new();
    for a in &h.arrays {
        let meta = a.meta.clone();
        let array = Array::create(
            store.clone(),
            &a.path,
            meta,
            &a.attrs,
            Mode::CreateNew,
            h.format,
        )?;
        match &a.values {
            Values::Referenced(refs) => {
                for (index, target, at, len) in refs {
                    let key = join_key(&a.path, &a.meta.chunk_key(index));
                    reference(key, target, *at, *len)?;
                    targets.insert(target.as_ref());
                    count += 1;
                }
            }
            Values::Copied(data) => {
                let start = vec![0; a.meta.rank()];
                let elem = a.meta.dtype.element_type();
                array.write(&start, &a.meta.shape, elem, zarr::meta::Order::C, data)?;
            }
        }
    }
    Ok((count, targets.len()))
}

/// Writes `h` (Zarr v2) as the reference file `output`; returns the number of references
/// and of files they point into.
pub fn reference_file(h: &Hierarchy, output: &str) -> Result<(usize, usize)> {
    use base64::Engine;
    let docs: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut refs = Map::new();
    let counted = build(h, &docs, Mode::CreateNew, |key, target, at, len| {
        refs.insert(key, json!([target, at, len]));
        Ok(())
    })?;
    for key in docs.list()? {
        let bytes = docs.get(&key)?.unwrap_or_default();
        let value = match is_document(&key) {
            true => String::from_utf8(bytes)
                .map_err(|_| Error::Internal(format!("document {key:?} is not UTF-8")))?,
            false => format!(
                "base64:{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            ),
        };
        refs.insert(key, Value::String(value));
    }
    let text = serde_json::to_vec(&json!({"version": 1, "refs": refs}))
        .map_err(|e| Error::Internal(format!("writing the references: {e}")))?;
    write_replacing(Path::new(output), &text)?;
    Ok(counted)
}

/// Writes `h` (Zarr v3) into the Icechunk repository `output` (created when missing) as
/// virtual chunks of its files, allowing their directories as virtual chunk containers, in
/// one commit; a repository holding anything is replaced only with `overwrite`. Returns
/// the number of references and of files they point into.
pub fn icechunk(h: &Hierarchy, output: &str, overwrite: bool) -> Result<(usize, usize)> {
    let mut dirs: Vec<String> = Vec::new();
    for target in &h.targets {
        let dir = Path::new(target.as_ref())
            .parent()
            .unwrap_or(Path::new("/"))
            .display()
            .to_string();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    // The files' directories join those the caller allows (ZARRTOOL_STORE_OPTIONS).
    let mut options = crate::nodes::store_options(output)?.unwrap_or_default();
    let listed = options
        .entry("virtual_chunk_containers")
        .or_insert(json!([]));
    if let Value::Array(list) = listed {
        list.extend(dirs.into_iter().map(Value::from));
    }
    // A repository on local disk that this call creates is removed again if it fails.
    let created = local_repository(output).filter(|dir| !dir.exists());
    let written = (|| {
        let options = Value::Object(options).to_string();
        let store = open_url(output, Mode::Append, Some(&options))?;
        if !overwrite && !store.list_prefix("")?.is_empty() {
            return Err(Error::Exists(format!(
                "{output:?} holds a hierarchy already (--overwrite replaces it)"
            )));
        }
        let repo = repository_of(store.as_ref())?;
        let counted = build(h, &store, Mode::Overwrite, |key, target, at, len| {
            repo.set_virtual_ref(&key, target, at, len)
        })?;
        let files = h.targets.len();
        let plural = if files == 1 { "" } else { "s" };
        repo.commit(&format!("zarrtool virtualize: {files} file{plural}"))?;
        store.close()?;
        Ok(counted)
    })();
    if let (Err(_), Some(dir)) = (&written, &created) {
        let _ = std::fs::remove_dir_all(dir);
    }
    written
}

/// The directory of the repository `url` names when it is on local disk.
fn local_repository(url: &str) -> Option<PathBuf> {
    let (scheme, rest) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("icechunk") {
        return None;
    }
    let path = rest.split('?').next()?;
    let path = path.strip_prefix("localhost").unwrap_or(path);
    path.starts_with('/').then(|| PathBuf::from(path))
}

/// Names on standard error the files of `h` that lie outside the directory of the
/// reference file `output`, where its references may point by default.
pub fn name_files_outside(h: &Hierarchy, output: &str) -> Result<()> {
    let out = Path::new(output);
    let dir = std::fs::canonicalize(
        out.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
    .map_err(|e| Error::io(format!("reading the directory of {output:?}"), e))?;
    let outside: Vec<&Path> = h
        .targets
        .iter()
        .map(|t| Path::new(t.as_ref()))
        .filter(|f| !f.starts_with(&dir))
        .collect();
    if let Some(f) = outside.first() {
        eprintln!(
            "zarrtool: {} of the files (such as {:?}) lie outside {:?}, where references may \
             point by default: write the reference file beside them, or open it with the \
             store option {{\"allowed_targets\": [\"{}\"]}}",
            outside.len(),
            f,
            dir,
            f.parent().unwrap_or(Path::new("/")).display()
        );
    }
    Ok(())
}

/// Writes `bytes` to `path` under a temporary name first, then renames it over `path`.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidArg(format!("{path:?} names no file")))?;
    let temp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&temp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(Error::io(format!("writing {}", path.display()), e));
    }
    Ok(())
}
