//! Object stores against real servers on loopback, started and stopped here: the moto S3
//! server (from the environment made by scripts/setup-test-env.sh) and nginx for HTTP. The
//! same store behaviour checks run against memory, directory, zip, S3 and (reads only)
//! HTTP stores; a missing server binary skips its part with the reason printed.
#![cfg(feature = "cloud")]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{open_url, FilesystemStore, Ranged, Store};
use zarr::Error;

mod common;
use common::*;

// ---- servers ---------------------------------------------------------------------------

/// nginx serving `root` read-only, or `None` when it is not installed.
fn nginx(root: &Path) -> Option<Server> {
    nginx_with(root, None)
}

/// nginx serving `root`, over TLS with `tls` (certificate and key files) when given.
fn nginx_with(root: &Path, tls: Option<(&Path, &Path)>) -> Option<Server> {
    let binary = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    let Some(binary) = binary else {
        missing("nginx", "scripts/setup-test-env.sh installs nginx-light");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let conf = dir.path().join("nginx.conf");
    let p = dir.path().display();
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {p}/nginx.pid;\n\
             error_log stderr;\nevents {{ worker_connections 64; }}\nhttp {{\n\
             access_log {p}/access.log;\nclient_body_temp_path {p}/body;\n\
             proxy_temp_path {p}/proxy;\nfastcgi_temp_path {p}/fastcgi;\n\
             uwsgi_temp_path {p}/uwsgi;\nscgi_temp_path {p}/scgi;\n\
             server {{ listen 127.0.0.1:{port}{}; root {}; max_ranges 1; }}\n}}\n",
            match tls {
                None => String::new(),
                Some((cert, key)) => format!(
                    " ssl; ssl_certificate {}; ssl_certificate_key {}",
                    cert.display(),
                    key.display()
                ),
            },
            root.display()
        ),
    )
    .unwrap();
    let mut command = Command::new(binary);
    command.args(["-p", &p.to_string(), "-c", &conf.display().to_string()]);
    Some(Server::spawn(command, port, Some(dir)))
}

// ---- the behaviour checks, for every store ---------------------------------------------

/// Keys and values that the read checks expect.
fn fixture() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("zarr.json", b"{\"zarr_format\": 3}".to_vec()),
        ("a/b/c", pattern(1000, 1)),
        ("a/bc", pattern(10, 2)),
        ("a/d", Vec::new()),
        ("big/value", pattern(3 << 20, 3)),
        ("x y/z", b"space".to_vec()),
    ]
}

fn write_fixture(store: &dyn Store) {
    for (key, value) in fixture() {
        store
            .set(key, &value)
            .unwrap_or_else(|e| panic!("set {key}: {e}"));
    }
}

/// Reads: exact bytes, ranges, tails, bounded reads, sizes, missing keys, bad keys.
fn check_reads(store: &dyn Store, label: &str) {
    // A web server answers 403 for a directory (nginx without autoindex), which cannot be
    // told from a forbidden file, and s3s-fs (objects as files) answers 500: the check that
    // a prefix is no key is skipped there.
    let web = label == "http" || label == "s3s";
    for (key, value) in fixture() {
        let got = store.get(key).unwrap();
        assert!(
            got.as_deref() == Some(&value[..]),
            "{label}: {key}: {:?} bytes",
            got.map(|v| v.len())
        );
        assert_eq!(
            store.size(key).unwrap(),
            Some(value.len() as u64),
            "{label}: size {key}"
        );
    }
    let big = pattern(3 << 20, 3);
    assert!(
        store.get_range("big/value", 12345, 777).unwrap().unwrap() == big[12345..13122],
        "{label}"
    );
    assert_eq!(
        store.get_range("a/b/c", 990, 10).unwrap().unwrap(),
        &pattern(1000, 1)[990..]
    );
    assert_eq!(
        store.get_range("a/b/c", 0, 0).unwrap().unwrap(),
        Vec::<u8>::new()
    );
    assert!(
        store.get_range("a/b/c", 995, 10).is_err(),
        "{label}: range past the end"
    );
    assert!(
        store.get_range("a/b/c", 2000, 10).is_err(),
        "{label}: range after the end"
    );
    assert_eq!(store.get_range("nope", 0, 4).unwrap(), None);
    let tail = store.get_tail("big/value", 4096).unwrap().unwrap();
    assert!(
        tail.bytes == big[big.len() - 4096..] && tail.size == big.len() as u64,
        "{label}: tail"
    );
    if let Some(version) = &tail.version {
        // Other parts of the same version of the value.
        let mut part = Vec::new();
        let read = store.get_range_if("big/value", 10, 100, &mut part, version);
        assert_eq!(read.unwrap(), Ranged::Read, "{label}");
        assert!(part == big[10..110], "{label}: range of a version");
    }
    assert!(
        store.get_tail("a/bc", 11).is_err(),
        "{label}: tail longer than the value"
    );
    assert!(store.get_tail("nope", 4).unwrap().is_none());
    let mut buf = vec![9u8; 3];
    assert!(store.get_into("a/b/c", &mut buf, 1000).unwrap());
    assert!(buf == pattern(1000, 1), "{label}: get_into");
    assert!(
        matches!(store.get_into("a/b/c", &mut buf, 999), Err(Error::Codec(_))),
        "{label}"
    );
    assert!(!store.get_into("nope", &mut buf, 10).unwrap());
    assert_eq!(store.get("nope").unwrap(), None);
    assert_eq!(store.size("a/nope").unwrap(), None);
    if !web {
        assert!(
            !store.contains("a/b").unwrap(),
            "{label}: a prefix is not a key"
        );
    }
    for bad in ["../x", "a/../../x", "/abs", ""] {
        assert!(
            matches!(store.get(bad), Err(Error::InvalidKey(_))),
            "{label}: {bad:?}"
        );
    }
}

/// Listings (keys of the fixture only).
fn check_listings(store: &dyn Store, label: &str) {
    let all: Vec<String> = fixture().iter().map(|(k, _)| k.to_string()).collect();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(store.list_prefix("").unwrap(), sorted, "{label}");
    assert_eq!(
        store.list_prefix("a/").unwrap(),
        ["a/b/c", "a/bc", "a/d"],
        "{label}"
    );
    assert_eq!(
        store.list_prefix("a/b").unwrap(),
        ["a/b/c", "a/bc"],
        "{label}"
    );
    let root = store.list_dir("").unwrap();
    assert_eq!(root.keys, ["zarr.json"], "{label}");
    assert_eq!(root.prefixes, ["a", "big", "x y"], "{label}");
    let a = store.list_dir("a/").unwrap();
    assert_eq!(
        (a.keys, a.prefixes),
        (vec!["bc".to_string(), "d".into()], vec!["b".to_string()])
    );
    assert!(
        store.list_dir("a").is_err(),
        "{label}: a listing prefix ends with /"
    );
}

