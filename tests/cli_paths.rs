//! `zarrtool` reaching into stores: paths into a store in place of the store and node
//! arguments, and stores on web servers that cannot list (a `python -m http.server` started
//! on loopback), read through their consolidated metadata.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

use crate::common;

use common::zarrtool::{fails, import_sample, ok, s};
use common::{free_port, Server};

/// A v3 hierarchy `s.zarr` with the int32 array `g/a` (0..20, shape 4x5, chunks 2x3,
/// uncompressed), and a v2 copy `v2.zarr`; both consolidated when `consolidated`.
fn setup(dir: &Path, consolidated: bool) {
    let (_, store) = import_sample(dir, "g/a", &["--compressor", "null", "--format", "3"]);
    let v2 = dir.join("v2.zarr");
    ok(&["copy", &store, s(&v2), "--format", "2"]);
    if consolidated {
        ok(&["consolidate", &store]);
        ok(&["consolidate", s(&v2)]);
    }
}

/// `python3 -m http.server` serving `dir` on a free loopback port (None when python3 is
/// missing: the test is skipped).
fn web_server(dir: &Path) -> Option<Server> {
    if Command::new("python3").arg("--version").output().is_err() {
        common::missing("python3", "the http.server module serves the stores");
        return None;
    }
    let port = free_port();
    let mut command = Command::new("python3");
    command
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .arg("--directory")
        .arg(dir);
    Some(Server::spawn(command, port, None))
}

#[test]
fn a_web_server_without_listings_serves_a_consolidated_hierarchy() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), true);
    let Some(server) = web_server(dir.path()) else {
        return;
    };
    for name in ["s.zarr", "v2.zarr"] {
        let url = format!("http://127.0.0.1:{}/{name}", server.port);
        assert_eq!(
            ok(&["ls", &url]),
            "/     group\n/g    group\n/g/a  array {4, 5} <i4\n",
            "{name}"
        );
        assert_eq!(
            ok(&["tree", &url]),
            "/\n└── g\n    └── a array {4, 5} <i4\n"
        );
        let info = ok(&["info", &url, "g/a"]);
        assert!(info.starts_with("path: /g/a\ntype: array\n"), "{info}");
        assert!(
            info.ends_with(
                "bytes: 80\nstored bytes: unknown (the store cannot be listed)\n\
                 ratio: unknown (the store cannot be listed)\n\
                 chunks initialized: unknown (the store cannot be listed), of 4\n"
            ),
            "{info}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["info", "--json", &url, "g/a"])).unwrap();
        assert_eq!(json["stored_bytes"], serde_json::Value::Null);
        assert_eq!(json["chunks_initialized"], serde_json::Value::Null);
        assert_eq!(json["chunks_total"], 4);
        // The same values as the local copy: no differences, exit status 0.
        let local = dir.path().join(name);
        assert_eq!(ok(&["diff", &url, s(&local)]), "");
        assert_eq!(
            ok(&["dump", &url, "g/a"]),
            "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n"
        );
        // A netCDF export reads every chunk, the stored ones not being known: the file is
        // the local copy's.
        if let Some(values) = exported_values(&url, "g/a") {
            assert_eq!(values, exported_values(s(&local), "g/a").unwrap(), "{name}");
            assert!(values.contains(" a =\n  0, 1, 2, 3, 4,\n"), "{values}");
        }
    }
}

/// `ncdump` of the netCDF export of the array `path` of `store`, after its first line; None
/// when this zarrtool exports no netCDF or ncdump is missing.
fn exported_values(store: &str, path: &str) -> Option<String> {
    let exports = ok(&["version", "--features"]).contains("export to netCDF-4");
    if !exports || Command::new("ncdump").output().is_err() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = dir.path().join("a.nc");
    ok(&["export", store, path, "-o", s(&nc)]);
    let out = Command::new("ncdump").arg(&nc).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    Some(text.split_once('\n').unwrap().1.to_string())
}

#[test]
fn a_refused_listing_is_not_retried_and_quotes_no_page() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), false);
    let Some(server) = web_server(dir.path()) else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/s.zarr", server.port);
    server.clear_log();
    let err = fails(&["ls", &url], 1);
    assert_eq!(
        err,
        format!(
            "zarrtool: unsupported: {url}: the web server does not list directories (it \
             answered the listing with 501 Not Implemented); a hierarchy with consolidated \
             metadata opens without listings\n"
        )
    );
    let propfinds = server
        .settled_requests()
        .iter()
        .filter(|r| r.starts_with("PROPFIND "))
        .count();
    // One for the probe of the root, one for the listing of the group: none retried.
    assert_eq!(propfinds, 2, "{:?}", server.settled_requests());
    // A node opens by its path; only the listing of chunks is missing.
    let info = ok(&["info", &url, "g/a"]);
    assert!(info.contains("\nstored bytes: unknown (the store cannot be listed)\n"));
    if let Some(values) = exported_values(&url, "g/a") {
        let local = dir.path().join("s.zarr");
        assert_eq!(values, exported_values(s(&local), "g/a").unwrap());
    }
}

