//! The `zarrtool` binary on real stores in temporary directories: exact output and exit
//! statuses. `ZARRTOOL_BIN` names the binary to test (scripts/check-install.sh runs these
//! tests on the installed one); the default is the one cargo builds. The netCDF import tests
//! run when that binary has netCDF support (`zarrtool version --features`), and must run
//! when `ZARR_TEST_NETCDF=1`; they need Debian's netcdf-bin (ncgen, ncdump).
#![cfg(feature = "cli")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common;

use common::zarrtool::{exe, fails, import_sample, ncgen, ok, s, succeeds, tool};

/// Runs zarrtool expecting success; returns its stderr (its stdout must be empty).
fn says(args: &[&str]) -> String {
    let out = succeeds(args);
    assert_eq!(out.stdout, b"", "zarrtool {args:?}");
    String::from_utf8(out.stderr).expect("UTF-8 messages")
}

/// A v3 array `a` of int32 0..20, shape 4x5, chunks 2x3, uncompressed, imported from a raw
/// file; the raw file's and the store's paths.
fn setup(dir: &Path) -> (String, String) {
    import_sample(dir, "a", &["--compressor", "null"])
}

/// `info` counts what a listing finds, the stored objects, by their name: chunks, or a
/// sharded array's shards, with the chunks a shard holds and how many tile the array.
#[test]
fn info_counts_the_stored_objects_by_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let text = ok(&["info", &store, "a"]);
    assert!(text.ends_with("\nchunks initialized: 4/4\n"), "{text}");
    let planned = says(&[
        "copy",
        &store,
        &store,
        "--from",
        "a",
        "--to",
        "s",
        "--shards",
        "2,6",
        "--dry-run",
    ]);
    assert_eq!(
        planned,
        "would copy array /a to /s (Zarr v3, 2 shards of 2 x 6, 4 chunks of 2 x 3)\n"
    );
    ok(&[
        "copy", &store, &store, "--from", "a", "--to", "s", "--shards", "2,6",
    ]);
    std::fs::remove_file(dir.path().join("s.zarr/s/c/1/0")).unwrap();
    let text = ok(&["info", &store, "s"]);
    assert!(text.contains("\nchunks: 2 x 3\nshards: 2 x 6\n"), "{text}");
    assert!(
        text.ends_with("\nshards initialized: 1/2\nchunks per shard: 2 (4 in all)\n"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&["info", "--json", &store, "s"])).unwrap();
    assert_eq!(v["chunks_initialized"], serde_json::Value::Null);
    assert_eq!(v["chunks_total"], 4);
    assert_eq!(v["shards_initialized"], 1);
    assert_eq!(v["shards_total"], 2);
}

#[test]
fn info_json_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let out = ok(&["info", "--json", &store, "a"]);
    let expected = r#"{
  "path": "/a",
  "node_type": "array",
  "zarr_format": 3,
  "shape": [
    4,
    5
  ],
  "chunks": [
    2,
    3
  ],
  "shards": null,
  "dtype": "<i4",
  "codecs": [
    {
      "name": "bytes",
      "configuration": {
        "endian": "little"
      }
    }
  ],
  "fill_value": 0,
  "dimension_names": null,
  "missing_value": null,
  "nbytes": 80,
  "stored_bytes": "#;
    assert!(out.starts_with(expected), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Four chunks of 2x3 int32 (24 bytes each, uncompressed) plus the metadata document.
    let meta_len = std::fs::metadata(dir.path().join("s.zarr/a/zarr.json"))
        .unwrap()
        .len();
    assert_eq!(v["stored_bytes"], 4 * 24 + meta_len);
    assert_eq!(v["chunks_initialized"], 4);
    assert_eq!(v["chunks_total"], 4);
    assert_eq!(v["shards_initialized"], serde_json::Value::Null);
    assert_eq!(v["shards_total"], serde_json::Value::Null);
}

#[test]
fn dump_text_csv_raw_and_export_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, store) = setup(dir.path());
    assert_eq!(
        ok(&["dump", &store, "a"]),
        "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n"
    );
    assert_eq!(
        ok(&["dump", "-f", "csv", "-r", "1:3,2:", &store, "a"]),
        "7,8,9\n12,13,14\n"
    );
    assert_eq!(ok(&["dump", "-r", "2,:2", &store, "a"]), "10 11\n");
    let out = tool(&["dump", "-f", "raw", "-r", "0,0:2", &store, "a"]);
    assert_eq!(out.stdout, [0, 0, 0, 0, 1, 0, 0, 0]);
    let back = dir.path().join("b.bin");
    ok(&["export", &store, "a", "-o", s(&back)]);
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&raw).unwrap());
    // Fortran order both ways is the identity.
    let f = dir.path().join("f.bin");
    ok(&["export", &store, "a", "-o", s(&f), "--order", "f"]);
    let fbytes = std::fs::read(&f).unwrap();
    assert_eq!(&fbytes[..8], &[0, 0, 0, 0, 5, 0, 0, 0]);
    let store2 = s(&dir.path().join("t.zarr")).to_string();
    ok(&[
        "import",
        s(&f),
        &store2,
        "x",
        "--dtype",
        "<i4",
        "--shape",
        "4,5",
        "--order",
        "f",
    ]);
    assert_eq!(ok(&["dump", &store2, "x"]), ok(&["dump", &store, "a"]));
    // Out of bounds and malformed regions are errors (exit 1) with the library's message.
    let out = tool(&["dump", "-r", "0:9,:", &store, "a"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: out of bounds: region \"0:9,:\": dimension 0: 0:9 is outside 0:4\n"
    );
}

/// `dump --missing TEXT` prints TEXT for each value equal to the CF missing value, as
/// ncdump prints `_` for its _FillValue: a Zarr v2 fill value (exactly, for integers), a
/// `_FillValue` attribute (NaN matching every NaN), never a v3 fill value alone.
#[test]
fn dump_missing_values_as_ncdump_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = s(&dir.path().join("m.zarr")).to_string();
    let ints = dir.path().join("i.bin");
    let bytes: Vec<u8> = [1i32, -999, 3, 0, -999, 6]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&ints, bytes).unwrap();
    let floats = dir.path().join("f.bin");
    let bytes: Vec<u8> = [1.5f32, f32::NAN, 0.0, -2.0, f32::NAN, 1e30]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&floats, bytes).unwrap();
    let raw = |file: &Path, node: &str, dtype: &str, format: &str| {
        ok(&[
            "import",
            s(file),
            &store,
            node,
            "--dtype",
            dtype,
            "--shape",
            "2,3",
            "--format",
            format,
        ])
    };
    raw(&ints, "i", "<i4", "2");
    // A Zarr v2 fill value of -999: the missing value, as xarray and netCDF-C read it.
    let zarray = dir.path().join("m.zarr/i/.zarray");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&zarray).unwrap()).unwrap();
    doc["fill_value"] = serde_json::json!(-999);
    std::fs::write(&zarray, doc.to_string()).unwrap();
    assert_eq!(ok(&["dump", &store, "i"]), "1 -999 3\n0 -999 6\n");
    assert_eq!(
        ok(&["dump", &store, "i", "--missing", "_"]),
        "1 _ 3\n0 _ 6\n"
    );
    assert_eq!(
        ok(&["dump", "-f", "csv", &store, "i", "--missing", ""]),
        "1,,3\n0,,6\n"
    );
    assert_eq!(
        ok(&["dump", &store, "i", "--missing", "_", "-r", "1,1:"]),
        "_ 6\n"
    );

    // Zarr v3: a fill value of 0 masks nothing; a _FillValue attribute of NaN every NaN.
    raw(&floats, "f", "<f4", "3");
    assert_eq!(
        ok(&["dump", &store, "f", "--missing", "_"]),
        "1.5 nan 0.0\n-2.0 nan 1e30\n"
    );
    ok(&["attrs", "set", &store, "f", "_FillValue", "\"NaN\""]);
    assert_eq!(
        ok(&["dump", &store, "f", "--missing", "_"]),
        "1.5 _ 0.0\n-2.0 _ 1e30\n"
    );
    assert_eq!(ok(&["dump", &store, "f"]), "1.5 nan 0.0\n-2.0 nan 1e30\n");
    assert_eq!(
        fails(&["dump", "-f", "raw", &store, "f", "--missing", "_"], 1),
        "zarrtool: invalid argument: --missing prints text for missing values: it is for \
         --format text and csv, not raw\n"
    );
}

#[test]
fn dump_strings_and_big_endian_import() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("s.bin");
    std::fs::write(&raw, b"ab\0\0cdef").unwrap();
    let store = s(&dir.path().join("s.zarr")).to_string();
    ok(&[
        "import",
        s(&raw),
        &store,
        "s",
        "--dtype",
        "|S4",
        "--shape",
        "2",
        "--format",
        "2",
    ]);
    assert_eq!(ok(&["dump", &store, "s"]), "b\"ab\" b\"cdef\"\n");
    let be = dir.path().join("be.bin");
    std::fs::write(&be, [0, 0, 1, 0, 0, 0, 0, 2]).unwrap();
    ok(&[
        "import",
        s(&be),
        &store,
        "b",
        "--dtype",
        ">i4",
        "--shape",
        "2",
    ]);
    assert_eq!(ok(&["dump", &store, "b"]), "256 2\n");
    // Exported in the stored type: big-endian again.
    let out = dir.path().join("out.bin");
    ok(&["export", &store, "b", "-o", s(&out)]);
    assert_eq!(std::fs::read(&out).unwrap(), [0, 0, 1, 0, 0, 0, 0, 2]);
    let out = tool(&[
        "import",
        s(&be),
        &store,
        "c",
        "--dtype",
        ">i4",
        "--shape",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds 8 bytes but shape 3"));
}

#[test]
fn ls_tree_attrs_rm_mv() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    ok(&["create", &store, "g/h", "--group"]);
    ok(&[
        "create", &store, "g/h/z", "--shape", "3", "--dtype", "float64", "--format", "3",
    ]);
    assert_eq!(
        ok(&["ls", &store]),
        "/       group\n/a      array {4, 5} <i4\n/g      group\n/g/h    group\n/g/h/z  array {3} <f8\n"
    );
    assert_eq!(
        ok(&["tree", &store]),
        "/\n├── a array {4, 5} <i4\n└── g\n    └── h\n        └── z array {3} <f8\n"
    );
    ok(&["attrs", "set", &store, "g", "title", "\"x, y\""]);
    ok(&["attrs", "set", &store, "g", "n", "[1, 2]"]);
    assert_eq!(
        ok(&["attrs", "get", &store, "g"]),
        "{\n  \"title\": \"x, y\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n"
    );
    ok(&["attrs", "del", &store, "g", "n"]);
    assert_eq!(
        ok(&["attrs", "get", &store, "g"]),
        "{\n  \"title\": \"x, y\"\n}\n"
    );
    let out = tool(&["attrs", "del", &store, "g", "n"]);
    assert_eq!(out.status.code(), Some(1));
    ok(&["mv", &store, "g/h", "k", "--dry-run"]);
    assert!(dir.path().join("s.zarr/g/h/z").exists());
    ok(&["mv", &store, "g/h", "k"]);
    assert_eq!(ok(&["dump", &store, "k/z"]), "0.0 0.0 0.0\n");
    ok(&["rm", &store, "k", "--dry-run"]);
    assert!(dir.path().join("s.zarr/k").exists());
    ok(&["rm", &store, "k"]);
    assert!(!dir.path().join("s.zarr/k").exists());
    let out = tool(&["rm", &store, "k"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: not found: no array or group at /k\n"
    );
}

#[test]
fn copy_converts_rechunks_shards_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let v2 = s(&dir.path().join("v2.zarr")).to_string();
    ok(&[
        "copy",
        &store,
        &v2,
        "--format",
        "2",
        "--rechunk",
        "4,5",
        "--codec",
        r#"{"id":"zlib","level":1}"#,
    ]);
    let meta: serde_json::Value = serde_json::from_str(&ok(&["meta", &v2, "a"])).unwrap();
    assert_eq!(meta["zarr_format"], 2);
    assert_eq!(meta["chunks"], serde_json::json!([4, 5]));
    assert_eq!(
        meta["compressor"],
        serde_json::json!({"id": "zlib", "level": 1})
    );
    assert_eq!(ok(&["dump", &v2, "a"]), ok(&["dump", &store, "a"]));
    let sharded = s(&dir.path().join("sh.zarr")).to_string();
    ok(&[
        "copy",
        &v2,
        &sharded,
        "--format",
        "3",
        "--rechunk",
        "1,5",
        "--shards",
        "2,5",
    ]);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--json", &sharded, "a"])).unwrap();
    assert_eq!(info["shards"], serde_json::json!([2, 5]));
    assert_eq!(info["chunks"], serde_json::json!([1, 5]));
    assert_eq!(tool(&["diff", &store, &sharded]).status.code(), Some(0));
    // Resume: a chunk already in the target is not rewritten; a missing one is.
    let kept = dir.path().join("sh.zarr/a/c/0/0");
    let removed = dir.path().join("sh.zarr/a/c/1/0");
    let before = std::fs::metadata(&kept).unwrap().modified().unwrap();
    std::fs::remove_file(&removed).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(&[
        "copy",
        &v2,
        &sharded,
        "--format",
        "3",
        "--rechunk",
        "1,5",
        "--shards",
        "2,5",
    ]);
    assert!(removed.exists());
    assert_eq!(
        std::fs::metadata(&kept).unwrap().modified().unwrap(),
        before
    );
    assert_eq!(tool(&["diff", &store, &sharded]).status.code(), Some(0));
    // Another layout at the target is refused without --overwrite.
    let out = tool(&["copy", &v2, &sharded, "--rechunk", "2,5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use --overwrite"));
    ok(&["copy", &v2, &sharded, "--rechunk", "2,5", "--overwrite"]);
    // A dry run writes nothing.
    let none = dir.path().join("none.zarr");
    ok(&["copy", &store, s(&none), "--dry-run"]);
    assert!(!none.exists());
}

