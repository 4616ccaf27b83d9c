//! A hostile object server on loopback: enough S3 (GET with `Range`, HEAD, ListObjectsV2
//! with continuation tokens, start-after and max-keys, PUT, DELETE, batch delete) and
//! plain HTTP (GET, HEAD below the root) to serve a store, and switchable lies: ranges
//! ignored, lying lengths, endless listings, redirects to another origin, error bodies
//! quoting the request, answers dripped byte by byte. Large objects are generated as
//! they are sent, so a "1 GiB" object costs the server nothing. One connection per
//! request (`Connection: close`); every thread ends when the server is dropped or its
//! client goes away.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How the server lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lie {
    /// No lie: an honest server.
    None,
    /// GETs ignore `Range`: 200 with the whole object.
    IgnoreRange,
    /// Range answers have the right `Content-Range` but send the object from the range's
    /// start to its end (a `Content-Length` longer than asked).
    LongRange,
    /// Answers announce their full `Content-Length`, send half of it and close.
    ShortBody,
    /// Range answers name another range in `Content-Range` than the one asked.
    WrongContentRange,
    /// Listings never end: the same continuation token and the same keys on every page.
    SameToken,
    /// Listings never end: the same continuation token on every page, with new, ever larger
    /// keys.
    SameTokenNewKeys,
    /// Listings never end: a new token on every page, the same keys on each.
    NewTokensSameKeys,
    /// Listings never end: a new token and new, ever larger keys on every page.
    EndlessKeys,
    /// Listings say more follow, forever, with no key on any page.
    EmptyPages,
    /// GET and HEAD answer with this redirect status to the same path on the other
    /// listener (another origin).
    Redirect(u16),
    /// GET and HEAD answer 302 to the same path below `/moved` on this listener.
    RedirectHere,
    /// Every request is answered 403 with an S3 `SignatureDoesNotMatch` body quoting the
    /// request's canonical form, with the secrets given to [`Hostile::quote`].
    ErrorBody,
    /// Every request is answered 403 with a plain-text body quoting the secrets given to
    /// [`Hostile::quote`] as they are, percent-encoded and in hexadecimal.
    ErrorText,
    /// Listing answers are a gibibyte long (generated, not XML).
    HugeListing,
    /// Every request is answered 403 with a gibibyte-long body.
    HugeError,
    /// Bodies are sent one byte every 100 ms.
    Drip,
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub target: String,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
}

impl Seen {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An object's content.
#[derive(Clone)]
enum Body {
    Bytes(Vec<u8>),
    /// `n` bytes of [`byte_at`], made as they are sent.
    Lazy(u64),
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Bytes(b) => b.len() as u64,
            Body::Lazy(n) => *n,
        }
    }
}

/// The byte at `i` of a generated object.
pub fn byte_at(i: u64) -> u8 {
    (i % 251) as u8
}

/// Bytes [`byte_at`] from 0, long enough to cut any chunk from.
fn generated() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| (0..(64 << 10) + 251).map(byte_at).collect())
}

#[derive(Default)]
struct State {
    /// Objects by path without the leading `/` (`bucket/key` for S3).
    objects: Mutex<BTreeMap<String, Body>>,
    lie: Mutex<Option<Lie>>,
    /// Requests that reached this listener.
    seen: Mutex<Vec<Seen>>,
    /// Requests that reached the other listener.
    elsewhere: Mutex<Vec<Seen>>,
    /// Text an error body quotes (secrets the client sent, in their forms).
    quoted: Mutex<String>,
    /// The other listener's port.
    other_port: AtomicU16,
    /// Listing pages answered.
    pages: AtomicU64,
    stop: AtomicBool,
}

