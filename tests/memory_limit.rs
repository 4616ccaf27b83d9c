//! Items of hundreds of MiB under an address-space limit: a few bytes of hostile metadata
//! (a type whose one item is huge) must make open, the fill value's JSON, reads and writes
//! fail with `NoMemory` (or succeed), never abort the process.
//!
//! Each test starts this same test binary again under `ulimit -v` (the limit on address
//! space) with `ZARR_MEMORY_LIMIT_CHILD` set; the child runs the cases and the parent checks
//! that it finished on its own with every case as expected. `zarrtool` runs the same way,
//! under `sh -c 'ulimit -v …; exec zarrtool …'`.

use serde_json::{json, Value};
use std::ffi::CString;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use zarr::ffi::*;
use zarr::meta::Order;
use zarr::node::{Array, Mode};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

/// The address-space limit of the child, in KiB (512 MiB).
const LIMIT_KIB: u64 = 512 * 1024;

/// Set in the child process, which runs the cases.
const CHILD: &str = "ZARR_MEMORY_LIMIT_CHILD";

/// Item sizes: 900 MB cannot be had under the limit at all; 300 MB can, once, but not
/// the base64 text of the fill value too; 120 MB leaves room for the caller's buffers and
/// a read, not for the encoded chunk and the store's copy a write needs.
const SIZES: [u64; 3] = [900_000_000, 300_000_000, 120_000_000];