/// The files under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                out.push(rel.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// `copy --rechunk` keeps a sharded array's shards when they hold whole chunks of the new
/// shape, refuses other chunks (naming --shards and --no-shards) and writes nothing;
/// `--no-shards`, or a Zarr v2 target (which says so), stores the chunks unsharded.
#[test]
fn copy_rechunk_keeps_shards_that_hold_whole_chunks() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = import_sample(
        dir.path(),
        "a",
        &["--compressor", "null", "--shards", "2,6"],
    );
    let values = "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n";
    assert_eq!(ok(&["dump", &store, "a"]), values);
    let meta_of = |store: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&["meta", store, "a"])).unwrap()
    };
    let regular =
        |shape: &[u64]| json!({"name": "regular", "configuration": {"chunk_shape": shape}});
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});

    // Chunks of 1 x 3 fit the shards of 2 x 6: two shard files, as in the source.
    let kept = dir.path().join("kept.zarr");
    assert_eq!(says(&["copy", &store, s(&kept), "--rechunk", "1,3"]), "");
    let meta = meta_of(s(&kept));
    assert_eq!(meta["chunk_grid"], regular(&[2, 6]));
    assert_eq!(meta["codecs"][0]["name"], "sharding_indexed");
    assert_eq!(
        meta["codecs"][0]["configuration"]["chunk_shape"],
        json!([1, 3])
    );
    assert_eq!(files_under(&kept.join("a/c")), ["0/0", "1/0"]);
    assert_eq!(ok(&["dump", s(&kept), "a"]), values);

    // Chunks of 2 x 4 do not: refused, nothing written.
    let refused = dir.path().join("refused.zarr");
    assert_eq!(
        fails(&["copy", &store, s(&refused), "--rechunk", "2,4"], 1),
        "zarrtool: invalid argument: /a: the shards 2 x 6 do not hold whole chunks of 2 x 4 \
         (--rechunk): give --shards a multiple of the chunks (--shards 2,8 is the nearest), \
         or --no-shards to store the 4 chunks unsharded\n"
    );
    assert!(!refused.exists());
    assert_eq!(
        fails(
            &["copy", &store, s(&refused), "--rechunk", "[[2,2],[3,2]]"],
            1
        ),
        "zarrtool: invalid argument: /a: --rechunk with chunk edges cannot keep the shards \
         2 x 6: give --no-shards to store the chunks unsharded\n"
    );
    assert!(!refused.exists());
    let out = tool(&[
        "copy",
        &store,
        s(&refused),
        "--shards",
        "2,8",
        "--no-shards",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!refused.exists());

    // As the message says: --shards 2,8 ...
    let resharded = dir.path().join("resharded.zarr");
    let args = ["--rechunk", "2,4", "--shards", "2,8"];
    assert_eq!(
        says(&[&["copy", &store, s(&resharded)], &args[..]].concat()),
        ""
    );
    let meta = meta_of(s(&resharded));
    assert_eq!(meta["chunk_grid"], regular(&[2, 8]));
    assert_eq!(
        meta["codecs"][0]["configuration"]["chunk_shape"],
        json!([2, 4])
    );
    assert_eq!(files_under(&resharded.join("a/c")), ["0/0", "1/0"]);
    assert_eq!(ok(&["dump", s(&resharded), "a"]), values);

    // ... or --no-shards: four chunk files.
    let unsharded = dir.path().join("unsharded.zarr");
    let args = ["--rechunk", "2,4", "--no-shards"];
    assert_eq!(
        says(&[&["copy", &store, s(&unsharded)], &args[..]].concat()),
        ""
    );
    let meta = meta_of(s(&unsharded));
    assert_eq!(meta["chunk_grid"], regular(&[2, 4]));
    assert_eq!(meta["codecs"], json!([bytes]));
    assert_eq!(
        files_under(&unsharded.join("a/c")),
        ["0/0", "0/1", "1/0", "1/1"]
    );
    assert_eq!(ok(&["dump", s(&unsharded), "a"]), values);

    // Zarr v2 has no shards: the copy says it stores the source's chunks unsharded.
    let v2 = dir.path().join("v2.zarr");
    assert_eq!(
        says(&["copy", &store, s(&v2), "--format", "2"]),
        "zarrtool: /a: Zarr v2 has no shards: the copy stores its 4 chunks unsharded\n"
    );
    let meta = meta_of(s(&v2));
    assert_eq!(meta["chunks"], json!([2, 3]));
    assert_eq!(
        files_under(&v2.join("a")),
        [".zarray", "0.0", "0.1", "1.0", "1.1"]
    );
    assert_eq!(ok(&["dump", s(&v2), "a"]), values);
}

#[test]
fn copy_to_and_from_zip() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let zip = format!("zip://{}", s(&dir.path().join("c.zip")));
    ok(&["copy", &store, &zip]);
    assert_eq!(ok(&["dump", &zip, "a"]), ok(&["dump", &store, "a"]));
    assert_eq!(tool(&["diff", &zip, &store]).status.code(), Some(0));
    // A plain path ending in .zip is a zip file too.
    let plain = s(&dir.path().join("d.zip")).to_string();
    ok(&["copy", &store, &plain]);
    assert!(std::fs::metadata(&plain).unwrap().is_file());
    assert_eq!(ok(&["dump", &plain, "a"]), ok(&["dump", &store, "a"]));
}

#[test]
fn validate_finds_corrupt_orphan_and_outside_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let out = tool(&["validate", &store]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "2 nodes (1 arrays) checked: 0 problems\n"
    );
    let chunk = dir.path().join("s.zarr/a/c/0/0");
    std::fs::write(&chunk, b"short").unwrap();
    std::fs::create_dir(dir.path().join("s.zarr/a/c/9")).unwrap();
    std::fs::write(dir.path().join("s.zarr/a/c/9/0"), [0u8; 24]).unwrap();
    std::fs::write(dir.path().join("s.zarr/a/stray"), b"x").unwrap();
    // The append lock of a writer is no orphan.
    std::fs::write(dir.path().join("s.zarr/a/.zarr-append.lock"), b"{}").unwrap();
    let out = tool(&["validate", &store]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("/a: chunk \"a/c/0/0\": ")),
        "{text}"
    );
    assert!(text.contains("/a: chunk \"a/c/9/0\" lies outside the array (grid 2 x 2)"));
    assert!(text.contains("/a: orphan key \"a/stray\" (not a chunk key)"));
}

#[test]
fn validate_catches_a_checksum_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, _) = setup(dir.path());
    let store = s(&dir.path().join("crc.zarr")).to_string();
    ok(&[
        "import",
        &raw,
        &store,
        "a",
        "--dtype",
        "<i4",
        "--shape",
        "4,5",
        "--chunks",
        "2,3",
        "--compressor",
        r#"[{"id":"crc32c"}]"#,
    ]);
    assert_eq!(tool(&["validate", &store]).status.code(), Some(0));
    let chunk = dir.path().join("crc.zarr/a/c/1/1");
    let mut bytes = std::fs::read(&chunk).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&chunk, bytes).unwrap();
    let out = tool(&["validate", &store]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("/a: chunk \"a/c/1/1\": "));
}

#[test]
fn diff_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, store) = setup(dir.path());
    let other = s(&dir.path().join("o.zarr")).to_string();
    ok(&[
        "import", &raw, &other, "a", "--dtype", "<i4", "--shape", "4,5", "--chunks", "3,3",
        "--format", "2",
    ]);
    let out = tool(&["diff", &store, &other]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"");
    let mut bytes = std::fs::read(&raw).unwrap();
    bytes[4 * 13] = 99;
    bytes[4 * 19] = 98;
    std::fs::write(&raw, bytes).unwrap();
    ok(&[
        "import",
        &raw,
        &other,
        "a",
        "--dtype",
        "<i4",
        "--shape",
        "4,5",
        "--overwrite",
    ]);
    ok(&[
        "create", &other, "extra", "--shape", "1", "--dtype", "uint8",
    ]);
    let out = tool(&["diff", &store, &other]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/a: 2 elements differ (first at [2, 3])\n/extra: only in the second\n"
    );
    let out = tool(&["diff", &store, s(&dir.path().join("missing"))]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn usage_version_completions_man() {
    assert_eq!(tool(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(tool(&["dump"]).status.code(), Some(2));
    assert_eq!(
        ok(&["version"]),
        format!("zarrtool {}\n", env!("CARGO_PKG_VERSION"))
    );
    let features = ok(&["version", "--features"]);
    assert!(
        features.contains("\nstores: directory zip memory reference (kerchunk JSON, read-only)\n"),
        "{features}"
    );
    // --version names the optional parts the build has.
    let long = ok(&["--version"]);
    let built: Vec<&str> = long
        .lines()
        .find_map(|l| l.strip_prefix("built with: "))
        .unwrap_or_else(|| panic!("{long}"))
        .split(' ')
        .take_while(|w| !w.starts_with('('))
        .collect();
    for (name, on) in [
        ("cloud", cfg!(feature = "cloud")),
        ("zfp", cfg!(feature = "zfp")),
        ("pcodec", cfg!(feature = "pcodec")),
        ("icechunk", cfg!(feature = "icechunk")),
        ("netcdf", cfg!(feature = "netcdf")),
    ] {
        assert_eq!(built.contains(&name), on, "{name}: {long}");
    }
    let icechunk = if cfg!(feature = "icechunk") {
        "\nicechunk: icechunk:///PATH repositories (copy --commit, log, tag, branch)\n"
    } else {
        "\nicechunk: none (built without the icechunk feature)\n"
    };
    assert!(features.contains(icechunk), "{features}");
    assert!(ok(&["completions", "bash"]).contains("_zarrtool()"));
    let man = ok(&["man"]);
    assert!(man.starts_with(".ie \\n(.g .ds Aq \\(aq"));
    // The commands' pages named, the exit statuses and every example.
    for part in [
        "\\fB\\%zarrtool\\-copy\\fR(1)",
        "\\fB\\%zarrtool\\-attrs\\-del\\fR(1)",
        "\\fB\\-\\-jobs\\fR",
        ".SH \"EXIT STATUS\"\n.TP\n0\n",
        ".SH EXAMPLES\n.TP\n\\fBzarrtool info data.zarr temperature\\fR\n",
        "\\fBzarrtool attrs set data.zarr temperature units",
    ] {
        assert!(man.contains(part), "{part}");
    }
}

/// The commands `zarrtool WORDS --help` lists (clap's `help` left out).
fn commands_of(words: &[&str]) -> Vec<String> {
    let help = ok(&[words, &["--help"]].concat());
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        // A name's line; a long description goes on in lines indented further.
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// The file names of the pages of `words`' commands and of theirs: `zarrtool-attrs-get.1`.
fn expected_pages(words: &[&str], pages: &mut Vec<String>) {
    for name in commands_of(words) {
        let path = [words, &[name.as_str()]].concat();
        pages.push(format!("zarrtool-{}.1", path.join("-")));
        expected_pages(&path, pages);
    }
}

/// Every `zarrtool-NAME(1)` a page's roff refers to, as `zarrtool-NAME`.
fn page_references(roff: &str) -> Vec<String> {
    let text = roff
        .replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\fI", "")
        .replace("\\%", "");
    let mut found = Vec::new();
    for (at, _) in text.match_indices("zarrtool-") {
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        if text[at + name.len()..].starts_with("(1)") {
            found.push(name);
        }
    }
    found
}

#[test]
fn man_pages_one_per_command_all_references_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    assert_eq!(ok(&["man", "--dir", s(&out)]), "");
    let mut want = vec!["zarrtool.1".to_string()];
    expected_pages(&[], &mut want);
    assert!(
        want.contains(&"zarrtool-attrs-get.1".to_string()),
        "{want:?}"
    );
    assert!(want.len() > 25, "{want:?}");
    let mut have: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    have.sort();
    want.sort();
    assert_eq!(have, want);
    // The main page as `zarrtool man` prints it.
    assert_eq!(
        std::fs::read_to_string(out.join("zarrtool.1")).unwrap(),
        ok(&["man"])
    );
    for name in &have {
        let page = std::fs::read_to_string(out.join(name)).unwrap();
        for heading in [
            ".SH NAME\n",
            ".SH SYNOPSIS\n",
            ".SH DESCRIPTION\n",
            ".SH OPTIONS\n",
            ".SH \"EXIT STATUS\"\n",
            ".SH EXAMPLES\n.TP\n\\fBzarrtool ",
            ".SH \"SEE ALSO\"\n",
        ] {
            assert!(page.contains(heading), "{name} has no {heading:?}");
        }
        if name != "zarrtool.1" {
            assert!(
                page.contains(".SH \"SEE ALSO\"\n\\fB\\%zarrtool\\fR(1)"),
                "{name}"
            );
        }
        for reference in page_references(&page) {
            assert!(
                have.contains(&format!("{reference}.1")),
                "{name} refers to {reference}(1), which has no page"
            );
        }
    }
    // Each command's page shows its own examples only.
    let get = std::fs::read_to_string(out.join("zarrtool-attrs-get.1")).unwrap();
    assert!(get.contains(
        ".SH EXAMPLES\n.TP\n\\fBzarrtool attrs get data.zarr temperature\\fR\nPrint its attributes.\n.SH"
    ));
    assert!(
        get.contains("zarrtool\\-attrs\\-get \\- Print all attributes as JSON"),
        "{get}"
    );
    // man-db's man renders every page without a warning, where it is installed (its
    // `--warnings` is man-db's own; mandoc's man has none).
    let has_man_db = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|out| {
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("man")
        });
    if !has_man_db {
        eprintln!("skipped: man-db is not installed; the pages were not rendered");
        return;
    }
    for name in &have {
        let shown = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(out.join(name))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .expect("run man");
        assert!(shown.status.success(), "man -l {name}");
        assert_eq!(
            String::from_utf8_lossy(&shown.stderr),
            "",
            "man -l {name} warned"
        );
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(
            text.contains("EXIT STATUS") && text.contains("SEE ALSO"),
            "{name}: {text}"
        );
    }
}

#[test]
fn consolidate_and_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, _) = setup(dir.path());
    let v2 = s(&dir.path().join("v2.zarr")).to_string();
    ok(&["create", &v2, "", "--group", "--format", "2"]);
    ok(&["import", &raw, &v2, "a", "--dtype", "<i4", "--shape", "20"]);
    ok(&["consolidate", &v2]);
    let consolidated: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("v2.zarr/.zmetadata")).unwrap())
            .unwrap();
    assert!(consolidated["metadata"]["a/.zarray"].is_object());
    let out = tool(&["migrate", &v2, "a"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: invalid argument: /a is a Zarr v2 array, not v1\n"
    );
}

/// Runs `script` in a terminal (a tmux session of `rows` rows) until its pane shows `done`:
/// the last pane seen, and the last one that showed `running` (if any); `None`, with the
/// reason printed, when tmux is not installed.
fn in_terminal(
    name: &str,
    script: &str,
    rows: u32,
    done: &str,
    running: &str,
) -> Option<(String, Option<String>)> {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping the terminal half");
        return None;
    }
    let session = format!("zarrtool-{name}-{}", std::process::id());
    let started = Command::new("tmux")
        .args(["new-session", "-d", "-s", &session, "-x", "150", "-y"])
        .arg(rows.to_string())
        .arg(format!("{script}; sleep 30"))
        .status()
        .unwrap();
    assert!(started.success());
    let (mut seen, mut while_running) = (String::new(), None);
    for _ in 0..1500 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let pane = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &session])
            .output()
            .unwrap();
        seen = String::from_utf8_lossy(&pane.stdout).to_string();
        if seen.contains(running) {
            while_running = Some(seen.clone());
        }
        if seen.contains(done) {
            break;
        }
    }
    let _ = Command::new("tmux")
        .args(["kill-session", "-t", &session])
        .status();
    Some((seen, while_running))
}

/// The progress bar is drawn when stderr is a terminal (under tmux) and absent when piped.
/// The copy may finish between two captures, so the test waits for the summary line the bar
/// leaves; while running the bar also shows the bytes, their rate and the ETA.
#[test]
fn progress_bar_in_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("steps.bin");
    std::fs::write(
        &raw,
        (0..4000u32)
            .map(|i| (i % 251) as u8 + 2)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let store = s(&dir.path().join("p.zarr")).to_string();
    ok(&[
        "import",
        s(&raw),
        &store,
        "a",
        "--shape",
        "4000",
        "--chunks",
        "1",
        "--dtype",
        "uint8",
    ]);
    let piped = tool(&["copy", &store, s(&dir.path().join("q.zarr"))]);
    assert!(piped.status.success());
    assert_eq!(piped.stderr, b"");
    let target = s(&dir.path().join("r.zarr")).to_string();
    let script = format!("{} -j 1 copy {store} {target}; echo copied-$?", exe());
    let Some((seen, running)) = in_terminal("copy", &script, 10, "copied-", "ETA") else {
        return;
    };
    assert!(
        seen.contains("copied-0")
            && seen.contains("/a [")
            && seen.contains("] 4000/4000 chunks, 4.00 kB at ")
            && seen.contains(" kB/s in "),
        "{seen}"
    );
    if let Some(line) = running {
        assert!(
            line.contains("/4000 chunks, ") && line.contains("B/s ETA "),
            "{line}"
        );
    }
}

