//! `zarrtool` refuses bad input before it writes (the target stays byte for byte as it
//! was, or absent), copies with per-array chunk shapes, keeps consolidated metadata current
//! and compares attributes by meaning.
#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::path::Path;

use crate::common;

use common::zarrtool::{ok_in, tool_in};

/// Every file below `path` (or `path` itself, a file) with its bytes; `None` when absent.
fn snapshot(path: &Path) -> Option<BTreeMap<String, Vec<u8>>> {
    fn walk(base: &Path, at: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
        if at.is_dir() {
            files.insert(format!("{}/", rel(base, at)), Vec::new());
            for entry in std::fs::read_dir(at).expect("read dir") {
                walk(base, &entry.expect("entry").path(), files);
            }
        } else {
            files.insert(rel(base, at), std::fs::read(at).expect("read file"));
        }
    }
    fn rel(base: &Path, at: &Path) -> String {
        at.strip_prefix(base)
            .expect("below")
            .to_string_lossy()
            .into()
    }
    if !path.exists() {
        return None;
    }
    let mut files = BTreeMap::new();
    walk(path, path, &mut files);
    Some(files)
}

/// A consolidated v3 store `T.zarr` with a group `g`, array `a` (int32 4x5, chunks 2x3,
/// `units` "K") and `g/b`; its zip copy `T.zip`; and the raw file `a.bin`.
fn setup(dir: &Path) {
    let bytes: Vec<u8> = (0..20i32).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join("a.bin"), bytes).expect("write raw");
    let raw = ["--dtype", "<i4", "--shape", "4,5", "--chunks", "2,3"];
    ok_in(
        dir,
        &[&["import", "a.bin", "T.zarr", "a"][..], &raw].concat(),
    );
    ok_in(
        dir,
        &[&["import", "a.bin", "T.zarr", "g/b"][..], &raw].concat(),
    );
    ok_in(dir, &["attrs", "set", "T.zarr", "a", "units", "\"K\""]);
    ok_in(dir, &["consolidate", "T.zarr"]);
    ok_in(dir, &["copy", "T.zarr", "zip://T.zip"]);
}

