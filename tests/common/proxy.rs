//! A proxy on loopback in front of a server: it forwards one request per connection,
//! records each (method, target, `Range` header), counts requests in flight, can delay
//! every request, and breaks the requests that match a rule (an error status, a dropped
//! connection, a body cut short) the number of times the rule says.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the proxy does to a request that matches a rule.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// Answers with this status and an S3-style error body (code, message).
    Status(u16, &'static str),
    /// Reads the request and closes the connection without an answer.
    Drop,
    /// Forwards the request, then sends the answer's head and half its body and closes.
    CutBody,
    /// Reads half the request's body and closes the connection (a server dying during an
    /// upload).
    CutUpload,
}

/// A request as the proxy saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `GET`, `PUT`, ...
    pub method: String,
    /// The path and query.
    pub target: String,
    /// The `Range` header, if any.
    pub range: Option<String>,
}

struct Rule {
    method: &'static str,
    target: String,
    fault: Fault,
    times: usize,
}

#[derive(Default)]
struct State {
    rules: Mutex<Vec<Rule>>,
    seen: Mutex<Vec<Seen>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    delay_ms: AtomicUsize,
}

/// The proxy; it runs until the process ends.
pub struct Proxy {
    /// Its loopback port.
    pub port: u16,
    state: Arc<State>,
}

impl Proxy {
    /// Starts a proxy forwarding to the server on loopback port `upstream`.
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let shared = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let state = shared.clone();
                std::thread::spawn(move || serve(client, upstream, &state));
            }
        });
        Proxy { port, state }
    }

    /// Breaks the next `times` requests whose method is `method` and whose target
    /// contains `target` with `fault`.
    pub fn fail(&self, method: &'static str, target: &str, fault: Fault, times: usize) {
        self.state.rules.lock().unwrap().push(Rule {
            method,
            target: target.to_string(),
            fault,
            times,
        });
    }

    /// Drops every rule: requests pass again.
    pub fn heal(&self) {
        self.state.rules.lock().unwrap().clear();
    }

    /// Delays every request by `delay` before forwarding it.
    pub fn set_delay(&self, delay: Duration) {
        self.state
            .delay_ms
            .store(delay.as_millis() as usize, Ordering::SeqCst);
    }

    /// The requests seen since the last call, and the most that were in flight at once.
    pub fn take(&self) -> (Vec<Seen>, usize) {
        let seen = std::mem::take(&mut *self.state.seen.lock().unwrap());
        (seen, self.state.max_in_flight.swap(0, Ordering::SeqCst))
    }
}

/// Serves one request of `client`.
fn serve(mut client: TcpStream, upstream: u16, state: &State) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut head = Vec::new();
    let mut length = 0usize;
    let mut range = None;
    let mut request_line = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let lower = line.to_ascii_lowercase();
        if request_line.is_empty() {
            request_line = line.trim_end().to_string();
        }
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("range:") {
            range = Some(line["range:".len()..].trim().to_string());
        }
        if lower.starts_with("connection:") {
            continue;
        }
        if line == "\r\n" {
            head.extend_from_slice(b"Connection: close\r\n\r\n");
            break;
        }
        head.extend_from_slice(line.as_bytes());
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let fault = {
        let mut rules = state.rules.lock().unwrap();
        rules
            .iter_mut()
            .find(|r| r.times > 0 && r.method == method && target.contains(&r.target))
            .map(|r| {
                r.times -= 1;
                r.fault
            })
    };
    let mut body = vec![0u8; length];
    if let Some(Fault::CutUpload) = fault {
        body.truncate(length / 2);
        let _ = reader.read_exact(&mut body);
        let _ = client.shutdown(Shutdown::Both);
        return;
    }
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    state.seen.lock().unwrap().push(Seen {
        method,
        target,
        range,
    });
    let delay = state.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        std::thread::sleep(Duration::from_millis(delay as u64));
    }
    // The answer is made first and the request counted out of flight before it is sent:
    // the client may send its next request as soon as it has the answer.
    let answer = match fault {
        Some(Fault::Status(status, code)) => {
            let text = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>\
                 <Message>injected by the test proxy</Message></Error>"
            );
            format!(
                "HTTP/1.1 {status} {code}\r\nContent-Type: application/xml\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            )
            .into_bytes()
        }
        Some(Fault::Drop) => Vec::new(),
        None | Some(Fault::CutBody | Fault::CutUpload) => {
            let mut answer = Vec::new();
            if let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)) {
                let _ = server.write_all(&head);
                let _ = server.write_all(&body);
                let _ = server.read_to_end(&mut answer);
            }
            if matches!(fault, Some(Fault::CutBody)) {
                let split = answer
                    .windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map_or(0, |at| at + 4);
                let keep = split + (answer.len() - split) / 2;
                answer.truncate(keep);
            }
            answer
        }
    };
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let _ = client.write_all(&answer);
    let _ = client.shutdown(Shutdown::Both);
}