/// The server: its port, and a second listener (another origin) that answers every
/// request with `EVIL` and records it.
pub struct Hostile {
    pub port: u16,
    pub other_port: u16,
    state: Arc<State>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Hostile {
    /// Starts both listeners on loopback, honest and empty.
    pub fn start() -> Hostile {
        let state = Arc::new(State::default());
        let (port, main) = listen(state.clone(), false);
        let (other_port, other) = listen(state.clone(), true);
        state.other_port.store(other_port, Ordering::SeqCst);
        Hostile {
            port,
            other_port,
            state,
            threads: vec![main, other],
        }
    }

    /// Switches to `lie` (`Lie::None`: honest).
    pub fn lie(&self, lie: Lie) {
        *self.state.lie.lock().unwrap() = (lie != Lie::None).then_some(lie);
    }

    /// Stores `value` at `path` (`bucket/key`, or the path below the web root).
    pub fn put(&self, path: &str, value: &[u8]) {
        let body = Body::Bytes(value.to_vec());
        self.state.objects.lock().unwrap().insert(path.into(), body);
    }

    /// Stores a generated object of `len` bytes ([`byte_at`]) at `path`.
    pub fn put_lazy(&self, path: &str, len: u64) {
        let body = Body::Lazy(len);
        self.state.objects.lock().unwrap().insert(path.into(), body);
    }

    /// The paths stored.
    pub fn paths(&self) -> Vec<String> {
        self.state.objects.lock().unwrap().keys().cloned().collect()
    }

    /// Text that [`Lie::ErrorBody`] answers quote inside the canonical request.
    pub fn quote(&self, text: &str) {
        *self.state.quoted.lock().unwrap() = text.to_string();
    }

    /// The requests this listener and the other one saw since the last call.
    pub fn take(&self) -> (Vec<Seen>, Vec<Seen>) {
        (
            std::mem::take(&mut *self.state.seen.lock().unwrap()),
            std::mem::take(&mut *self.state.elsewhere.lock().unwrap()),
        )
    }
}

/// Starts a listener (the other origin when `elsewhere`): its port and accept thread.
fn listen(state: Arc<State>, elsewhere: bool) -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().expect("address").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let thread = std::thread::spawn(move || {
        while !state.stop.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((stream, _)) => {
                    let state = state.clone();
                    std::thread::spawn(move || {
                        let _ = serve(stream, &state, elsewhere);
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    (port, thread)
}

/// A parsed request.
struct Request {
    seen: Seen,
    path: String,
    query: BTreeMap<String, String>,
    body: Vec<u8>,
}

fn read_request(stream: &TcpStream) -> std::io::Result<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let seen = Seen {
        method,
        target: target.clone(),
        headers,
    };
    let length: usize = seen
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length.min(64 << 20)];
    reader.read_exact(&mut body)?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    Ok(Request {
        path: decode(path.trim_start_matches('/')),
        seen,
        query,
        body,
    })
}

/// Percent-decodes `text`.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let digits = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(digits, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Answers one request.
fn serve(mut stream: TcpStream, state: &State, elsewhere: bool) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let request = read_request(&stream)?;
    let method = request.seen.method.clone();
    if elsewhere {
        state.elsewhere.lock().unwrap().push(request.seen);
        return respond(
            &mut stream,
            200,
            &[],
            &Body::Bytes(b"EVIL".to_vec()),
            0,
            4,
            None,
        );
    }
    state.seen.lock().unwrap().push(request.seen.clone());
    let lie = *state.lie.lock().unwrap();
    match lie {
        Some(Lie::Redirect(status)) if method == "GET" || method == "HEAD" => {
            let location = format!(
                "http://127.0.0.1:{}{}",
                state.other_port.load(Ordering::SeqCst),
                request.seen.target
            );
            return redirect(&mut stream, status, &location);
        }
        Some(Lie::RedirectHere)
            if (method == "GET" || method == "HEAD") && !request.path.starts_with("moved/") =>
        {
            let location = format!("/moved{}", request.seen.target);
            return redirect(&mut stream, 302, &location);
        }
        Some(Lie::ErrorBody) => {
            let quoted = state.quoted.lock().unwrap().clone();
            let body = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>\
                 <Message>The request signature we calculated does not match</Message>\
                 <StringToSign>AWS4-HMAC-SHA256 {quoted}</StringToSign>\
                 <CanonicalRequest>{method} /{} x-amz-security-token:{quoted}</CanonicalRequest>\
                 <CanonicalRequestBytes>{}</CanonicalRequestBytes></Error>",
                request.path,
                hex_spaced(&quoted)
            );
            let body = Body::Bytes(body.into_bytes());
            let len = body.len();
            return respond(&mut stream, 403, &[], &body, 0, len, None);
        }
        Some(Lie::HugeError) => {
            return respond(
                &mut stream,
                403,
                &[],
                &Body::Lazy(1 << 30),
                0,
                1 << 30,
                None,
            );
        }
        Some(Lie::HugeListing) if request.query.contains_key("list-type") => {
            return respond(
                &mut stream,
                200,
                &[],
                &Body::Lazy(1 << 30),
                0,
                1 << 30,
                None,
            );
        }
        Some(Lie::ErrorText) => {
            let quoted = state.quoted.lock().unwrap().clone();
            let encoded: String = quoted
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b' ' => (b as char).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect();
            let hex: String = quoted.bytes().map(|b| format!("{b:02x}")).collect();
            let body = format!("denied: {quoted} / {encoded} / {hex}");
            let body = Body::Bytes(body.into_bytes());
            let len = body.len();
            return respond(&mut stream, 403, &[], &body, 0, len, None);
        }
        _ => {}
    }
    let path = request
        .path
        .strip_prefix("moved/")
        .unwrap_or(&request.path)
        .to_string();
    match method.as_str() {
        "GET" if request.query.contains_key("list-type") => {
            list(&mut stream, state, lie, &path, &request.query)
        }
        "GET" | "HEAD" => get(
            &mut stream,
            state,
            lie,
            &path,
            &request.seen,
            method == "HEAD",
        ),
        "PUT" => {
            state
                .objects
                .lock()
                .unwrap()
                .insert(path, Body::Bytes(request.body));
            respond(
                &mut stream,
                200,
                &[("ETag", "\"new\"".into())],
                &Body::Bytes(Vec::new()),
                0,
                0,
                None,
            )
        }
        "DELETE" => {
            state.objects.lock().unwrap().remove(&path);
            respond(&mut stream, 204, &[], &Body::Bytes(Vec::new()), 0, 0, None)
        }
        "POST" if request.query.contains_key("delete") => {
            let text = String::from_utf8_lossy(&request.body).into_owned();
            let bucket = path.trim_end_matches('/');
            let mut deleted = String::new();
            for part in text.split("<Key>").skip(1) {
                let key = unescape(part.split("</Key>").next().unwrap_or(""));
                state
                    .objects
                    .lock()
                    .unwrap()
                    .remove(&format!("{bucket}/{key}"));
                deleted.push_str(&format!("<Deleted><Key>{}</Key></Deleted>", escape(&key)));
            }
            let body = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult>{deleted}</DeleteResult>");
            let body = Body::Bytes(body.into_bytes());
            let len = body.len();
            respond(&mut stream, 200, &[], &body, 0, len, None)
        }
        _ => respond(&mut stream, 405, &[], &Body::Bytes(Vec::new()), 0, 0, None),
    }
}

fn redirect(stream: &mut TcpStream, status: u16, location: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes())
}

