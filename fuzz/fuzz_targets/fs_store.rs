//! The filesystem store against a hostile tree: the input builds files, directories,
//! symbolic links (inside, outside, absolute, relative, dangling, cycles) and FIFOs under
//! and around a store root in a fresh temporary directory, then runs store operations on
//! keys made of the same names and of `..`, `.`, absolute and over-long attempts. After
//! each input nothing outside the root may have changed; no call may block (libFuzzer's
//! timeout catches a FIFO opened for reading without O_NONBLOCK). The root lies four
//! directories deep in the temporary directory and no link climbs more than three levels,
//! so whatever a link reaches is inside the temporary directory and in the snapshot; the
//! harness itself never follows a link while building the tree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use libzarr_fuzz::Input;
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::{Path, PathBuf};
use zarr::store::{Durability, FilesystemStore, Store};

/// Names the tree and the keys are made of.
const NAMES: [&str; 8] = ["a", "b", "c", "0", "x", ".zarray", "zarr.json", "l"];

/// Key components beyond [`NAMES`]: escapes, reserved and malformed names.
const ODD: [&str; 8] = ["..", ".", "", "\\", "C:", ".zarr-tmp.1", "\0", "outside"];

/// Link targets, relative to the link unless absolute (`@` is the directory holding the
/// root and `outside`).
const TARGETS: [&str; 12] = [
    "a",
    "..",
    "../a",
    "../..",
    "../../outside",
    "../outside/x",
    "@/outside",
    "@/root/a",
    "missing",
    "l",
    ".",
    "../../..",
];

/// What a path outside the root holds: file content, directory, link target or FIFO.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
    Fifo,
    Other,
}

/// Everything below `dir` except `skip`, without following links.
fn snapshot(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, Node>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path == skip {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        let node = if kind.is_symlink() {
            Node::Link(fs::read_link(&path).unwrap_or_default())
        } else if kind.is_dir() {
            snapshot(&path, skip, out);
            Node::Dir
        } else if kind.is_fifo() {
            Node::Fifo
        } else if kind.is_file() {
            Node::File(fs::read(&path).unwrap_or_default())
        } else {
            Node::Other
        };
        out.insert(path, node);
    }
}

/// A relative path of 1-3 names.
fn rel_path(input: &mut Input) -> String {
    let depth = 1 + input.below(3) as usize;
    (0..depth)
        .map(|_| NAMES[input.below(NAMES.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join("/")
}

/// Creates the directories of `rel` below `base` that are missing; false when one of them
/// is something else (a link is never followed).
fn plain_parents(base: &Path, rel: &str) -> bool {
    let mut path = base.to_path_buf();
    let names: Vec<&str> = rel.split('/').collect();
    for name in &names[..names.len() - 1] {
        path.push(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_dir() => {}
            Ok(_) => return false,
            Err(_) => {
                if fs::create_dir(&path).is_err() {
                    return false;
                }
            }
        }
    }
    true
}

/// Builds one node of the tree below `base` (the root, or the directory outside it);
/// `home` holds both.
fn build_node(input: &mut Input, home: &Path, base: &Path) {
    let rel = rel_path(input);
    let kind = input.below(5);
    let len = if kind == 0 {
        input.below(8) as usize
    } else {
        0
    };
    let content: Vec<u8> = (0..len).map(|_| input.byte()).collect();
    let target = TARGETS[if kind == 2 || kind == 3 {
        input.below(TARGETS.len() as u64) as usize
    } else {
        0
    }]
    .replace('@', home.to_str().unwrap());
    if !plain_parents(base, &rel) {
        return;
    }
    let path = base.join(rel);
    match kind {
        0 => {
            // create_new never opens what is there (a FIFO, a link).
            if let Ok(mut file) = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                let _ = file.write_all(&content);
            }
        }
        1 => {
            let _ = fs::create_dir(&path);
        }
        2 | 3 => {
            let _ = symlink(target, &path);
        }
        _ => {
            let _ = rustix::fs::mknodat(
                rustix::fs::CWD,
                &path,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            );
        }
    }
}

/// A key: mostly names of the tree, sometimes escapes, absolute or over-long.
fn key(input: &mut Input) -> String {
    match input.below(8) {
        0 => {
            let odd = ODD[input.below(ODD.len() as u64) as usize];
            format!("{}/{odd}/{}", rel_path(input), rel_path(input))
        }
        1 => format!("/{}", rel_path(input)),
        2 => "0.".repeat(200),
        3 => format!("{}/", rel_path(input)),
        _ => rel_path(input),
    }
}

/// Runs one store operation; every outcome but a panic or a hang is acceptable.
fn operate(input: &mut Input, store: &FilesystemStore) {
    let k = key(input);
    let _ = match input.below(12) {
        0 | 1 => store.get(&k).map(drop),
        2 => {
            let mut buf = Vec::new();
            store.get_into(&k, &mut buf, input.below(16)).map(drop)
        }
        3 => store
            .get_range(&k, input.below(8), input.below(8))
            .map(drop),
        4 => store.size(&k).map(drop),
        5 | 6 => {
            let len = input.below(16) as usize;
            let value: Vec<u8> = (0..len).map(|_| input.byte()).collect();
            store.set(&k, &value)
        }
        7 => store.erase(&k).map(drop),
        8 => store.erase_prefix(&k),
        9 => store.list_prefix(&k).map(drop),
        10 => store.list_dir(&k).map(drop),
        _ => match input.below(4) {
            0 => store.set_durability(Durability::None),
            1 => store.set_durability(Durability::Flush),
            2 => store.set_durability(Durability::EachWrite),
            _ => store.flush(),
        },
    };
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("d/d/d");
    let (root, outside) = (home.join("root"), home.join("outside"));
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("x"), b"secret").unwrap();
    for _ in 0..input.below(24) {
        let base = if input.below(4) == 0 { &outside } else { &root };
        build_node(&mut input, &home, base);
    }
    let mut before = BTreeMap::new();
    snapshot(tmp.path(), &root, &mut before);
    if let Ok(store) = FilesystemStore::open(&root, true, false) {
        store.set_durability(Durability::None).unwrap();
        while !input.rest().is_empty() {
            operate(&mut input, &store);
        }
    }
    let mut after = BTreeMap::new();
    snapshot(tmp.path(), &root, &mut after);
    assert_eq!(before, after, "something outside the store root changed");
});