#[test]
fn failed_commands_leave_the_target_as_it_was() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    setup(dir);
    let zstdd = r#"{"id":"zstdd"}"#;
    let unknown = r#"unsupported codec: codec id "zstdd" is not supported"#;
    let unknown_in_a = r#"unsupported codec: /a: codec id "zstdd" is not supported"#;
    let bad_json = "\"{bad\" is not valid JSON: key must be a string at line 1 column 2";
    // (arguments, the target whose bytes must not change, words the message has)
    let cases: Vec<(Vec<&str>, &str, String)> = vec![
        (vec!["copy", "T.zarr", "new.zarr", "--codec", zstdd], "new.zarr", unknown_in_a.into()),
        (vec!["copy", "T.zarr", "c.zarr", "--rechunk", "48,45,45"], "c.zarr",
         "--rechunk 48,45,45 has 3 dimensions and no array copied has 3 (/a has 2, /g/b has 2): \
          name the arrays with NAME:SHAPE".into()),
        (vec!["copy", "T.zarr", "c.zarr", "--rechunk", "a:1,2,3"], "c.zarr",
         "--rechunk \"a:1,2,3\" has 3 dimensions but /a has 2".into()),
        (vec!["copy", "T.zarr", "c.zarr", "--rechunk", "x:1,2"], "c.zarr",
         "--rechunk \"x:1,2\": no array x is copied".into()),
        (vec!["copy", "T.zarr", "zip://new.zip", "--codec", zstdd], "new.zip", unknown_in_a.into()),
        (vec!["copy", "T.zarr", "zip://T.zip", "--to", "sub", "--codec", zstdd], "T.zip", unknown_in_a.into()),
        (vec!["copy", "zip://T.zip", "T.zarr", "--to", "sub", "--codec", zstdd], "T.zarr", unknown_in_a.into()),
        (vec!["copy", "T.zarr", "new.zarr", "--from", "nope"], "new.zarr", "no array or group at /nope".into()),
        (vec!["copy", "T.zarr", "new.zarr", "--codec", "{bad"], "new.zarr", format!("--compressor: {bad_json}")),
        (vec!["copy", "T.zarr", "s4://bucket/x"], "T.zarr", "unknown URL scheme \"s4\"".into()),
        (vec!["create", "T.zarr", "n", "--shape", "4", "--dtype", "<i4", "--chunks", "2,2"], "T.zarr",
         "--chunks 2,2 has 2 dimensions but the shape 4 has 1".into()),
        (vec!["create", "T.zarr", "n", "--shape", "4", "--dtype", "<i4", "--codec", zstdd], "T.zarr", unknown.into()),
        (vec!["create", "T.zarr", "n", "--shape", "4", "--dtype", "<i4", "--attrs", "{bad"], "T.zarr",
         format!("--attrs: {bad_json}")),
        (vec!["create", "new.zarr", "n", "--shape", "4", "--dtype", "<i4", "--codec", zstdd], "new.zarr", unknown.into()),
        (vec!["create", "zip://T.zip", "n", "--shape", "4", "--dtype", "<i4", "--codec", zstdd], "T.zip", unknown.into()),
        (vec!["create", "zip://new.zip", "n", "--shape", "4", "--dtype", "<i4", "--chunks", "2,2"], "new.zip",
         "--chunks 2,2 has 2 dimensions but the shape 4 has 1".into()),
        (vec!["create", "T.zarr", "a", "--group"], "T.zarr", "an array at /a in T.zarr: use --overwrite".into()),
        (vec!["import", "a.bin", "T.zarr", "n", "--dtype", "<i4", "--shape", "4,5", "--codec", zstdd], "T.zarr",
         unknown.into()),
        (vec!["import", "a.bin", "new.zarr", "n", "--dtype", "<i4", "--shape", "4,5", "--chunks", "2"], "new.zarr",
         "--chunks 2 has 1 dimension but the shape 4 x 5 has 2".into()),
        (vec!["import", "a.bin", "zip://T.zip", "n", "--dtype", "<i4", "--shape", "4,4"], "T.zip",
         "holds 80 bytes but shape 4 x 4 of <i4 needs 64".into()),
        (vec!["export", "T.zarr", "nope", "-o", "out.bin"], "out.bin", "no array at \"nope\"".into()),
        (vec!["migrate", "T.zarr", "a"], "T.zarr", "/a is a Zarr v3 array, not v1".into()),
        (vec!["consolidate", "T.zarr", "nope"], "T.zarr", "/nope is nothing: only a group's metadata".into()),
        (vec!["consolidate", "T.zarr", "a"], "T.zarr", "/a is an array: only a group's metadata".into()),
        (vec!["attrs", "set", "T.zarr", "a", "k", "{bad"], "T.zarr", format!("the attribute value: {bad_json}")),
        (vec!["attrs", "set", "T.zarr", "nope", "k", "1"], "T.zarr", "no array or group at /nope".into()),
        (vec!["attrs", "set", "zip://T.zip", "a", "k", "{bad"], "T.zip", format!("the attribute value: {bad_json}")),
        (vec!["attrs", "del", "T.zarr", "a", "nokey"], "T.zarr", "no attribute \"nokey\" on /a".into()),
        (vec!["mv", "T.zarr", "nope", "x"], "T.zarr", "no node at /nope".into()),
        (vec!["mv", "T.zarr", "g", "g/inner"], "T.zarr", "cannot".into()),
        (vec!["rm", "T.zarr", "nope"], "T.zarr", "no array or group at /nope".into()),
        (vec!["rm", "zip://T.zip", "nope"], "T.zip", "no array or group at /nope".into()),
    ];
    for (args, target, words) in &cases {
        let before = snapshot(&dir.join(target));
        let out = tool_in(dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "zarrtool {args:?}: {stderr}");
        assert!(
            stderr.starts_with("zarrtool: "),
            "zarrtool {args:?}: {stderr}"
        );
        assert!(
            stderr.contains(words.as_str()),
            "zarrtool {args:?}: {stderr:?} lacks {words:?}"
        );
        assert!(
            snapshot(&dir.join(target)) == before,
            "zarrtool {args:?} changed {target}"
        );
    }
    // Nothing else appeared either.
    for name in ["new.zarr", "new.zip", "c.zarr", "out.bin"] {
        assert!(!dir.join(name).exists(), "{name} was created");
    }
}