/// Hostile documents: (name, item size, key, document), every type family of v2 and v3 at
/// every size of [`SIZES`].
fn documents() -> Vec<(String, u64, &'static str, Value)> {
    let mut docs = Vec::new();
    for size in SIZES {
        let v2 = |dtype: Value, fill: Value| {
            json!({"zarr_format": 2, "shape": [2], "chunks": [1], "dtype": dtype,
                   "fill_value": fill, "order": "C", "compressor": null, "filters": null})
        };
        let v3 = |dtype: Value, fill: Value| {
            json!({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": dtype,
                   "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
                   "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
                   "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})
        };
        let sized =
            |name: &str, n: u64| json!({"name": name, "configuration": {"length_bytes": n}});
        let cases = [
            ("v2 V", ".zarray", v2(json!(format!("|V{size}")), json!(0))),
            (
                "v2 V base64",
                ".zarray",
                v2(json!(format!("|V{size}")), json!("")),
            ),
            ("v2 S", ".zarray", v2(json!(format!("|S{size}")), json!(""))),
            (
                "v2 U",
                ".zarray",
                v2(json!(format!("<U{}", size / 4)), json!("")),
            ),
            (
                "v2 U null",
                ".zarray",
                v2(json!(format!("<U{}", size / 4)), Value::Null),
            ),
            (
                "v2 record",
                ".zarray",
                v2(json!([["a", "<i4"], ["b", format!("|S{size}")]]), json!("")),
            ),
            (
                "v3 raw_bytes",
                "zarr.json",
                v3(sized("raw_bytes", size), json!("")),
            ),
            (
                "v3 r<bits>",
                "zarr.json",
                v3(json!(format!("r{}", size * 8)), json!("")),
            ),
            (
                "v3 null_terminated_bytes",
                "zarr.json",
                v3(sized("null_terminated_bytes", size), json!("")),
            ),
            (
                "v3 fixed_length_utf32",
                "zarr.json",
                v3(sized("fixed_length_utf32", size / 4 * 4), json!("")),
            ),
            (
                "v3 structured",
                "zarr.json",
                v3(
                    json!({"name": "structured", "configuration": {"fields": [
                        ["a", "int32"], ["b", sized("raw_bytes", size)]]}}),
                    json!({"a": 1, "b": ""}),
                ),
            ),
        ];
        for (name, key, doc) in cases {
            docs.push((format!("{name} ({size} bytes)"), size, key, doc));
        }
    }
    docs
}

/// What a step gave: `ok` or `no memory` (anything else fails the case at once).
fn outcome<T>(case: &str, step: &str, result: Result<T, Error>) -> Option<T> {
    let (word, value) = match result {
        Ok(value) => ("ok", Some(value)),
        Err(Error::NoMemory(message)) => {
            assert!(
                message.contains("cannot allocate"),
                "{case}: {step}: {message}"
            );
            ("no memory", None)
        }
        Err(other) => panic!("{case}: {step}: unexpected error {other}"),
    };
    println!("{case} | {step} | {word}");
    value
}

/// [`outcome`] for a C status: `ZARR_OK` (or `ok_status`, meaning the same) or
/// `ZARR_ERR_NO_MEMORY`.
fn status_outcome(case: &str, step: &str, status: zarr_status_t, ok_status: zarr_status) -> bool {
    let ok = status == zarr_status::ZARR_OK as i32 || status == ok_status as i32;
    let result = match status {
        _ if ok => Ok(()),
        s if s == zarr_status::ZARR_ERR_NO_MEMORY as i32 => Err(Error::NoMemory(last_error())),
        s => Err(Error::Internal(format!("status {s}"))),
    };
    outcome(case, step, result).is_some()
}

/// The thread's last error message from the C API.
fn last_error() -> String {
    let mut buf = [0u8; 1024];
    let mut needed = 0usize;
    unsafe { zarr_last_error(buf.as_mut_ptr().cast(), buf.len(), &mut needed) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// A zeroed buffer of `len` bytes when the limit allows it.
fn buffer(len: usize) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).ok()?;
    buf.resize(len, 0);
    Some(buf)
}

/// The Rust API on one document: open, fill value JSON (when `json`: it takes seconds
/// where it succeeds), a one-element read, a write of one element, a read of both.
fn rust_api(case: &str, key: &str, doc: &Value, json: bool) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store.set(key, doc.to_string().as_bytes()).unwrap();
    let Some(array) = outcome(case, "open", Array::open(store, "", Mode::ReadWrite)) else {
        return;
    };
    let meta = array.metadata();
    if json {
        outcome(case, "fill value JSON", array.fill_value_json());
    }
    let (item, elem) = (meta.item_size(), meta.dtype.element_type());
    drop(meta);
    if let Some(mut one) = buffer(item) {
        let read = array.read(&[1], &[1], elem, Order::C, &mut one);
        outcome(case, "one-element read", read);
    }
    if let Some(mut two) = buffer(2 * item) {
        let read = array.read(&[0], &[2], elem, Order::C, &mut two);
        outcome(case, "region read", read);
    }
    // Last: the item written stays in the memory store.
    if let Some(mut one) = buffer(item) {
        one[item / 2] = 1; // unlike the fill value of every case
        outcome(case, "write", array.write(&[0], &[1], elem, Order::C, &one));
    }
}

/// The C functions on one document: open and (when `json`) the fill value's JSON.
fn c_api(case: &str, key: &str, doc: &Value, json: bool) {
    let text = doc.to_string();
    let key = CString::new(key).unwrap();
    let path = CString::new("").unwrap();
    unsafe {
        let mut store = std::ptr::null_mut();
        assert_eq!(zarr_store_new_memory(&mut store), 0);
        let status = zarr_store_set(store, key.as_ptr(), text.as_ptr().cast(), text.len());
        assert_eq!(status, 0, "{case}: store set");
        let mut array = std::ptr::null_mut();
        let mode = zarr_mode::ZARR_MODE_R_PLUS as i32;
        let status = zarr_array_open(store, path.as_ptr(), mode, &mut array);
        if status_outcome(case, "C open", status, zarr_status::ZARR_OK) && json {
            let mut needed = 0usize;
            let status = zarr_array_fill_value_json(array, std::ptr::null_mut(), 0, &mut needed);
            let step = "C fill value JSON";
            status_outcome(case, step, status, zarr_status::ZARR_ERR_BUFFER_SIZE);
        }
        zarr_array_free(array);
        zarr_store_free(store);
    }
}

/// Runs this test binary's `test` again under the address-space limit; returns its output
/// after checking that it exited on its own with success.
fn run_limited(test: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("ZARR_LOG", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the limited child failed ({:?}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

/// Every case's steps as the limited child reported them; items of 900 MB cannot be opened,
/// items of 300 MB can, but not have their base64 text made on top.
#[test]
fn huge_items_fail_cleanly_under_an_address_space_limit() {
    let stdout = run_limited("memory_limit::limited_huge_items");
    let said = |case: &str, step: &str| {
        let prefix = format!("{case} | {step} | ");
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("{case}: no {step}:\n{stdout}"))
            .to_string()
    };
    for (case, size, _, _) in documents() {
        assert!(
            stdout.contains(&format!("{case}: done")),
            "{case} did not run:\n{stdout}"
        );
        let steps = expected(&case, size);
        let prefix = format!("{case} | ");
        let all = stdout.lines().filter(|l| l.starts_with(&prefix)).count();
        assert_eq!(all, steps.len(), "{case}:\n{stdout}");
        for (step, expected) in steps {
            assert_eq!(said(&case, step), expected, "{case}: {step}");
        }
    }
}

/// The steps a case reports and what each gives, by item size (see [`SIZES`]).
fn expected(case: &str, size: u64) -> Vec<(&'static str, &'static str)> {
    // A null fill value takes no memory until a read fills with it.
    let null = case.contains("null (");
    // Text items whose fill is empty or null render as short JSON; the others as base64
    // of 4/3 of the item.
    let text = case.contains(" U") || case.contains("utf32");
    let json = if text { "ok" } else { "no memory" };
    match size {
        900_000_000 if null => vec![
            ("open", "ok"),
            ("fill value JSON", "ok"),
            ("C open", "ok"),
            ("C fill value JSON", "ok"),
        ],
        900_000_000 => vec![("open", "no memory"), ("C open", "no memory")],
        // A v3 record's fill given by field holds the field's value and the record.
        300_000_000 if case.contains("v3 structured") => {
            vec![("open", "no memory"), ("C open", "no memory")]
        }
        // With a null fill value the caller's buffer fits, the fill value a read or write
        // needs does not.
        300_000_000 if null => vec![
            ("open", "ok"),
            ("fill value JSON", "ok"),
            ("one-element read", "no memory"),
            ("write", "no memory"),
            ("C open", "ok"),
            ("C fill value JSON", "ok"),
        ],
        // The caller's buffer of one item does not fit beside the fill value: nothing is
        // read.
        300_000_000 => vec![
            ("open", "ok"),
            ("fill value JSON", json),
            ("C open", "ok"),
            ("C fill value JSON", json),
        ],
        // A chunk of one whole item is encoded from the caller's buffer: the write fits.
        _ => vec![
            ("open", "ok"),
            ("one-element read", "ok"),
            ("region read", "ok"),
            ("write", "ok"),
            ("C open", "ok"),
        ],
    }
}

/// The child's part of the test above (does nothing outside the limited child).
#[test]
fn limited_huge_items() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    println!(); // the harness's own line ends here
    for (case, size, key, doc) in documents() {
        let json = size >= 300_000_000;
        rust_api(&case, key, &doc, json);
        c_api(&case, key, &doc, json);
        println!("{case}: done");
    }
}

/// Runs `zarrtool args` under the address-space limit: its exit code and standard error.
fn zarrtool_limited(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_zarrtool"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr)
}

/// `zarrtool create` of a 1 GiB item, and `info` and `dump` of stores whose items the
/// limit cannot hold or whose fill value's text it cannot: exit code 1 and the reason,
/// never an abort; a refused create stores no metadata.
#[test]
fn zarrtool_refuses_huge_items_under_an_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    // A v2 byte string's default fill is empty (null bytes only when read), so v2 fails
    // at checking the memory for the document, v3 at its 1 GiB fill value.
    for (format, reason) in [
        (
            "2",
            "1073742184 bytes for reading the rendered metadata back",
        ),
        ("3", "1073741824 bytes for the fill value"),
    ] {
        let path = dir.path().join(format!("created{format}.zarr"));
        let path = path.to_str().unwrap();
        let args = [
            "create",
            path,
            "--shape",
            "4",
            "--dtype",
            "|S1073741824",
            "--format",
            format,
        ];
        let (code, stderr) = zarrtool_limited(&args);
        assert_eq!(code, Some(1), "create, format {format}: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!("zarrtool: out of memory: cannot allocate {reason}"),
            "create, format {format}"
        );
        // Refused before the store is made: nothing is left behind.
        assert!(!Path::new(path).exists(), "create, format {format}");
    }
    // (item size, elements, what cannot be allocated, command): the text of an item that
    // fits is still too large to print (12 bytes of room asked per item byte).
    let cases = [
        (900_000_000, 2, "900000000 bytes for the fill value", "info"),
        (900_000_000, 2, "900000000 bytes for the fill value", "dump"),
        (
            300_000_000,
            2,
            "3600000064 bytes for the fill value's text",
            "info",
        ),
        (300_000_000, 2, "600000000 bytes for the region", "dump"),
        (
            120_000_000,
            2,
            "1440000064 bytes for the fill value's text",
            "info",
        ),
        (
            120_000_000,
            1,
            "1440000064 bytes for the item's text",
            "dump",
        ),
    ];
    for (size, elements, reason, command) in cases {
        let array = dir.path().join(format!("stored{size}x{elements}.zarr"));
        std::fs::create_dir_all(&array).unwrap();
        let doc = json!({"zarr_format": 2, "shape": [elements], "chunks": [1],
                         "dtype": format!("|V{size}"), "fill_value": 0, "order": "C",
                         "compressor": null, "filters": null});
        std::fs::write(array.join(".zarray"), doc.to_string()).unwrap();
        let (code, stderr) = zarrtool_limited(&[command, array.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{command} of {size}-byte items: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!("zarrtool: out of memory: cannot allocate {reason}")
        );
    }
}
