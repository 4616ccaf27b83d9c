//! Credentials as users keep them: the `AWS_*` environment variables (with
//! `AWS_ENDPOINT_URL`), a profile named by `AWS_PROFILE` in the shared credentials and
//! config files, and anonymous reads of a public bucket. The signature-checking s3s-fs
//! server proves the right key signed each request; moto serves the public bucket. One test
//! function, since it changes the process's environment.
#![cfg(feature = "cloud")]

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::open_url;
use zarr::Error;

const AWS_VARIABLES: [&str; 9] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
];

fn clear_aws_environment() {
    for name in AWS_VARIABLES {
        std::env::remove_var(name);
    }
}

/// Writes and reads back a small value and an array through `s3://zarr-test/prefix`
/// opened with no options at all.
fn round_trip(prefix: &str) -> Result<(), Error> {
    let store = open_url(&format!("s3://zarr-test/{prefix}"), Mode::Append, None)?;
    store.set("k", b"signed")?;
    assert_eq!(store.get("k")?.unwrap(), b"signed");
    let mut builder = ArrayBuilder::new(vec![6], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    let array = builder.create(store.clone(), "a", Mode::Overwrite)?;
    let data: Vec<u8> = (0..6i32).flat_map(|i| (i - 3).to_ne_bytes()).collect();
    array.write(&[0], &[6], ElementType::Int32, Order::C, &data)?;
    let mut back = vec![0u8; data.len()];
    Array::open(store, "a", Mode::Read)?.read(
        &[0],
        &[6],
        ElementType::Int32,
        Order::C,
        &mut back,
    )?;
    assert_eq!(back, data);
    Ok(())
}

/// A PUT of `body` at `path` marked public-read (moto takes any signature).
fn put_public(port: u16, path: &str, body: &[u8]) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-amz-acl: public-read\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, \
         SignedHeaders=host, Signature=00\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn credentials_from_the_environment_profiles_and_anonymous_access() {
    let Some(server) = s3s() else { return };
    let dir = tempfile::tempdir().unwrap();
    clear_aws_environment();
    // Point the shared files somewhere empty: the machine's own ~/.aws must not take part.
    std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"));
    std::env::set_var("AWS_CONFIG_FILE", dir.path().join("none"));

    // The AWS_* variables alone, endpoint included.
    std::env::set_var("AWS_ACCESS_KEY_ID", S3S_KEY);
    std::env::set_var("AWS_SECRET_ACCESS_KEY", S3S_SECRET);
    std::env::set_var("AWS_REGION", "us-east-1");
    std::env::set_var(
        "AWS_ENDPOINT_URL",
        format!("http://127.0.0.1:{}", server.port),
    );
    round_trip("environment").expect("credentials from AWS_* variables");
    // A wrong secret in the environment: the server refuses the signature, and the message
    // shows neither secret.
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "a-wrong-secret-from-the-env");
    match round_trip("environment") {
        Err(Error::Io(m)) => assert!(
            m.contains("403") && !m.contains("a-wrong-secret-from-the-env"),
            "{m}"
        ),
        other => panic!("wrong secret: {other:?}"),
    }

    // A profile named by AWS_PROFILE, from the shared files; the environment holds none.
    clear_aws_environment();
    let credentials = dir.path().join("credentials");
    let config = dir.path().join("config");
    std::fs::write(
        &credentials,
        format!(
            "[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n\
             [simulation]\naws_access_key_id = {S3S_KEY}\naws_secret_access_key = {S3S_SECRET}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        &config,
        format!(
            "[default]\nregion = eu-west-1\n\n[profile simulation]\nregion = us-east-1\n\
             endpoint_url = http://127.0.0.1:{}\n",
            server.port
        ),
    )
    .unwrap();
    std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", &credentials);
    std::env::set_var("AWS_CONFIG_FILE", &config);
    std::env::set_var("AWS_PROFILE", "simulation");
    round_trip("profile").expect("credentials from the AWS_PROFILE profile");
    // Without AWS_PROFILE the default profile's wrong key is used: refused.
    std::env::remove_var("AWS_PROFILE");
    std::env::set_var(
        "AWS_ENDPOINT_URL",
        format!("http://127.0.0.1:{}", server.port),
    );
    assert!(matches!(round_trip("profile"), Err(Error::Io(m)) if m.contains("403")));
    clear_aws_environment();
    drop(server);

    // Anonymous reads of a public bucket (unsigned requests): moto serves objects marked
    // public-read to them and refuses the rest.
    let Some(moto) = moto() else { return };
    let doc = br#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]}"#;
    put_public(moto.port, "/zarr-test/public/a/zarr.json", doc);
    put_public(moto.port, "/zarr-test/public/a/c/0", &[7, 8, 9, 10]);
    let (status, _) = http(moto.port, "PUT", "/zarr-test/public/private", b"secret");
    assert_eq!(status, 200);
    let anonymous = open_url(
        "s3://zarr-test/public",
        Mode::Read,
        Some(&format!(
            r#"{{"endpoint": "http://127.0.0.1:{}", "region": "us-east-1", "anonymous": true}}"#,
            moto.port
        )),
    )
    .unwrap();
    let array = Array::open(anonymous.clone(), "a", Mode::Read).expect("anonymous open");
    let mut back = [0u8; 4];
    array
        .read(&[0], &[4], ElementType::UInt8, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, [7, 8, 9, 10]);
    match anonymous.get("private") {
        Err(Error::Io(m)) => assert!(m.contains("403"), "{m}"),
        other => panic!("a private object read anonymously: {other:?}"),
    }
}