/// A reader that closes the pipe early ends zarrtool quietly with status 0; a full disk is
/// an error (status 1) with a message, never a panic.
#[cfg(target_os = "linux")]
#[test]
fn closed_pipe_and_write_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    // Output far larger than a pipe's buffer: the writer meets the closed pipe.
    let raw = dir.path().join("big.bin");
    std::fs::write(
        &raw,
        (0..1_000_000u32).map(|i| i as u8).collect::<Vec<u8>>(),
    )
    .unwrap();
    ok(&[
        "import",
        s(&raw),
        &store,
        "big",
        "--dtype",
        "uint8",
        "--shape",
        "1000,1000",
    ]);
    for args in [
        vec!["dump", store.as_str(), "big"],
        vec!["export", store.as_str(), "big", "-o", "-"],
        vec!["meta", store.as_str(), "a"],
    ] {
        let out = Command::new("bash")
            .arg("-c")
            .arg("\"$@\" | head -c 10; echo \" status ${PIPESTATUS[0]}\"")
            .arg("bash")
            .arg(exe())
            .args(&args)
            .output()
            .unwrap();
        let expected: &[u8] = match args[0] {
            "dump" => b"0 1 2 3 4  status 0\n",
            "export" => b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09 status 0\n",
            _ => b"{\n  \"zarr_ status 0\n",
        };
        assert_eq!(out.stdout, expected, "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
    for args in [
        vec!["info", "--json", store.as_str(), "a"],
        vec!["dump", store.as_str(), "a"],
        vec!["ls", store.as_str()],
        vec!["man"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(exe())
            .args(&args)
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "zarrtool: storage error: writing to standard output: No space left on device \
             (os error 28)\n",
            "{args:?}"
        );
    }
}

/// Variable-length and fixed-width strings, unicode and records: text quotes strings and
/// prints a record's field values; CSV quotes only where RFC 4180 needs it and gives every
/// record field its own column.
#[test]
fn dump_strings_unicode_and_records() {
    use zarr::dtype::ElementType;
    use zarr::meta::Order;
    use zarr::node::{ArrayBuilder, Mode};
    let dir = tempfile::tempdir().unwrap();
    let store = s(&dir.path().join("t.zarr")).to_string();
    {
        let st = zarr::store::open_url(&store, Mode::Append, None).unwrap();
        let a = ArrayBuilder::new(vec![2, 2], ElementType::String)
            .create(st.clone(), "s", Mode::CreateNew)
            .unwrap();
        let items: [&[u8]; 4] = [b"zz", b"a,b", b"say \"hi\"", "héllo ✓".as_bytes()];
        a.write_vlen(&[0, 0], &[2, 2], Order::C, &items).unwrap();
        st.close().unwrap();
    }
    assert_eq!(
        ok(&["dump", &store, "s"]),
        "\"zz\" \"a,b\"\n\"say \\\"hi\\\"\" \"héllo ✓\"\n"
    );
    assert_eq!(
        ok(&["dump", "-f", "csv", &store, "s"]),
        "zz,\"a,b\"\n\"say \"\"hi\"\"\",héllo ✓\n"
    );
    // Fixed-width unicode (UTF-32) from a raw file.
    let raw = dir.path().join("u.bin");
    let utf32: Vec<u8> = "héllo✓,\"  "
        .chars()
        .flat_map(|c| (c as u32).to_le_bytes())
        .collect();
    std::fs::write(&raw, &utf32).unwrap();
    ok(&[
        "import",
        s(&raw),
        &store,
        "u",
        "--dtype",
        "<U5",
        "--shape",
        "2",
    ]);
    assert_eq!(ok(&["dump", &store, "u"]), "\"héllo\" \"✓,\\\"  \"\n");
    assert_eq!(
        ok(&["dump", "-f", "csv", &store, "u"]),
        "héllo,\"✓,\"\"  \"\n"
    );
    // Records: an int, a double, a byte string and a sub-array of two int16; in Zarr v2 with
    // the double big-endian among little-endian fields, in v3 (one byte order for a whole
    // struct) all big-endian.
    let records = |big: &dyn Fn(&str) -> bool| {
        let mut bytes = Vec::new();
        for (a, b, c, v) in [
            (1i32, 0.5f64, b"ab\0", [1i16, 2]),
            (-2, -1.25, b"x,y", [3, -4]),
        ] {
            bytes.extend(if big("a") {
                a.to_be_bytes()
            } else {
                a.to_le_bytes()
            });
            bytes.extend(if big("b") {
                b.to_be_bytes()
            } else {
                b.to_le_bytes()
            });
            bytes.extend(c);
            for x in v {
                bytes.extend(if big("v") {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                });
            }
        }
        bytes
    };
    let raw2 = dir.path().join("r2.bin");
    std::fs::write(&raw2, records(&|f| f == "b")).unwrap();
    let raw3 = dir.path().join("r3.bin");
    std::fs::write(&raw3, records(&|_| true)).unwrap();
    // v3 structs hold no sub-array: two int16 fields take the same bytes there.
    let v2 = (
        r#"[["a", "<i4"], ["b", ">f8"], ["c", "|S3"], ["v", "<i2", [2]]]"#,
        "(1, 0.5, b\"ab\", [1, 2]) (-2, -1.25, b\"x,y\", [3, -4])\n",
        "1,0.5,ab,\"[1, 2]\",-2,-1.25,\"x,y\",\"[3, -4]\"\n",
    );
    let v3 = (
        r#"[["a", ">i4"], ["b", ">f8"], ["c", "|S3"], ["v", ">i2"], ["w", ">i2"]]"#,
        "(1, 0.5, b\"ab\", 1, 2) (-2, -1.25, b\"x,y\", 3, -4)\n",
        "1,0.5,ab,1,2,-2,-1.25,\"x,y\",3,-4\n",
    );
    for (format, raw, (rec, text, csv)) in [("2", &raw2, v2), ("3", &raw3, v3)] {
        let path = format!("r{format}");
        ok(&[
            "import",
            s(raw),
            &store,
            &path,
            "--dtype",
            rec,
            "--shape",
            "2",
            "--format",
            format,
        ]);
        assert_eq!(ok(&["dump", &store, &path]), text);
        assert_eq!(ok(&["dump", "-f", "csv", &store, &path]), csv);
        // Exported as stored: the file's bytes again.
        let back = dir.path().join(format!("back{format}.bin"));
        ok(&["export", &store, &path, "-o", s(&back)]);
        assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(raw).unwrap());
    }
}

#[test]
fn copy_keeps_dimension_names() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    ok(&[
        "create",
        &store,
        "d",
        "--shape",
        "2,3",
        "--dtype",
        "int16",
        "--dimension-names",
        "y,x",
    ]);
    let names = |store: &str| -> String {
        let info: serde_json::Value =
            serde_json::from_str(&ok(&["info", "--json", store, "d"])).unwrap();
        info["dimension_names"].to_string()
    };
    let v3 = s(&dir.path().join("v3.zarr")).to_string();
    ok(&["copy", &store, &v3]);
    assert_eq!(names(&v3), r#"["y","x"]"#);
    // To v2: the _ARRAY_DIMENSIONS attribute (xarray's convention).
    let v2 = s(&dir.path().join("v2.zarr")).to_string();
    ok(&["copy", &store, &v2, "--format", "2"]);
    assert_eq!(
        ok(&["attrs", "get", &v2, "d"]),
        "{\n  \"_ARRAY_DIMENSIONS\": [\n    \"y\",\n    \"x\"\n  ]\n}\n"
    );
    assert_eq!(names(&v2), r#"["y","x"]"#);
    // And back to v3: dimension_names again, the attribute gone.
    let back = s(&dir.path().join("back.zarr")).to_string();
    ok(&["copy", &v2, &back, "--format", "3"]);
    assert_eq!(names(&back), r#"["y","x"]"#);
    assert_eq!(ok(&["attrs", "get", &back, "d"]), "{}\n");
    let meta: serde_json::Value = serde_json::from_str(&ok(&["meta", &back, "d"])).unwrap();
    assert_eq!(meta["dimension_names"], serde_json::json!(["y", "x"]));
    // Arrays without names stay without.
    assert_eq!(
        ok(&["attrs", "get", &v2, "a"]),
        "{}\n",
        "no _ARRAY_DIMENSIONS for an array without names"
    );
}

/// Every command that writes or deletes has --dry-run, which writes nothing and fails
/// where the real command would.
#[test]
fn dry_runs_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, store) = setup(dir.path());
    let before = ok(&["dump", &store, "a"]);
    assert_eq!(
        says(&[
            "create",
            &store,
            "a",
            "--shape",
            "3",
            "--dtype",
            "<f8",
            "--overwrite",
            "--dry-run",
        ]),
        "would replace an array at /a with array 3 <f8 (chunks 3, Zarr v3)\n"
    );
    let exists = format!(
        "zarrtool: already exists: an array at /a in {store}: use --overwrite to replace it\n"
    );
    for dry in [true, false] {
        let mut args = vec![
            "create",
            store.as_str(),
            "a",
            "--shape",
            "3",
            "--dtype",
            "<f8",
        ];
        if dry {
            args.push("--dry-run");
        }
        assert_eq!(fails(&args, 1), exists);
    }
    assert_eq!(
        says(&[
            "import",
            &raw,
            &store,
            "a",
            "--dtype",
            "<i4",
            "--shape",
            "20",
            "--overwrite",
            "--dry-run",
        ]),
        "would replace an array at /a with array 20 <i4 (chunks 20, Zarr v3)\n"
    );
    assert_eq!(ok(&["dump", &store, "a"]), before);
    // A store that does not exist yet is not created.
    let none = dir.path().join("none.zarr");
    assert_eq!(
        says(&["create", s(&none), "g", "--group", "--dry-run"]),
        "would create a group (Zarr v3) at /g\n"
    );
    assert_eq!(
        says(&[
            "import",
            &raw,
            s(&none),
            "x",
            "--dtype",
            "<i4",
            "--shape",
            "4,5",
            "--format",
            "2",
            "--chunks",
            "2,5",
            "--dry-run",
        ]),
        "would create array 4 x 5 <i4 (chunks 2 x 5, Zarr v2) at /x\n"
    );
    assert!(!none.exists());
    assert_eq!(
        says(&["attrs", "set", &store, "a", "units", "\"m\"", "--dry-run"]),
        "would set \"units\" of /a to \"m\" (not set now)\n"
    );
    assert_eq!(ok(&["attrs", "get", &store, "a"]), "{}\n");
    let doc = std::fs::read(dir.path().join("s.zarr/zarr.json")).unwrap();
    assert_eq!(
        says(&["consolidate", &store, "--dry-run"]),
        "would consolidate the metadata of 1 node below / into \"zarr.json\"\n"
    );
    assert_eq!(
        std::fs::read(dir.path().join("s.zarr/zarr.json")).unwrap(),
        doc
    );
    // The root cannot be deleted, dry run or not.
    let refused = "zarrtool: invalid argument: refusing to delete the root node: delete the \
                   store itself\n";
    assert_eq!(fails(&["rm", &store, "/", "--dry-run"], 1), refused);
    assert_eq!(fails(&["rm", &store, "/"], 1), refused);
    assert_eq!(ok(&["dump", &store, "a"]), before);
}

/// `import` without --dtype and --shape reads netCDF files; others are refused.
#[test]
fn import_needs_a_type_or_a_netcdf_file() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, store) = setup(dir.path());
    assert_eq!(
        fails(&["import", &raw, &store, "b"], 1),
        format!(
            "zarrtool: invalid argument: {raw:?} is not a netCDF or HDF5 file: a raw binary \
             file needs --dtype and --shape\n"
        )
    );
    // --dtype and --shape go together (a usage error otherwise).
    assert_eq!(
        tool(&["import", &raw, &store, "b", "--dtype", "<i4"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        tool(&["import", &raw, &store, "b", "--order", "f"])
            .status
            .code(),
        Some(2)
    );
    // A file that starts like netCDF-3 but is cut short.
    let cut = dir.path().join("cut.nc");
    std::fs::write(&cut, b"CDF\x01").unwrap();
    let err = fails(&["import", s(&cut), &store, "b"], 1);
    if netcdf_tool() {
        assert_eq!(
            err,
            format!(
                "zarrtool: metadata error: {:?}: netCDF header, byte 4: the file ends (4 bytes) \
                 inside the number of records\n",
                s(&cut)
            )
        );
    } else {
        assert_eq!(
            err,
            format!(
                "zarrtool: unsupported: {:?} is a netCDF-3 classic file, and this build of \
                 zarrtool has no netCDF support (it needs the system netCDF library: cargo \
                 feature netcdf, CMake option ZARR_NETCDF)\n",
                s(&cut)
            )
        );
    }
}

/// Progress bars of diff, import, export and a sharded copy in a terminal (under tmux), in
/// the unit stored (chunks or shards) with bytes and their rate; nothing when piped.
#[test]
fn progress_bars_of_diff_import_export() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("steps.bin");
    std::fs::write(
        &raw,
        (0..3000u32).map(|i| (i % 7) as u8).collect::<Vec<u8>>(),
    )
    .unwrap();
    let store = s(&dir.path().join("p.zarr")).to_string();
    let import: [&str; 10] = [
        "import",
        s(&raw),
        &store,
        "a",
        "--shape",
        "3000",
        "--chunks",
        "10",
        "--dtype",
        "uint8",
    ];
    assert_eq!(says(&import), "");
    let out = dir.path().join("out.bin");
    assert_eq!(says(&["export", &store, "a", "-o", s(&out)]), "");
    assert_eq!(says(&["diff", &store, &store]), "");
    let q = s(&dir.path().join("q.zarr")).to_string();
    let script = format!(
        "{z} -j 1 import {raw} {q} a --shape 3000 --chunks 10 --dtype uint8 && \
         {z} -j 1 export {q} a -o {out} && {z} -j 1 diff {store} {q} && \
         {z} -j 1 copy {store} {sharded} --format 3 --rechunk 10 --shards 100; echo done-$?",
        z = exe(),
        raw = s(&raw),
        out = s(&out),
        sharded = s(&dir.path().join("sharded.zarr")),
    );
    let Some((seen, _)) = in_terminal("bars", &script, 20, "done-", "ETA") else {
        return;
    };
    let summaries: Vec<&str> = seen
        .lines()
        .filter(|l| l.contains("] 300/300 chunks, 3.00 kB at ") && l.contains("B/s in "))
        .collect();
    assert!(seen.contains("done-0"), "{seen}");
    assert_eq!(summaries.len(), 3, "{seen}");
    assert!(summaries.iter().all(|l| l.starts_with("/a [")), "{seen}");
    // A sharded copy counts shards.
    assert!(seen.contains("] 30/30 shards, 3.00 kB at "), "{seen}");
}

/// Whether the binary under test imports netCDF files. With ZARR_TEST_NETCDF=1 (set by the
/// test scripts when the build has the netcdf feature) a binary without it is a failure.
fn netcdf_tool() -> bool {
    let has = ok(&["version", "--features"])
        .lines()
        .any(|l| l.starts_with("netcdf: import"));
    if !has && std::env::var("ZARR_TEST_NETCDF").as_deref() == Ok("1") {
        panic!("ZARR_TEST_NETCDF=1 but {} has no netCDF import", exe());
    }
    has
}

/// One value as ncdump prints it.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// `_`: the variable's fill value.
    Fill,
    /// A quoted string, unescaped.
    Str(String),
    /// A number without its type suffix (`-999.f` → `-999.`), and the suffix.
    Num(String, String),
}

/// An attribute as ncdump prints it: `string` typed or not, and its values.
#[derive(Debug, Clone)]
struct NcAttr {
    string: bool,
    values: Vec<Tok>,
}

