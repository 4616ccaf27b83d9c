//! `zarrtool log`: the history of an Icechunk repository (`icechunk:///PATH`, `?branch=`,
//! `?tag=`, `?snapshot=`).

use crate::nodes::open;
use crate::out::{self, Out};
use zarr::store::{repository::history_json, repository_of};
use zarr::Result;

/// Prints the history of the snapshot `url` reads, newest first: per snapshot a line with
/// its id, time and message (the message's line breaks as spaces), or, with `json`, the
/// history as a JSON array of `{"id", "parent", "time", "message"}`.
pub fn run(url: &str, json: bool) -> Result<u8> {
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