/// A GET or HEAD of an object, with `Range` honoured unless the lie says otherwise.
fn get(
    stream: &mut TcpStream,
    state: &State,
    lie: Option<Lie>,
    path: &str,
    seen: &Seen,
    head: bool,
) -> std::io::Result<()> {
    let Some(body) = state.objects.lock().unwrap().get(path).cloned() else {
        let text = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>";
        let body = Body::Bytes(if head { Vec::new() } else { text.to_vec() });
        let len = body.len();
        return respond(stream, 404, &[], &body, 0, len, None);
    };
    let size = body.len();
    let range = seen
        .header("range")
        .filter(|_| !head)
        .and_then(|r| parse_range(r, size));
    let drip = lie == Some(Lie::Drip);
    let short = lie == Some(Lie::ShortBody);
    match range {
        Some((start, end)) if lie != Some(Lie::IgnoreRange) => {
            let (shown_start, shown_end) = if lie == Some(Lie::WrongContentRange) {
                (start + 1, end + 1)
            } else {
                (start, end)
            };
            let send_end = if lie == Some(Lie::LongRange) {
                size
            } else {
                end
            };
            let content_range = format!("bytes {shown_start}-{}/{size}", shown_end - 1);
            let headers = [("Content-Range", content_range)];
            let announced = send_end - start;
            let cut = short.then_some(announced / 2);
            respond_full(stream, 206, &headers, &body, start, announced, cut, drip)
        }
        _ => {
            let cut = short.then_some(size / 2);
            if head {
                respond_head(stream, size)
            } else {
                respond_full(stream, 200, &[], &body, 0, size, cut, drip)
            }
        }
    }
}