/// A variable as ncdump prints it.
#[derive(Debug, Default, Clone)]
struct NcVar {
    ty: String,
    dims: Vec<String>,
    attrs: Vec<(String, NcAttr)>,
    values: Vec<Tok>,
}

/// What `ncdump -p 9,17` says of a file, by node path.
#[derive(Debug, Default)]
struct NcDump {
    dims: std::collections::HashMap<String, u64>,
    groups: std::collections::BTreeMap<String, Vec<(String, NcAttr)>>,
    vars: std::collections::BTreeMap<String, NcVar>,
}

/// Splits ncdump's value list (`1, "a, b", _`) into values; `None` while the statement
/// has not reached its `;`.
fn nc_tokens(text: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        match chars.peek() {
            None => return None,
            Some(';') => return Some(out),
            Some('"') => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            c => s.push(c),
                        },
                        c => s.push(c),
                    }
                }
                out.push(Tok::Str(s));
            }
            Some(_) => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c == ',' || c == ';' || c.is_whitespace() {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                if word == "_" {
                    out.push(Tok::Fill);
                } else {
                    let number = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
                    let suffix = word[number.len()..].to_string();
                    out.push(Tok::Num(number.to_string(), suffix));
                }
            }
        }
    }
}

fn parse_ncdump(text: &str) -> NcDump {
    let mut d = NcDump::default();
    let mut groups: Vec<String> = Vec::new();
    let mut section = String::new();
    let mut pending = String::new();
    let join = |g: &[String], name: &str| {
        let mut parts: Vec<&str> = g.iter().map(String::as_str).collect();
        parts.push(name);
        parts.retain(|p| !p.is_empty());
        parts.join("/")
    };
    d.groups.insert(String::new(), Vec::new());
    for raw in text.lines() {
        let line = raw.trim();
        if !pending.is_empty() {
            pending.push(' ');
            pending.push_str(line);
        } else if line.is_empty() || line.starts_with("netcdf ") || line == "}" {
            continue;
        } else if let Some(name) = line.strip_prefix("group: ") {
            groups.push(name.trim_end_matches(" {").to_string());
            d.groups.insert(groups.join("/"), Vec::new());
            continue;
        } else if line.starts_with("} // group ") {
            groups.pop();
            continue;
        } else if line.ends_with(':') && !line.contains(' ') {
            section = line.to_string();
            continue;
        } else if line.starts_with("// ") && line.ends_with("attributes:") {
            section = "attributes:".into();
            continue;
        } else if section == "data:" {
            pending = line.to_string();
        }
        if !pending.is_empty() {
            let (name, values) = pending.split_once('=').expect("name = values");
            if let Some(values) = nc_tokens(values) {
                let var = d
                    .vars
                    .get_mut(&join(&groups, name.trim()))
                    .expect("declared");
                var.values = values;
                pending.clear();
            }
            continue;
        }
        match section.as_str() {
            "dimensions:" => {
                let (name, rest) = line.split_once(" = ").expect("a dimension");
                let len = match rest.split_once("// (") {
                    Some((_, n)) => n.split_whitespace().next().unwrap().parse().unwrap(),
                    None => rest.trim_end_matches(" ;").parse().unwrap(),
                };
                d.dims.insert(name.to_string(), len);
            }
            "variables:" | "attributes:" => {
                let (string, rest) = match line.strip_prefix("string ") {
                    Some(rest) => (true, rest),
                    None => (false, line),
                };
                match rest.split_once(" = ") {
                    Some((lhs, values)) if lhs.contains(':') => {
                        let (var, att) = lhs.split_once(':').unwrap();
                        let attr = NcAttr {
                            string,
                            values: nc_tokens(values).expect("one line"),
                        };
                        let list = if var.is_empty() {
                            d.groups.get_mut(&groups.join("/")).unwrap()
                        } else {
                            &mut d.vars.get_mut(&join(&groups, var)).unwrap().attrs
                        };
                        list.push((att.to_string(), attr));
                    }
                    _ => {
                        let decl = line.trim_end_matches(" ;");
                        let (ty, rest) = decl.split_once(' ').unwrap();
                        let (name, dims) = match rest.split_once('(') {
                            Some((name, dims)) => (
                                name,
                                dims.trim_end_matches(')')
                                    .split(", ")
                                    .map(str::to_string)
                                    .collect(),
                            ),
                            None => (rest, Vec::new()),
                        };
                        d.vars.insert(
                            join(&groups, name),
                            NcVar {
                                ty: ty.to_string(),
                                dims,
                                ..NcVar::default()
                            },
                        );
                    }
                }
            }
            other => panic!("unexpected line in {other}: {line}"),
        }
    }
    d
}

/// The fields of one CSV line (RFC 4180 quoting).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', true) => quoted = false,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// Whether zarrtool's text of a number equals ncdump's of netCDF type `ty`.
fn same_number(ty: &str, ours: &str, theirs: &str) -> bool {
    match ty {
        "float" => ours.parse::<f32>().ok() == theirs.parse::<f32>().ok(),
        "double" => ours.parse::<f64>().ok() == theirs.parse::<f64>().ok(),
        _ => ours.parse::<i128>().ok() == theirs.parse::<i128>().ok(),
    }
}

/// The netCDF type an attribute's value suffix (or text) says.
fn attr_type(attr: &NcAttr) -> &'static str {
    match attr.values.first() {
        Some(Tok::Num(n, suffix)) => match suffix.as_str() {
            "f" => "float",
            "" if n.contains(['.', 'e']) => "double",
            _ => "int",
        },
        _ => "text",
    }
}

/// The numpy name NCZarr records a numeric attribute's type by, from ncdump's suffix;
/// `None` for text.
fn numpy_code(attr: &NcAttr) -> Option<&'static str> {
    let Some(Tok::Num(n, suffix)) = attr.values.first() else {
        return None;
    };
    Some(match suffix.to_ascii_lowercase().as_str() {
        "b" => "<i1",
        "ub" => "<u1",
        "s" => "<i2",
        "us" => "<u2",
        "u" => "<u4",
        "ll" => "<i8",
        "ull" => "<u8",
        "f" => "<f4",
        "" if n.contains(['.', 'e']) => "<f8",
        _ => "<i4",
    })
}

/// Checks attributes as zarrtool imported them against ncdump's (`_FillValue` is the
/// array's fill value, checked with the values, and in Zarr v3 also the attribute xarray
/// reads, there only when netCDF has an explicit one or a `missing_value`;
/// `_ARRAY_DIMENSIONS` the dimensions). A v2 array's `_FillValue` is recorded with the
/// variable's type `var_type`, as NCZarr needs it.
fn check_attrs(
    what: &str,
    ours: &serde_json::Value,
    theirs: &[(String, NcAttr)],
    record: bool,
    var_type: Option<&str>,
) {
    let ours = ours.as_object().expect("attributes are an object");
    let expected: Vec<&String> = theirs
        .iter()
        .map(|(k, _)| k)
        .filter(|k| *k != "_FillValue")
        .collect();
    let got: Vec<&String> = ours
        .keys()
        .filter(|k| *k != "_ARRAY_DIMENSIONS" && *k != "_FillValue" && *k != "_NCZARR_ATTR")
        .collect();
    assert_eq!(got, expected, "{what}: attribute names");
    // The numeric attributes' netCDF types, in NCZarr's record of them.
    let mut types: serde_json::Map<String, serde_json::Value> = theirs
        .iter()
        .filter(|(k, a)| k != "_FillValue" && !a.string)
        .filter_map(|(k, a)| Some((k.clone(), serde_json::json!(numpy_code(a)?))))
        .collect();
    let fill_code = match var_type {
        _ if !ours.contains_key("_FillValue") => None,
        Some("byte") => Some("<i1"),
        Some("ubyte") => Some("<u1"),
        Some("short") => Some("<i2"),
        Some("ushort") => Some("<u2"),
        Some("int") => Some("<i4"),
        Some("uint") => Some("<u4"),
        Some("int64") => Some("<i8"),
        Some("uint64") => Some("<u8"),
        Some("float") => Some("<f4"),
        Some("double") => Some("<f8"),
        _ => None,
    };
    if let Some(code) = fill_code {
        types.insert("_FillValue".into(), serde_json::json!(code));
    }
    // Recorded for groups and v2 arrays (xarray shows a v3 array's record as an attribute).
    let recorded = match types.is_empty() || !record {
        true => None,
        false => Some(serde_json::json!({ "types": types })),
    };
    assert_eq!(ours.get("_NCZARR_ATTR"), recorded.as_ref(), "{what}: types");
    let missing = theirs
        .iter()
        .any(|(k, _)| k == "_FillValue" || k == "missing_value");
    assert!(
        missing || !ours.contains_key("_FillValue"),
        "{what}: _FillValue"
    );
    for (key, attr) in theirs.iter().filter(|(k, _)| k != "_FillValue") {
        let value = &ours[key];
        let values: Vec<&serde_json::Value> = match value {
            serde_json::Value::Array(items) if attr.values.len() != 1 => items.iter().collect(),
            one => vec![one],
        };
        if !attr.string && attr_type(attr) == "text" {
            let text: String = attr
                .values
                .iter()
                .map(|t| match t {
                    Tok::Str(s) => s.as_str(),
                    other => panic!("{what}: {key}: {other:?} in text"),
                })
                .collect();
            assert_eq!(value, &serde_json::json!(text), "{what}: {key}");
            continue;
        }
        assert_eq!(values.len(), attr.values.len(), "{what}: {key}: {value}");
        for (ours, theirs) in values.iter().zip(&attr.values) {
            match theirs {
                Tok::Str(s) => assert_eq!(*ours, &serde_json::json!(s), "{what}: {key}"),
                Tok::Num(n, _) => assert!(
                    same_number(attr_type(attr), &ours.to_string(), n),
                    "{what}: {key}: {ours} != {n}"
                ),
                Tok::Fill => panic!("{what}: {key}: a fill in an attribute"),
            }
        }
    }
}

/// The attributes of the node at `path` of a directory store as stored (`attrs get` leaves
/// NCZarr's own keys out): `.zattrs` in v2, the attributes of `zarr.json` in v3.
fn stored_attrs(store: &str, path: &str) -> serde_json::Value {
    let dir = Path::new(store).join(path);
    match std::fs::read(dir.join("zarr.json")) {
        Ok(doc) => {
            let doc: serde_json::Value = serde_json::from_slice(&doc).unwrap();
            doc.get("attributes")
                .cloned()
                .unwrap_or(serde_json::json!({}))
        }
        Err(_) => match std::fs::read(dir.join(".zattrs")) {
            Ok(doc) => serde_json::from_slice(&doc).unwrap(),
            Err(_) => serde_json::json!({}),
        },
    }
}

/// Checks the hierarchy zarrtool imported from `nc` at `root` in `store` against
/// `ncdump -p 9,17` of the same file: every group and its attributes, every variable's
/// type, shape, dimension names, attributes, fill value and every value. Returns what
/// ncdump said.
fn check_against_ncdump(nc: &Path, store: &str, root: &str) -> NcDump {
    let dumped = Command::new("ncdump")
        .args(["-p", "9,17"])
        .arg(nc)
        .output()
        .expect("ncdump (Debian's netcdf-bin) runs");
    assert!(dumped.status.success());
    let d = parse_ncdump(&String::from_utf8(dumped.stdout).unwrap());
    let at = |p: &str| {
        [root, p]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/")
    };
    // The same nodes.
    let mut listed: Vec<String> = ok(&["ls", store, root])
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    let mut expected: Vec<String> = d
        .groups
        .keys()
        .chain(d.vars.keys())
        .map(|p| format!("/{}", at(p)))
        .collect();
    expected.sort();
    listed.sort();
    assert_eq!(listed, expected);
    for (path, attrs) in &d.groups {
        let ours = stored_attrs(store, &at(path));
        check_attrs(&format!("group /{path}"), &ours, attrs, true, None);
    }
    for (path, var) in &d.vars {
        let what = format!("variable /{path}");
        let path = &at(path);
        let info: serde_json::Value =
            serde_json::from_str(&ok(&["info", "--json", store, path])).unwrap();
        let attrs = stored_attrs(store, path);
        let v2 = Path::new(store).join(path).join(".zarray").exists();
        check_attrs(&what, &attrs, &var.attrs, v2, Some(&var.ty));
        // A char array's last dimension is its strings' length.
        let mut dims = var.dims.clone();
        let width = match var.ty.as_str() {
            "char" => dims.pop().map_or(1, |n| d.dims[&n].max(1)),
            _ => 0,
        };
        let dtype = match var.ty.as_str() {
            "byte" => "|i1".to_string(),
            "ubyte" => "|u1".into(),
            "short" => "<i2".into(),
            "ushort" => "<u2".into(),
            "int" => "<i4".into(),
            "uint" => "<u4".into(),
            "int64" => "<i8".into(),
            "uint64" => "<u8".into(),
            "float" => "<f4".into(),
            "double" => "<f8".into(),
            "char" => format!("|S{width}"),
            "string" => "|O".into(),
            other => panic!("{what}: type {other}"),
        };
        assert_eq!(info["dtype"], serde_json::json!(dtype), "{what}");
        let shape: Vec<u64> = dims.iter().map(|n| d.dims[n]).collect();
        assert_eq!(info["shape"], serde_json::json!(shape), "{what}");
        // A v2 scalar has the empty _ARRAY_DIMENSIONS list xarray needs.
        let names = if dims.is_empty() && info["zarr_format"] != 2 {
            serde_json::Value::Null
        } else {
            serde_json::json!(dims)
        };
        assert_eq!(info["dimension_names"], names, "{what}");
        // The fill value: _FillValue; netCDF's default for the type stays implicit (the
        // array gets the default fill, the cells netCDF shows as `_` hold it as data).
        let fill = &info["fill_value"];
        let mut nc_fill = default_fill(&var.ty).to_string();
        if let Some((_, attr)) = var.attrs.iter().find(|(k, _)| k == "_FillValue") {
            match &attr.values[0] {
                Tok::Num(n, _) => {
                    assert!(same_number(&var.ty, &fill.to_string(), n), "{what}");
                    nc_fill = n.clone();
                }
                other => panic!("{what}: fill {other:?}"),
            }
        }
        let values: Vec<String> = ok(&["dump", "-f", "csv", store, path])
            .lines()
            .flat_map(csv_fields)
            .collect();
        assert_eq!(values.len(), var.values.len(), "{what}: {values:?}");
        for (i, (ours, theirs)) in values.iter().zip(&var.values).enumerate() {
            match theirs {
                Tok::Fill => match fill {
                    serde_json::Value::String(f) => assert_eq!(ours, f, "{what}[{i}]"),
                    _ => assert!(same_number(&var.ty, ours, &nc_fill), "{what}[{i}]: {ours}"),
                },
                Tok::Str(s) => assert_eq!(ours, s, "{what}[{i}]"),
                Tok::Num(n, _) => {
                    assert!(same_number(&var.ty, ours, n), "{what}[{i}]: {ours} != {n}")
                }
            }
        }
    }
    d
}

/// netCDF's default fill value of a numeric type (`NC_FILL_*`), as text.
fn default_fill(ty: &str) -> &'static str {
    match ty {
        "byte" => "-127",
        "ubyte" => "255",
        "short" => "-32767",
        "ushort" => "65535",
        "int" => "-2147483647",
        "uint" => "4294967295",
        "int64" => "-9223372036854775806",
        "uint64" => "18446744073709551614",
        "float" => "9.96921e+36",
        "double" => "9.969209968386869e+36",
        _ => "",
    }
}

