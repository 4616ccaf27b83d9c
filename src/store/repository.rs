//! Stores with a history: commits of everything written since the last one, branches and
//! tags (Icechunk repositories: `IcechunkStore`, with the `icechunk` feature). Other stores
//! have none: [`repository_of`] refuses them with [`Error::Unsupported`].

use super::Store;
use crate::error::{Error, Result};

/// One snapshot of a repository's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The snapshot's id.
    pub id: String,
    /// The id of the snapshot it was committed on (`None` for the first).
    pub parent: Option<String>,
    /// When it was committed, RFC 3339 in UTC.
    pub time: String,
    /// The commit message.
    pub message: String,
}

/// The versioning calls of a store that keeps a history. Writes through the store are
/// uncommitted until [`Repository::commit`]: readers of the repository see none of them.
pub trait Repository: Send + Sync {
    /// Commits everything written since the last commit (or the opening) atomically, with
    /// `message`, and returns the new snapshot's id. [`Error::Conflict`] when another
    /// writer committed on the branch meanwhile (nothing is committed: [`Repository::rebase`]
    /// and commit again); [`Error::InvalidArg`] when nothing was written.
    fn commit(&self, message: &str) -> Result<String>;
    /// Drops everything written since the last commit.
    fn discard(&self) -> Result<()>;
    /// Moves the uncommitted changes onto the branch's newest snapshot, when the commits
    /// made there meanwhile touched nothing they touch; [`Error::Conflict`] (naming what
    /// overlaps) otherwise, the changes kept as they were.
    fn rebase(&self) -> Result<()>;
    /// Creates the tag `name` at the current snapshot (the last commit, or the snapshot
    /// opened); tags never move.
    fn create_tag(&self, name: &str) -> Result<()>;
    /// Creates the branch `name` at the current snapshot.
    fn create_branch(&self, name: &str) -> Result<()>;
    /// The id of the current snapshot.
    fn snapshot_id(&self) -> Result<String>;
    /// The snapshots from the current one back to the first, newest first.
    fn history(&self) -> Result<Vec<Snapshot>>;
    /// Everything written since the last commit, serialized for
    /// [`Repository::merge_changes`] of another store of the repository (the written
    /// chunks themselves are already in the repository; the bytes name them). The changes
    /// stay here too. The bytes also hold the repository's storage settings, with S3
    /// keys given as options overwritten by `*` (a merge uses the merging store's own), and
    /// on local disk the repository's absolute path.
    /// [`Error::ReadOnly`] when the store cannot write.
    fn export_changes(&self) -> Result<Vec<u8>>;
    /// Adds the changes another store exported to this store's uncommitted changes, so one
    /// commit here holds both. Both stores must be on the same snapshot
    /// ([`Error::Conflict`] otherwise); two stores creating or changing the same array or
    /// group differently are [`Error::Conflict`] too; of a stored object (a chunk, or a
    /// whole shard) both wrote, the merged one wins. Bytes that are no exported changes, a
    /// store still at the repository's first snapshot (the same in every repository), and
    /// chunks that are not of an array this store has (or the changes create), with as many
    /// indices as its dimensions, inside its grid, are [`Error::InvalidArg`] naming the
    /// array and the chunk. On any error nothing changes.
    fn merge_changes(&self, changes: &[u8]) -> Result<()>;
    /// Makes the chunk at `key` (`ARRAY/c/0/1`) a virtual chunk: `length` bytes at
    /// `offset` of the file `location` (an absolute path or `file:///` URL), read from there
    /// whenever the chunk is read, never copied. The file must lie beneath a directory of
    /// the store's option `virtual_chunk_containers` (which a writable store declares in
    /// the repository's configuration), and exist with at least `offset + length` bytes;
    /// else [`Error::InvalidArg`] naming it. Uncommitted until [`Repository::commit`], as
    /// any write.
    fn set_virtual_ref(&self, key: &str, location: &str, offset: u64, length: u64) -> Result<()>;
}

/// `store`'s versioning calls, or [`Error::Unsupported`] when it keeps no history.
pub fn repository_of(store: &dyn Store) -> Result<&dyn Repository> {
    store.repository().ok_or_else(|| {
        Error::Unsupported(
            "this store is not an Icechunk repository: it has no commits, branches or tags".into(),
        )
    })
}

/// `history` as a JSON array of objects `{"id", "parent", "time", "message"}` (`parent` is
/// null for the first snapshot), newest first.
pub fn history_json(history: &[Snapshot]) -> String {
    let items: Vec<serde_json::Value> = history
        .iter()
        .map(|s| {
            serde_json::json!({
                "id": s.id,
                "parent": s.parent,
                "time": s.time,
                "message": s.message,
            })
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_json_newest_first() {
        let history = [
            Snapshot {
                id: "B".into(),
                parent: Some("A".into()),
                time: "2026-01-01T00:00:01Z".into(),
                message: "step \"1\"".into(),
            },
            Snapshot {
                id: "A".into(),
                parent: None,
                time: "2026-01-01T00:00:00Z".into(),
                message: "first".into(),
            },
        ];
        assert_eq!(
            history_json(&history),
            r#"[{"id":"B","parent":"A","time":"2026-01-01T00:00:01Z","message":"step \"1\""},{"id":"A","parent":null,"time":"2026-01-01T00:00:00Z","message":"first"}]"#
        );
    }

    #[test]
    fn plain_stores_have_no_history() {
        let store = crate::store::MemoryStore::new();
        assert!(matches!(repository_of(&store), Err(Error::Unsupported(_))));
    }
}
