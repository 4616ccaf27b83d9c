//! Kerchunk reference files through `reference:///PATH`: arrays written by libzarr, then
//! described by reference files that the tests build (version 0 and 1, templates, `gen`,
//! inline and ranged values), read back exactly; and where references may point.

use crate::common;

use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::{Format, Order};
use zarr::node::{Array, ArrayBuilder, Group, Mode, Node, NodeKind};
use zarr::store::{open_url, FilesystemStore, Store};
use zarr::Error;

fn doubles(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i as f64 * 0.5 - 3.0).to_ne_bytes())
        .collect()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

fn open(refs: &Path, options: Option<&str>) -> zarr::Result<Arc<dyn Store>> {
    open_url(&format!("reference://{}", s(refs)), Mode::Read, options)
}

/// A v2 group `g` with attributes and a zlib-compressed float64 array `g/x` (7 x 5 in
/// chunks of 3 x 2, one chunk never written) in a directory store at `dir`.
fn write_v2_tree(dir: &Path) -> Vec<u8> {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, true, true).unwrap());
    let root = Group::open_as(store.clone(), "", Mode::Overwrite, Format::V2).unwrap();
    let g = root.open_group("g", Mode::Append).unwrap();
    g.set_attributes(json!({"title": "virtual"}).as_object().unwrap())
        .unwrap();
    let mut builder = ArrayBuilder::new(vec![7, 5], ElementType::Float64);
    builder
        .chunks(vec![3, 2])
        .compressor(json!({"id": "zlib", "level": 1}))
        .fill_value_json(json!(-1.0));
    let x = g.create_array("x", &builder, Mode::CreateNew).unwrap();
    // Rows 0..6 only: the chunks of row 6 stay unwritten and read as the fill value.
    let values = doubles(30);
    x.write(&[0, 0], &[6, 5], ElementType::Float64, Order::C, &values)
        .unwrap();
    let mut expected = values;
    expected.extend((0..5).flat_map(|_| (-1.0f64).to_ne_bytes()));
    expected
}

/// Every key of the directory store at `dir`: documents as inline text, chunks as ranges
/// of one archive file `archive` into which the test copies them (as a netCDF file holds
/// its chunks), with `url` naming the archive in the references.
fn references_into_archive(dir: &Path, archive: &Path, url: &str) -> Map<String, Value> {
    let store = FilesystemStore::open(dir, false, false).unwrap();
    let mut refs = Map::new();
    let mut bytes = b"HEADER".to_vec();
    for key in store.list().unwrap() {
        let value = store.get(&key).unwrap().unwrap();
        if key.rsplit('/').next().unwrap().starts_with(".z") {
            refs.insert(key, Value::String(String::from_utf8(value).unwrap()));
        } else {
            refs.insert(key, json!([url, bytes.len(), value.len()]));
            bytes.extend_from_slice(&value);
            bytes.extend_from_slice(b"gap");
        }
    }
    std::fs::write(archive, bytes).unwrap();
    refs
}

fn read_x(store: Arc<dyn Store>) -> Vec<u8> {
    let x = Array::open(store, "g/x", Mode::Read).unwrap();
    let mut out = vec![0u8; 35 * 8];
    x.read(&[0, 0], &[7, 5], ElementType::Float64, Order::C, &mut out)
        .unwrap();
    out
}

