//! Masking of secrets in the messages of object stores.
//!
//! Messages of `object_store` quote request URLs and the bodies of error answers. Before
//! such text reaches an error of the library, [`redact`]:
//! - cuts an error body down to its `Code` and `Message` elements (S3, Azure and GCS XML,
//!   GCS JSON `message`), at most [`BODY_LIMIT`] bytes each, or to the first line of its
//!   text outside markup, at most [`BODY_LIMIT`] bytes, when it has neither: S3's
//!   `SignatureDoesNotMatch` body holds the canonical request and string to sign, the
//!   session token among them;
//! - masks the user information (`user:password@`) and every query parameter value of
//!   every URL (but `branch`, `tag` and `snapshot` of Icechunk URLs, which name places
//!   in a repository's history);
//! - masks every known secret as written, percent-encoded and in hexadecimal;
//! - masks the values of signing parameters written outside URLs.

/// The most bytes kept of each part of a server's error body.
const BODY_LIMIT: usize = 256;

/// What replaces a masked value.
const MASK: &str = "***";

/// `message` with secrets masked (see the module's description); `secrets` are values
/// that must never appear.
pub(super) fn redact(message: &str, secrets: &[String]) -> String {
    let mut text = filter_body(message);
    text = mask_urls(&text);
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        for form in encodings(secret) {
            text = text.replace(form.as_str(), MASK);
        }
    }
    mask_signing_parameters(&text)
}

/// The forms in which `secret` may appear in a message.
fn encodings(secret: &str) -> Vec<String> {
    let percent: String = ::url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
    let strict: String = secret
        .bytes()
        .map(|b| match b.is_ascii_alphanumeric() {
            true => (b as char).to_string(),
            false => format!("%{b:02X}"),
        })
        .collect();
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    let spaced: Vec<String> = secret.bytes().map(|b| format!("{b:02x}")).collect();
    vec![
        secret.to_string(),
        percent.replace('+', "%20"),
        percent_lower(&percent),
        percent,
        percent_lower(&strict),
        strict,
        hex.clone(),
        hex.to_ascii_uppercase(),
        spaced.join(" "),
        spaced.join(" ").to_ascii_uppercase(),
    ]
}

/// `text` with the hexadecimal digits of its `%XX` escapes in lower case.
fn percent_lower(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut escape = 0;
    for c in text.chars() {
        if c == '%' {
            escape = 2;
            out.push(c);
        } else if escape > 0 {
            escape -= 1;
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The first `limit` bytes of `text` (cut at a character boundary).
fn bounded(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `message` with the error body it quotes (after `object_store`'s "status code: NNN
/// Reason: " or "error response: ") reduced to what [`summary`] keeps.
fn filter_body(message: &str) -> String {
    let start = if let Some(i) = message.find("status code: ") {
        let after = i + "status code: ".len();
        message[after..].find(": ").map(|j| after + j + 2)
    } else {
        message
            .find("error response: ")
            .map(|i| i + "error response: ".len())
    };
    match start {
        Some(start) if start < message.len() => {
            format!("{}{}", &message[..start], summary(&message[start..]))
        }
        _ => message.to_string(),
    }
}

/// What is kept of a server's error body: its code and message.
fn summary(body: &str) -> String {
    let element = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let from = body.find(&open)? + open.len();
        let to = body[from..].find(&close).map_or(body.len(), |j| from + j);
        Some(bounded(body[from..to].trim(), BODY_LIMIT).to_string())
    };
    let code = element("Code");
    let message = element("Message");
    if code.is_some() || message.is_some() {
        return [code, message]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ");
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .and_then(|m| m.as_str());
        return bounded(message.unwrap_or(""), BODY_LIMIT).to_string();
    }
    bounded(first_text_line(body), BODY_LIMIT).to_string()
}

/// The first line of `body` that holds text outside markup: web servers answer errors with
/// whole HTML pages, of which a message quotes only that line.
fn first_text_line(body: &str) -> &str {
    let mut rest = body;
    loop {
        let (text, after) = match rest.find('<') {
            Some(open) => (
                &rest[..open],
                rest[open..].find('>').map(|end| &rest[open + end + 1..]),
            ),
            None => (rest, None),
        };
        if let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
            return line;
        }
        match after {
            Some(after) => rest = after,
            None => return "",
        }
    }
}

/// Whether `c` ends a URL quoted in a message: white space and the quotes messages put
/// around one. Brackets, commas and parentheses do not: an IPv6 host is bracketed and a
/// password typed unescaped may hold any of them.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '<' | '>' | '`')
}

/// `message` with the user information and query values of every URL masked, but for
/// the values of `branch`, `tag` and `snapshot` in Icechunk URLs (names of the
/// repository's history, which messages must show).
pub(crate) fn mask_urls(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        let scheme_start = before[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |at| at + 1);
        let shown: &[&str] = match before[scheme_start..i].to_ascii_lowercase().as_str() {
            "icechunk" | "icechunk+s3" => &["branch", "tag", "snapshot"],
            _ => &[],
        };
        out.push_str(before);
        let end = after.find(ends_url).unwrap_or(after.len());
        out.push_str(&mask_url(&after[..end], shown));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The part of a URL after `scheme://` with its user information and query values masked
/// (but for the values of the parameters `shown`).
/// The user information is everything before the last `@`: a password typed unescaped may
/// hold `/`, `?`, `#` or another `@`, so at worst a path holding `@` is masked in part too.
fn mask_url(url: &str, shown: &[&str]) -> String {
    let (mut out, rest) = match url.rfind('@') {
        Some(at) => (format!("{MASK}@"), &url[at + 1..]),
        None => (String::new(), url),
    };
    match rest.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let masked: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _)) if shown.contains(&name) => pair.to_string(),
                    Some((name, _)) => format!("{name}={MASK}"),
                    None if pair.is_empty() => String::new(),
                    None => MASK.to_string(),
                })
                .collect();
            out.push_str(&masked.join("&"));
        }
        None => out.push_str(rest),
    }
    out
}