#[test]
fn a_raw_import_failing_midway_takes_back_what_it_made() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    setup(dir);
    // A directory opens as a file and has a length, but its first read fails (EISDIR):
    // after the array was created.
    std::fs::create_dir(dir.join("d")).expect("mkdir");
    let len = std::fs::metadata(dir.join("d"))
        .expect("stat")
        .len()
        .to_string();
    if len == "0" {
        eprintln!("skipped: directories have no length on this filesystem");
        return;
    }
    let raw = ["--dtype", "|u1", "--shape", len.as_str()];
    for (store, node) in [("T.zarr", "x/y/n"), ("new.zarr", "n")] {
        let before = snapshot(&dir.join(store));
        let out = tool_in(dir, &[&["import", "d", store, node][..], &raw].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("reading \"d\"")
                && stderr.contains("the import failed midway: nothing of it was kept"),
            "{stderr}"
        );
        assert!(snapshot(&dir.join(store)) == before, "{store} changed");
    }
    // Over an existing array the old one is gone (--overwrite removed it first): said so.
    let out = tool_in(
        dir,
        &[&["import", "d", "T.zarr", "g/b", "--overwrite"][..], &raw].concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the array /g/b it replaced is gone (--overwrite)"),
        "{stderr}"
    );
    assert!(!tool_in(dir, &["info", "T.zarr", "g/b"]).status.success());
    ok_in(dir, &["info", "T.zarr", "a"]);
}