/// Replacing, erasing, erasing prefixes.
fn check_mutations(store: &dyn Store, label: &str) {
    // A range of a version that was replaced is not read.
    let old = store.get_tail("a/bc", 4).unwrap().unwrap();
    store.set("a/bc", b"new value").unwrap();
    if let Some(version) = &old.version {
        let mut part = b"kept".to_vec();
        let read = store
            .get_range_if("a/bc", 0, 3, &mut part, version)
            .unwrap();
        assert_eq!(
            (read, part.as_slice()),
            (Ranged::Changed, &b"kept"[..]),
            "{label}"
        );
        let now = store.get_tail("a/bc", 5).unwrap().unwrap();
        let read = store.get_range_if("a/bc", 0, 3, &mut part, &now.version.unwrap());
        assert_eq!(
            (read.unwrap(), part.as_slice()),
            (Ranged::Read, &b"new"[..]),
            "{label}"
        );
    }
    // Creating is atomic where the store can do it, and never replaces.
    match store.set_if("a/created", b"1", zarr::store::Expect::Absent) {
        Ok(created) => {
            assert!(created, "{label}");
            let again = store.set_if("a/created", b"2", zarr::store::Expect::Absent);
            assert!(!again.unwrap(), "{label}");
            assert_eq!(store.get("a/created").unwrap().unwrap(), b"1", "{label}");
        }
        Err(e) => assert!(matches!(e, Error::Unsupported(_)), "{label}: {e:?}"),
    }
    store.set("a/bc", b"new").unwrap();
    assert_eq!(store.get("a/bc").unwrap().unwrap(), b"new", "{label}");
    assert!(store.erase("a/bc").unwrap(), "{label}");
    assert!(!store.erase("a/bc").unwrap(), "{label}");
    assert_eq!(store.get("a/bc").unwrap(), None);
    store.erase_prefix("a/").unwrap();
    assert_eq!(
        store.list_prefix("a/").unwrap(),
        Vec::<String>::new(),
        "{label}"
    );
    assert!(
        store.get("zarr.json").unwrap().is_some(),
        "{label}: outside the prefix"
    );
    assert!(
        matches!(store.set("../x", b"1"), Err(Error::InvalidKey(_))),
        "{label}"
    );
    store.erase_prefix("").unwrap();
    assert_eq!(store.list().unwrap(), Vec::<String>::new(), "{label}");
}

fn full_suite(store: &dyn Store, label: &str) {
    write_fixture(store);
    check_reads(store, label);
    check_listings(store, label);
    check_mutations(store, label);
}