#[test]
fn a_libzarr_array_reads_back_through_version_0_and_1_references() {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_v2_tree(&dir.path().join("src"));
    let archive = dir.path().join("archive.bin");

    // Version 0: absolute paths.
    let refs = references_into_archive(&dir.path().join("src"), &archive, s(&archive));
    assert!(refs.contains_key("g/x/0.0") && !refs.contains_key("g/x/2.0"));
    let v0 = dir.path().join("v0.json");
    write_json(&v0, &Value::Object(refs));
    let store = open(&v0, None).unwrap();
    assert_eq!(read_x(store.clone()), expected);
    let root = Group::open(store.clone(), "", Mode::Read).unwrap();
    assert_eq!(root.member_names(NodeKind::Group).unwrap(), ["g"]);
    let g = root.open_group("g", Mode::Read).unwrap();
    assert_eq!(g.attributes().unwrap()["title"], "virtual");
    assert_eq!(g.member_names(NodeKind::Array).unwrap(), ["x"]);
    assert!(matches!(
        Group::open(store, "g", Mode::ReadWrite),
        Err(Error::ReadOnly(_))
    ));

    // Version 1: the archive's URL through a template, metadata as JSON objects and base64.
    let mut refs = references_into_archive(
        &dir.path().join("src"),
        &archive,
        "file://{{root}}/archive.bin",
    );
    let zarray: Value = serde_json::from_str(refs[".zgroup"].as_str().unwrap()).unwrap();
    refs.insert(".zgroup".into(), zarray);
    let zattrs = refs["g/.zattrs"].as_str().unwrap().to_string();
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(zattrs);
    refs.insert(
        "g/.zattrs".into(),
        Value::String(format!("base64:{encoded}")),
    );
    let v1 = dir.path().join("v1.json");
    write_json(
        &v1,
        &json!({"version": 1, "templates": {"root": s(dir.path())}, "refs": refs}),
    );
    let store = open(&v1, None).unwrap();
    assert_eq!(read_x(store.clone()), expected);
    let g = Group::open(store, "g", Mode::Read).unwrap();
    assert_eq!(g.attributes().unwrap()["title"], "virtual");
}

#[test]
fn whole_file_references_and_v3_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&src, true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![10], ElementType::Int16);
    builder.chunks(vec![4]).zarr_format(3).unwrap();
    let a = builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    let values: Vec<u8> = (0..10i16)
        .flat_map(|v| (v * 7 - 20).to_ne_bytes())
        .collect();
    a.write(&[0], &[10], ElementType::Int16, Order::C, &values)
        .unwrap();
    let mut refs = Map::new();
    for key in store.list().unwrap() {
        let url = format!("file://{}", s(&src.join(&key)));
        refs.insert(key, json!([url]));
    }
    assert!(refs.contains_key("a/zarr.json") && refs.contains_key("a/c/2"));
    let path = dir.path().join("refs.json");
    write_json(&path, &Value::Object(refs));
    let store = open(&path, None).unwrap();
    let chunk = std::fs::read(src.join("a/c/2")).unwrap();
    assert_eq!(store.size("a/c/2").unwrap(), Some(chunk.len() as u64));
    assert_eq!(
        store.get_range("a/c/2", 1, 2).unwrap().unwrap(),
        chunk[1..3]
    );
    let a = Array::open(store, "a", Mode::Read).unwrap();
    let mut out = vec![0u8; 20];
    a.read(&[0], &[10], ElementType::Int16, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, values);
}

