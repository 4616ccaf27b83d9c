//! The read requests of object stores as futures, so that one call can wait for one of
//! them ([`super::CloudStore`]'s `Store` methods) or for a whole batch at once
//! (`fetch_many`). Each checks what the server answers against what was asked.

use super::{missing_or, version_of, Failure};
use crate::error::Error;
use crate::store::{too_large, Spares, Tail};
use futures_util::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, UpdateVersion};
use std::sync::Arc;

/// The result of a read request.
type Answer<T> = std::result::Result<T, Failure>;

/// The whole value at `path` (`label` in messages) read into `buf` when it holds at most
/// `max_len` bytes, with its version; `None`: the key does not exist.
pub(super) async fn whole(
    store: Arc<dyn ObjectStore>,
    path: Path,
    label: String,
    max_len: u64,
    mut buf: Vec<u8>,
    spares: Spares,
) -> Answer<(Option<UpdateVersion>, Vec<u8>)> {
    let got = match store.get_opts(&path, GetOptions::default()).await {
        Ok(got) => got,
        Err(e) => return missing_or(e).map(|_: Option<()>| (None, buf)),
    };
    let size = got.meta.size;
    let version = UpdateVersion {
        e_tag: got.meta.e_tag.clone(),
        version: got.meta.version.clone(),
    };
    if size > max_len {
        return Err(Failure::Lib(too_large(&label, size, max_len)));
    }
    buf.clear();
    let want = usize::try_from(size)
        .map_err(|_| Failure::Lib(crate::error::no_memory(usize::MAX, &label)))?;
    if buf.capacity() < want {
        buf = spares.take_or_new(want, &label).map_err(Failure::Lib)?;
    }
    let mut stream = got.into_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(Failure::Store)?;
        if (buf.len() + chunk.len()) as u64 > size {
            return Err(Failure::Lib(Error::Io(format!(
                "{label}: the server sent more than the {size} bytes it announced"
            ))));
        }
        buf.extend_from_slice(&chunk);
    }
    if buf.len() as u64 != size {
        return Err(Failure::Lib(Error::Io(format!(
            "{label}: truncated answer: {} of {size} bytes",
            buf.len()
        ))));
    }
    Ok((Some(version), buf))
}

/// The last `len` bytes of the value at `path` with one suffix-range request, its size
/// and version; `None`: the key does not exist.
pub(super) async fn tail(
    store: Arc<dyn ObjectStore>,
    path: Path,
    label: String,
    len: u64,
) -> Answer<Option<Tail>> {
    let options = GetOptions {
        range: Some(GetRange::Suffix(len)),
        ..GetOptions::default()
    };
    let got = match store.get_opts(&path, options).await {
        Ok(got) => got,
        Err(e) => return missing_or(e),
    };
    let size = got.meta.size;
    let range = got.range.clone();
    let version = version_of(got.meta.e_tag.clone(), got.meta.version.clone());
    let bytes = exactly(got, len, &label, &Spares::default()).await?;
    if size < len || bytes.len() as u64 != len || range.end != size {
        return Err(Failure::Lib(Error::Io(format!(
            "{label}: the last {len} bytes were asked of a value of {size} bytes \
             (answer: {} bytes)",
            bytes.len()
        ))));
    }
    Ok(Some(Tail {
        bytes,
        size,
        version,
    }))
}

/// What a range request found.
pub(super) enum Part {
    /// The bytes asked for.
    Bytes(Vec<u8>),
    /// The key does not exist.
    Missing,
    /// The object is not the version asked for (`If-Match` failed).
    Changed,
}