#[test]
fn memory_directory_and_zip_by_url() {
    let store = open_url("memory://", Mode::Append, None).unwrap();
    full_suite(store.as_ref(), "memory");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.zarr");
    let store = open_url(&format!("file://{}", path.display()), Mode::Append, None).unwrap();
    full_suite(store.as_ref(), "directory (file://)");
    let store = open_url(path.to_str().unwrap(), Mode::Read, None).unwrap();
    assert!(matches!(store.set("k", b"v"), Err(Error::ReadOnly(_))));

    // A zip is written once, then read: the read and listing checks run on the reopened zip.
    let zip = dir.path().join("z.zip");
    let url = format!("zip://{}", zip.display());
    let store = open_url(&url, Mode::CreateNew, Some(r#"{"deflate": true}"#)).unwrap();
    write_fixture(store.as_ref());
    store.close().unwrap();
    let store = open_url(&url, Mode::Read, None).unwrap();
    check_reads(store.as_ref(), "zip");
    check_listings(store.as_ref(), "zip");
}

#[test]
fn urls_and_options_are_checked() {
    let invalid = |url: &str, options: Option<&str>| match open_url(url, Mode::Read, options) {
        Err(Error::InvalidArg(m)) => m,
        Err(other) => panic!("{url}: {other}"),
        Ok(_) => panic!("{url} opened"),
    };
    assert!(invalid("ftp://host/x", None).contains("unknown URL scheme"));
    assert!(invalid("s3://", None).contains("names no bucket"));
    assert!(invalid("s3:///prefix", None).contains("names no bucket"));
    assert!(invalid("gs://", None).contains("names no bucket"));
    assert!(invalid("az://", None).contains("names no container"));
    assert!(invalid("http://[::1", None).contains("malformed URL"));
    assert!(invalid("", None).contains("empty"));
    assert!(invalid("s3://b/p", Some("{\"regio\": \"x\"}")).contains("unknown option"));
    assert!(invalid("s3://b/p", Some("{\"aws_nonsense\": \"x\"}")).contains("unknown option"));
    assert!(invalid("s3://b/p", Some("not json")).contains("not valid JSON"));
    assert!(invalid("s3://b/p", Some("{\"timeout_ms\": \"soon\"}")).contains("timeout_ms"));
    assert!(invalid("memory://", Some("{\"endpoint\": \"x\"}")).contains("does not apply"));
    // Values the client would take and fail on (some by panicking) at the first request,
    // or that would send the request elsewhere.
    for (url, options, says) in [
        (
            "s3://b/p",
            r#"{"endpoint": "http://127.0.0.1:x"}"#,
            "aws_endpoint is not",
        ),
        (
            "s3://b/p",
            r#"{"endpoint": "localhost:9000"}"#,
            "aws_endpoint is not",
        ),
        (
            "s3://b/p",
            r#"{"endpoint": "http://h:9000/a b"}"#,
            "aws_endpoint is not",
        ),
        (
            "s3://b/p",
            r#"{"endpoint": "http://h:9000\n"}"#,
            "control character",
        ),
        (
            "s3://b/p",
            r#"{"aws_endpoint_url_s3": "h:1"}"#,
            "aws_endpoint_url_s3 is not",
        ),
        (
            "s3://b/p",
            r#"{"aws_endpoint_url_sts": "ftp://h/"}"#,
            "aws_endpoint_url_sts",
        ),
        (
            "gs://b/p",
            r#"{"endpoint": "ftp://host/"}"#,
            "google_base_url is not",
        ),
        (
            "az://c/p",
            r#"{"endpoint": "http://[::1"}"#,
            "azure_storage_endpoint is not",
        ),
        (
            "s3://b/p",
            r#"{"region": "eu\r\nX-Injected: 1"}"#,
            "control character",
        ),
        (
            "s3://b/p",
            r#"{"region": "us east-1"}"#,
            "aws_region holds other",
        ),
        (
            "s3://b/p",
            r#"{"region": "x@evil.example/"}"#,
            "aws_region holds other",
        ),
        (
            "s3://b/p",
            r#"{"access_key_id": "AKÄ"}"#,
            "aws_access_key_id holds a non-ASCII",
        ),
        (
            "az://c/p",
            r#"{"azure_storage_account_name": "a@evil.example/"}"#,
            "account_name",
        ),
        (
            "az://c/p",
            r#"{"azure_storage_tenant_id": "t/../x"}"#,
            "tenant_id",
        ),
    ] {
        let message = invalid(url, Some(options));
        assert!(message.contains(says), "{options}: {message}");
    }
    // Messages never show the value: a token, or a password in what is not a URL.
    for (options, secret) in [
        (
            r#"{"session_token": "TOKEN-SECRET-1234\n"}"#,
            "TOKEN-SECRET",
        ),
        (r#"{"endpoint": "minio:hunter22@host:9000"}"#, "hunter22"),
        (r#"{"endpoint": "http//user:hunter22@host"}"#, "hunter22"),
    ] {
        let message = invalid("s3://b/p", Some(options));
        assert!(
            !message.contains(secret),
            "the message shows the value: {message}"
        );
    }
    assert!(
        invalid("s3://b/p", Some("{\"profile\": \"no-such-profile\"}")).contains("no-such-profile")
    );
    assert!(matches!(
        open_url("https://example.invalid/data", Mode::Append, None),
        Err(Error::ReadOnly(_))
    ));
    // object_store 0.14 ignores anonymous access for Google Cloud Storage: refused, not
    // silently sent with credentials from the metadata server.
    assert!(matches!(
        open_url("gs://bucket/p", Mode::Read, Some(r#"{"anonymous": true}"#)),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        open_url("s3://bucket/a/../../x", Mode::Read, None).map(|_| ()),
        Ok(()) | Err(Error::InvalidKey(_))
    ));
}

#[test]
fn aws_profiles_are_read_from_the_shared_files() {
    let dir = tempfile::tempdir().unwrap();
    let credentials = dir.path().join("credentials");
    let config = dir.path().join("config");
    std::fs::write(
        &credentials,
        "[dev]\naws_access_key_id = AKDEV\naws_secret_access_key = SKDEV\n",
    )
    .unwrap();
    std::fs::write(
        &config,
        "[profile dev]\nregion = eu-north-1\nendpoint_url = http://127.0.0.1:1\n",
    )
    .unwrap();
    // SAFETY (of the environment): only this test reads these two variables.
    std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", &credentials);
    std::env::set_var("AWS_CONFIG_FILE", &config);
    let settings = zarr::store::Settings::new(
        zarr::store::Provider::S3,
        "s3://b",
        Some(&serde_json::from_str(r#"{"profile": "dev"}"#).unwrap()),
    )
    .unwrap();
    assert_eq!(settings.config["aws_access_key_id"], "AKDEV");
    assert_eq!(settings.config["aws_secret_access_key"], "SKDEV");
    assert_eq!(settings.config["aws_region"], "eu-north-1");
    assert_eq!(settings.config["aws_endpoint"], "http://127.0.0.1:1");
    assert!(settings.allow_http, "an http:// endpoint allows plain HTTP");
    assert!(
        !format!("{settings:?}").contains("SKDEV"),
        "Debug shows no secret"
    );
    assert_eq!(settings.redact("denied for SKDEV"), "denied for ***");
}

#[test]
fn s3_store_behaviour_counts_and_faults() {
    let Some(server) = moto() else { return };
    let port = server.port;

    // The behaviour checks, under a prefix and at the bucket's root.
    full_suite(s3(port, "suite/prefix", Mode::Append).as_ref(), "s3 prefix");
    full_suite(s3(port, "", Mode::Append).as_ref(), "s3 root");

    // Read back through the server itself: a PUT without Content-Length would be empty.
    let store = s3(port, "raw", Mode::Append);
    store.set("k", &pattern(70000, 7)).unwrap();
    let (status, body) = http(port, "GET", "/zarr-test/raw/k", b"");
    assert!(
        status == 200 && body == pattern(70000, 7),
        "{status}, {} bytes",
        body.len()
    );

    // Read-only handles refuse writes.
    let read_only = s3(port, "raw", Mode::Read);
    assert!(matches!(read_only.set("k", b"x"), Err(Error::ReadOnly(_))));
    assert!(matches!(
        read_only.erase_prefix(""),
        Err(Error::ReadOnly(_))
    ));

    // Multipart upload above the threshold: parts of 5 MiB, exact bytes back.
    let options = s3_options(port).replace(
        '}',
        r#", "multipart_threshold": 6000000, "part_size": 5242880}"#,
    );
    let multi = open_url("s3://zarr-test/multi", Mode::Append, Some(&options)).unwrap();
    let value = pattern(12 << 20, 5);
    server.clear_log();
    multi.set("v", &value).unwrap();
    let requests = server.settled_requests();
    let parts = requests
        .iter()
        .filter(|r| r.starts_with("PUT ") && r.contains("partNumber"))
        .count();
    assert_eq!(parts, 3, "{requests:?}");
    assert!(
        multi.get("v").unwrap().unwrap() == value,
        "multipart value differs"
    );

    // Pagination (more than 1000 keys), written from many threads; one batch delete per
    // 1000 keys.
    let many = s3(port, "many", Mode::Append);
    std::thread::scope(|scope| {
        for t in 0..8 {
            let many = many.clone();
            scope.spawn(move || {
                for i in (t..1005u32).step_by(8) {
                    many.set(&format!("k/{i:05}"), &i.to_le_bytes()).unwrap();
                }
            });
        }
    });
    server.clear_log();
    let keys = many.list_prefix("k/").unwrap();
    assert_eq!(keys.len(), 1005);
    assert_eq!(keys[1004], "k/01004");
    let listing = many.list_dir("k/").unwrap();
    assert_eq!(listing.keys.len(), 1005);
    let lists = server.settled_requests();
    assert_eq!(
        lists.iter().filter(|r| r.contains("list-type=2")).count(),
        4,
        "{lists:?}"
    );
    assert!(lists.iter().any(|r| r.contains("delimiter=")), "{lists:?}");
    server.clear_log();
    many.erase_prefix("").unwrap();
    let deletes = server.settled_requests();
    let batches = deletes
        .iter()
        .filter(|r| r.starts_with("POST ") && r.contains("delete"))
        .count();
    assert_eq!(batches, 2, "{deletes:?}");
    assert!(many.list().unwrap().is_empty());

    // Arrays: written through the library's worker pool, read back exactly, requests counted.
    let store = s3(port, "arrays", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![64, 64], ElementType::Float32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![8, 8]).shard_shape(vec![32, 32]);
    let array = builder
        .create(store.clone(), "sharded", Mode::CreateNew)
        .unwrap();
    let data: Vec<u8> = (0..64 * 64)
        .flat_map(|i| (i as f32).to_ne_bytes())
        .collect();
    server.clear_log();
    array
        .write(&[0, 0], &[64, 64], ElementType::Float32, Order::C, &data)
        .unwrap();
    let writes = server.settled_requests();
    let puts = writes.iter().filter(|r| r.starts_with("PUT ")).count();
    assert_eq!(puts, 4, "one PUT per shard: {writes:?}");
    let mut back = vec![0u8; data.len()];
    let fresh = Array::open(store.clone(), "sharded", Mode::Read).unwrap();
    server.clear_log();
    fresh
        .read(
            &[0, 0],
            &[64, 64],
            ElementType::Float32,
            Order::C,
            &mut back,
        )
        .unwrap();
    assert!(back == data, "the array read back differs");
    // 4 shards of 16 inner chunks, every chunk wanted: each shard is read whole, with one
    // request (its index taken from its bytes).
    let full = server.settled_requests();
    let get_count = full.iter().filter(|r| r.starts_with("GET ")).count();
    assert_eq!(get_count, 4, "{full:?}");
    // Part of each shard: its index, then its chunks' ranges merged into one request.
    let mut part = vec![0u8; 64 * 40 * 4];
    let again = Array::open(store.clone(), "sharded", Mode::Read).unwrap();
    server.clear_log();
    again
        .read(
            &[0, 0],
            &[64, 40],
            ElementType::Float32,
            Order::C,
            &mut part,
        )
        .unwrap();
    let expected: Vec<u8> = (0..64)
        .flat_map(|r| (0..40).map(move |c| (r * 64 + c) as f32))
        .flat_map(f32::to_ne_bytes)
        .collect();
    assert!(part == expected, "the partial read differs");
    let partial = server.settled_requests();
    let gets = partial.iter().filter(|r| r.starts_with("GET ")).count();
    // Shards c/0/0 and c/1/0 whole (2), c/0/1 and c/1/1 in part (index + ranges: 4).
    assert_eq!(gets, 6, "{partial:?}");

    // Unsharded: every chunk covered whole is stored without being read, the batch's
    // PUTs (and the DELETE of the chunk left all fill value) in flight together.
    let mut builder = ArrayBuilder::new(vec![10, 10], ElementType::UInt16);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![4, 4])
        .fill_value_json(serde_json::json!(0));
    let plain = builder
        .create(store.clone(), "plain", Mode::CreateNew)
        .unwrap();
    let values: Vec<u8> = (0..100u16)
        .map(|i| if i / 10 < 4 && i % 10 < 4 { 0 } else { i })
        .flat_map(u16::to_ne_bytes)
        .collect();
    server.clear_log();
    plain
        .write(&[0, 0], &[10, 10], ElementType::UInt16, Order::C, &values)
        .unwrap();
    let wrote = server.settled_requests();
    let count = |m: &str| wrote.iter().filter(|r| r.starts_with(m)).count();
    // (object_store erases one key with a batch delete: a POST.)
    let erasures = count("DELETE ") + count("POST /zarr-test?delete");
    assert_eq!(
        (count("PUT "), erasures, count("GET "), count("HEAD ")),
        (8, 1, 0, 0),
        "{wrote:?}"
    );
    let mut back = vec![0u8; 200];
    plain
        .read(&[0, 0], &[10, 10], ElementType::UInt16, Order::C, &mut back)
        .unwrap();
    assert!(back == values, "the unsharded array read back differs");

    server.clear_log();
    let array = Array::open(store.clone(), "sharded", Mode::Read).unwrap();
    let open = server.settled_requests();
    server.clear_log();
    let mut one = vec![0u8; 8 * 8 * 4];
    array
        .read(&[40, 8], &[8, 8], ElementType::Float32, Order::C, &mut one)
        .unwrap();
    let inner = server.settled_requests();
    let expected: Vec<u8> = (40..48)
        .flat_map(|r| (8..16).map(move |c| (r * 64 + c) as f32))
        .flat_map(f32::to_ne_bytes)
        .collect();
    assert_eq!(one, expected);
    eprintln!("requests: open an array {open:?}; one inner chunk of a shard {inner:?}");
    let gets = |list: &[String]| list.iter().filter(|r| r.starts_with("GET ")).count();
    let heads = |list: &[String]| list.iter().filter(|r| r.starts_with("HEAD ")).count();
    // Opening reads the array's own document only; reading one inner chunk reads the
    // shard's index with a suffix range (no size query), then the chunk.
    assert_eq!((gets(&open), heads(&open)), (1, 0), "{open:?}");
    assert_eq!((gets(&inner), heads(&inner)), (2, 0), "{inner:?}");
    // The same shard index in one suffix-range request, without the size query.
    server.clear_log();
    let zarr::store::Tail {
        bytes: index, size, ..
    } = store
        .get_tail("sharded/c/1/0", 16 * 16 + 4)
        .unwrap()
        .unwrap();
    assert_eq!(index.len(), 260);
    assert!(size > 260);
    let tail = server.settled_requests();
    assert_eq!((gets(&tail), heads(&tail)), (1, 0), "{tail:?}");

    // A forked child builds its own runtime and client and reads the same bytes.
    fork_and_read(store.as_ref(), "sharded/zarr.json");

    // A bucket that does not exist: a clear status naming it.
    let missing = open_url("s3://no-such-bucket/x", Mode::Read, Some(&s3_options(port))).unwrap();
    match missing.get("zarr.json") {
        Err(Error::NotFound(m)) => assert!(
            m.contains("no-such-bucket") && m.contains("does not exist"),
            "{m}"
        ),
        other => panic!("missing bucket: {other:?}"),
    }
}

// ---- Azure Blob Storage (Azurite) --------------------------------------------------------

/// Azurite's well-known development account and key.
const AZ_ACCOUNT: &str = "devstoreaccount1";
const AZ_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Azurite's blob service on a loopback port, or `None` when it is not installed.
fn azurite() -> Option<Server> {
    let binary = env_dir().join("azurite/node_modules/.bin/azurite-blob");
    if !binary.exists() {
        missing(
            &binary.display().to_string(),
            "scripts/setup-test-env.sh installs it",
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut command = Command::new(binary);
    command.args([
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        &port.to_string(),
        "--location",
        &dir.path().display().to_string(),
        "--silent",
        "--skipApiVersionCheck",
        "--disableTelemetry",
    ]);
    Some(Server::spawn(command, port, Some(dir)))
}

/// An HTTP date (RFC 1123) for now.
fn http_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[month as usize - 1],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Creates container `name` on Azurite with a shared-key signed request.
fn create_container(port: u16, name: &str) {
    use base64::Engine;
    let date = http_date();
    let version = "2021-08-06";
    let to_sign = format!(
        "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n\
         /{AZ_ACCOUNT}/{AZ_ACCOUNT}/{name}\nrestype:container"
    );
    let key = base64::engine::general_purpose::STANDARD
        .decode(AZ_KEY)
        .unwrap();
    let tag = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key),
        to_sign.as_bytes(),
    );
    let signature = base64::engine::general_purpose::STANDARD.encode(tag.as_ref());
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "PUT /{AZ_ACCOUNT}/{name}?restype=container HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         x-ms-date: {date}\r\nx-ms-version: {version}\r\n\
         Authorization: SharedKey {AZ_ACCOUNT}:{signature}\r\nContent-Length: 0\r\n\
         Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 201"),
        "create container: {answer}"
    );
}

#[test]
fn azure_store_behaviour_on_azurite() {
    let Some(server) = azurite() else { return };
    create_container(server.port, "zarr-test");
    let options = format!(
        r#"{{"endpoint": "http://127.0.0.1:{}/{AZ_ACCOUNT}", "azure_storage_account_name": "{AZ_ACCOUNT}",
            "azure_storage_account_key": "{AZ_KEY}", "timeout_ms": 20000, "max_retries": 1}}"#,
        server.port
    );
    let store = open_url("az://zarr-test/suite", Mode::Append, Some(&options)).unwrap();
    full_suite(store.as_ref(), "azure");

    // An array through the library's pool, read back exactly.
    let mut builder = ArrayBuilder::new(vec![30, 40], ElementType::Float64);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![5, 8]).shard_shape(vec![10, 16]);
    let array = builder
        .create(store.clone(), "arr", Mode::CreateNew)
        .unwrap();
    let data: Vec<u8> = (0..1200)
        .flat_map(|i| (i as f64 * 0.5).to_ne_bytes())
        .collect();
    array
        .write(&[0, 0], &[30, 40], ElementType::Float64, Order::C, &data)
        .unwrap();
    // Every element of the 30 x 40 array at `path` of `store`.
    let whole = |store: &Arc<dyn Store>, path: &str| {
        let mut back = vec![0u8; 1200 * 8];
        Array::open(store.clone(), path, Mode::Read)
            .unwrap()
            .read(
                &[0, 0],
                &[30, 40],
                ElementType::Float64,
                Order::C,
                &mut back,
            )
            .unwrap();
        back
    };
    assert!(
        whole(&store, "arr") == data,
        "the array read back from Azure differs"
    );

    // The same data through an abfs:// URL (container@account in the URL).
    let abfs = open_url(
        &format!("abfs://zarr-test@{AZ_ACCOUNT}.dfs.core.windows.net/suite"),
        Mode::Read,
        Some(&options),
    )
    .unwrap();
    assert!(
        whole(&abfs, "arr") == data,
        "the array read through abfs:// differs"
    );

    // A copy of the array to memory and back into the container, re-encoded.
    let memory = open_url("memory://", Mode::Append, None).unwrap();
    zarr::node::copy(&store, "arr", &memory, "m", None, Mode::CreateNew).unwrap();
    let zstd = serde_json::json!({"id": "zstd", "level": 5});
    zarr::node::copy(&memory, "m", &store, "copied", Some(&zstd), Mode::CreateNew).unwrap();
    assert!(
        whole(&store, "copied") == data,
        "the array copied through memory differs"
    );

    // A container that does not exist, and a wrong key: clear statuses, no secret shown.
    let missing = open_url("az://no-such-container/x", Mode::Read, Some(&options)).unwrap();
    match missing.get("k") {
        Err(Error::NotFound(m)) => assert!(m.contains("no-such-container"), "{m}"),
        other => panic!("missing container: {other:?}"),
    }
    let wrong = options.replace(AZ_KEY, "d3Jvbmcga2V5IHdyb25nIGtleQ==");
    let denied = open_url("az://zarr-test/suite", Mode::Read, Some(&wrong)).unwrap();
    match denied.get("k") {
        Err(Error::Io(m)) => assert!(!m.contains("d3Jvbmcga2V5IHdyb25nIGtleQ=="), "{m}"),
        other => panic!("wrong key: {other:?}"),
    }
}

extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn _exit(code: i32) -> !;
}

/// Forks; the child reads `key` through `store` (built by the parent) and exits 0 when it
/// gets the parent's bytes.
fn fork_and_read(store: &dyn Store, key: &str) {
    let want = store.get(key).unwrap().unwrap();
    // SAFETY: the child only reads through the store and exits without unwinding.
    let pid = unsafe { fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = matches!(store.get(key), Ok(Some(v)) if v == want);
        unsafe { _exit(if ok { 0 } else { 1 }) };
    }
    let start = Instant::now();
    let mut status = 0;
    loop {
        // WNOHANG = 1
        let done = unsafe { waitpid(pid, &mut status, 1) };
        if done == pid {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the forked child hangs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(status, 0, "the forked child could not read {key}");
}

#[test]
fn http_store_reads_from_nginx() {
    let root = tempfile::tempdir().unwrap();
    let local = FilesystemStore::open(root.path().join("data"), true, true).unwrap();
    write_fixture(&local);
    local.close().unwrap();
    let Some(server) = nginx(root.path()) else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/data", server.port);
    let store = open_url(&url, Mode::Read, None).unwrap();
    check_reads(store.as_ref(), "http");
    assert!(matches!(store.set("k", b"v"), Err(Error::ReadOnly(_))));
    assert!(matches!(
        open_url(&url, Mode::ReadWrite, None),
        Err(Error::ReadOnly(_))
    ));
    // A plain web server cannot list (object_store lists over WebDAV): an error, not a hang.
    assert!(store.list_dir("").is_err());

    // An array written to the directory reads back exactly over HTTP.
    let dir: Arc<dyn Store> =
        Arc::new(FilesystemStore::open(root.path().join("data"), true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![20, 30], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![7, 8]).shard_shape(vec![14, 16]);
    let array = builder.create(dir, "arr", Mode::CreateNew).unwrap();
    let data: Vec<u8> = (0..600i32)
        .flat_map(|v| (v * 3 - 7).to_ne_bytes())
        .collect();
    array
        .write(&[0, 0], &[20, 30], ElementType::Int32, Order::C, &data)
        .unwrap();
    let remote = Array::open(store.clone(), "arr", Mode::Read).unwrap();
    let mut back = vec![0u8; data.len()];
    remote
        .read(&[0, 0], &[20, 30], ElementType::Int32, Order::C, &mut back)
        .unwrap();
    assert!(back == data, "the array read back differs");
}

/// A test CA and a server certificate it signed for 127.0.0.1, made with the openssl
/// command in `dir`: (CA certificate, server certificate, server key), or `None` when
/// openssl is not installed.
fn test_certificates(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let ok = run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=libzarr test CA",
        "-days",
        "2",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
        "-out",
        "leaf.pem",
    ]);
    if !ok {
        missing("openssl", "it makes the test certificates");
        return None;
    }
    Some((
        dir.join("ca.pem"),
        dir.join("leaf.pem"),
        dir.join("leaf.key"),
    ))
}

/// HTTPS through this build's TLS (rustls on ring, or system OpenSSL with the
/// `system-tls` feature): a server whose certificate the trust store (`SSL_CERT_FILE`)
/// holds is read exactly.
#[test]
fn https_store_reads_through_tls() {
    let root = tempfile::tempdir().unwrap();
    let local = FilesystemStore::open(root.path().join("data"), true, true).unwrap();
    write_fixture(&local);
    local.close().unwrap();
    let certs = tempfile::tempdir().unwrap();
    let Some((ca, cert, key)) = test_certificates(certs.path()) else {
        return;
    };
    let Some(server) = nginx_with(root.path(), Some((&cert, &key))) else {
        return;
    };
    // An untrusted certificate is refused.
    let url = format!("https://127.0.0.1:{}/data", server.port);
    let quick = r#"{"max_retries": 0, "timeout_ms": 5000}"#;
    let untrusted = open_url(&url, Mode::Read, Some(quick)).unwrap();
    match untrusted.get("a/b/c") {
        Err(Error::Io(m)) => assert!(m.contains("127.0.0.1"), "{m}"),
        other => panic!("untrusted certificate: {other:?}"),
    }
    // The trust store is read when a store's client is built: only this test uses https.
    std::env::set_var("SSL_CERT_FILE", &ca);
    let url = format!("https://127.0.0.1:{}/data", server.port);
    let store = open_url(&url, Mode::Read, None).unwrap();
    check_reads(store.as_ref(), "http");
}

/// A server that answers its n-th connection with `answers[n]` (the last one repeated) and
/// counts the connections it got.
fn scripted_server(answers: Vec<&'static [u8]>) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(|s| s.ok()) {
            let mut stream = stream;
            let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut head = [0u8; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
            let _ = stream.read(&mut head);
            let _ = stream.write_all(answers[n.min(answers.len() - 1)]);
        }
    });
    (port, count)
}