#[test]
fn paths_reach_into_local_stores() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), false);
    let store = dir.path().join("s.zarr");
    let store = s(&store);
    let attrs = format!("{store}/g");
    // Two arguments, one reaching into the store, and both at once name the same node.
    ok(&["attrs", "set", store, "g/a", "units", "\"K\""]);
    for args in [
        vec!["attrs", "get", store, "g/a"],
        vec!["attrs", "get", &attrs, "a"],
    ] {
        assert_eq!(ok(&args), "{\n  \"units\": \"K\"\n}\n", "{args:?}");
    }
    // A path below a node that is not there splits at the outermost root of the hierarchy.
    let err = fails(&["info", &format!("{store}/g/b/c")], 1);
    assert_eq!(
        err,
        format!("zarrtool: not found: no array or group at /g/b/c in {store}\n")
    );
    // Under a store's root with no documents of its own (a chunk directory).
    let chunk_dir = format!("{store}/g/a/c");
    assert_eq!(
        fails(&["ls", &chunk_dir], 1),
        "zarrtool: not found: no array or group at /g/a/c\n"
    );
    // A zip file splits as a directory does.
    let zip = dir.path().join("s.zip");
    ok(&["copy", store, &format!("zip://{}", s(&zip))]);
    assert_eq!(
        ok(&["dump", &format!("{}/g/a", s(&zip)), "-r", "1,1:3"]),
        "6 7\n"
    );
    // copy and diff join their node options below the path written into the store.
    let out = dir.path().join("out.zarr");
    ok(&["copy", &attrs, s(&out), "--from", "a"]);
    assert_eq!(ok(&["diff", &format!("{store}/g/a"), s(&out)]), "");
    assert_eq!(
        ok(&["diff", &attrs, s(&out), "--left-path", "a", "--attrs"]),
        ""
    );
    // A new store is taken as given.
    let fresh = dir.path().join("new.zarr");
    ok(&["create", s(&fresh), "--group"]);
    assert!(fresh.join("zarr.json").is_file());
}

/// A write through a path into a consolidated hierarchy addresses the node inside it: the
/// consolidated metadata (v2 `.zmetadata`, v3 root `zarr.json`) is refreshed, and `rm`
/// removes only the node named.
#[test]
fn writes_through_a_path_refresh_the_hierarchy() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), true);
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    for (name, consolidated, key) in [
        (
            "s.zarr",
            "zarr.json",
            "/consolidated_metadata/metadata/g~1a/attributes/units",
        ),
        ("v2.zarr", ".zmetadata", "/metadata/g~1a~1.zattrs/units"),
    ] {
        let store = dir.path().join(name);
        let node = format!("{}/g/a", s(&store));
        ok(&["attrs", "set", &node, "/", "units", "\"K\""]);
        let doc = read(&store.join(consolidated));
        assert_eq!(
            doc.pointer(key),
            Some(&serde_json::json!("K")),
            "{name}: {doc}"
        );
        assert_eq!(
            ok(&["attrs", "get", s(&store), "g/a"]),
            "{\n  \"units\": \"K\"\n}\n"
        );
        // rm through a path removes the node only, and the consolidated metadata follows.
        ok(&["rm", &node]);
        assert!(!store.join("g/a").exists(), "{name}");
        assert!(store.join("g").is_dir(), "{name}");
        let text = std::fs::read_to_string(store.join(consolidated)).unwrap();
        assert!(!text.contains("g/a"), "{name}: {text}");
        assert_eq!(ok(&["ls", s(&store)]), "/   group\n/g  group\n", "{name}");
        // The store's own root is never removed by a path.
        fails(&["rm", s(&store)], 1);
        assert!(store.join(consolidated).is_file(), "{name}");
    }
}

#[test]
fn paths_reach_into_stores_on_web_servers() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), true);
    let Some(server) = web_server(dir.path()) else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/s.zarr", server.port);
    let err = fails(&["info", &format!("{url}/g/b/c")], 1);
    assert_eq!(
        err,
        format!("zarrtool: not found: no array or group at /b/c in {url}/g\n")
    );
    assert_eq!(ok(&["dump", &format!("{url}/g/a"), "-r", "3,4"]), "19\n");
}