/// A netCDF-4 file with every atomic type, groups, attributes of several types, fill
/// values (given, default, none), an unlimited dimension, kept chunking and strings.
const SAMPLE_CDL: &str = r#"netcdf sample {
dimensions:
	time = UNLIMITED ;
	lat = 2 ;
	lon = 3 ;
	len = 5 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
	float temp(time, lat, lon) ;
		temp:_FillValue = -999.f ;
		temp:long_name = "air temperature" ;
		temp:valid_range = 0.f, 400.f ;
		temp:_ChunkSizes = 1, 2, 3 ;
	short counts(lat, lon) ;
		counts:scale_factor = 0.5 ;
		counts:_Storage = "contiguous" ;
	byte b(lon) ;
	ubyte ub(lon) ;
	ushort us(lon) ;
	uint ui(lon) ;
	int64 big(lon) ;
	uint64 ubig(lon) ;
	int nofill(lon) ;
		nofill:_NoFill = "true" ;
	char name(lat, len) ;
	string label(lat) ;
	double scalar ;
		scalar:note = "a 0-d variable" ;

// global attributes:
		:title = "zarrtool import test" ;
		:version = 3 ;
		:pi = 3.14159265358979 ;
		:ratios = 0.5f, 0.1f ;
		string :tags = "a", "b, c" ;
data:
 time = 0, 1.5, 2 ;
 lat = -45, 45 ;
 temp = 1, 2, 3, 4, 5, 6,
        _, 8.5, 9, 10, 11, 12,
        13, 14, 15, 16, _, 0.1 ;
 counts = _, 1, 2, -3, 4, 5 ;
 b = -128, 0, 127 ;
 ub = 0, 128, 255 ;
 us = 0, 1, 65535 ;
 ui = 0, 1, 4294967295 ;
 big = -9223372036854775807, 0, 9223372036854775807 ;
 ubig = 0, 1, 18446744073709551615 ;
 nofill = 1, 2, 3 ;
 name = "alpha", "be" ;
 label = "one", "twö ✓" ;
 scalar = 2.5 ;

group: sub {
  dimensions:
  	n = 2 ;
  variables:
  	int v(n, lon) ;
  		v:note = "in a group" ;

  // group attributes:
  		:about = "a subgroup" ;
  data:
   v = 1, 2, 3, 4, 5, 6 ;

  group: deeper {
    variables:
    	float w(n) ;
    		w:_FillValue = 1.e+20f ;
    data:
     w = 1.5, _ ;
  } // group deeper
  } // group sub
}
"#;

/// A netCDF-3 classic file: an unlimited dimension, a given and a default fill value, char
/// strings of several lengths.
const CLASSIC_CDL: &str = r#"netcdf classic {
dimensions:
	rec = UNLIMITED ;
	x = 4 ;
	nchar = 3 ;
variables:
	int rec(rec) ;
	double x(x) ;
		x:units = "m" ;
	short obs(rec, x) ;
		obs:_FillValue = -1s ;
		obs:add_offset = 10.f ;
	char code(x, nchar) ;
	byte flags(x) ;
	float f(x) ;

// global attributes:
		:Conventions = "CF-1.8" ;
		:count = 2 ;
data:
 rec = 1, 2 ;
 x = 0.5, 1.5, 2.5, 3.5 ;
 obs = 1, 2, _, 4, 5, 6, 7, 8 ;
 code = "abc", "de", "f", "" ;
 flags = 1, -2, 3, -4 ;
}
"#;

#[test]
fn netcdf4_import_matches_ncdump() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF import: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(dir.path(), "sample", "nc4", SAMPLE_CDL);
    let store = s(&dir.path().join("sample.zarr")).to_string();
    assert_eq!(says(&["import", s(&nc), &store]), "");
    let d = check_against_ncdump(&nc, &store, "");
    assert_eq!(d.vars.len(), 16);
    assert_eq!(
        ok(&["tree", &store]),
        "/\n├── b array {3} |i1\n├── big array {3} <i8\n├── counts array {2, 3} <i2\n\
         ├── label array {2} |O\n├── lat array {2} <f4\n├── name array {2} |S5\n\
         ├── nofill array {3} <i4\n├── scalar array {} <f8\n├── sub\n│   ├── deeper\n\
         │   │   └── w array {2} <f4\n│   └── v array {2, 3} <i4\n\
         ├── temp array {3, 2, 3} <f4\n├── time array {3} <f8\n├── ub array {3} |u1\n\
         ├── ubig array {3} <u8\n├── ui array {3} <u4\n└── us array {3} <u2\n"
    );
    assert_eq!(
        ok(&["dump", &store, "temp"]),
        "1.0 2.0 3.0\n4.0 5.0 6.0\n-999.0 8.5 9.0\n10.0 11.0 12.0\n13.0 14.0 15.0\n\
         16.0 -999.0 0.1\n"
    );
    assert_eq!(ok(&["dump", &store, "name"]), "b\"alpha\" b\"be\"\n");
    assert_eq!(ok(&["dump", &store, "label"]), "\"one\" \"twö ✓\"\n");
    assert_eq!(ok(&["dump", &store, "us"]), "0 1 65535\n");
    // Chunking kept where netCDF chunks (temp), guessed where it stores contiguously.
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--json", &store, "temp"])).unwrap();
    assert_eq!(info["chunks"], serde_json::json!([1, 2, 3]));
    assert_eq!(info["fill_value"], serde_json::json!(-999.0));
    assert_eq!(info["zarr_format"], 3);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--json", &store, "counts"])).unwrap();
    assert_eq!(info["chunks"], serde_json::json!([2, 3]));
    // netCDF's default fills stay implicit: those variables, and one without fill, get
    // Zarr v3's zero, which xarray does not mask; an explicit _FillValue is kept.
    for (var, fill) in [
        ("counts", serde_json::json!(0)),
        ("us", serde_json::json!(0)),
        ("label", serde_json::json!("")),
        // A byte string's fill value in Zarr v3 metadata is base64: five NULs.
        ("name", serde_json::json!("AAAAAAA=")),
        ("nofill", serde_json::json!(0)),
        ("sub/deeper/w", serde_json::json!(1.0000000200408773e20)),
    ] {
        let info: serde_json::Value =
            serde_json::from_str(&ok(&["info", "--json", &store, var])).unwrap();
        assert_eq!(info["fill_value"], fill, "{var}");
    }
    // NCZarr's type record is stored, but `attrs get` leaves it out.
    assert_eq!(
        ok(&["attrs", "get", &store]),
        "{\n  \"title\": \"zarrtool import test\",\n  \"version\": 3,\n  \"pi\": \
         3.14159265358979,\n  \"ratios\": [\n    0.5,\n    0.1\n  ],\n  \"tags\": [\n    \
         \"a\",\n    \"b, c\"\n  ]\n}\n"
    );
    assert_eq!(
        stored_attrs(&store, "")["_NCZARR_ATTR"],
        serde_json::json!({"types": {"version": "<i4", "pi": "<f8", "ratios": "<f4"}})
    );
    // Zarr v2, with --chunks for the variables of rank 3: dimension names in
    // _ARRAY_DIMENSIONS, a variable without fill gets a null fill value.
    let v2 = s(&dir.path().join("v2.zarr")).to_string();
    assert_eq!(
        says(&[
            "import",
            s(&nc),
            &v2,
            "imported",
            "--format",
            "2",
            "--chunks",
            "2,1,3"
        ]),
        ""
    );
    let meta: serde_json::Value =
        serde_json::from_str(&ok(&["meta", &v2, "imported/temp"])).unwrap();
    assert_eq!(meta["chunks"], serde_json::json!([2, 1, 3]));
    assert_eq!(meta["fill_value"], serde_json::json!(-999.0));
    let meta: serde_json::Value =
        serde_json::from_str(&ok(&["meta", &v2, "imported/nofill"])).unwrap();
    assert_eq!(meta["fill_value"], serde_json::Value::Null);
    // Strings too: xarray would take a "" fill for a missing value and mask empty strings.
    let meta: serde_json::Value =
        serde_json::from_str(&ok(&["meta", &v2, "imported/label"])).unwrap();
    assert_eq!(meta["fill_value"], serde_json::Value::Null);
    assert_eq!(
        ok(&["attrs", "get", &v2, "imported/sub/v"]),
        "{\n  \"note\": \"in a group\",\n  \"_ARRAY_DIMENSIONS\": [\n    \"n\",\n    \"lon\"\n  ]\n}\n"
    );
    assert_eq!(
        tool(&["diff", &store, &v2, "--right-path", "imported"])
            .status
            .code(),
        Some(0)
    );
    // Into an existing node only with --overwrite; a dry run says what it would do.
    assert_eq!(
        fails(&["import", s(&nc), &store], 1),
        format!(
            "zarrtool: already exists: a group at / in {store}: use --overwrite to replace it\n"
        )
    );
    let plan = says(&["import", s(&nc), &store, "--overwrite", "--dry-run"]);
    let lines: Vec<&str> = plan.lines().collect();
    assert_eq!(lines.len(), 19, "{plan}");
    assert_eq!(
        lines[0],
        format!(
            "would replace a group at / with a group (Zarr v3) from {:?}",
            s(&nc)
        )
    );
    assert_eq!(lines[1], "would create a group (Zarr v3) at /sub");
    assert_eq!(lines[2], "would create a group (Zarr v3) at /sub/deeper");
    assert!(
        lines.contains(&"would create array 3 x 2 x 3 <f4 (chunks 1 x 2 x 3, Zarr v3) at /temp")
    );
    assert_eq!(says(&["import", s(&nc), &store, "--overwrite"]), "");
    check_against_ncdump(&nc, &store, "");
    check_against_ncdump(&nc, &v2, "imported");
}

#[test]
fn netcdf3_classic_import_matches_ncdump() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF import: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(dir.path(), "classic", "classic", CLASSIC_CDL);
    let store = s(&dir.path().join("classic.zarr")).to_string();
    assert_eq!(says(&["import", s(&nc), &store, "data"]), "");
    check_against_ncdump(&nc, &store, "data");
    assert_eq!(
        ok(&["dump", "-f", "csv", &store, "data/code"]),
        "abc,de,f,\n"
    );
    assert_eq!(ok(&["dump", &store, "data/obs"]), "1 2 -1 4\n5 6 7 8\n");
    assert_eq!(
        ok(&["dump", &store, "data/f"]),
        "9.96921e36 9.96921e36 9.96921e36 9.96921e36\n"
    );
}

/// User-defined netCDF types are refused before anything is written.
/// A netCDF file lying in the node its import would replace is refused before anything is
/// written (replacing the node would delete the file being read).
#[test]
fn netcdf_import_of_a_file_inside_its_target_is_refused() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF import: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.zarr");
    ok(&["create", s(&store), "g", "--group"]);
    let nc = ncgen(&store.join("g"), "classic", "classic", CLASSIC_CDL);
    let before = tree_bytes(dir.path());
    for (target, path) in [(s(&store), ""), (s(&store), "g")] {
        for extra in [&["--overwrite"][..], &[], &["--dry-run", "--overwrite"]] {
            let mut args = vec!["import", s(&nc), target, path];
            args.extend(extra);
            let err = fails(&args, 1);
            assert!(
                err.starts_with("zarrtool: invalid argument: cannot import ")
                    && err.contains("the file lies in the target"),
                "{args:?}: {err}"
            );
        }
    }
    assert!(before == tree_bytes(dir.path()), "the store changed");
    ok(&["import", s(&nc), s(&store), "h"]);
    assert_eq!(ok(&["dump", s(&store), "h/obs"]), "1 2 -1 4\n5 6 7 8\n");
}

#[test]
fn netcdf_user_types_are_refused() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF import: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (class, decl, data) in [
        (
            "compound",
            "compound t_t { int id ; float v ; } ;",
            "{1, 2.5}",
        ),
        ("vlen", "int(*) t_t ;", "{1, 2, 3}"),
        ("opaque", "opaque(4) t_t ;", "0XDEADBEEF"),
        ("enum", "byte enum t_t {A = 1, B = 2} ;", "A"),
    ] {
        let cdl = format!(
            "netcdf refused {{\ntypes:\n  {decl}\ndimensions:\n\tn = 1 ;\nvariables:\n\t\
             int ok(n) ;\n\tt_t x(n) ;\ndata:\n ok = 1 ;\n x = {data} ;\n}}\n"
        );
        let nc = ncgen(dir.path(), class, "nc4", &cdl);
        let store = dir.path().join(format!("{class}.zarr"));
        assert_eq!(
            fails(&["import", s(&nc), s(&store)], 1),
            format!(
                "zarrtool: unsupported: {:?}: variable /x has the {class} type \"t_t\": \
                 zarrtool imports numeric, char and string netCDF types (compound, vlen, \
                 opaque and enum types are refused)\n",
                s(&nc)
            )
        );
        assert!(!store.exists(), "{class}: nothing written");
    }
}