/// A server that accepts connections and answers each with `answer` (then closes), or
/// never answers when it is `None`.
fn fake_server(answer: Option<&'static [u8]>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().map_while(|s| s.ok()) {
            let mut stream = stream;
            let mut head = [0u8; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
            let _ = stream.read(&mut head);
            match answer {
                Some(bytes) => {
                    let _ = stream.write_all(bytes);
                }
                None => held.push(stream),
            }
        }
    });
    port
}

#[test]
fn faults_give_clear_errors_promptly() {
    let quick = r#"{"timeout_ms": 1500, "connect_timeout_ms": 1000, "max_retries": 1, "retry_timeout_ms": 3000}"#;

    // A truncated body: 10 of 100 announced bytes, then the connection closes.
    let port = fake_server(Some(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789",
    ));
    let store = open_url(
        &format!("http://127.0.0.1:{port}/"),
        Mode::Read,
        Some(quick),
    )
    .unwrap();
    let start = Instant::now();
    match store.get("k") {
        Err(Error::Io(m)) => assert!(m.contains(&format!("127.0.0.1:{port}/k")), "{m}"),
        other => panic!("truncated body: {other:?}"),
    }
    // A range longer than what the server sends back.
    let range = store.get_range("k", 0, 50);
    assert!(matches!(range, Err(Error::Io(_))), "{range:?}");
    assert!(start.elapsed() < Duration::from_secs(20));

    // Transient failures (503, then a dropped connection) are retried with back-off and
    // the call then succeeds.
    let (port, count) = scripted_server(vec![
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    ]);
    let retrying = r#"{"timeout_ms": 3000, "max_retries": 3, "retry_timeout_ms": 10000}"#;
    let store = open_url(
        &format!("http://127.0.0.1:{port}/"),
        Mode::Read,
        Some(retrying),
    )
    .unwrap();
    assert_eq!(store.get("k").unwrap().unwrap(), b"hello");
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 3);

    // A server that answers range requests with the whole value (200): ranges and tails
    // are cut from it.
    let (port, _) = scripted_server(vec![
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789",
    ]);
    let store = open_url(
        &format!("http://127.0.0.1:{port}/"),
        Mode::Read,
        Some(retrying),
    )
    .unwrap();
    assert_eq!(store.get_range("k", 2, 3).unwrap().unwrap(), b"234");
    let tail = store.get_tail("k", 4).unwrap().unwrap();
    assert_eq!((tail.bytes, tail.size), (b"6789".to_vec(), 10));
    assert!(matches!(store.get_range("k", 8, 3), Err(Error::Io(_))));

    // A permanent error (403) is not retried: one request, a clear status, promptly.
    let (port, count) = scripted_server(vec![
        b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ]);
    let store = open_url(
        &format!("http://127.0.0.1:{port}/"),
        Mode::Read,
        Some(retrying),
    )
    .unwrap();
    match store.get("k") {
        Err(Error::Io(m)) => assert!(m.contains("403") && m.contains("/k"), "{m}"),
        other => panic!("403: {other:?}"),
    }
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);

    // Garbage instead of HTTP.
    let port = fake_server(Some(b"this is not http\r\n\r\n"));
    let store = open_url(
        &format!("http://127.0.0.1:{port}/"),
        Mode::Read,
        Some(quick),
    )
    .unwrap();
    assert!(matches!(store.get("k"), Err(Error::Io(_))));

    // A server that never answers: the request times out.
    let port = fake_server(None);
    let store = open_url(
        &format!("http://127.0.0.1:{port}/"),
        Mode::Read,
        Some(quick),
    )
    .unwrap();
    let start = Instant::now();
    assert!(matches!(store.get("k"), Err(Error::Io(_))));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );

    // Nothing listening, with a secret in the options: the message names the URL, not it.
    let port = free_port();
    let options = quick.replace(
        '}',
        &format!(r#", "endpoint": "http://127.0.0.1:{port}", "access_key_id": "AKIDVISIBLE", "secret_access_key": "VERYSECRETVALUE", "session_token": "TOKENVALUE123"}}"#),
    );
    let store = open_url("s3://bucket/p", Mode::Append, Some(&options)).unwrap();
    for result in [store.get("k").map(|_| ()), store.set("k", b"v")] {
        match result {
            Err(Error::Io(m)) => {
                assert!(m.contains("s3://bucket/p/k"), "{m}");
                assert!(
                    !m.contains("VERYSECRETVALUE") && !m.contains("TOKENVALUE123"),
                    "{m}"
                );
            }
            other => panic!("refused connection: {other:?}"),
        }
    }

    // Many threads and the library's worker pool at once: no deadlock.
    let store = open_url(
        &format!("http://127.0.0.1:{}/", free_port()),
        Mode::Read,
        Some(quick),
    )
    .unwrap();
    std::thread::scope(|scope| {
        for _ in 0..16 {
            let store = store.clone();
            scope.spawn(move || assert!(store.get("k").is_err()));
        }
    });
}