/// The `[start, end)` of a `Range: bytes=…` header against an object of `size` bytes.
fn parse_range(header: &str, size: u64) -> Option<(u64, u64)> {
    let spec = header.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        return Some((size.saturating_sub(n), size));
    }
    let start: u64 = a.parse().ok()?;
    let end = if b.is_empty() {
        size
    } else {
        (b.parse::<u64>().ok()? + 1).min(size)
    };
    (start < end).then_some((start, end))
}

fn respond_head(stream: &mut TcpStream, size: u64) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nETag: \"e\"\r\n\
         Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes())
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    body: &Body,
    start: u64,
    len: u64,
    cut: Option<u64>,
) -> std::io::Result<()> {
    respond_full(stream, status, headers, body, start, len, cut, false)
}

/// Sends `len` bytes of `body` from `start` (announced in full; only `cut` of them when
/// given), one byte every 100 ms when `drip`.
#[allow(clippy::too_many_arguments)]
fn respond_full(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    body: &Body,
    start: u64,
    len: u64,
    cut: Option<u64>,
    drip: bool,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {len}\r\nETag: \"e\"\r\n\
         Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\nConnection: close\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    let send = cut.unwrap_or(len);
    let mut at = 0;
    let mut chunk = Vec::with_capacity(64 << 10);
    while at < send {
        let n = if drip { 1 } else { (send - at).min(64 << 10) };
        chunk.clear();
        match body {
            Body::Bytes(b) => {
                chunk.extend_from_slice(&b[(start + at) as usize..(start + at + n) as usize])
            }
            Body::Lazy(_) => {
                let from = ((start + at) % 251) as usize;
                chunk.extend_from_slice(&generated()[from..from + n as usize]);
            }
        }
        stream.write_all(&chunk)?;
        at += n;
        if drip {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    stream.flush()
}

/// A ListObjectsV2 page, honest or as the lie says.
fn list(
    stream: &mut TcpStream,
    state: &State,
    lie: Option<Lie>,
    bucket: &str,
    query: &BTreeMap<String, String>,
) -> std::io::Result<()> {
    let prefix = query.get("prefix").cloned().unwrap_or_default();
    let delimiter = query.get("delimiter").is_some_and(|d| d == "/");
    let max_keys: usize = query
        .get("max-keys")
        .and_then(|m| m.parse().ok())
        .unwrap_or(1000)
        .clamp(1, 1000);
    let token = query.get("continuation-token").cloned();
    let after = query.get("start-after").cloned();
    let page_no: u64 = token
        .as_deref()
        .and_then(|t| t.strip_prefix('t'))
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let (keys, prefixes, next): (Vec<(String, u64)>, Vec<String>, Option<String>) = match lie {
        Some(Lie::SameToken) => (fake_keys(&prefix, 0), Vec::new(), Some("same".into())),
        Some(Lie::SameTokenNewKeys) => {
            let page = state.pages.fetch_add(1, Ordering::SeqCst);
            (fake_keys(&prefix, page), Vec::new(), Some("same".into()))
        }
        Some(Lie::NewTokensSameKeys) => (
            fake_keys(&prefix, 0),
            Vec::new(),
            Some(format!("t{}", page_no + 1)),
        ),
        Some(Lie::EndlessKeys) => (
            fake_keys(&prefix, page_no),
            Vec::new(),
            Some(format!("t{}", page_no + 1)),
        ),
        Some(Lie::EmptyPages) => (Vec::new(), Vec::new(), Some(format!("t{}", page_no + 1))),
        _ => honest_page(
            state,
            bucket,
            &prefix,
            delimiter,
            max_keys,
            token.as_deref(),
            after.as_deref(),
        ),
    };
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult><Name>{bucket}</Name>\
         <Prefix>{}</Prefix><KeyCount>{}</KeyCount><MaxKeys>{max_keys}</MaxKeys><IsTruncated>{}</IsTruncated>",
        escape(&prefix),
        keys.len() + prefixes.len(),
        next.is_some()
    );
    if let Some(next) = &next {
        xml.push_str(&format!(
            "<NextContinuationToken>{next}</NextContinuationToken>"
        ));
    }
    for (key, size) in &keys {
        xml.push_str(&format!(
            "<Contents><Key>{}</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>\
             <ETag>\"e\"</ETag><Size>{size}</Size><StorageClass>STANDARD</StorageClass></Contents>",
            escape(key)
        ));
    }
    for p in &prefixes {
        xml.push_str(&format!(
            "<CommonPrefixes><Prefix>{}</Prefix></CommonPrefixes>",
            escape(p)
        ));
    }
    xml.push_str("</ListBucketResult>");
    let body = Body::Bytes(xml.into_bytes());
    let len = body.len();
    respond(stream, 200, &[], &body, 0, len, None)
}

/// 1000 keys of page `page` below `prefix`, larger than those of every earlier page.
fn fake_keys(prefix: &str, page: u64) -> Vec<(String, u64)> {
    (0..1000)
        .map(|i| (format!("{prefix}k{page:08}-{i:04}"), 1))
        .collect()
}

/// An honest page: keys after the token's (or start-after) key, at most `max_keys` of
/// keys and prefixes.
fn honest_page(
    state: &State,
    bucket: &str,
    prefix: &str,
    delimiter: bool,
    max_keys: usize,
    token: Option<&str>,
    after: Option<&str>,
) -> (Vec<(String, u64)>, Vec<String>, Option<String>) {
    let objects = state.objects.lock().unwrap();
    let start = token
        .map(decode_token)
        .or(after.map(str::to_string))
        .unwrap_or_default();
    let mut keys = Vec::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut last = String::new();
    let mut more = false;
    let full_prefix = format!("{bucket}/{prefix}");
    for (path, body) in objects.range(format!("{bucket}/")..) {
        let Some(key) = path.strip_prefix(&format!("{bucket}/")) else {
            break;
        };
        if !path.starts_with(&full_prefix) || key <= start.as_str() {
            continue;
        }
        let grouped = delimiter
            .then(|| {
                key[prefix.len()..]
                    .find('/')
                    .map(|i| key[..prefix.len() + i + 1].to_string())
            })
            .flatten();
        if let Some(group) = &grouped {
            if prefixes.last() == Some(group) || group.as_str() <= start.as_str() {
                continue;
            }
        }
        if keys.len() + prefixes.len() == max_keys {
            more = true;
            break;
        }
        match grouped {
            Some(group) => {
                last = format!("{group}\u{10FFFF}");
                prefixes.push(group);
            }
            None => {
                last = key.to_string();
                keys.push((key.to_string(), body.len()));
            }
        }
    }
    (keys, prefixes, more.then(|| encode_token(&last)))
}

/// A continuation token holding the last key listed (hex, so that it needs no escaping).
fn encode_token(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_token(token: &str) -> String {
    let bytes: Vec<u8> = (0..token.len() / 2)
        .filter_map(|i| u8::from_str_radix(&token[2 * i..2 * i + 2], 16).ok())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `text`'s bytes in hexadecimal separated by spaces (as S3's `CanonicalRequestBytes`).
fn hex_spaced(text: &str) -> String {
    text.bytes()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
