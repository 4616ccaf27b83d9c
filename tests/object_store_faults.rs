//! S3 under faults, through a proxy in front of the moto server: transient failures are
//! retried and the call succeeds with exact data; permanent ones fail once, promptly, with
//! a message naming the URL and the HTTP status; a chunk that fails in a read of many
//! batches ends the read with its error; requests stay in flight together whatever the CPU
//! pool's size; shard reads use suffix and plain ranges.
#![cfg(feature = "cloud")]

use crate::common;

use common::proxy::{Fault, Proxy, Seen};
use common::*;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{open_url, Store};
use zarr::Error;

/// A store under `prefix` through the proxy, with `extra` options (`, "name": value`).
fn through(proxy: &Proxy, prefix: &str, extra: &str) -> Arc<dyn Store> {
    let options = format!(
        r#"{{"endpoint": "http://127.0.0.1:{}", "region": "us-east-1",
            "access_key_id": "testing", "secret_access_key": "testing-secret",
            "timeout_ms": 5000, "max_retries": 4, "retry_timeout_ms": 20000{extra}}}"#,
        proxy.port
    );
    open_url(
        &format!("s3://zarr-test/{prefix}"),
        Mode::Append,
        Some(&options),
    )
    .expect("open s3 through the proxy")
}

fn count(seen: &[Seen], method: &str, target: &str) -> usize {
    seen.iter()
        .filter(|s| s.method == method && s.target.contains(target))
        .count()
}

const TRANSIENT: [Fault; 5] = [
    Fault::Status(503, "SlowDown"),
    Fault::Status(500, "InternalError"),
    Fault::Status(429, "TooManyRequests"),
    Fault::Drop,
    Fault::CutBody,
];

#[test]
fn transient_faults_are_retried_and_the_call_succeeds() {
    let Some(server) = moto() else { return };
    let proxy = Proxy::start(server.port);
    let store = through(&proxy, "transient", "");
    let value = pattern(100_000, 9);
    store.set("v", &value).unwrap();

    // Reads: each fault twice, then the object, whole and exact.
    for fault in TRANSIENT {
        proxy.take();
        proxy.fail("GET", "/zarr-test/transient/v", fault, 2);
        let start = Instant::now();
        let got = store.get("v");
        assert!(
            matches!(&got, Ok(Some(v)) if *v == value),
            "GET under {fault:?}: {:?}",
            got.map(|v| v.map(|v| v.len()))
        );
        let (seen, _) = proxy.take();
        assert_eq!(
            count(&seen, "GET", "/transient/v"),
            3,
            "{fault:?}: {seen:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(15), "{fault:?}");
        // A range read (a shard's index or chunk) likewise.
        proxy.fail("GET", "/zarr-test/transient/v", fault, 1);
        let range = store.get_range("v", 1000, 5000).unwrap().unwrap();
        assert!(range == value[1000..6000], "range under {fault:?}");
    }

    // Writes: each fault once, then the PUT goes through; the object is the new value.
    for (i, fault) in TRANSIENT.into_iter().enumerate() {
        if matches!(fault, Fault::CutBody) {
            continue; // (an answer cut short after the server stored the object)
        }
        let new = pattern(50_000, i as u8);
        proxy.take();
        proxy.fail("PUT", "/zarr-test/transient/w", fault, 1);
        store
            .set("w", &new)
            .unwrap_or_else(|e| panic!("PUT under {fault:?}: {e}"));
        let (seen, _) = proxy.take();
        assert_eq!(
            count(&seen, "PUT", "/transient/w"),
            2,
            "{fault:?}: {seen:?}"
        );
        assert!(store.get("w").unwrap().unwrap() == new, "{fault:?}");
    }

    // A multipart upload whose second part fails once: the upload completes, exactly.
    let multi = through(
        &proxy,
        "transient",
        r#", "multipart_threshold": 6000000, "part_size": 5242880"#,
    );
    let big = pattern(12 << 20, 4);
    proxy.fail("PUT", "partNumber=2", Fault::Status(503, "SlowDown"), 1);
    multi.set("big", &big).unwrap();
    assert!(multi.get("big").unwrap().unwrap() == big, "multipart value");

    // An array written and read through the worker pool while chunk requests fail.
    let mut builder = ArrayBuilder::new(vec![64, 64], ElementType::Int16);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![16, 16]);
    let array = builder.create(store.clone(), "a", Mode::Overwrite).unwrap();
    let data: Vec<u8> = (0..64 * 64)
        .flat_map(|i| ((i * 3 - 5000) as i16).to_ne_bytes())
        .collect();
    proxy.fail("PUT", "/a/c/", Fault::Status(503, "SlowDown"), 3);
    proxy.fail("PUT", "/a/c/", Fault::Drop, 2);
    array
        .write(&[0, 0], &[64, 64], ElementType::Int16, Order::C, &data)
        .unwrap();
    proxy.fail("GET", "/a/c/", Fault::Drop, 3);
    proxy.fail("GET", "/a/c/", Fault::CutBody, 2);
    proxy.fail("GET", "/a/c/", Fault::Status(500, "InternalError"), 2);
    let reader = Array::open(store.clone(), "a", Mode::Read).unwrap();
    let mut back = vec![0u8; data.len()];
    reader
        .read(&[0, 0], &[64, 64], ElementType::Int16, Order::C, &mut back)
        .unwrap();
    assert!(back == data, "the array read back under faults differs");
}