// ---- many writers on S3 ------------------------------------------------------------------

/// Four writers, each through its own store and array handle (as separate processes
/// would be), increment their own elements of shared chunks `rounds` times, with versioned
/// (ETag-checked) writes; returns the increments lost.
fn versioned_increments(port: u16, path: &str, rounds: u32) -> u64 {
    const WRITERS: u64 = 4;
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            scope.spawn(move || {
                let store = s3(port, "versioned", Mode::ReadWrite);
                let array = Array::open(store, path, Mode::ReadWrite).unwrap();
                array
                    .set_synchronization(&zarr::io::lock::Synchronization::Versioned)
                    .unwrap();
                for _ in 0..rounds {
                    for i in (w..16).step_by(WRITERS as usize) {
                        let mut value = [0u8; 4];
                        array
                            .read(&[i], &[1], ElementType::UInt32, Order::C, &mut value)
                            .unwrap();
                        let next = (u32::from_ne_bytes(value) + 1).to_ne_bytes();
                        array
                            .write(&[i], &[1], ElementType::UInt32, Order::C, &next)
                            .unwrap();
                    }
                }
            });
        }
    });
    let array = Array::open(s3(port, "versioned", Mode::Read), path, Mode::Read).unwrap();
    let mut all = [0u8; 64];
    array
        .read(&[0], &[16], ElementType::UInt32, Order::C, &mut all)
        .unwrap();
    all.chunks(4)
        .map(|c| u64::from(rounds - u32::from_ne_bytes(c.try_into().unwrap())))
        .sum()
}