/// `len` (> 0) bytes from `offset` of the value at `path`, only from the object whose ETag
/// is `e_tag` when given.
pub(super) async fn range(
    store: Arc<dyn ObjectStore>,
    path: Path,
    label: String,
    offset: u64,
    len: u64,
    e_tag: Option<String>,
    spares: Spares,
) -> Answer<Part> {
    let end = offset
        .checked_add(len)
        .ok_or_else(|| Failure::Lib(Error::Overflow(format!("{label}: range {offset}+{len}"))))?;
    let options = GetOptions {
        range: Some(GetRange::Bounded(offset..end)),
        if_match: e_tag,
        ..GetOptions::default()
    };
    let got = match store.get_opts(&path, options).await {
        Ok(got) => got,
        Err(object_store::Error::Precondition { .. }) => return Ok(Part::Changed),
        Err(e @ object_store::Error::NotFound { .. }) => {
            return missing_or(e).map(|_: Option<()>| Part::Missing)
        }
        Err(e) => {
            // A 416 answer: the status as the client words it or the server's error code
            // (not a bare "416", which may be part of the URL's port or a request id).
            let text = e.to_string();
            if [
                "416 Range Not Satisfiable",
                "InvalidRange",
                "object was only",
            ]
            .iter()
            .any(|s| text.contains(s))
            {
                return Err(Failure::Lib(Error::Io(format!(
                    "{label}: range {offset}+{len} is past its end"
                ))));
            }
            return missing_or(e).map(|_: Option<()>| Part::Missing);
        }
    };
    let size = got.meta.size;
    let bytes = exactly(got, len, &label, &spares).await?;
    if bytes.len() as u64 != len {
        return Err(Failure::Lib(Error::Io(format!(
            "{label}: range {offset}+{len} is past its end ({size} bytes)"
        ))));
    }
    Ok(Part::Bytes(bytes))
}

/// The body of a range answer that should hold `len` bytes: fewer are returned as they
/// are (the caller names the shortfall), more are an error as soon as they arrive, so a
/// server sending more than asked costs no more memory than the room reserved for what was
/// asked. The bytes go to a buffer from `spares` ([`Spares::take_or_new`]).
async fn exactly(
    got: object_store::GetResult,
    len: u64,
    label: &str,
    spares: &Spares,
) -> Answer<Vec<u8>> {
    let want = usize::try_from(len)
        .map_err(|_| Failure::Lib(crate::error::no_memory(usize::MAX, label)))?;
    let mut kept = spares.take_or_new(want, label).map_err(Failure::Lib)?;
    let mut stream = got.into_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(Failure::Store)?;
        if (kept.len() + chunk.len()) as u64 > len {
            return Err(Failure::Lib(Error::Io(format!(
                "{label}: the server sent more than the {len} bytes asked"
            ))));
        }
        kept.extend_from_slice(&chunk);
    }
    Ok(kept)
}

/// Which bytes [`window`] keeps.
#[derive(Debug, Clone, Copy)]
pub(super) enum Window {
    /// `len` bytes from `offset`.
    Range(u64, u64),
    /// The last `len` bytes.
    Tail(u64),
}

/// The bytes of the value at `path` that `want` names, read from a whole-value answer (for
/// servers that ignore `Range` and answer 200 with everything), with the size the server
/// announced; `None`: the key does not exist. Only the wanted bytes are kept and the body
/// is dropped once they are read, so memory is bounded by what was asked whatever the
/// value's size (time by the request's deadline).
pub(super) async fn window(
    store: Arc<dyn ObjectStore>,
    path: Path,
    label: String,
    want: Window,
) -> Answer<Option<(u64, Vec<u8>)>> {
    let got = match store.get_opts(&path, GetOptions::default()).await {
        Ok(got) => got,
        Err(e) => return missing_or(e),
    };
    let size = got.meta.size;
    let (offset, len) = match want {
        Window::Range(offset, len) => (offset, len),
        Window::Tail(len) if len <= size => (size - len, len),
        Window::Tail(len) => {
            return Err(Failure::Lib(Error::Io(format!(
                "{label}: the last {len} bytes were asked of a value of {size} bytes"
            ))))
        }
    };
    let end = offset
        .checked_add(len)
        .filter(|&end| end <= size)
        .ok_or_else(|| {
            Failure::Lib(Error::Io(format!(
                "{label}: range {offset}+{len} is past its end ({size} bytes)"
            )))
        })?;
    let mut kept = Vec::new();
    let want_len = usize::try_from(len)
        .map_err(|_| Failure::Lib(crate::error::no_memory(usize::MAX, &label)))?;
    crate::error::try_reserve(&mut kept, want_len, &label).map_err(Failure::Lib)?;
    let mut at = 0u64;
    let mut stream = got.into_stream();
    while at < end {
        let Some(chunk) = stream.next().await else {
            return Err(Failure::Lib(Error::Io(format!(
                "{label}: truncated answer: {at} of {size} bytes"
            ))));
        };
        let chunk = chunk.map_err(Failure::Store)?;
        let chunk_end = at + chunk.len() as u64;
        if chunk_end > offset {
            let from = offset.saturating_sub(at) as usize;
            let to = (end.min(chunk_end) - at) as usize;
            kept.extend_from_slice(&chunk[from..to]);
        }
        at = chunk_end;
    }
    Ok(Some((size, kept)))
}