#[test]
fn permanent_errors_fail_once_promptly_and_clearly() {
    let Some(server) = moto() else { return };
    let proxy = Proxy::start(server.port);
    let store = through(&proxy, "permanent", "");
    store.set("k", b"value").unwrap();
    for (method, status, code) in [
        ("GET", 403, "AccessDenied"),
        ("GET", 400, "InvalidRequest"),
        ("PUT", 403, "AccessDenied"),
    ] {
        proxy.take();
        proxy.fail(
            method,
            "/permanent/k",
            Fault::Status(status, code),
            usize::MAX,
        );
        let start = Instant::now();
        let outcome = match method {
            "GET" => store.get("k").map(drop),
            _ => store.set("k", b"new"),
        };
        match outcome {
            Err(Error::Io(m)) => assert!(
                m.contains("s3://zarr-test/permanent/k") && m.contains(&status.to_string()),
                "{method} {status}: {m}"
            ),
            other => panic!("{method} {status}: {other:?}"),
        }
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{method} {status}"
        );
        let (seen, _) = proxy.take();
        assert_eq!(count(&seen, method, "/permanent/k"), 1, "{seen:?}");
        proxy.heal();
    }
    assert_eq!(
        store.get("k").unwrap().unwrap(),
        b"value",
        "the old value is kept"
    );

    // A host that does not resolve: a storage error naming the URL, promptly.
    let nowhere = open_url(
        "s3://zarr-test/x",
        Mode::Read,
        Some(
            r#"{"endpoint": "http://no-such-host.invalid:9000", "region": "us-east-1",
                  "access_key_id": "a", "secret_access_key": "b"}"#,
        ),
    )
    .unwrap();
    let start = Instant::now();
    match nowhere.get("zarr.json") {
        Err(Error::Io(m)) => assert!(m.contains("s3://zarr-test/x/zarr.json"), "{m}"),
        other => panic!("unresolvable host: {other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_chunk_that_fails_ends_a_read_of_many_batches_with_its_error() {
    let Some(server) = moto() else { return };
    let proxy = Proxy::start(server.port);
    // Two requests at once: batches of eight chunks, so a full read is sixteen batches.
    let store = through(&proxy, "stop", r#", "max_requests": 2"#);
    let data: Vec<u8> = (0..128 * 64).map(|i| (i % 253) as u8 + 1).collect();
    let read_all = |array: &Array| {
        let mut back = vec![0u8; data.len()];
        let start = Instant::now();
        let read = array.read(&[0, 0], &[128, 64], ElementType::UInt8, Order::C, &mut back);
        assert!(start.elapsed() < Duration::from_secs(20), "{read:?}");
        read.map(|()| back)
    };
    for (name, shards) in [("chunks", None), ("shards", Some([32, 32]))] {
        let array = bytes_array(
            &store,
            name,
            &[128, 64],
            &[8, 8],
            shards.as_ref().map(|s| &s[..]),
            &data,
        );
        assert!(read_all(&array).unwrap() == data, "{name}");

        // A request the server refuses, late in the read.
        let refused = match name {
            "chunks" => format!("/stop/{name}/c/13/5"),
            _ => format!("/stop/{name}/c/3/1"),
        };
        proxy.fail(
            "GET",
            &refused,
            Fault::Status(403, "AccessDenied"),
            usize::MAX,
        );
        match read_all(&array) {
            Err(Error::Io(m)) => assert!(m.contains(&refused) && m.contains("403"), "{name}: {m}"),
            other => panic!("{name}, a refused request: {:?}", other.map(drop)),
        }
        proxy.heal();
        assert!(read_all(&array).unwrap() == data, "{name} once healed");
    }

    // A chunk that does not decode, among many that do.
    let array = Array::open(store.clone(), "chunks", Mode::Read).unwrap();
    store
        .set("chunks/c/11/2", b"these bytes are not zstd")
        .unwrap();
    match read_all(&array) {
        Err(Error::Codec(m)) => assert!(m.contains("c/11/2"), "{m}"),
        other => panic!("a corrupt chunk: {:?}", other.map(drop)),
    }
    // The chunks around it still read.
    let mut rows = vec![0u8; 80 * 64];
    array
        .read(&[0, 0], &[80, 64], ElementType::UInt8, Order::C, &mut rows)
        .unwrap();
    assert!(rows == data[..80 * 64]);
}

#[test]
fn requests_stay_in_flight_together_whatever_the_pool_size() {
    let Some(server) = moto() else { return };
    let proxy = Proxy::start(server.port);
    // One CPU worker: the requests in flight must come from the store, not the pool.
    zarr::io::pool::set_num_threads(1).unwrap();
    let store = through(&proxy, "flight", "");
    let mut builder = ArrayBuilder::new(vec![64, 64], ElementType::UInt8);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![8, 8]);
    let array = builder.create(store.clone(), "a", Mode::Overwrite).unwrap();
    let data: Vec<u8> = (0..64 * 64).map(|i| (i % 251) as u8 + 1).collect();
    proxy.set_delay(Duration::from_millis(100));
    proxy.take();
    array
        .write(&[0, 0], &[64, 64], ElementType::UInt8, Order::C, &data)
        .unwrap();
    let (seen, written) = proxy.take();
    assert_eq!(count(&seen, "PUT", "/a/c/"), 64, "{seen:?}");
    assert!(written >= 16, "64 chunk PUTs, at most {written} in flight");
    let mut back = vec![0u8; data.len()];
    array
        .read(&[0, 0], &[64, 64], ElementType::UInt8, Order::C, &mut back)
        .unwrap();
    assert!(back == data);
    let (seen, read) = proxy.take();
    assert_eq!(count(&seen, "GET", "/a/c/"), 64, "{seen:?}");
    assert!(read >= 16, "64 chunk GETs, at most {read} in flight");
    eprintln!("one CPU worker: {written} PUTs and {read} GETs in flight at most");

    // The option max_requests caps them.
    let capped = through(&proxy, "flight", r#", "max_requests": 4"#);
    let array = Array::open(capped, "a", Mode::Read).unwrap();
    proxy.take();
    array
        .read(&[0, 0], &[64, 64], ElementType::UInt8, Order::C, &mut back)
        .unwrap();
    assert!(back == data);
    let (_, capped_read) = proxy.take();
    assert!(
        (2..=4).contains(&capped_read),
        "max_requests 4: {capped_read} in flight"
    );
    proxy.set_delay(Duration::ZERO);
    zarr::io::pool::set_num_threads(0).unwrap();
}

#[test]
fn an_inner_chunk_is_a_suffix_range_then_a_range() {
    let Some(server) = moto() else { return };
    let proxy = Proxy::start(server.port);
    let store = through(&proxy, "ranges", "");
    let mut builder = ArrayBuilder::new(vec![32, 32], ElementType::Float64);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![8, 8])
        .shard_shape(vec![32, 32])
        .compressor(serde_json::Value::Null);
    let array = builder.create(store.clone(), "s", Mode::Overwrite).unwrap();
    let data: Vec<u8> = (0..32 * 32)
        .flat_map(|i| (f64::from(i) * 0.5).to_ne_bytes())
        .collect();
    array
        .write(&[0, 0], &[32, 32], ElementType::Float64, Order::C, &data)
        .unwrap();
    let reader = Array::open(store.clone(), "s", Mode::Read).unwrap();
    proxy.take();
    let mut one = vec![0u8; 8 * 8 * 8];
    reader
        .read(&[8, 16], &[8, 8], ElementType::Float64, Order::C, &mut one)
        .unwrap();
    let expected: Vec<u8> = (8..16)
        .flat_map(|r| (16..24).map(move |c| f64::from(r * 32 + c) * 0.5))
        .flat_map(f64::to_ne_bytes)
        .collect();
    assert!(one == expected);
    let (seen, _) = proxy.take();
    let ranges: Vec<&str> = seen.iter().filter_map(|s| s.range.as_deref()).collect();
    // 16 chunks: an index of 16 (offset, length) pairs and its crc32c, 260 bytes.
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(ranges.len(), 2, "{seen:?}");
    assert_eq!(ranges[0], "bytes=-260");
    let (start, end) = ranges[1]
        .strip_prefix("bytes=")
        .and_then(|r| r.split_once('-'))
        .expect("a plain range");
    let (start, end): (u64, u64) = (start.parse().unwrap(), end.parse().unwrap());
    assert_eq!(end + 1 - start, 8 * 8 * 8, "one inner chunk: {}", ranges[1]);
    // The next read of the same shard reuses the index: one range.
    reader
        .read(&[0, 0], &[8, 8], ElementType::Float64, Order::C, &mut one)
        .unwrap();
    let (seen, _) = proxy.take();
    assert_eq!(seen.len(), 1, "{seen:?}");
}