/// `copy --format` converts what the target format cannot hold as it is: a v3 chunk order
/// other than C or F becomes C in v2, an F-order v2 array with a delta filter becomes C in v3
/// (v3 leaves the order such a filter sees unsettled), a v3 blosc `typesize` equal to the item
/// size is not written into v2 (numcodecs before 0.16 refuses the key), strings compressed
/// by blosc get `typesize` 1 in v3, and `json2` strings become `vlen-utf8` in v3. Every copy
/// reads back value for value.
#[test]
fn copy_converts_what_the_target_format_cannot_hold_as_it_is() {
    use serde_json::{json, Value};
    use std::sync::Arc;
    use zarr::dtype::ElementType;
    use zarr::meta::Order;
    use zarr::node::{ArrayBuilder, Mode};
    use zarr::store::{FilesystemStore, Store};

    let dir = tempfile::tempdir().unwrap();
    let src = s(&dir.path().join("src.zarr")).to_string();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&src, true, true).unwrap());
    let values: Vec<u8> = (0..4 * 5 * 6i32)
        .flat_map(|v| (v * 3).to_ne_bytes())
        .collect();
    let build = |path: &str, format: i32, setup: &dyn Fn(&mut ArrayBuilder)| {
        let mut b = ArrayBuilder::new(vec![4, 5, 6], ElementType::Int32);
        b.chunks(vec![2, 3, 4]);
        b.zarr_format(format).unwrap();
        setup(&mut b);
        let a = b.create(store.clone(), path, Mode::CreateNew).unwrap();
        a.write(
            &[0, 0, 0],
            &[4, 5, 6],
            ElementType::Int32,
            Order::C,
            &values,
        )
        .unwrap();
    };
    build("perm", 3, &|b| {
        b.chunk_permutation(vec![0, 2, 1]).compressor(
            json!({"name": "blosc", "configuration": {"cname": "zstd", "shuffle": "shuffle"}}),
        );
    });
    build("fdelta", 2, &|b| {
        b.order(Order::F)
            .filters(json!([{"id": "delta", "dtype": "<i4"}]));
    });
    let strings = ArrayBuilder::new(vec![5], ElementType::String)
        .chunks(vec![2])
        .compressor(json!({"id": "blosc", "cname": "lz4", "shuffle": 1}))
        .zarr_format(2)
        .unwrap()
        .create(store.clone(), "strings", Mode::CreateNew)
        .unwrap();
    let words: Vec<&[u8]> = vec![b"a", b"", "é".as_bytes(), b"dd", b"eee"];
    strings.write_vlen(&[0], &[5], Order::C, &words).unwrap();
    // A json2 object array as zarr-python 2 writes it (uncompressed).
    std::fs::create_dir_all(dir.path().join("src.zarr/json")).unwrap();
    std::fs::write(
        dir.path().join("src.zarr/json/.zarray"),
        json!({"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "|O",
            "compressor": null, "fill_value": 0, "order": "C",
            "filters": [{"id": "json2", "encoding": "utf-8", "ensure_ascii": true,
                "sort_keys": true, "separators": [",", ":"], "strict": true}]})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("src.zarr/json/0"),
        r#"["x","\u00e9","|O",[2]]"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("src.zarr/json/1"), r#"["z",0,"|O",[2]]"#).unwrap();
    assert_eq!(ok(&["dump", &src, "json"]), "\"x\" \"é\" \"z\"\n");

    let meta = |store: &str, path: &str| -> Value {
        serde_json::from_str(&ok(&["meta", store, path])).unwrap()
    };
    let v2 = s(&dir.path().join("v2.zarr")).to_string();
    ok(&[
        "copy", &src, &v2, "--from", "perm", "--to", "perm", "--format", "2",
    ]);
    let perm = meta(&v2, "perm");
    assert_eq!(perm["order"], "C");
    assert_eq!(
        perm["compressor"],
        json!({"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0})
    );
    assert_eq!(ok(&["dump", &v2, "perm"]), ok(&["dump", &src, "perm"]));

    let v3 = s(&dir.path().join("v3.zarr")).to_string();
    for path in ["fdelta", "strings", "json"] {
        ok(&[
            "copy", &src, &v3, "--from", path, "--to", path, "--format", "3",
        ]);
    }
    let codecs = |path: &str| meta(&v3, path)["codecs"].clone();
    assert_eq!(
        codecs("fdelta")[0]["name"],
        "numcodecs.delta",
        "no transpose"
    );
    assert_eq!(codecs("strings")[1]["configuration"]["typesize"], 1);
    assert_eq!(codecs("json")[0]["name"], "vlen-utf8");
    for path in ["fdelta", "strings", "json"] {
        assert_eq!(
            ok(&["dump", &v3, path]),
            ok(&["dump", &src, path]),
            "{path}"
        );
    }
}

/// Variable-length numeric arrays print as lists of their elements (stored big-endian here,
/// read in native order).
#[test]
fn dump_prints_vlen_arrays_as_lists() {
    use std::sync::Arc;
    use zarr::dtype::ElementType;
    use zarr::meta::Order;
    use zarr::node::{ArrayBuilder, Mode};
    use zarr::store::{FilesystemStore, Store};

    let dir = tempfile::tempdir().unwrap();
    let src = s(&dir.path().join("v.zarr")).to_string();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&src, true, true).unwrap());
    let mut b = ArrayBuilder::new(vec![3], ElementType::Raw);
    b.dtype_name(r#"{"id": "vlen-array", "dtype": ">i2"}"#)
        .unwrap()
        .chunks(vec![2])
        .zarr_format(2)
        .unwrap();
    let a = b.create(store, "a", Mode::CreateNew).unwrap();
    let items: Vec<Vec<u8>> = [vec![], vec![-1i16], vec![300, 7]]
        .iter()
        .map(|v| v.iter().flat_map(|x| x.to_ne_bytes()).collect())
        .collect();
    let refs: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
    a.write_vlen(&[0], &[3], Order::C, &refs).unwrap();
    assert_eq!(ok(&["dump", &src, "a"]), "[] [-1] [300, 7]\n");
    assert_eq!(
        ok(&["dump", "-f", "csv", &src, "a"]),
        "[],[-1],\"[300, 7]\"\n"
    );
}

/// `validate` reports consolidated metadata that no longer matches the store (v2 and v3):
/// a document changed, a node removed, a node added after consolidating (v2: the group's
/// own attributes too; a v3 group's own document is not among its consolidated entries).
#[test]
fn validate_reports_stale_consolidated_metadata() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["2", "3"] {
        let store = s(&dir.path().join(format!("v{format}.zarr"))).to_string();
        ok(&["create", &store, "", "--group", "--format", format]);
        for path in ["a", "g/b"] {
            ok(&["create", &store, path, "--shape", "3", "--dtype", "<i4"]);
        }
        ok(&["consolidate", &store]);
        assert_eq!(
            says(&["validate", &store]),
            "4 nodes (2 arrays) checked: 0 problems\n"
        );
        // Changes by a writer that leaves consolidated metadata as it is (the library,
        // zarr-python): zarrtool refreshes it, so the consolidated document is put back.
        let document = dir
            .path()
            .join(format!("v{format}.zarr"))
            .join(match format {
                "2" => ".zmetadata",
                _ => "zarr.json",
            });
        let consolidated = std::fs::read(&document).unwrap();
        ok(&["attrs", "set", &store, "a", "units", "\"m\""]);
        ok(&["attrs", "set", &store, "", "title", "\"t\""]);
        ok(&["rm", &store, "g/b"]);
        ok(&["create", &store, "c", "--shape", "2", "--dtype", "<f8"]);
        std::fs::write(&document, consolidated).unwrap();
        let out = tool(&["validate", &store]);
        assert_eq!(out.status.code(), Some(3), "v{format}");
        let expected = match format {
            "2" => concat!(
                "/: consolidated metadata lists \"g/b/.zarray\", which is not in the store\n",
                "/: \".zattrs\" is not in the consolidated metadata (added after consolidating?)\n",
                "/: \"a/.zattrs\" is not in the consolidated metadata (added after consolidating?)\n",
                "/: \"c/.zarray\" is not in the consolidated metadata (added after consolidating?)\n",
            ),
            _ => concat!(
                "/: consolidated metadata of \"a\" differs from the stored document\n",
                "/: consolidated metadata lists \"g/b\", which is not in the store\n",
                "/: \"c\" is not in the consolidated metadata (added after consolidating?)\n",
            ),
        };
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "v{format}");
    }
}

/// Every file below `root` (a directory, or one file) by path relative to it, with its
/// bytes; links are listed as links (their targets), not followed.
fn tree_bytes(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            files.insert(name, target.display().to_string().into_bytes());
        } else if meta.is_dir() {
            files.insert(name, Vec::new());
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        } else {
            files.insert(name, std::fs::read(&path).unwrap());
        }
    }
    files
}

/// A directory store `s.zarr` holding group `g` with arrays `a` and `b` (4 x 5 int32 in
/// 2 x 3 chunks), its copy `z.zip`, and (on Unix) links `l.zarr` and `l.zip` to them.
fn overlap_setup(dir: &Path) -> (String, String) {
    let raw = dir.join("a.bin");
    let bytes: Vec<u8> = (0..20i32).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&raw, bytes).unwrap();
    let store = s(&dir.join("s.zarr")).to_string();
    for name in ["g/a", "g/b"] {
        ok(&[
            "import",
            s(&raw),
            &store,
            name,
            "--dtype",
            "<i4",
            "--shape",
            "4,5",
            "--chunks",
            "2,3",
        ]);
    }
    let zip = s(&dir.join("z.zip")).to_string();
    ok(&["copy", &store, &zip]);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("s.zarr", dir.join("l.zarr")).unwrap();
        std::os::unix::fs::symlink("z.zip", dir.join("l.zip")).unwrap();
    }
    (store, zip)
}

/// `zarrtool copy` refuses, in every form (tree, array, --rechunk, --format, --compressor,
/// resuming, --dry-run), a target that is its source, lies inside it or holds it, reached
/// through the same path, a link, or a store rooted inside the source, for directory and
/// zip stores; before the target is opened for writing, so the source stays byte for byte
/// and nothing is created. Copies beside the source work.
#[test]
fn copy_onto_its_own_source_is_refused_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let (store, zip) = overlap_setup(dir.path());
    let real = dir.path().canonicalize().unwrap();
    let before = tree_bytes(dir.path());
    let sub = format!("{store}/g");
    let zip_in_store = format!("{store}/new.zip");
    let zip_url = format!("zip://{zip}");
    // (source store, --from, target store, --to, the source's real location named)
    let mut cases: Vec<(&str, &str, &str, &str, String)> = vec![
        // The same node.
        (&store, "", &store, "", "s.zarr".into()),
        (&store, "g", &store, "g", "s.zarr/g".into()),
        (&store, "g/a", &store, "/g/a/", "s.zarr/g/a".into()),
        (&zip, "", &zip_url, "", "z.zip".into()),
        (&zip, "g/a", &zip, "g/a", "z.zip/g/a".into()),
        // The target inside the source: by path, by a store rooted inside it, a new zip.
        (&store, "", &store, "copy", "s.zarr".into()),
        (&store, "g", &store, "g/a/x", "s.zarr/g".into()),
        (&store, "", &sub, "", "s.zarr".into()),
        (&store, "g", &sub, "x", "s.zarr/g".into()),
        (&store, "", &zip_in_store, "", "s.zarr".into()),
        (&zip, "", &zip, "copy", "z.zip".into()),
        (&zip, "g", &zip_url, "g/c", "z.zip/g".into()),
        // The source inside the target.
        (&store, "g/a", &store, "g", "s.zarr/g/a".into()),
        (&sub, "a", &store, "", "s.zarr/g/a".into()),
        (&sub, "", &store, "g", "s.zarr/g".into()),
        (&zip, "g/a", &zip, "", "z.zip/g/a".into()),
    ];
    let link = s(&dir.path().join("l.zarr")).to_string();
    let zip_link = s(&dir.path().join("l.zip")).to_string();
    if cfg!(unix) {
        // Through links to the source's store.
        cases.extend([
            (&*store, "", &*link, "", "s.zarr".into()),
            (&*store, "g", &*link, "g/x", "s.zarr/g".into()),
            (&*link, "g/a", &*store, "g", "s.zarr/g/a".into()),
            (&*zip, "", &*zip_link, "", "z.zip".into()),
            (&*zip_link, "g", &*zip, "g", "z.zip/g".into()),
        ]);
    }
    let forms: [&[&str]; 7] = [
        &["--overwrite"],
        &[],
        &["--rechunk", "1,1", "--overwrite"],
        &["--format", "2", "--overwrite"],
        &["--compressor", "null"],
        &["--shards", "4,6", "--overwrite"],
        &["--dry-run", "--overwrite"],
    ];
    for (source, from, target, to, named) in &cases {
        for form in forms {
            let mut args = vec!["copy", source, target, "--from", from, "--to", to];
            args.extend(form);
            let err = fails(&args, 1);
            let named = real.join(named).display().to_string();
            assert!(
                err.starts_with("zarrtool: invalid argument: cannot write a node into itself")
                    && err.contains("overlap")
                    && err.contains(&format!("the source {named}")),
                "{args:?}: {err}"
            );
        }
    }
    assert!(before == tree_bytes(dir.path()), "the sources changed");
    // Beside the source: a sibling in the same store or zip, another store.
    ok(&["copy", &store, &store, "--from", "g/a", "--to", "g/c"]);
    ok(&[
        "copy",
        &zip,
        &zip,
        "--from",
        "g",
        "--to",
        "h",
        "--overwrite",
    ]);
    let other = s(&dir.path().join("o.zarr")).to_string();
    ok(&["copy", &store, &other, "--from", "g", "--overwrite"]);
    for (store, path) in [(&store, "g/c"), (&zip, "h/a"), (&other, "a")] {
        assert_eq!(
            ok(&["dump", store, path]),
            "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n"
        );
    }
}

/// `zarrtool mv` refuses a target inside the node moved, also through a link inside the
/// store; `zarrtool import` refuses a file that lies in the node it would replace (the
/// store itself or a file inside it, also through a link); `zarrtool export` a file that
/// lies in the array exported (a chunk, a document, the zip file).
#[test]
fn mv_import_and_export_onto_their_source_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, zip) = overlap_setup(dir.path());
    let real = dir.path().canonicalize().unwrap();
    let inside = dir.path().join("s.zarr/in.bin");
    std::fs::copy(dir.path().join("a.bin"), &inside).unwrap();
    let in_group = dir.path().join("s.zarr/g/in.bin");
    std::fs::copy(dir.path().join("a.bin"), &in_group).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("g", dir.path().join("s.zarr/l")).unwrap();
    let before = tree_bytes(dir.path());
    let mut moves = vec![("g", "g/x"), ("g", "g/a/x")];
    if cfg!(unix) {
        moves.extend([("g", "l/x"), ("g/a", "l/a/y")]);
    }
    for (from, to) in moves {
        for dry_run in [false, true] {
            let mut args = vec!["mv", &store, from, to];
            if dry_run {
                args.push("--dry-run");
            }
            let err = fails(&args, 1);
            let source = real.join("s.zarr").join(from).display().to_string();
            assert!(
                err.contains("overlap") && err.contains(&format!("the source {source}")),
                "{args:?}: {err}"
            );
        }
    }
    let size = std::fs::metadata(&zip).unwrap().len().to_string();
    let zip_url = format!("zip://{zip}");
    let mut imports = vec![
        (s(&inside).to_string(), store.clone(), "", "80"),
        (s(&in_group).to_string(), store.clone(), "g", "80"),
        (zip.clone(), zip_url, "", &*size),
        (zip.clone(), zip.clone(), "x", &*size),
    ];
    if cfg!(unix) {
        let link = s(&dir.path().join("l.zarr")).to_string();
        imports.push((format!("{link}/in.bin"), store.clone(), "", "80"));
        imports.push((s(&in_group).to_string(), link, "g", "80"));
        imports.push((
            zip.clone(),
            s(&dir.path().join("l.zip")).to_string(),
            "",
            &*size,
        ));
    }
    for (file, target, path, shape) in &imports {
        for extra in [&["--overwrite"][..], &[], &["--dry-run", "--overwrite"]] {
            let mut args = vec![
                "import", file, target, path, "--dtype", "u1", "--shape", shape,
            ];
            args.extend(extra);
            let err = fails(&args, 1);
            assert!(
                err.starts_with("zarrtool: invalid argument: cannot import ")
                    && err.contains("the file lies in the target"),
                "{args:?}: {err}"
            );
        }
    }
    let mut exports = vec![
        (store.clone(), format!("{store}/g/a/c/0/0")),
        (store.clone(), format!("{store}/g/a/zarr.json")),
        (zip.clone(), zip.clone()),
    ];
    if cfg!(unix) {
        let link = s(&dir.path().join("l.zarr")).to_string();
        exports.push((link, format!("{store}/g/a/c/1/1")));
        exports.push((
            store.clone(),
            s(&dir.path().join("l.zarr/g/a/c/0/1")).into(),
        ));
        exports.push((zip.clone(), s(&dir.path().join("l.zip")).into()));
    }
    for (source, output) in &exports {
        let err = fails(&["export", source, "g/a", "-o", output], 1);
        assert!(
            err.starts_with("zarrtool: invalid argument: cannot export ")
                && err.contains("the file lies in the array exported"),
            "{source} -> {output}: {err}"
        );
    }
    assert!(before == tree_bytes(dir.path()), "the sources changed");
    // A file beside the node replaced is no obstacle.
    ok(&[
        "export",
        &store,
        "g/a",
        "-o",
        s(&dir.path().join("s.zarr/g/out.bin")),
    ]);
    let args = [
        "import",
        s(&inside),
        &store,
        "g/c",
        "--dtype",
        "u1",
        "--shape",
        "80",
    ];
    ok(&args);
    ok(&["mv", &store, "g/a", "h/a"]);
    assert_eq!(ok(&["dump", &store, "h/a", "-r", "0,0:2"]), "0 1\n");
}

