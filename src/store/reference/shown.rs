//! How the reference store's messages show text taken from a reference file or its
//! options: bounded in length, and URLs without the parts that may hold credentials.

use std::borrow::Cow;

/// The most characters of one value that a message shows.
const MAX_SHOWN_CHARS: usize = 200;

/// `text` quoted as a message shows it: see [`clipped`].
pub fn shown(text: &str) -> String {
    let (head, cut) = cut(text);
    format!("{head:?}{}", if cut { "…" } else { "" })
}

/// `text` (JSON, say) as a message shows it unquoted: its first [`MAX_SHOWN_CHARS`]
/// characters, and `…` when there are more.
pub fn clipped(text: &str) -> Cow<'_, str> {
    match cut(text) {
        (head, true) => format!("{head}…").into(),
        (head, false) => head.into(),
    }
}

/// The first [`MAX_SHOWN_CHARS`] characters of `text`, and whether there are more.
fn cut(text: &str) -> (&str, bool) {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        None => (text, false),
        Some((end, _)) => (&text[..end], true),
    }
}

/// The URL or path `url` quoted as a message shows it (see [`shown`]): a URL without user
/// information, query and fragment, which may hold a password, a token or a signature.
pub fn shown_url(url: &str) -> String {
    shown(&without_secrets(url))
}

/// `url` without user information, query and fragment. Text that has no scheme and no
/// `host:` part (a local path) is kept whole; a scheme that is not one gives only `…`.
fn without_secrets(url: &str) -> Cow<'_, str> {
    let (scheme, rest) = match url.split_once("://") {
        Some(parts) => parts,
        None => match url.split_once(':') {
            // A local path, or a Windows drive letter.
            None => return url.into(),
            Some((before, _)) if before.contains('/') || before.len() == 1 => return url.into(),
            Some(parts) => parts,
        },
    };
    let is_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | ':'));
    if !is_scheme {
        return "…".into();
    }
    // Everything up to the last '@' may be user information, even where the password
    // holds an unencoded '/', '?' or '#'.
    let rest = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let separator = if url.contains("://") { "://" } else { ":" };
    format!("{scheme}{separator}{rest}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        for (url, expected) in [
            ("https://u:TOKEN@h/{{nope}}?sig=S", "\"https://h/{{nope}}\""),
            (
                "https://user:pw@host/a/b?X-Amz-Signature=s#f",
                "\"https://host/a/b\"",
            ),
            ("https://u:p/w?x#y@host/k", "\"https://host/k\""),
            ("file://user:pw@host/x", "\"file://host/x\""),
            ("s3://bucket/key", "\"s3://bucket/key\""),
            ("simplecache::s3://u:p@b/k?v=1", "\"simplecache::s3://b/k\""),
            ("ssh:u:pw@host/x", "\"ssh:host/x\""),
            ("/data/a@b/c?.nc", "\"/data/a@b/c?.nc\""),
            ("u:p@h/x://y", "\"…\""),
        ] {
            assert_eq!(shown_url(url), expected, "{url}");
        }
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        let long = "é".repeat(1 << 20);
        let got = shown(&long);
        assert_eq!(got, format!("{:?}…", "é".repeat(MAX_SHOWN_CHARS)));
        assert_eq!(shown("short"), "\"short\"");
        assert_eq!(clipped("[1]"), "[1]");
        assert_eq!(
            clipped(&"7".repeat(1000)),
            format!("{}…", "7".repeat(MAX_SHOWN_CHARS))
        );
        let url = format!("https://h/{}?sig=S", "p".repeat(1000));
        assert!(shown_url(&url).len() < 250 && !shown_url(&url).contains("sig"));
    }
}
