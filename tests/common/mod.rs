//! What the integration tests share: servers started on loopback (moto, s3s-fs) and
//! stopped when dropped, raw HTTP requests to them, a proxy that counts, delays and breaks
//! requests on their way to a server, a store that counts requests, runs of the
//! `zarrtool` binary, and the files below a directory.
#![allow(dead_code)]

pub mod counting;
pub mod hostile;
pub mod proxy;
#[cfg(feature = "cli")]
pub mod zarrtool;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zarr::node::Mode;
use zarr::store::{open_url, Store};

/// A Zarr v3 array of bytes named `name` in `store`, of `shape` in chunks of `chunks`
/// (inside shards of `shards` when given), with `data` written to the whole of it.
pub fn bytes_array(
    store: &Arc<dyn Store>,
    name: &str,
    shape: &[u64],
    chunks: &[u64],
    shards: Option<&[u64]>,
    data: &[u8],
) -> zarr::node::Array {
    let mut builder =
        zarr::node::ArrayBuilder::new(shape.to_vec(), zarr::dtype::ElementType::UInt8);
    builder.zarr_format(3).unwrap();
    builder.chunks(chunks.to_vec());
    if let Some(shards) = shards {
        builder.shard_shape(shards.to_vec());
    }
    let array = builder
        .create(store.clone(), name, Mode::Overwrite)
        .unwrap();
    let origin = vec![0; shape.len()];
    array
        .write(
            &origin,
            shape,
            zarr::dtype::ElementType::UInt8,
            zarr::meta::Order::C,
            data,
        )
        .unwrap();
    array
}

/// Every file below `dir`.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_below(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Whether a missing server fails the test instead of skipping it: under CI every server
/// must be there.
fn must_have_servers() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Skips a test whose server `what` is missing (with the reason), or fails it under CI.
pub fn missing(what: &str, hint: &str) {
    assert!(
        !must_have_servers(),
        "{what} is not installed ({hint}); under CI every test server must be present"
    );
    eprintln!("skipped: {what} is not installed ({hint})");
}

pub fn env_dir() -> PathBuf {
    std::env::var_os("ZARR_TEST_ENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".test-env"))
}

/// A loopback port no other server of this process was given, free when asked.
///
/// Ports come from below Linux's ephemeral range (32768 and up), so the client side of
/// the tests' own connections cannot take one between this call and the server's bind;
/// a counter keeps two servers started at once in one process apart.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const FIRST: u32 = 20000;
    const COUNT: u32 = 12000;
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id() * 97 % COUNT,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    for _ in 0..COUNT {
        let port = (FIRST + NEXT.fetch_add(1, Ordering::SeqCst) % COUNT) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!(
        "no free loopback port between {FIRST} and {}",
        FIRST + COUNT
    )
}

/// A server process, killed when dropped, with its log lines (stderr) collected.
pub struct Server {
    child: Child,
    /// Its loopback port.
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn spawn(mut command: Command, port: u16, dir: Option<tempfile::TempDir>) -> Server {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut server = Server {
            child,
            port,
            log,
            _dir: dir,
        };
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "server for port {port} exited ({status}): {:?}",
                    server.log.lock().unwrap()
                );
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "server on port {port} did not start: {:?}",
                server.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// Requests logged since the log was last cleared, as "METHOD PATH".
    pub fn requests(&self) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter_map(|line| {
                ["GET ", "HEAD ", "PUT ", "POST ", "DELETE ", "PROPFIND "]
                    .iter()
                    .find_map(|m| line.find(m).map(|at| &line[at..]))
                    .map(|r| r.split(" HTTP/").next().unwrap_or(r).to_string())
            })
            .collect()
    }

    pub fn clear_log(&self) {
        // The log thread may still be behind: let it catch up first.
        std::thread::sleep(Duration::from_millis(300));
        self.log.lock().unwrap().clear();
    }

    pub fn settled_requests(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(300));
        self.requests()
    }
}

/// One request over a fresh connection: (status, body).
pub fn http(port: u16, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    // (moto refuses a GET that carries a Content-Length.)
    let length = match method {
        "GET" | "HEAD" => String::new(),
        _ => format!("Content-Length: {}\r\n", body.len()),
    };
    // moto does not check signatures, but treats an unsigned GET as anonymous (denied).
    let auth =
        "Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, \
                SignedHeaders=host, Signature=00\r\n";
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}{length}Connection: close\r\n\r\n"
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(Vec::new(), |at| answer[at + 4..].to_vec());
    (status, body)
}

/// The moto S3 server (its conditional writes made atomic by `moto_server.py`) with
/// bucket `zarr-test`, or `None` (with the reason printed) when it is not installed.
pub fn moto() -> Option<Server> {
    let python = env_dir().join("objstore/bin/python3");
    if !env_dir().join("objstore/bin/moto_server").exists() {
        missing(
            &python.display().to_string(),
            "scripts/setup-test-env.sh installs moto",
        );
        return None;
    }
    let port = free_port();
    let mut command = Command::new(python);
    let launcher = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/moto_server.py");
    command.args([launcher, "-H", "127.0.0.1", "-p", &port.to_string()]);
    let server = Server::spawn(command, port, None);
    let (status, body) = http(port, "PUT", "/zarr-test", b"");
    assert_eq!(
        status,
        200,
        "create bucket: {}",
        String::from_utf8_lossy(&body)
    );
    Some(server)
}

/// Options of a store on the moto server at `port`.
pub fn s3_options(port: u16) -> String {
    format!(
        r#"{{"endpoint": "http://127.0.0.1:{port}", "region": "us-east-1",
            "access_key_id": "testing", "secret_access_key": "testing-secret",
            "timeout_ms": 20000, "max_retries": 1}}"#
    )
}

/// The store `s3://zarr-test/prefix` on the moto server at `port`.
pub fn s3(port: u16, prefix: &str, mode: Mode) -> Arc<dyn Store> {
    open_url(
        &format!("s3://zarr-test/{prefix}"),
        mode,
        Some(&s3_options(port)),
    )
    .expect("open s3")
}

/// Bytes that are not text, of `n` bytes.
pub fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// The access key and secret the s3s-fs server checks signatures with.
pub const S3S_KEY: &str = "AKIDLIBZARRTEST";
pub const S3S_SECRET: &str = "s3s-secret-for-the-signature-test";

/// The s3s-fs S3 server (it checks SigV4 signatures, which moto does not) with bucket
/// `zarr-test`, or `None` (with the reason printed) when it is not installed.
pub fn s3s() -> Option<Server> {
    let binary = env_dir().join("s3s/bin/s3s-fs");
    if !binary.exists() {
        missing(
            &binary.display().to_string(),
            "scripts/setup-test-env.sh builds it",
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("zarr-test")).unwrap();
    let port = free_port();
    let mut command = Command::new(binary);
    command.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    command.args(["--access-key", S3S_KEY, "--secret-key", S3S_SECRET]);
    command.arg(dir.path());
    Some(Server::spawn(command, port, Some(dir)))
}

/// Options of a store on the s3s-fs server at `port`, signing with `secret`.
pub fn s3s_options(port: u16, secret: &str) -> String {
    format!(
        r#"{{"endpoint": "http://127.0.0.1:{port}", "region": "us-east-1",
            "access_key_id": "{S3S_KEY}", "secret_access_key": "{secret}",
            "timeout_ms": 20000, "max_retries": 1, "retry_timeout_ms": 2000}}"#
    )
}

/// The bytes of the files below `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            match e.file_type().unwrap().is_dir() {
                true => dir_size(&e.path()),
                false => e.metadata().unwrap().len(),
            }
        })
        .sum()
}
