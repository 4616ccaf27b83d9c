//! The repository commands, for Icechunk repositories (`icechunk:///PATH`, `?branch=`,
//! `?tag=`, `?snapshot=`): `log` (the history), `tag` and `branch` (new references at the
//! snapshot a URL reads), and the commit that ends `copy --commit`.

use crate::ops::open;
use crate::out::{self, Out};
use std::sync::Arc;
use zarr::store::{repository::history_json, repository_of, Store};
use zarr::Result;

/// Prints the history of the snapshot `url` reads, newest first: per snapshot a line with
/// its id, time and message (the message's line breaks as spaces), or, with `json`, the
/// history as a JSON array of `{"id", "parent", "time", "message"}`.
pub(crate) fn log(url: &str, json: bool) -> Result<u8> {
    let store = open(url, false)?;
    let history = repository_of(store.as_ref())?.history()?;
    if json {
        out::line(history_json(&history))?;
        return Ok(0);
    }
    let mut out = Out::new();
    for snapshot in &history {
        let message = snapshot.message.replace(['\r', '\n'], " ");
        out.line(format_args!(
            "{}  {}  {message}",
            snapshot.id, snapshot.time
        ))?;
    }
    out.finish()?;
    Ok(0)
}

/// Creates the tag `name` at the snapshot `url` reads and prints that snapshot's id.
pub(crate) fn tag(url: &str, name: &str) -> Result<u8> {
    let store = open(url, false)?;
    let repository = repository_of(store.as_ref())?;
    repository.create_tag(name)?;
    out::line(repository.snapshot_id()?)?;
    Ok(0)
}

/// Creates the branch `name` at the snapshot `url` reads and prints that snapshot's id.
pub(crate) fn branch(url: &str, name: &str) -> Result<u8> {
    let store = open(url, false)?;
    let repository = repository_of(store.as_ref())?;
    repository.create_branch(name)?;
    out::line(repository.snapshot_id()?)?;
    Ok(0)
}

/// Refuses `copy --commit` into a store that keeps no history, before anything is copied.
pub(crate) fn check_committable(target: &Arc<dyn Store>) -> Result<()> {
    repository_of(target.as_ref()).map(|_| ())
}

/// Commits what a copy wrote into `target` with `message`; returns the new snapshot's id.
pub(crate) fn commit(target: &Arc<dyn Store>, message: &str) -> Result<String> {
    repository_of(target.as_ref())?.commit(message)
}