/// `validate` reports consolidated entries whose names only normalise onto a real key (the
/// library refuses such metadata; other readers may take either document) and consolidated
/// metadata larger than any document (unread); a zip whose entry names would merge is
/// refused at opening, naming the entry.
#[test]
fn validate_reports_names_that_merge_and_oversized_consolidated_metadata() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["2", "3"] {
        let root = dir.path().join(format!("v{format}.zarr"));
        let store = s(&root).to_string();
        ok(&["create", &store, "", "--group", "--format", format]);
        ok(&["create", &store, "g/a", "--shape", "3", "--dtype", "<i4"]);
        ok(&["consolidate", &store]);
        let (key, real, merged) = match format {
            "2" => (".zmetadata", "g/a/.zarray", "g//a/.zarray"),
            _ => ("zarr.json", "g/a", "g//a"),
        };
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root.join(key)).unwrap()).unwrap();
        let metadata = match format {
            "2" => &mut doc["metadata"],
            _ => &mut doc["consolidated_metadata"]["metadata"],
        };
        let mut other = metadata[real].clone();
        other["shape"] = serde_json::json!([1000]);
        metadata[merged] = other;
        std::fs::write(root.join(key), serde_json::to_vec(&doc).unwrap()).unwrap();
        let out = tool(&["validate", &store]);
        assert_eq!(out.status.code(), Some(3), "v{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(
                "/: invalid key: the consolidated metadata has an entry {merged:?} that is not \
                 a normal key (it would stand in for {real:?})\n"
            ),
            "v{format}"
        );
    }
    // Consolidated metadata larger than any document: reported, not read.
    let root = dir.path().join("v2.zarr");
    std::fs::File::create(root.join(".zmetadata"))
        .unwrap()
        .set_len(5 << 30)
        .unwrap();
    let out = tool(&["validate", s(&root)]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/: metadata error: \".zmetadata\" holds more than 1073741824 bytes, more than any \
         metadata document libzarr reads\n"
    );
    // A zip whose entry g/zarr.json is named g\zarr.json: refused at opening.
    let zip = dir.path().join("z.zip");
    ok(&[
        "copy",
        s(&dir.path().join("v3.zarr")),
        s(&zip),
        "--from",
        "g",
        "--to",
        "g",
    ]);
    let bytes = std::fs::read(&zip).unwrap();
    let (from, to) = (b"g/zarr.json", b"g\\zarr.json");
    let mut patched = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(from) {
            patched.extend_from_slice(to);
            at += from.len();
        } else {
            patched.push(bytes[at]);
            at += 1;
        }
    }
    std::fs::write(&zip, patched).unwrap();
    let err = fails(&["validate", s(&zip)], 1);
    assert!(
        err.starts_with("zarrtool: invalid key: zip ")
            && err.ends_with(
                " has an entry \"g\\\\zarr.json\" that is not a normal key (it would stand in \
                 for \"g/zarr.json\")\n"
            ),
        "{err}"
    );
}

/// Messages quote URLs without their user information and query values, whichever command
/// and whichever side (source or target) the URL is on.
#[cfg(feature = "cloud")]
#[test]
fn messages_never_quote_a_urls_password_or_signature() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = setup(dir.path());
    // A loopback port nothing listens on: every request fails at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let secret_url = format!(
        "http://user:hunter2pw@127.0.0.1:{port}/d.zarr?X-Goog-Signature=sig0secret&key=key0secret"
    );
    let target = dir.path().join("t.zarr");
    let cases: Vec<Vec<&str>> = vec![
        vec!["ls", &secret_url],
        vec!["info", &secret_url],
        vec!["dump", &secret_url],
        vec!["validate", &secret_url],
        vec!["copy", &secret_url, s(&target)],
        vec!["copy", &store, &secret_url],
        vec!["diff", &store, &secret_url],
    ];
    for args in cases {
        let out = tool(&args);
        assert!(!out.status.success(), "zarrtool {args:?} succeeded");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.starts_with("zarrtool: "), "{args:?}: {text}");
        for secret in ["hunter2pw", "sig0secret", "key0secret"] {
            assert!(!text.contains(secret), "{args:?} quotes {secret}: {text}");
        }
    }
}

/// Writes a JSON document into a directory store.
fn put_doc(root: &Path, key: &str, value: serde_json::Value) {
    let path = root.join(key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(&value).unwrap()).unwrap();
}

/// A v3 array document without codecs beyond `bytes`.
fn v3_array(
    shape: serde_json::Value,
    dtype: &str,
    fill: serde_json::Value,
    attrs: serde_json::Value,
) -> serde_json::Value {
    let chunks = if shape == serde_json::json!([]) {
        serde_json::json!([])
    } else {
        serde_json::json!([2])
    };
    serde_json::json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": attrs
    })
}

#[test]
fn copy_carries_the_cf_missing_value_and_scalar_dimensions_between_formats() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    put_doc(
        &src,
        "zarr.json",
        serde_json::json!({"zarr_format": 3, "node_type": "group"}),
    );
    // As xarray writes v3: fill 0 beside the base64 _FillValue, or no attribute at all.
    put_doc(
        &src,
        "t2m/zarr.json",
        v3_array(
            serde_json::json!([4]),
            "float32",
            serde_json::json!(0.0),
            serde_json::json!({"_FillValue": "AAAAAICHw8A="}),
        ),
    );
    put_doc(
        &src,
        "x/zarr.json",
        v3_array(
            serde_json::json!([4]),
            "float64",
            serde_json::json!(0.0),
            serde_json::json!({}),
        ),
    );
    put_doc(
        &src,
        "n/zarr.json",
        v3_array(
            serde_json::json!([4]),
            "int16",
            serde_json::json!(0),
            serde_json::json!({"_FillValue": -9}),
        ),
    );
    put_doc(
        &src,
        "crs/zarr.json",
        v3_array(
            serde_json::json!([]),
            "int32",
            serde_json::json!(0),
            serde_json::json!({}),
        ),
    );
    let v2 = dir.path().join("v2.zarr");
    ok(&["copy", s(&src), s(&v2), "--format", "2"]);
    let doc = |root: &Path, key: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(root.join(key)).unwrap()).unwrap()
    };
    // (array, v2 fill_value): the missing value moves into fill_value; a zero fill
    // without one becomes null, so xarray masks no real zero.
    for (name, fill) in [
        ("t2m", serde_json::json!(-9999.0)),
        ("x", serde_json::Value::Null),
        ("n", serde_json::json!(-9)),
        ("crs", serde_json::Value::Null),
    ] {
        assert_eq!(
            doc(&v2, &format!("{name}/.zarray"))["fill_value"],
            fill,
            "{name}"
        );
        // The missing value's attribute, typed as NCZarr reads it, beside the fill value.
        let attrs = v2.join(format!("{name}/.zattrs"));
        let attrs = match attrs.exists() {
            true => doc(&v2, &format!("{name}/.zattrs")),
            false => serde_json::json!({}),
        };
        let typed = |ty: &str| serde_json::json!({"types": {"_FillValue": ty}});
        let (attr, types) = match name {
            "t2m" => (Some(&fill), Some(typed("<f4"))),
            "n" => (Some(&fill), Some(typed("<i2"))),
            _ => (None, None),
        };
        assert_eq!(attrs.get("_FillValue"), attr, "{name}");
        assert_eq!(attrs.get("_NCZARR_ATTR"), types.as_ref(), "{name}");
    }
    assert_eq!(
        doc(&v2, "crs/.zattrs"),
        serde_json::json!({"_ARRAY_DIMENSIONS": []})
    );
    assert_eq!(ok(&["dump", s(&v2), "x"]), "0.0 0.0 0.0 0.0\n");
    // And back to v3: the attribute xarray reads beside the fill value.
    let v3 = dir.path().join("v3.zarr");
    ok(&["copy", s(&v2), s(&v3), "--format", "3"]);
    let meta = doc(&v3, "t2m/zarr.json");
    assert_eq!(meta["fill_value"], serde_json::json!(-9999.0));
    assert_eq!(
        meta["attributes"]["_FillValue"],
        serde_json::json!("AAAAAICHw8A=")
    );
    assert!(meta["attributes"].get("_NCZARR_ATTR").is_none(), "{meta}");
    let meta = doc(&v3, "n/zarr.json");
    assert_eq!(meta["attributes"]["_FillValue"], serde_json::json!(-9));
    let meta = doc(&v3, "x/zarr.json");
    assert_eq!(meta["fill_value"], serde_json::json!(0.0));
    assert!(meta["attributes"].get("_FillValue").is_none(), "{meta}");
}

#[test]
fn nczarr_scalars_work_in_every_command_and_validate_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("nc.zarr");
    put_doc(&src, ".zgroup", serde_json::json!({"zarr_format": 2}));
    put_doc(
        &src,
        "crs/.zarray",
        serde_json::json!({"zarr_format": 2, "shape": [1], "dtype": "<i4", "chunks": [1],
            "fill_value": null, "order": "C", "compressor": null, "filters": null,
            "_NCZARR_ARRAY": {"dimrefs": [], "storage": "scalar"}}),
    );
    put_doc(
        &src,
        "crs/.zattrs",
        serde_json::json!({"_ARRAY_DIMENSIONS": [], "_NCZARR_ATTR": {"types": {}}}),
    );
    std::fs::write(src.join("crs/0"), 7i32.to_le_bytes()).unwrap();
    assert_eq!(ok(&["dump", s(&src), "crs"]), "7\n");
    assert!(ok(&["info", s(&src), "crs"]).contains("shape: 1\n"));
    let out = tool(&["validate", s(&src)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "2 nodes (1 arrays) checked: 0 problems\n"
    );
    let v3 = dir.path().join("v3.zarr");
    ok(&["copy", s(&src), s(&v3), "--format", "3"]);
    assert_eq!(ok(&["dump", s(&v3), "crs"]), "7\n");
    // A dimension list that does not fit the array: validate says what info says.
    put_doc(
        &src,
        "crs/.zattrs",
        serde_json::json!({"_ARRAY_DIMENSIONS": ["a", "b"]}),
    );
    let err = fails(&["info", s(&src), "crs"], 1);
    assert!(err.contains("_ARRAY_DIMENSIONS"), "{err}");
    let out = tool(&["validate", s(&src)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("/crs: metadata error") && text.contains("_ARRAY_DIMENSIONS"),
        "{text}"
    );
    assert_ne!(out.status.code(), Some(0));
}

#[test]
fn netcdf_missing_values_become_the_cf_missing_value_or_warn() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF import: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cdl = r#"netcdf mv {
dimensions:
  x = 3 ;
variables:
  short text(x) ; text:missing_value = "none" ;
  short frac(x) ; frac:missing_value = 1.5 ;
  short two(x) ; two:missing_value = -1s, -2s ;
  short one(x) ; one:missing_value = -1s ;
  float f(x) ; f:missing_value = 1.e30f ;
  int64 big(x) ; big:_FillValue = 9007199254740993LL ;
data:
  text = 1, 2, 3 ; frac = 1, 2, 3 ; two = 1, 2, 3 ; one = 1, -1, 3 ; f = 1, 1e30, 3 ;
  big = 1, _, 3 ;
}
"#;
    let nc = ncgen(dir.path(), "mv", "nc4", cdl);
    let store = dir.path().join("mv.zarr");
    let out = tool(&["import", s(&nc), s(&store)]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    // (variable, v3 fill_value, _FillValue attribute, warned)
    let cases = [
        ("text", serde_json::json!(0), None, true),
        ("frac", serde_json::json!(0), None, true),
        ("two", serde_json::json!(0), None, true),
        (
            "one",
            serde_json::json!(-1),
            Some(serde_json::json!(-1)),
            false,
        ),
        // The float32 nearest 1e30, in xarray's base64 double encoding.
        (
            "f",
            serde_json::json!(1.0000000150474662e30),
            Some(serde_json::json!("AAAAQFk+KUY=")),
            false,
        ),
        // An int64 beyond 2^53 stays exact.
        (
            "big",
            serde_json::json!(9007199254740993i64),
            Some(serde_json::json!(9007199254740993i64)),
            false,
        ),
    ];
    for (var, fill, attr, warned) in cases {
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(store.join(var).join("zarr.json")).unwrap())
                .unwrap();
        assert_eq!(meta["fill_value"], fill, "{var}");
        assert_eq!(meta["attributes"].get("_FillValue").cloned(), attr, "{var}");
        let warned_here = err.lines().any(|l| {
            l.ends_with("missing_value is kept as an attribute only")
                && (l.contains(&format!("variable /{var}:"))
                    || l.contains(&format!("array \"{var}\"")))
        });
        assert_eq!(warned_here, warned, "{var}: {err}");
    }
}

#[test]
fn lossy_and_pcodec_codecs() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, store) = setup(dir.path());
    let features = ok(&["version", "--features"]);
    if !cfg!(all(feature = "zfp", feature = "pcodec")) {
        assert!(features.contains("lossy codecs: ") && features.contains("built without"));
        return;
    }
    assert!(
        features.contains("\nlossy codecs: zfp zfpy pcodec\n"),
        "{features}"
    );
    // Import with each codec, read back exactly (lossless modes), copy re-encodes.
    for codec in [
        r#"{"name":"zfp","configuration":{"mode":"reversible"}}"#,
        r#"{"id":"zfpy","mode":5}"#,
        r#"{"id":"pcodec","level":4}"#,
    ] {
        let target = dir.path().join("lossy.zarr");
        let _ = std::fs::remove_dir_all(&target);
        ok(&[
            "import",
            &raw,
            s(&target),
            "b",
            "--dtype",
            "<i4",
            "--shape",
            "4,5",
            "--chunks",
            "2,3",
            "--codec",
            codec,
            "--format",
            "3",
        ]);
        assert_eq!(
            ok(&["dump", s(&target), "b"]),
            "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n",
            "{codec}"
        );
        let doc = std::fs::read_to_string(target.join("b/zarr.json")).unwrap();
        let name = if codec.contains("pcodec") {
            "numcodecs.pcodec"
        } else if codec.contains("zfpy") {
            "numcodecs.zfpy"
        } else {
            "\"zfp\""
        };
        assert!(doc.contains(name), "{doc}");
        let copy = dir.path().join("copy.zarr");
        let _ = std::fs::remove_dir_all(&copy);
        ok(&["copy", &store, s(&copy), "--codec", codec]);
        assert_eq!(ok(&["dump", s(&copy), "a"]), ok(&["dump", &store, "a"]));
    }
    // A type the codec cannot encode: refused, nothing made.
    let target = dir.path().join("int8.zarr");
    let err = fails(
        &[
            "create",
            s(&target),
            "c",
            "--shape",
            "3",
            "--dtype",
            "int8",
            "--codec",
            r#"{"id":"zfpy","mode":5}"#,
        ],
        1,
    );
    assert!(err.contains("int8"), "{err}");
}

#[test]
fn codec_lists_may_start_with_registered_array_codecs() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let target = s(&dir.path().join("so.zarr")).to_string();
    let codecs = r#"[{"name":"scale_offset","configuration":{"scale":2}},
        {"name":"cast_value","configuration":{"data_type":"int8"}}]"#;
    ok(&["copy", &store, &target, "--format", "3", "--codec", codecs]);
    let meta: serde_json::Value = serde_json::from_str(&ok(&["meta", &target, "a"])).unwrap();
    assert_eq!(
        meta["codecs"],
        serde_json::json!([
            {"name": "scale_offset", "configuration": {"scale": 2}},
            {"name": "cast_value", "configuration": {"data_type": "int8"}},
            {"name": "bytes"}
        ])
    );
    // Rows 0-1, columns 0-2 of 0..20 in rows of 5, doubled, one byte each.
    assert_eq!(
        std::fs::read(dir.path().join("so.zarr/a/c/0/0")).unwrap(),
        [0, 2, 4, 10, 12, 14]
    );
    assert_eq!(ok(&["dump", &target, "a"]), ok(&["dump", &store, "a"]));
    // 19 * 8 does not fit int8: the copy fails naming the codec.
    let err = fails(
        &[
            "copy",
            &store,
            s(&dir.path().join("bad.zarr")),
            "--format",
            "3",
            "--codec",
            r#"[{"name":"scale_offset","configuration":{"scale":8}},{"name":"cast_value","configuration":{"data_type":"int8"}}]"#,
        ],
        1,
    );
    assert!(
        err.contains("cast_value") && err.contains("outside -128..=127"),
        "{err}"
    );
    ok(&[
        "create",
        &store,
        "r",
        "--shape",
        "3",
        "--dtype",
        "float32",
        "--format",
        "3",
        "--codec",
        r#"[{"name":"bitround","configuration":{"keepbits":3}},{"name":"zstd","configuration":{"level":1}}]"#,
    ]);
    let meta: serde_json::Value = serde_json::from_str(&ok(&["meta", &store, "r"])).unwrap();
    assert_eq!(meta["codecs"][0]["name"], "bitround");
    assert_eq!(meta["codecs"][2]["name"], "zstd");
}