/// A reference file whose `gen` entry describes a 4 x 6 int32 array `v` in chunks of
/// 2 x 3, uncompressed, laid end to end in C order after a 100-byte header of a data file
/// beside it (as a contiguous netCDF variable would be); and the array's values.
fn write_gen_refs(dir: &Path) -> (PathBuf, Vec<i32>) {
    let values: Vec<i32> = (0..24).map(|i| i * 11 - 50).collect();
    let mut data = vec![0xAAu8; 100];
    for ci in 0..2 {
        for cj in 0..2 {
            for r in 0..2 {
                for c in 0..3 {
                    let v = values[(ci * 2 + r) * 6 + cj * 3 + c];
                    data.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    std::fs::write(dir.join("data.bin"), &data).unwrap();
    let zarray = json!({"zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<i4",
        "compressor": null, "fill_value": 0, "filters": null, "order": "C"});
    let refs = json!({
        "version": 1,
        "templates": {"data": format!("{}/data.bin", s(dir))},
        "gen": [{"key": "v/{{i}}.{{j}}", "url": "{{data}}",
                 "offset": "{{100 + (i * 2 + j) * 24}}", "length": "24",
                 "dimensions": {"i": {"stop": 2}, "j": [0, 1]}}],
        "refs": {".zgroup": {"zarr_format": 2}, "v/.zarray": zarray},
    });
    let path = dir.join("refs.json");
    write_json(&path, &refs);
    (path, values)
}

#[test]
fn gen_entries_expand_over_a_file_of_uncompressed_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (path, values) = write_gen_refs(dir.path());
    let store = open(&path, None).unwrap();
    assert_eq!(
        store.list().unwrap(),
        [".zgroup", "v/.zarray", "v/0.0", "v/0.1", "v/1.0", "v/1.1"]
    );
    let v = Array::open(store, "v", Mode::Read).unwrap();
    let mut out = vec![0u8; 96];
    v.read(&[0, 0], &[4, 6], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    let expected: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    assert_eq!(out, expected);
}

#[cfg(feature = "cli")]
#[test]
fn zarrtool_browses_and_dumps_a_reference_file() {
    use common::zarrtool::{fails, ok};
    let dir = tempfile::tempdir().unwrap();
    let (path, values) = write_gen_refs(dir.path());
    let url = format!("reference://{}", s(&path));
    let tree = ok(&["tree", &url]);
    assert!(tree.contains("v array {4, 6} <i4"), "{tree}");
    let info = ok(&["info", &url, "v"]);
    assert!(
        info.contains("shape: 4 x 6") && info.contains("chunks initialized: 4/4"),
        "{info}"
    );
    let rows: Vec<String> = values
        .chunks(6)
        .map(|row| row.iter().map(i32::to_string).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(ok(&["dump", &url, "v"]).lines().collect::<Vec<_>>(), rows);
    // A reference file that points elsewhere: the error names the key and the target.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace(s(dir.path()), "/etc"),
    )
    .unwrap();
    let err = fails(&["dump", &url, "v"], 1);
    assert!(
        err.contains("\"v/0.0\" points to \"/etc/data.bin\"") && err.contains("outside"),
        "{err}"
    );
}

/// The message of reading `key` through the reference file at `refs`.
fn read_error(store: &Arc<dyn Store>, key: &str) -> Error {
    store.get(key).unwrap_err()
}

#[test]
fn references_may_point_only_where_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.bin"), b"inside").unwrap();
    std::fs::write(outside.path().join("out.bin"), b"outside").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), dir.path().join("sub/link")).unwrap();
    let out_path = s(&outside.path().join("out.bin")).to_string();
    let escape = format!("{}/sub/../../{}", s(dir.path()), "x");
    let refs = json!({
        "ok": [format!("{}/in.bin", s(dir.path())), 0, 2],
        "abs": ["/etc/passwd", 0, 4],
        "proc": ["/proc/self/environ"],
        "out": [out_path, 0, 3],
        "dots": [escape],
        "link": [format!("{}/sub/link/out.bin", s(dir.path())), 0, 3],
        "metadata": ["http://169.254.169.254/latest/meta-data/"],
        "signed": ["https://user:secret@host/bucket/k?X-Amz-Signature=secret"],
        "s3": ["s3://bucket/key.nc", 0, 10],
        "missing": [format!("{}/nothing.bin", s(dir.path()))],
    });
    let path = dir.path().join("refs.json");
    write_json(&path, &refs);
    let store = open(&path, None).unwrap();
    assert_eq!(store.get("ok").unwrap().unwrap(), b"in");
    for (key, target, kind) in [
        ("abs", "/etc/passwd", "outside"),
        ("proc", "/proc/self/environ", "outside"),
        ("out", "out.bin", "outside"),
        ("dots", "/sub/../../x", "'..'"),
        ("link", "sub/link/out.bin", "symbolic link"),
    ] {
        let err = read_error(&store, key);
        let message = err.to_string();
        assert!(matches!(err, Error::InvalidKey(_)), "{key}: {message}");
        assert!(
            message.contains(&format!("{key:?}"))
                && message.contains(target)
                && message.contains(kind),
            "{key}: {message}"
        );
        // A size, a range and a listing go through the same rule.
        assert!(store.get_range(key, 0, 1).is_err());
    }
    for key in ["metadata", "signed", "s3"] {
        let err = read_error(&store, key);
        let message = err.to_string();
        assert!(matches!(err, Error::Unsupported(_)), "{key}: {message}");
        assert!(message.contains(&format!("{key:?}")) && message.contains("not supported yet"));
        assert!(!message.contains("secret"), "{message}");
    }
    assert!(store
        .get("metadata")
        .unwrap_err()
        .to_string()
        .contains("169.254.169.254"));
    let err = read_error(&store, "missing");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert_eq!(store.list().unwrap().len(), 10);

    // The option widens the rule to the directories it names, and to nothing else.
    let options = json!({"allowed_targets": [s(outside.path())]}).to_string();
    let store = open(&path, Some(&options)).unwrap();
    assert_eq!(store.get("out").unwrap().unwrap(), b"out");
    assert!(matches!(read_error(&store, "abs"), Error::InvalidKey(_)));
    // A link is resolved beneath the directory it is named in: out of it is refused even
    // into another allowed directory.
    assert!(matches!(read_error(&store, "link"), Error::InvalidKey(_)));
    for bad in [
        json!({"allowed_targets": ["relative"]}),
        json!({"allowed_targets": "/"}),
        json!({"other": 1}),
    ] {
        assert!(
            matches!(
                open(&path, Some(&bad.to_string())),
                Err(Error::InvalidArg(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn hostile_reference_files_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.bin"), b"0123456789").unwrap();
    let data = format!("{}/data.bin", s(dir.path()));
    let path = dir.path().join("refs.json");
    for (refs, expected) in [
        (json!([1, 2]), "expected a JSON object of references"),
        (
            json!({"version": 1, "gen": [{"key": "k{{i}}", "url": "/f",
            "dimensions": {"i": {"stop": 1_000_000_000_000u64}}}]}),
            "more references than",
        ),
        (json!({"a": "base64:@@"}), "malformed"),
        (json!({"a": [data.clone(), 0, "1"]}), "not a byte count"),
    ] {
        write_json(&path, &refs);
        let message = open(&path, None).unwrap_err().to_string();
        assert!(message.contains(expected), "{refs}: {message}");
        assert!(message.contains(s(&path)), "{message}");
    }
    std::fs::write(&path, "{\"a\": ".repeat(100_000)).unwrap();
    assert!(matches!(open(&path, None), Err(Error::Metadata(_))));

    // Ranges past the end of their target: errors naming the key when read, never short.
    write_json(
        &path,
        &json!({"short": [data.clone(), 8, 5], "huge": [data.clone(), 0, 1u64 << 63],
                "far": [data.clone(), u64::MAX, 1], "fine": [data, 8, 2]}),
    );
    let store = open(&path, None).unwrap();
    assert_eq!(store.get("fine").unwrap().unwrap(), b"89");
    for key in ["short", "huge", "far"] {
        let message = read_error(&store, key).to_string();
        assert!(
            message.contains(&format!("{key:?}")) && message.contains("past"),
            "{key}: {message}"
        );
    }
    // A size is the range's length only once the range is found within its target.
    for key in ["short", "huge", "far"] {
        let err = store.size(key).unwrap_err();
        assert!(
            matches!(&err, Error::Io(m) if m.contains(&format!("{key:?}")) && m.contains("past")),
            "{key}: {err}"
        );
    }
    assert_eq!(store.size("fine").unwrap(), Some(2));
    write_json(
        &path,
        &json!({"elsewhere": ["/elsewhere/x", 0, 9223372036854775807u64]}),
    );
    let store = open(&path, None).unwrap();
    let err = store.size("elsewhere").unwrap_err();
    assert!(
        matches!(&err, Error::InvalidKey(m) if m.contains("outside")),
        "{err}"
    );
    let mut buf = Vec::new();
    assert!(matches!(
        store.get_into("elsewhere", &mut buf, u64::MAX),
        Err(Error::InvalidKey(_))
    ));
    // Its keys live in the reference file's references, not beside it.
    assert_eq!(store.location(), None);
    assert!(matches!(store.set("fine", b"x"), Err(Error::ReadOnly(_))));
}

#[test]
fn relative_targets_are_relative_to_the_reference_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/data.bin"), b"0123456789").unwrap();
    let path = dir.path().join("refs.json");
    write_json(
        &path,
        &json!({"a": ["d/data.bin", 2, 3], "b": ["file:d/data.bin"], "c": ["d/data.bin/"]}),
    );
    // Whatever the working directory is (the tests' own, here).
    let store = open(&path, None).unwrap();
    assert_eq!(store.get("a").unwrap().unwrap(), b"234");
    assert_eq!(store.get("b").unwrap().unwrap().len(), 10);
    assert_eq!(store.get("c").unwrap().unwrap().len(), 10);
}

/// The reference file's directory is held from the moment the store opens: a directory
/// swapped in at its path later (for a link elsewhere) is never read.
#[cfg(unix)]
#[test]
fn the_reference_files_directory_is_held_once_opened() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("refs");
    let moved = top.path().join("moved");
    let outside = top.path().join("outside");
    for d in [&dir, &outside] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(dir.join("data.bin"), b"inside").unwrap();
    std::fs::write(outside.join("data.bin"), b"SECRET").unwrap();
    let path = dir.join("refs.json");
    write_json(
        &path,
        &json!({"rel": ["data.bin"], "abs": [format!("{}/data.bin", s(&dir))]}),
    );
    let store = open(&path, None).unwrap();
    std::fs::rename(&dir, &moved).unwrap();
    std::os::unix::fs::symlink(&outside, &dir).unwrap();
    for key in ["rel", "abs"] {
        assert_eq!(store.get(key).unwrap().unwrap(), b"inside", "{key}");
    }
}

/// Set in the child process that [`hostile_files_fail_within_a_memory_limit`] starts.
const LIMITED_CHILD: &str = "ZARR_REFERENCE_LIMIT_CHILD";

/// Hostile reference files of a few tens of MB are refused while read, within an address
/// space of 512 MiB: none is built whole in memory, and none expands before its limits are
/// checked (so this finishes in seconds, not hours).
#[test]
fn hostile_files_fail_within_a_memory_limit() {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" \"$@\"")
        .arg(exe)
        .args([
            "--exact",
            "reference::limited_hostile_files",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(LIMITED_CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for case in ["zeros", "templates", "gen"] {
        assert!(stdout.contains(&format!("refused {case}")), "{stdout}");
    }
}

#[test]
fn limited_hostile_files() {
    if std::env::var_os(LIMITED_CHILD).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refs.json");
    let entry = r#"{"key": "k", "url": "/f", "dimensions": {"i": {"stop": 4000000}}}"#;
    for (case, text, expected) in [
        (
            "zeros",
            format!(r#"{{"a": [{}0]}}"#, "0,".repeat(20_000_000)),
            "not a longer list",
        ),
        (
            "templates",
            format!(
                r#"{{"version": 1, "templates": {{{}"z": "v"}}}}"#,
                "\"t\": \"v\",".repeat(2_000_000)
            ),
            "more templates than",
        ),
        (
            "gen",
            format!(
                r#"{{"version": 1, "gen": [{}]}}"#,
                vec![entry; 250].join(",")
            ),
            "more references than",
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = open(&path, None).unwrap_err();
        assert!(
            matches!(&err, Error::Metadata(m) if m.contains(expected)),
            "{case}: {err}"
        );
        println!("refused {case}");
    }
}