#[test]
fn s3_writers_share_chunks_with_etags_and_create_once() {
    let Some(server) = moto() else { return };
    let port = server.port;
    let store = s3(port, "versioned", Mode::Append);
    for (path, sharded) in [("plain", false), ("sharded", true)] {
        let mut builder = ArrayBuilder::new(vec![16], ElementType::UInt32);
        builder.zarr_format(3).unwrap();
        builder
            .chunks(vec![4])
            .fill_value_json(serde_json::json!(0));
        if sharded {
            builder.shard_shape(vec![16]);
        }
        builder
            .create(store.clone(), path, Mode::Overwrite)
            .unwrap();
        // 4 writers x 4 elements x 3 rounds = 48 partial rewrites of shared objects.
        assert_eq!(
            versioned_increments(port, path, 3),
            0,
            "{path}: updates lost"
        );
    }

    // A stale version is refused by the server; the current one accepted.
    use zarr::store::Expect;
    let mut buf = Vec::new();
    store.set("cas", b"one").unwrap();
    let first = store.get_versioned("cas", &mut buf, 100).unwrap().unwrap();
    assert!(store
        .set_if("cas", b"two", Expect::Version(&first))
        .unwrap());
    assert!(!store
        .set_if("cas", b"three", Expect::Version(&first))
        .unwrap());
    assert!(!store.set_if("cas", b"four", Expect::Absent).unwrap());
    assert_eq!(store.get("cas").unwrap().unwrap(), b"two");

    // Mode w-: of four creators racing for one path, exactly one wins (a conditional PUT).
    for round in 0..3 {
        let path = format!("race{round}");
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4u64)
                .map(|w| {
                    let path = path.clone();
                    scope.spawn(move || {
                        let mut builder = ArrayBuilder::new(vec![w + 1], ElementType::UInt8);
                        builder.zarr_format(3).unwrap();
                        builder
                            .create(s3(port, "versioned", Mode::Append), &path, Mode::CreateNew)
                            .map(|a| a.metadata().shape[0])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won: Vec<u64> = outcomes
            .iter()
            .filter_map(|o| o.as_ref().ok())
            .copied()
            .collect();
        assert_eq!(won.len(), 1, "round {round}: {outcomes:?}");
        assert!(
            outcomes
                .iter()
                .all(|o| o.is_ok() || matches!(o, Err(Error::Exists(_)))),
            "{outcomes:?}"
        );
        let stored = Array::open(store.clone(), &path, Mode::Read).unwrap();
        assert_eq!(stored.metadata().shape[0], won[0]);
    }

    // A shard's index is read once per handle and reused by later reads until the shard is
    // rewritten: then the conditional range read fails (412) and the index is read again.
    let mut builder = ArrayBuilder::new(vec![64], ElementType::UInt32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![8]).shard_shape(vec![64]);
    let writer = builder
        .create(store.clone(), "reuse", Mode::Overwrite)
        .unwrap();
    let values: Vec<u8> = (0..64u32).flat_map(u32::to_ne_bytes).collect();
    writer
        .write(&[0], &[64], ElementType::UInt32, Order::C, &values)
        .unwrap();
    let reader = Array::open(s3(port, "versioned", Mode::Read), "reuse", Mode::Read).unwrap();
    let read_at = |at: u64| {
        let mut one = [0u8; 4];
        reader
            .read(&[at], &[1], ElementType::UInt32, Order::C, &mut one)
            .unwrap();
        u32::from_ne_bytes(one)
    };
    let gets = |list: &[String]| list.iter().filter(|r| r.starts_with("GET ")).count();
    server.clear_log();
    assert_eq!(read_at(3), 3);
    assert_eq!(gets(&server.settled_requests()), 2, "index, then the chunk");
    server.clear_log();
    assert_eq!(read_at(20), 20);
    assert_eq!(read_at(60), 60);
    let reused = server.settled_requests();
    assert_eq!(
        gets(&reused),
        2,
        "one range each, the index reused: {reused:?}"
    );
    writer
        .write(
            &[20],
            &[1],
            ElementType::UInt32,
            Order::C,
            &7u32.to_ne_bytes(),
        )
        .unwrap();
    server.clear_log();
    assert_eq!(read_at(20), 7, "a rewritten shard is read anew");
    let after = server.settled_requests();
    assert_eq!(gets(&after), 3, "refused range, index, chunk: {after:?}");
    // The same through a batched read of every chunk: the merged ranges of the old version
    // are refused, and the chunks read again from the new one.
    let mut all = vec![0u8; 256];
    reader
        .read(&[0], &[64], ElementType::UInt32, Order::C, &mut all)
        .unwrap();
    writer
        .write(&[40], &[2], ElementType::UInt32, Order::C, &[9u8; 8])
        .unwrap();
    reader
        .read(&[0], &[64], ElementType::UInt32, Order::C, &mut all)
        .unwrap();
    let mut expected = values.clone();
    expected[80..84].copy_from_slice(&7u32.to_ne_bytes());
    expected[160..168].copy_from_slice(&[9u8; 8]);
    assert!(all == expected, "a batched read after a rewrite differs");
}

#[test]
fn s3_consolidated_hierarchy_opens_with_one_document_read() {
    use zarr::meta::consolidated::{consolidate, ConsolidatedStore};
    use zarr::node::Group;
    let Some(server) = moto() else { return };
    for format in [2i32, 3] {
        let store = s3(server.port, &format!("tree{format}"), Mode::Append);
        for g in 0..3 {
            for a in 0..2 {
                let mut builder = ArrayBuilder::new(vec![4], ElementType::Int32);
                builder.zarr_format(format).unwrap();
                let path = format!("g{g}/a{a}");
                let array = builder
                    .create(store.clone(), &path, Mode::Overwrite)
                    .unwrap();
                let values: Vec<u8> = (0..4)
                    .flat_map(|i: i32| (i + 10 * g + a).to_ne_bytes())
                    .collect();
                array
                    .write(&[0], &[4], ElementType::Int32, Order::C, &values)
                    .unwrap();
            }
        }
        consolidate(store.as_ref(), "").unwrap();
        // An array opened by its path alone: v3 is one read; v2 two (zarr.json is looked
        // for first), or one when the store is said to hold v2 (option zarr_format).
        let hinted = open_url(
            &format!("s3://zarr-test/tree{format}"),
            Mode::Read,
            Some(&s3_options(server.port).replace('}', &format!(r#", "zarr_format": {format}}}"#))),
        )
        .unwrap();
        for (label, store, expected) in [
            ("plain", &store, if format == 3 { 1 } else { 2 }),
            ("hinted", &hinted, 1),
        ] {
            server.clear_log();
            Array::open(store.clone(), "g1/a0", Mode::Read).unwrap();
            let opened = server.settled_requests();
            assert_eq!(
                opened.len(),
                expected as usize,
                "v{format} {label}: {opened:?}"
            );
            assert!(opened.iter().all(|r| r.starts_with("GET ")), "{opened:?}");
        }
        server.clear_log();
        let open = ConsolidatedStore::open(hinted.clone(), "").unwrap();
        drop(Group::open(Arc::new(open), "", Mode::Read).unwrap());
        let opened = server.settled_requests();
        assert_eq!(
            opened.len(),
            1,
            "v{format} hinted, consolidated: {opened:?}"
        );
        server.clear_log();
        let consolidated: Arc<dyn Store> =
            Arc::new(ConsolidatedStore::open(store.clone(), "").unwrap());
        let root = Group::open(consolidated.clone(), "", Mode::Read).unwrap();
        let mut names: Vec<String> = root
            .members()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.sort();
        assert_eq!(names, ["g0", "g1", "g2"]);
        let mut arrays = Vec::new();
        for g in 0..3 {
            for a in 0..2 {
                arrays.push(
                    Array::open(consolidated.clone(), &format!("g{g}/a{a}"), Mode::Read).unwrap(),
                );
            }
        }
        // v3: the root group's document, which holds everything. v2: the same key, found
        // missing, then `.zmetadata` (one read when the store is said to hold v2, above).
        let opened = server.settled_requests();
        let expected = if format == 3 { 1 } else { 2 };
        assert_eq!(
            opened.len(),
            expected,
            "v{format}: open, list, open six arrays: {opened:?}"
        );
        assert!(opened.iter().all(|r| r.starts_with("GET ")), "{opened:?}");
        // The data still comes from the chunks, exactly.
        let mut one = [0u8; 4];
        arrays[5]
            .read(&[3], &[1], ElementType::Int32, Order::C, &mut one)
            .unwrap();
        assert_eq!(i32::from_ne_bytes(one), 3 + 20 + 1);
    }
}

#[test]
fn a_server_dying_mid_upload_leaves_the_old_objects() {
    use common::proxy::{Fault, Proxy};
    let Some(server) = moto() else { return };
    let proxy = Proxy::start(server.port);
    let options = s3_options(proxy.port).replace(
        '}',
        r#", "multipart_threshold": 6000000, "part_size": 5242880, "retry_timeout_ms": 3000}"#,
    );
    let store = open_url("s3://zarr-test/dying", Mode::Append, Some(&options)).unwrap();
    let direct = s3(server.port, "dying", Mode::Read);
    // An array and a large value, written whole through the proxy.
    let mut builder = ArrayBuilder::new(vec![8, 8], ElementType::Float64);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![4, 4]);
    let array = builder.create(store.clone(), "a", Mode::Overwrite).unwrap();
    let old: Vec<u8> = (0..64).flat_map(|i| f64::from(i).to_ne_bytes()).collect();
    array
        .write(&[0, 0], &[8, 8], ElementType::Float64, Order::C, &old)
        .unwrap();
    let big_old = pattern(12 << 20, 3);
    store.set("big", &big_old).unwrap();

    // The server dies during every upload: each write fails with a storage error...
    proxy.fail("PUT", "/", Fault::CutUpload, usize::MAX);
    let new = vec![0x55u8; old.len()];
    let failed = array.write(&[0, 0], &[8, 8], ElementType::Float64, Order::C, &new);
    assert!(matches!(failed, Err(Error::Io(_))), "{failed:?}");
    let failed = store.set("big", &pattern(12 << 20, 4));
    assert!(matches!(failed, Err(Error::Io(_))), "multipart: {failed:?}");
    proxy.heal();

    // ... and every object keeps its old value, whole.
    let reader = Array::open(direct.clone(), "a", Mode::Read).unwrap();
    let mut back = vec![0u8; old.len()];
    reader
        .read(&[0, 0], &[8, 8], ElementType::Float64, Order::C, &mut back)
        .unwrap();
    assert!(back == old, "a chunk changed after a failed upload");
    assert!(
        direct.get("big").unwrap().unwrap() == big_old,
        "the large value changed"
    );
    // The failed multipart upload was aborted: no parts are left behind.
    let (status, listing) = http(server.port, "GET", "/zarr-test?uploads", b"");
    let listing = String::from_utf8_lossy(&listing);
    assert_eq!(status, 200, "{listing}");
    assert!(
        !listing.contains("<Upload>"),
        "an upload was left: {listing}"
    );
}

// ---- a server that checks signatures -----------------------------------------------------

#[test]
fn s3_requests_are_signed_so_a_checking_server_accepts_them() {
    let Some(server) = s3s() else { return };
    // Every read and write, signed with the right key, is accepted: the store checks and a
    // sharded array written and read back through ranged reads.
    let good = s3s_options(server.port, S3S_SECRET);
    let store = open_url("s3://zarr-test/signed", Mode::Append, Some(&good)).unwrap();
    // (Not the mutation checks: s3s-fs ignores If-Match and If-None-Match, which moto
    // honours and the checks above run against.)
    write_fixture(store.as_ref());
    check_reads(store.as_ref(), "s3s");
    check_listings(store.as_ref(), "s3s");
    store.erase_prefix("").unwrap();
    assert_eq!(store.list().unwrap(), Vec::<String>::new());
    let mut builder = ArrayBuilder::new(vec![16, 16], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![4, 4]).shard_shape(vec![8, 8]);
    let array = builder
        .create(store.clone(), "g/a", Mode::Overwrite)
        .unwrap();
    let data: Vec<u8> = (0..256i32)
        .flat_map(|i| (i * 7 - 900).to_ne_bytes())
        .collect();
    array
        .write(&[0, 0], &[16, 16], ElementType::Int32, Order::C, &data)
        .unwrap();
    let reader = Array::open(
        open_url("s3://zarr-test/signed", Mode::Read, Some(&good)).unwrap(),
        "g/a",
        Mode::Read,
    )
    .unwrap();
    let mut back = vec![0u8; data.len()];
    reader
        .read(&[0, 0], &[16, 16], ElementType::Int32, Order::C, &mut back)
        .unwrap();
    assert!(back == data, "the sharded array read back differs");
    let mut corner = vec![0u8; 4 * 3];
    reader
        .read(&[13, 5], &[1, 3], ElementType::Int32, Order::C, &mut corner)
        .unwrap();
    assert!(corner == data[(13 * 16 + 5) * 4..(13 * 16 + 8) * 4]);

    // A wrong secret is refused by the server: a clear error naming the status, promptly,
    // and never the secret.
    let wrong = "wrong-secret-never-printed";
    let bad = open_url(
        "s3://zarr-test/signed",
        Mode::Append,
        Some(&s3s_options(server.port, wrong)),
    )
    .unwrap();
    let start = Instant::now();
    for result in [
        bad.get("g/a/zarr.json").map(|_| ()),
        bad.set("g/x", b"1"),
        bad.list_prefix("").map(|_| ()),
    ] {
        let message = match result {
            Err(e) => e.to_string(),
            Ok(()) => panic!("a request signed with the wrong secret was accepted"),
        };
        assert!(message.contains("403"), "{message}");
        assert!(
            !message.contains(wrong) && !message.contains(S3S_SECRET),
            "{message}"
        );
    }
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    // Anonymous requests are refused the same way, and nothing was written by them.
    let anonymous = format!(
        r#"{{"endpoint": "http://127.0.0.1:{}", "anonymous": true}}"#,
        server.port
    );
    let anonymous = open_url("s3://zarr-test/signed", Mode::Append, Some(&anonymous)).unwrap();
    let message = anonymous.set("g/y", b"1").unwrap_err().to_string();
    assert!(message.contains("403"), "{message}");
    assert_eq!(store.get("g/x").unwrap(), None);
    assert_eq!(store.get("g/y").unwrap(), None);
}

/// Creating nodes reads each document it probes once, and asks for a document rather than
/// its size: an array in an existing v3 hierarchy is created with four requests.
#[test]
fn s3_node_creation_reads_each_document_once() {
    use zarr::node::Group;
    let Some(server) = moto() else { return };
    let store = s3(server.port, "create", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![8, 8], ElementType::Float32);
    builder.zarr_format(3).unwrap();
    server.clear_log();
    builder
        .create(store.clone(), "g/a", Mode::Overwrite)
        .unwrap();
    let fresh = server.settled_requests();
    // Each level probed once (v3, then v2 and v1 documents, none there), the listing of
    // what is replaced, the v2 group documents looked for, three documents written.
    assert_eq!(fresh.len(), 12, "{fresh:?}");
    assert!(!fresh.iter().any(|r| r.starts_with("HEAD ")), "{fresh:?}");
    server.clear_log();
    builder
        .create(store.clone(), "g/b", Mode::Overwrite)
        .unwrap();
    let existing = server.settled_requests();
    assert_eq!(
        existing,
        [
            "GET /zarr-test/create/zarr.json",
            "GET /zarr-test/create/g/zarr.json",
            "GET /zarr-test?list-type=2&prefix=create/g/b/",
            "PUT /zarr-test/create/g/b/zarr.json"
        ],
        "{existing:?}"
    );
    server.clear_log();
    drop(Group::open(store.clone(), "g", Mode::Read).unwrap());
    let opened = server.settled_requests();
    assert!(opened.len() <= 3, "open a group: {opened:?}");
}

#[test]
fn s3_shards_larger_than_a_read_batch_are_read_in_stored_order() {
    // A shard of 32 MiB (2 x 2 x 8 uncompressed inner chunks of 1 MiB) is more than one
    // batch of a read from an object store. With its index at the end it is split in the
    // order its chunks are stored (in C order, every other stored chunk would fall in the
    // first batch, and each batch would read the whole shard), each batch reading its run
    // with ranged requests of at most 2 MiB: every byte is read once. With its index at the
    // start (which batches read only whole) it is read whole, in one request.
    let Some(server) = moto() else { return };
    let store = s3(server.port, "big-shards", Mode::Append);
    let shape = [128, 128, 512];
    let data: Vec<u8> = (0..128 * 128 * 512u32)
        .flat_map(|v| (v as f32).to_ne_bytes())
        .collect();
    for (at_start, name) in [(false, "end"), (true, "start")] {
        let mut builder = ArrayBuilder::new(shape.to_vec(), ElementType::Float32);
        builder.zarr_format(3).unwrap();
        builder
            .chunks(vec![64, 64, 64])
            .shard_shape(shape.to_vec())
            .shard_index(at_start, true)
            .compressor(serde_json::Value::Null);
        let array = builder
            .create(store.clone(), name, Mode::CreateNew)
            .unwrap();
        array
            .write(&[0; 3], &shape, ElementType::Float32, Order::C, &data)
            .unwrap();
        let fresh = Array::open(store.clone(), name, Mode::Read).unwrap();
        server.clear_log();
        let mut back = vec![0u8; data.len()];
        fresh
            .read(&[0; 3], &shape, ElementType::Float32, Order::C, &mut back)
            .unwrap();
        assert!(
            back == data,
            "the array read back differs (index at the {name})"
        );
        let requests = server.settled_requests();
        let gets: Vec<&String> = requests.iter().filter(|r| r.starts_with("GET ")).collect();
        // At the end: the index (once, though the batches fetched at once all need it),
        // then 16 ranges of 2 MiB.
        let expected = if at_start { 1 } else { 17 };
        assert!(
            gets.len() == expected,
            "index at the {name}: {} GETs: {gets:?}",
            gets.len()
        );
    }
}

#[test]
fn s3_sparse_chunks_of_a_shard_are_read_exactly_by_one_request() {
    // A column of 8 inner chunks of 2 KiB lies spread over the first 148 KiB of its shard
    // (Morton order): one request reads that span after the index, and each chunk's bytes
    // are cut out of it (they fill less than half of it) — exactly, and with nothing else
    // of the span kept.
    let Some(server) = moto() else { return };
    let store = s3(server.port, "sparse", Mode::Append);
    let shape = [64u64, 64, 64];
    let data: Vec<u8> = (0..64 * 64 * 64u32)
        .flat_map(|v| (v as f32).to_ne_bytes())
        .collect();
    let mut builder = ArrayBuilder::new(shape.to_vec(), ElementType::Float32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![8, 8, 8])
        .shard_shape(shape.to_vec())
        .compressor(serde_json::Value::Null);
    let array = builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    array
        .write(&[0; 3], &shape, ElementType::Float32, Order::C, &data)
        .unwrap();
    let fresh = Array::open(store.clone(), "a", Mode::Read).unwrap();
    server.clear_log();
    let mut column = vec![0u8; 64 * 8 * 8 * 4];
    fresh
        .read(
            &[0; 3],
            &[64, 8, 8],
            ElementType::Float32,
            Order::C,
            &mut column,
        )
        .unwrap();
    let expected: Vec<u8> = (0..64u32)
        .flat_map(|i| (0..8u32).flat_map(move |j| (0..8u32).map(move |k| (i, j, k))))
        .flat_map(|(i, j, k)| ((i * 64 * 64 + j * 64 + k) as f32).to_ne_bytes())
        .collect();
    assert!(column == expected, "the column read back differs");
    let requests = server.settled_requests();
    let gets: Vec<&String> = requests.iter().filter(|r| r.starts_with("GET ")).collect();
    assert_eq!(gets.len(), 2, "the index, then one ranged read: {gets:?}");
}