#[test]
fn copy_rechunks_per_array_and_by_rank() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    setup(dir);
    ok_in(
        dir,
        &[
            "import", "a.bin", "T.zarr", "g/line", "--dtype", "<i4", "--shape", "20",
        ],
    );
    let chunks = |store: &str, path: &str| -> String {
        let info = ok_in(dir, &["info", "--json", store, path]);
        let v: serde_json::Value = serde_json::from_str(&info).expect("JSON");
        v["chunks"].to_string()
    };
    // A plain shape for the arrays of its rank; the others keep theirs.
    ok_in(dir, &["copy", "T.zarr", "r.zarr", "--rechunk", "1,5"]);
    assert_eq!(chunks("r.zarr", "a"), "[1,5]");
    assert_eq!(chunks("r.zarr", "g/b"), "[1,5]");
    assert_eq!(chunks("r.zarr", "g/line"), chunks("T.zarr", "g/line"));
    // Per array, by path or by unambiguous leaf name, `;`-separated or repeated; a named
    // one wins over the plain one.
    ok_in(
        dir,
        &[
            "copy",
            "T.zarr",
            "p.zarr",
            "--rechunk",
            "g/b:4,1;line:7",
            "--rechunk",
            "2,2",
        ],
    );
    assert_eq!(chunks("p.zarr", "a"), "[2,2]");
    assert_eq!(chunks("p.zarr", "g/b"), "[4,1]");
    assert_eq!(chunks("p.zarr", "g/line"), "[7]");
    assert_eq!(ok_in(dir, &["diff", "T.zarr", "p.zarr"]), "");
    // A leaf name two arrays end in is refused; a path wins over a leaf name.
    let raw = ["--dtype", "<i4", "--shape", "4,5"];
    ok_in(
        dir,
        &[&["import", "a.bin", "T.zarr", "h/b"][..], &raw].concat(),
    );
    let out = tool_in(dir, &["copy", "T.zarr", "q.zarr", "--rechunk", "b:2,2"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: invalid argument: --rechunk \"b:2,2\": b names /g/b and /h/b: give the path\n"
    );
    assert!(!dir.join("q.zarr").exists());
    ok_in(
        dir,
        &[&["import", "a.bin", "T.zarr", "h/a"][..], &raw].concat(),
    );
    ok_in(dir, &["copy", "T.zarr", "q.zarr", "--rechunk", "a:1,1"]);
    assert_eq!(chunks("q.zarr", "a"), "[1,1]");
    assert_eq!(chunks("q.zarr", "h/a"), chunks("T.zarr", "h/a"));
    // Copying one array: its leaf name; a shape of another rank names it.
    ok_in(
        dir,
        &[
            "copy",
            "T.zarr",
            "one.zarr",
            "--from",
            "g/line",
            "--rechunk",
            "line:4",
        ],
    );
    assert_eq!(chunks("one.zarr", ""), "[4]");
    let out = tool_in(
        dir,
        &[
            "copy",
            "T.zarr",
            "two.zarr",
            "--from",
            "g/line",
            "--rechunk",
            "4,4",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zarrtool: invalid argument: --rechunk 4,4 has 2 dimensions and no array copied has 2 \
         (/g/line has 1): name the arrays with NAME:SHAPE\n"
    );
    // Shards per array.
    ok_in(
        dir,
        &[
            "copy",
            "T.zarr",
            "s.zarr",
            "--from",
            "g",
            "--rechunk",
            "2,1",
            "--shards",
            "b:4,5",
        ],
    );
    let info = ok_in(dir, &["info", "--json", "s.zarr", "b"]);
    let v: serde_json::Value = serde_json::from_str(&info).expect("JSON");
    assert_eq!(v["shards"].to_string(), "[4,5]");
    assert_eq!(v["chunks"].to_string(), "[2,1]");
}

/// The consolidated entry of `node` in the v3 store's root `zarr.json`.
fn consolidated_entry(dir: &Path, store: &str, node: &str) -> serde_json::Value {
    let text = std::fs::read(dir.join(store).join("zarr.json")).expect("root document");
    let doc: serde_json::Value = serde_json::from_slice(&text).expect("JSON");
    doc["consolidated_metadata"]["metadata"][node].clone()
}

#[test]
fn commands_keep_consolidated_metadata_current() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    setup(dir);
    let valid = |store: &str| {
        let out = tool_in(dir, &["validate", store]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    ok_in(dir, &["attrs", "set", "T.zarr", "a", "units", "\"degC\""]);
    assert_eq!(
        consolidated_entry(dir, "T.zarr", "a")["attributes"]["units"],
        "degC"
    );
    ok_in(dir, &["attrs", "del", "T.zarr", "a", "units"]);
    // The root's own attributes (`/` names it): its document keeps its consolidated entries.
    ok_in(dir, &["attrs", "set", "T.zarr", "/", "title", "\"t\""]);
    let root: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("T.zarr/zarr.json")).expect("root"))
            .expect("JSON");
    assert_eq!(root["attributes"]["title"], "t");
    assert_eq!(
        consolidated_entry(dir, "T.zarr", "g/b")["node_type"],
        "array"
    );
    assert_eq!(
        consolidated_entry(dir, "T.zarr", "a")["attributes"].get("units"),
        None
    );
    ok_in(dir, &["mv", "T.zarr", "g/b", "c"]);
    assert!(consolidated_entry(dir, "T.zarr", "g/b").is_null());
    assert_eq!(consolidated_entry(dir, "T.zarr", "c")["node_type"], "array");
    ok_in(dir, &["rm", "T.zarr", "c"]);
    assert!(consolidated_entry(dir, "T.zarr", "c").is_null());
    ok_in(
        dir,
        &["create", "T.zarr", "g/n", "--shape", "3", "--dtype", "<i2"],
    );
    assert_eq!(
        consolidated_entry(dir, "T.zarr", "g/n")["shape"],
        serde_json::json!([3])
    );
    ok_in(
        dir,
        &["copy", "T.zarr", "T.zarr", "--from", "a", "--to", "g/a2"],
    );
    assert_eq!(
        consolidated_entry(dir, "T.zarr", "g/a2")["node_type"],
        "array"
    );
    valid("T.zarr");
    // v2: the root's .zmetadata.
    ok_in(dir, &["copy", "T.zarr", "v2.zarr", "--format", "2"]);
    ok_in(dir, &["consolidate", "v2.zarr"]);
    ok_in(dir, &["attrs", "set", "v2.zarr", "a", "units", "\"m\""]);
    let text = std::fs::read(dir.join("v2.zarr/.zmetadata")).expect(".zmetadata");
    let doc: serde_json::Value = serde_json::from_slice(&text).expect("JSON");
    assert_eq!(doc["metadata"]["a/.zattrs"]["units"], "m");
    valid("v2.zarr");
    // Stale metadata written behind zarrtool's back: validate says how to refresh it.
    let key = dir.join("T.zarr/a/zarr.json");
    let text = std::fs::read_to_string(&key).expect("array document");
    std::fs::write(
        &key,
        text.replace("\"attributes\": {}", "\"attributes\": {\"units\": \"s\"}"),
    )
    .expect("rewrite");
    let out = tool_in(dir, &["validate", "T.zarr"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/: consolidated metadata of \"a\" differs from the stored document\n"
    );
    assert!(String::from_utf8_lossy(&out.stderr).ends_with(
        "the consolidated metadata of / is stale: `zarrtool consolidate T.zarr /` rewrites it\n"
    ));
}

#[test]
fn diff_attrs_compares_meanings_and_names_keys() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let long = "temperature at two metres above the ground, a long name to cut";
    let attrs = format!(r#"{{"units":"K","_FillValue":-9999,"long_name":"{long}"}}"#);
    ok_in(
        dir,
        &[
            "create",
            "v3.zarr",
            "t2m",
            "--shape",
            "4,5",
            "--dtype",
            "float32",
            "--dimension-names",
            "time,x",
            "--fill=-9999",
            "--attrs",
            &attrs,
        ],
    );
    ok_in(dir, &["copy", "v3.zarr", "v2.zarr", "--format", "2"]);
    // _ARRAY_DIMENSIONS against dimension_names, fill_value against _FillValue: the same.
    let out = tool_in(dir, &["diff", "--attrs", "v3.zarr", "v2.zarr"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    ok_in(
        dir,
        &["attrs", "set", "v2.zarr", "t2m", "units", "\"degC\""],
    );
    ok_in(
        dir,
        &["attrs", "set", "v2.zarr", "t2m", "long_name", "\"x\""],
    );
    ok_in(
        dir,
        &[
            "attrs",
            "set",
            "v2.zarr",
            "t2m",
            "_ARRAY_DIMENSIONS",
            "[\"t\",\"x\"]",
        ],
    );
    ok_in(dir, &["attrs", "set", "v2.zarr", "t2m", "extra", "[1,2]"]);
    ok_in(dir, &["attrs", "set", "v3.zarr", "t2m", "only3", "true"]);
    let out = tool_in(dir, &["diff", "--attrs", "v3.zarr", "v2.zarr"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/t2m: dimension names: [\"time\",\"x\"] != [\"t\",\"x\"]\n\
         /t2m: attribute \"extra\" only in the second: [1,2]\n\
         /t2m: attribute \"long_name\": \"temperature at two metres above the ground, a long name to … != \"x\"\n\
         /t2m: attribute \"only3\" only in the first: true\n\
         /t2m: attribute \"units\": \"K\" != \"degC\"\n"
    );
}

/// `validate` reports the temporary files killed writers left in a directory store (each
/// named, exit 3) and `--repair` removes them, leaving alone those a writer may still use:
/// of a running process, or changed in the last 10 minutes.
#[test]
fn validate_reports_and_repairs_stray_temporary_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    setup(dir);
    // The id of a process that has ended.
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("run true");
    child.wait().expect("true ends");
    let gone = child.id();
    let me = std::process::id();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let plant = |key: &str, modified: std::time::SystemTime| {
        let path = dir.join("T.zarr").join(key);
        std::fs::write(&path, b"half a chunk").expect("write");
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_modified(modified).expect("set the time");
    };
    let stale = [
        format!(".zarr-tmp.{gone}.7"),
        format!("a/c/0/.zarr-tmp.{gone}.1"),
        "g/b/.zarr-tmp.junk".to_string(),
    ];
    let live = [format!(".zarr-tmp.{me}.3"), format!("a/.zarr-tmp.{gone}.2")];
    for key in &stale {
        plant(key, old);
    }
    plant(&live[0], old);
    plant(&live[1], std::time::SystemTime::now());
    let before = snapshot(&dir.join("T.zarr")).expect("the store");
    let gone_text = |p| format!("process {p} is not running, unchanged for 10 minutes or more");
    let found = [
        format!(
            "/: stray temporary file \".zarr-tmp.{gone}.7\" of a writer that is gone ({}): \
             --repair removes it",
            gone_text(gone)
        ),
        format!(
            "/a: stray temporary file \"a/c/0/.zarr-tmp.{gone}.1\" of a writer that is gone \
             ({}): --repair removes it",
            gone_text(gone)
        ),
        "/g/b: stray temporary file \"g/b/.zarr-tmp.junk\" of a writer that is gone (no \
         process id in its name, unchanged for 10 minutes or more): --repair removes it"
            .to_string(),
    ];
    let left_alone = format!(
        "zarrtool: /: temporary file \".zarr-tmp.{me}.3\" left alone: a writer may be using it \
         (process {me} is running)\n\
         zarrtool: /a: temporary file \"a/.zarr-tmp.{gone}.2\" left alone: a writer may be \
         using it (changed less than 10 minutes ago)\n"
    );
    let out = tool_in(dir, &["validate", "T.zarr"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        found.join("\n") + "\n"
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("{left_alone}4 nodes (2 arrays) checked: 3 problems\n")
    );
    // Validating a node looks below it only.
    let out = tool_in(dir, &["validate", "T.zarr/a"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", found[1])
    );
    let out = tool_in(dir, &["validate", "--json", "T.zarr"]);
    assert_eq!(out.status.code(), Some(3));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["problems"][1]["path"], "/a");
    assert_eq!(
        json["problems"][1]["problem"],
        found[1].trim_start_matches("/a: ")
    );
    assert_eq!(json["removed"], serde_json::json!([]));
    assert_eq!(snapshot(&dir.join("T.zarr")).expect("the store"), before);
    // --repair removes the stale ones only, and says so.
    let out = tool_in(dir, &["validate", "--repair", "--json", "T.zarr"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["problems"], serde_json::json!([]));
    assert_eq!(json["removed"], serde_json::json!(stale));
    let mut after = before.clone();
    for key in &stale {
        after.remove(key).expect("planted");
    }
    assert_eq!(snapshot(&dir.join("T.zarr")).expect("the store"), after);
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.contains(&format!(
            "zarrtool: /: temporary file \".zarr-tmp.{me}.3\" left alone"
        )) && text.contains(&format!(
            "/a: removed the stray temporary file \"a/c/0/.zarr-tmp.{gone}.1\" ({})\n",
            gone_text(gone)
        )),
        "{text}"
    );
    let out = tool_in(dir, &["validate", "T.zarr"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"");
    for key in &live {
        assert!(dir.join("T.zarr").join(key).exists(), "{key}");
    }
}