#[test]
fn rectilinear_grids_in_create_info_copy_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let rect = s(&dir.path().join("rect.zarr")).to_string();
    // Rows in chunks of 1 and 3, columns as a run of two 2s and a 1.
    ok(&["copy", &store, &rect, "--rechunk", "[[1,3],[[2,2],1]]"]);
    let meta: serde_json::Value = serde_json::from_str(&ok(&["meta", &rect, "a"])).unwrap();
    assert_eq!(
        meta["chunk_grid"],
        serde_json::json!({"name": "rectilinear", "configuration": {
            "kind": "inline", "chunk_shapes": [[1, 3], [[2, 2], 1]]}})
    );
    assert_eq!(ok(&["dump", &rect, "a"]), ok(&["dump", &store, "a"]));
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--json", &rect, "a"])).unwrap();
    assert_eq!(
        info["chunk_edges"],
        serde_json::json!([[1, 3], [[2, 2], 1]])
    );
    assert_eq!(info["chunks_total"], 6);
    assert_eq!(info["chunks_initialized"], 6);
    let text = ok(&["info", &rect, "a"]);
    assert!(
        text.contains("chunks: rectilinear, largest 3 x 2\n"),
        "{text}"
    );
    assert!(text.contains("chunk edges: [[1,3],[[2,2],1]]\n"), "{text}");
    // Chunk (1, 2) holds rows 1..4 and column 4: three int32 items.
    let chunk = std::fs::read(dir.path().join("rect.zarr/a/c/1/2")).unwrap();
    assert_eq!(chunk.len(), 12);
    // Copied back to a regular grid, the data is the same.
    let back = s(&dir.path().join("back.zarr")).to_string();
    ok(&["copy", &rect, &back, "--rechunk", "2,2"]);
    assert_eq!(ok(&["dump", &back, "a"]), ok(&["dump", &store, "a"]));
    // A copy keeps the grid when no --rechunk is given.
    let again = s(&dir.path().join("again.zarr")).to_string();
    ok(&["copy", &rect, &again]);
    let meta2: serde_json::Value = serde_json::from_str(&ok(&["meta", &again, "a"])).unwrap();
    assert_eq!(meta2["chunk_grid"], meta["chunk_grid"]);

    let out = tool(&["validate", &rect]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::create_dir_all(dir.path().join("rect.zarr/a/c/2")).unwrap();
    std::fs::write(dir.path().join("rect.zarr/a/c/2/0"), [0u8; 8]).unwrap();
    let out = tool(&["validate", &rect]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("/a: chunk \"a/c/2/0\" lies outside the array (grid 2 x 3)"),
        "{text}"
    );

    let created = s(&dir.path().join("new.zarr")).to_string();
    ok(&[
        "create",
        &created,
        "t",
        "--shape",
        "10,4",
        "--dtype",
        "<f8",
        "--chunks",
        "[[4,6],4]",
    ]);
    let meta: serde_json::Value = serde_json::from_str(&ok(&["meta", &created, "t"])).unwrap();
    assert_eq!(
        meta["chunk_grid"]["configuration"]["chunk_shapes"],
        serde_json::json!([[4, 6], 4])
    );
    let err = fails(
        &[
            "create", &created, "u", "--shape", "10", "--dtype", "<f8", "--chunks", "[[4,5]]",
        ],
        1,
    );
    assert!(err.contains("sum to 9, less than the extent 10"), "{err}");
    let err = fails(
        &[
            "create",
            &created,
            "v",
            "--shape",
            "10",
            "--dtype",
            "<f8",
            "--chunks",
            "[[4,0,6]]",
        ],
        1,
    );
    assert!(err.contains("entry 1 (0)"), "{err}");
    let err = fails(
        &[
            "create", &created, "w", "--shape", "10", "--dtype", "<f8", "--chunks", "[[4,6]]",
            "--format", "2",
        ],
        1,
    );
    assert!(
        err.contains("Zarr v2 metadata cannot hold a rectilinear chunk grid"),
        "{err}"
    );
    let err = fails(
        &[
            "copy",
            &rect,
            &created,
            "--rechunk",
            "[[4],[5]]",
            "--shards",
            "4,5",
        ],
        1,
    );
    assert!(
        err.contains("--rechunk with chunk edges cannot be combined with --shards"),
        "{err}"
    );
}

/// Runs zarrtool expecting exit status `code`; returns its stdout parsed as JSON.
fn json_of(args: &[&str], code: i32) -> serde_json::Value {
    let out = tool(args);
    assert_eq!(out.status.code(), Some(code), "zarrtool {args:?}");
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// `--json` of validate, diff, meta, attrs get and copy: one document each, as
/// docs/zarrtool.md describes them.
#[test]
fn json_for_scripts() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let copied = dir.path().join("c.zarr");
    let copied = s(&copied);
    let summary = json_of(&["copy", &store, copied, "--rechunk", "4,5", "--json"], 0);
    assert_eq!(
        summary,
        json!({
            "source": {"store": store, "path": "/"},
            "target": {"store": copied, "path": "/"},
            "dry_run": false,
            "nodes": [
                {"node_type": "group", "path": "/", "created": true},
                {"node_type": "array", "from": "/a", "path": "/a", "zarr_format": 3,
                 "shape": [4, 5], "chunks": [4, 5], "shards": null, "chunks_total": 1, "shards_total": null,
                 "resumed": false},
            ],
        })
    );
    // A dry run into the copy: the array would be resumed, the root kept.
    let planned = json_of(
        &[
            "copy",
            &store,
            copied,
            "--rechunk",
            "4,5",
            "--json",
            "--dry-run",
        ],
        0,
    );
    assert_eq!(planned["dry_run"], true);
    assert_eq!(planned["nodes"][0]["created"], false);
    assert_eq!(planned["nodes"][1]["resumed"], true);

    let valid = json_of(&["validate", "--json", copied], 0);
    assert_eq!(
        valid,
        json!({"store": copied, "path": "/", "nodes": 2, "arrays": 1, "problems": [],
               "stale_consolidated": [], "removed": []})
    );
    std::fs::write(Path::new(copied).join("a/junk"), b"x").unwrap();
    let invalid = json_of(&["validate", "--json", copied], 3);
    assert_eq!(
        invalid["problems"],
        json!([{"path": "/a", "problem": "orphan key \"a/junk\" (not a chunk key)"}])
    );

    ok(&["attrs", "set", copied, "a", "units", "\"K\""]);
    let same = json_of(&["diff", "--json", &store, copied], 0);
    assert_eq!(
        same,
        json!({"left": {"store": store, "path": "/"}, "right": {"store": copied, "path": "/"},
               "same": true, "differences": []})
    );
    let differ = json_of(&["diff", "--json", "--attrs", &store, copied], 3);
    assert_eq!(differ["same"], false);
    assert_eq!(
        differ["differences"],
        json!([{"path": "/a", "difference": "attribute \"units\" only in the second: \"K\""}])
    );

    let attrs = json_of(&["attrs", "get", "--json", copied, "a"], 0);
    assert_eq!(
        attrs,
        json!({"path": "/a", "node_type": "array", "attributes": {"units": "K"}})
    );
    let meta = json_of(&["meta", "--json", copied, "a"], 0);
    assert_eq!(meta["path"], "/a");
    assert_eq!(meta["node_type"], "array");
    assert_eq!(meta["zarr_format"], 3);
    assert_eq!(meta["document"]["shape"], json!([4, 5]));
    assert_eq!(
        meta["document"],
        serde_json::from_str::<serde_json::Value>(&ok(&["meta", copied, "a"])).unwrap()
    );
    let group = json_of(&["meta", "--json", copied], 0);
    assert_eq!(group["node_type"], "group");
    assert_eq!(group["document"]["node_type"], "group");
}

/// A raw import reads its file by rows of chunks (along the first dimension in C order,
/// the last in Fortran order), from a file or standard input, with the same values.
#[test]
fn raw_imports_go_by_rows_of_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (ni, nj, nk) = (3usize, 4usize, 5usize);
    let value = |i: usize, j: usize, k: usize| ((i * nj + j) * nk + k) as i32;
    let mut c_order = Vec::new();
    let mut f_order = vec![0u8; ni * nj * nk * 4];
    for i in 0..ni {
        for j in 0..nj {
            for k in 0..nk {
                let v = value(i, j, k).to_be_bytes();
                c_order.extend_from_slice(&v);
                let f = i + ni * (j + nj * k);
                f_order[f * 4..f * 4 + 4].copy_from_slice(&v);
            }
        }
    }
    let (c_file, f_file) = (dir.path().join("c.bin"), dir.path().join("f.bin"));
    std::fs::write(&c_file, &c_order).unwrap();
    std::fs::write(&f_file, &f_order).unwrap();
    let store = dir.path().join("s.zarr");
    let store = s(&store);
    let layout = ["--dtype", ">i4", "--shape", "3,4,5", "--chunks", "2,3,2"];
    let import = |file: &str, name: &str, extra: &[&str]| {
        let mut args = vec!["import", file, store, name];
        args.extend_from_slice(&layout);
        args.extend_from_slice(extra);
        ok(&args);
    };
    import(s(&c_file), "c", &[]);
    import(s(&f_file), "f", &["--order", "f"]);
    let mut child = Command::new(exe())
        .args(["import", "-", store, "stdin"])
        .args(layout)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&c_order).unwrap();
    assert!(child.wait().unwrap().success());
    let expected: Vec<u8> = (0..60i32).flat_map(i32::to_ne_bytes).collect();
    for name in ["c", "f", "stdin"] {
        let out = succeeds(&["dump", "-f", "raw", store, name]);
        assert_eq!(out.stdout, expected, "{name}");
    }
    // A file of the wrong length is refused before anything is written.
    std::fs::write(&c_file, &c_order[..236]).unwrap();
    let mut args = vec!["import", s(&c_file), store, "short"];
    args.extend_from_slice(&layout);
    let err = fails(&args, 1);
    assert_eq!(
        err,
        format!(
            "zarrtool: buffer size: {:?} holds 236 bytes but shape 3 x 4 x 5 of >i4 \
             needs 240\n",
            s(&c_file)
        )
    );
    assert!(!Path::new(store).join("short").exists());
}

/// A raw import from standard input reads at most one byte more than the shape needs, and
/// a longer or shorter stream is refused, naming the sizes, before anything is written.
#[test]
fn raw_import_from_stdin_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.zarr");
    let store = s(&store);
    let import = |name: &str, input: Vec<u8>| {
        let mut child = Command::new(exe())
            .args(["import", "-", store, name, "--dtype", "<i4", "--shape", "4"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The tool stops reading after 17 bytes: the rest meets a closed pipe.
        let _ = stdin.write_all(&input);
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    // Far more than the shape needs (1 MiB for 16 bytes).
    let out = import("long", vec![7; 1 << 20]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: buffer size: standard input holds more than the 16 bytes shape 4 of <i4 \
         needs\n"
    );
    let out = import("short", vec![7; 15]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: buffer size: \"-\" holds 15 bytes but shape 4 of <i4 needs 16\n"
    );
    for name in ["long", "short"] {
        assert!(!Path::new(store).join(name).exists(), "{name}");
    }
    let exact: Vec<u8> = (0..4i32).flat_map(i32::to_le_bytes).collect();
    assert!(import("exact", exact.clone()).status.success());
    let out = succeeds(&["dump", "-f", "raw", store, "exact"]);
    assert_eq!(
        out.stdout,
        (0..4i32).flat_map(i32::to_ne_bytes).collect::<Vec<_>>()
    );
}

/// `--json` output of `copy` and `diff` shows a URL's query values masked, as messages do
/// (`validate` masks the same way; it needs a listing the web server here cannot give).
#[cfg(feature = "cloud")]
#[test]
fn json_output_masks_a_urls_query_values() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    ok(&["consolidate", &store]);
    let server = common::hostile::Hostile::start();
    for entry in common::files_below(Path::new(&store)) {
        let key = entry
            .strip_prefix(&store)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        server.put(&format!("d.zarr/{key}"), &std::fs::read(&entry).unwrap());
    }
    let url = format!(
        "http://127.0.0.1:{}/d.zarr?X-Amz-Signature=sig0secret",
        server.port
    );
    let masked = format!(
        "http://127.0.0.1:{}/d.zarr?X-Amz-Signature=***",
        server.port
    );
    let target = dir.path().join("t.zarr");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["diff", "--json", &store, &url], "/right/store"),
        (vec!["copy", "--json", &url, s(&target)], "/source/store"),
    ];
    for (args, pointer) in cases {
        let out = tool(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("sig0secret"), "{args:?}: {text}");
        let v: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(
            v.pointer(pointer).unwrap(),
            &serde_json::json!(masked),
            "{args:?}"
        );
    }
}

#[test]
fn attrs_set_and_del_json_print_the_attributes_they_leave() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let set = json_of(
        &["attrs", "set", &store, "a", "units", "\"K\"", "--json"],
        0,
    );
    let want = serde_json::json!({
        "path": "/a",
        "node_type": "array",
        "attributes": {"units": "K"},
    });
    assert_eq!(set, want);
    assert_eq!(json_of(&["attrs", "get", "--json", &store, "a"], 0), want);
    // A dry run prints what the change would leave and writes nothing.
    let would = json_of(
        &[
            "attrs",
            "set",
            &store,
            "/a",
            "n",
            "[1, 2]",
            "--dry-run",
            "--json",
        ],
        0,
    );
    assert_eq!(
        would["attributes"],
        serde_json::json!({"units": "K", "n": [1, 2]})
    );
    assert_eq!(json_of(&["attrs", "get", "--json", &store, "a"], 0), want);
    let would = json_of(
        &["attrs", "del", &store, "a", "units", "--dry-run", "--json"],
        0,
    );
    assert_eq!(would["attributes"], serde_json::json!({}));
    assert_eq!(json_of(&["attrs", "get", "--json", &store, "a"], 0), want);
    // The root group, and a deletion.
    let root = json_of(&["attrs", "set", &store, "", "title", "\"t\"", "--json"], 0);
    assert_eq!(
        root,
        serde_json::json!({"path": "/", "node_type": "group", "attributes": {"title": "t"}})
    );
    let del = json_of(&["attrs", "del", &store, "a", "units", "--json"], 0);
    assert_eq!(
        del,
        serde_json::json!({"path": "/a", "node_type": "array", "attributes": {}})
    );
    assert_eq!(ok(&["attrs", "get", &store, "a"]), "{}\n");
    // A missing attribute is an error, with nothing on stdout.
    let message = fails(&["attrs", "del", &store, "a", "units", "--json"], 1);
    assert!(
        message.contains("no attribute \"units\" on /a"),
        "{message}"
    );
}
