//! Listings of S3, GCS and Azure, page by page, bounded against hostile servers.
//!
//! The three services list keys in key order. A page whose keys do not come strictly after
//! those of the pages before, a continuation token equal to the one just used, or more than
//! [`MAX_EMPTY_PAGES`] empty pages in a row, are the server's misbehaviour and an error
//! naming it (a server that always answers "truncated" would otherwise be listed until the
//! deadline, collecting keys). A listing of more than the `max_list_keys` keys its store
//! allows, or of more than [`MAX_LIST_BYTES`] bytes of key text, is an error (never a
//! silently cut listing).
//!
//! A key that `object_store` refuses as a path (an empty segment as in `data//x`, `.` or
//! `..`) makes it refuse the whole page. Such a key can never be a key of this library, so
//! it is skipped: the page is asked again from the last key read, in ever smaller pages
//! (`max-keys`) until the one refused key is alone, which is then stepped over with the
//! services' start-after (`offset`).

use super::Failure;
use crate::error::Error;
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use std::borrow::Cow;
use std::sync::Arc;

/// The most bytes of key text one listing may hold.
const MAX_LIST_BYTES: usize = 1 << 30;

/// The most pages in a row without any key or prefix.
const MAX_EMPTY_PAGES: usize = 100;

/// Keys asked for in one page (the services' own largest page).
const PAGE: usize = 1000;

/// What a listing found: full object paths and, with a delimiter, common prefixes
/// (ending in `/`), each in key order.
#[derive(Debug, Default)]
pub(super) struct Listed {
    pub objects: Vec<String>,
    pub prefixes: Vec<String>,
}

/// Lists everything below `prefix` (`None`: the whole bucket; else ending in `/`), grouped
/// by `/` when `delimiter`; at most `max_keys` keys and prefixes. `label` names the place
/// in messages.
pub(super) async fn list(
    lister: Arc<dyn PaginatedListStore>,
    prefix: Option<String>,
    delimiter: bool,
    max_keys: usize,
    label: String,
) -> Result<Listed, Failure> {
    let fail = |what: String| Failure::Lib(Error::Io(format!("{label}: {what}")));
    let mut listed = Listed::default();
    let mut bytes = 0usize;
    let mut token: Option<String> = None;
    // After a refused key the listing goes on by start-after keys, not tokens.
    let mut after: Option<String> = None;
    let mut page = PAGE;
    let mut empty_pages = 0;
    loop {
        let options = PaginatedListOptions {
            delimiter: delimiter.then_some(Cow::Borrowed("/")),
            page_token: if after.is_none() { token.clone() } else { None },
            offset: after.clone(),
            // The services' own page size unless a refused key is being narrowed down.
            max_keys: (page < PAGE).then_some(page),
            ..PaginatedListOptions::default()
        };
        let answer = match lister.list_paginated(prefix.as_deref(), options).await {
            Ok(answer) => answer,
            Err(object_store::Error::InvalidPath { source }) => {
                let refused = match source {
                    object_store::path::Error::EmptySegment { path }
                    | object_store::path::Error::BadSegment { path, .. } => path,
                    other => return Err(Failure::Store(other.into())),
                };
                if page > 1 {
                    // Ask again from the last key read, for fewer keys.
                    after = Some(resume(&listed, &prefix));
                    page /= 2;
                } else if after.as_ref().is_some_and(|a| *a >= refused) {
                    return Err(fail(format!(
                        "the server listed {refused:?} again after it was stepped over: it \
                         does not honour start-after"
                    )));
                } else {
                    // The refused key is the next one: step over it (and, for a prefix,
                    // everything below it).
                    after = Some(past(&refused));
                }
                continue;
            }
            Err(e) => return Err(Failure::Store(e)),
        };
        let result = answer.result;
        let found = result.objects.len() + result.common_prefixes.len();
        empty_pages = if found == 0 { empty_pages + 1 } else { 0 };
        if empty_pages > MAX_EMPTY_PAGES {
            return Err(fail(format!(
                "the server answered {MAX_EMPTY_PAGES} listing pages in a row without any key \
                 and still says more follow"
            )));
        }
        let objects = result.objects.into_iter().map(|m| m.location.to_string());
        let prefixes = result.common_prefixes.into_iter().map(|p| format!("{p}/"));
        for (list, new) in [
            (&mut listed.objects, objects.collect::<Vec<_>>()),
            (&mut listed.prefixes, prefixes.collect::<Vec<_>>()),
        ] {
            for key in new {
                if list.last().is_some_and(|last| *last >= key) {
                    return Err(fail(format!(
                        "the server listed keys out of order or repeated them ({key:?} after \
                         {:?}): it is not listing in key order",
                        list.last().map(String::as_str).unwrap_or_default()
                    )));
                }
                bytes += key.len();
                list.push(key);
            }
        }
        let count = listed.objects.len() + listed.prefixes.len();
        if count > max_keys {
            return Err(fail(format!(
                "the listing holds more than {max_keys} keys (option max_list_keys)"
            )));
        }
        if bytes > MAX_LIST_BYTES {
            return Err(fail(format!(
                "the listing holds more than {MAX_LIST_BYTES} bytes of keys"
            )));
        }
        match answer.page_token {
            None => return Ok(listed),
            Some(_) if after.is_some() => {
                // Going on by start-after keys: the token is not needed.
                after = Some(resume(&listed, &prefix));
                page = (page * 2).min(PAGE);
            }
            Some(next) => {
                if token.as_ref() == Some(&next) {
                    return Err(fail(
                        "the server answered the same continuation token again: its listing \
                         never ends"
                            .into(),
                    ));
                }
                token = Some(next);
            }
        }
    }
}

/// The start-after key that follows everything read so far (the listing's prefix when
/// nothing was read).
fn resume(listed: &Listed, prefix: &Option<String>) -> String {
    let object = listed.objects.last().cloned();
    let dir = listed.prefixes.last().map(|p| past(p));
    object
        .max(dir)
        .or_else(|| prefix.clone())
        .unwrap_or_default()
}

/// A start-after key past `key` and, when it is a prefix (ends in `/`), past every key
/// below it.
fn past(key: &str) -> String {
    if key.ends_with('/') {
        format!("{key}{}", char::MAX)
    } else {
        key.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_resume_past_everything_read() {
        let prefix = Some("data/".to_string());
        let mut listed = Listed::default();
        assert_eq!(resume(&listed, &prefix), "data/");
        listed.objects.push("data/a".into());
        assert_eq!(resume(&listed, &prefix), "data/a");
        // A prefix read last is stepped over with everything below it.
        listed.prefixes.push("data/b/".into());
        assert_eq!(resume(&listed, &prefix), format!("data/b/{}", char::MAX));
        assert!(resume(&listed, &prefix).as_str() > "data/b/zzzz");
        assert!(resume(&listed, &prefix).as_str() < "data/c");
        assert_eq!(past("data//x"), "data//x");
    }
}