/// Masks the values of signing parameters written outside URLs (`X-Amz-Signature=…`).
fn mask_signing_parameters(message: &str) -> String {
    const NAMES: [&str; 10] = [
        "sig=",
        "signature=",
        "x-amz-credential=",
        "x-amz-security-token=",
        "x-goog-signature=",
        "x-goog-credential=",
        "access_token=",
        "token=",
        "key=",
        "password=",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        for name in NAMES {
            let at_word = !out.ends_with(|c: char| c.is_ascii_alphanumeric());
            if at_word
                && rest.len() >= name.len()
                && rest.is_char_boundary(name.len())
                && rest[..name.len()].eq_ignore_ascii_case(name)
            {
                out.push_str(&rest[..name.len()]);
                let value_end = rest[name.len()..]
                    .find(|c: char| c == '&' || ends_url(c))
                    .map_or(rest.len(), |i| i + name.len());
                if value_end > name.len() && !rest[name.len()..value_end].starts_with(MASK) {
                    out.push_str(MASK);
                } else {
                    out.push_str(&rest[name.len()..value_end]);
                }
                rest = &rest[value_end..];
                continue 'scan;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_user_information_and_query_values() {
        let m = redact(
            "GET https://u:PW@h:1/b/k?X-Goog-Signature=S1&key=K2&x-id=Get failed",
            &[],
        );
        assert_eq!(
            m,
            "GET https://***@h:1/b/k?X-Goog-Signature=***&key=***&x-id=*** failed"
        );
    }

    /// Passwords typed unescaped (with `/`, `?`, `#`, `,`, `)`, `'`, `@`), IPv6 hosts and
    /// URLs inside brackets or quotes: no secret survives.
    #[test]
    fn urls_of_every_shape_lose_their_secrets() {
        for (message, secrets) in [
            (
                "malformed URL \"https://u:pa/ss@host/data\": x",
                &["pa/ss"][..],
            ),
            ("https://u:p?w#d@host/k failed", &["p?w#d"]),
            ("(https://u:p,w)d'e@host/k)", &["p,w)d'e"]),
            ("https://u:a@b@host/k", &["a@b"]),
            (
                "GET http://[::1]:8080/d?auth=S3CRET&code=C0DE: 500",
                &["S3CRET", "C0DE"],
            ),
            ("GET http://u:PW@[::1]:80/d?x=Y7", &["PW", "Y7"]),
            ("<https://h/k?token=T0K>", &["T0K"]),
        ] {
            let m = redact(message, &[]);
            for secret in secrets {
                assert!(!m.contains(secret), "{message} -> {m}");
            }
        }
        assert_eq!(
            redact("GET http://[::1]:8080/d?auth=S&x=1 failed", &[]),
            "GET http://[::1]:8080/d?auth=***&x=*** failed"
        );
    }

    #[test]
    fn error_bodies_keep_code_and_message() {
        let body = "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>\
                    <Message>no match</Message><StringToSign>AWS4 TOKEN</StringToSign>\
                    <CanonicalRequest>GET / x-amz-security-token:TOKEN</CanonicalRequest></Error>";
        let m = redact(
            &format!("Error performing GET http://h/k - Server returned non-2xx status code: 403 Forbidden: {body}"),
            &[],
        );
        assert!(
            m.ends_with("403 Forbidden: SignatureDoesNotMatch: no match"),
            "{m}"
        );
    }

    #[test]
    fn error_pages_keep_their_first_line_of_text() {
        let page = "<!DOCTYPE HTML>\n<html lang=\"en\">\n<head>\n<title>Error response</title>\n\
                    </head>\n<body><p>Message: Unsupported method ('PROPFIND').</p>\n</body>";
        let m = redact(
            &format!("Error performing PROPFIND http://h/d - Server returned non-2xx status code: 501 Not Implemented: {page}"),
            &[],
        );
        assert_eq!(
            m,
            "Error performing PROPFIND http://h/d - Server returned non-2xx status code: \
             501 Not Implemented: Error response"
        );
        let long = format!("first line {}\nsecond line", "x".repeat(400));
        assert_eq!(
            summary(&long),
            format!("first line {}", "x".repeat(BODY_LIMIT - 11))
        );
        assert_eq!(summary("<p></p>\n \n"), "");
    }

    #[test]
    fn secrets_are_masked_in_every_encoding() {
        let secret = "a/b+c=d".to_string();
        for form in encodings(&secret) {
            let m = redact(&format!("x {form} y"), std::slice::from_ref(&secret));
            assert_eq!(m, "x *** y", "{form}");
        }
    }

    #[test]
    fn signing_parameters_outside_urls_are_masked() {
        assert_eq!(
            redact("sig=S&se=2; X-Amz-Signature=abc Signature=Q", &[]),
            "sig=***&se=2; X-Amz-Signature=*** Signature=***"
        );
    }
}
