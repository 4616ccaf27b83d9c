//! Nodes of a hierarchy: arrays, the groups above them, and the open/create modes.

mod array;
mod builder;

pub use array::Array;
pub use builder::ArrayBuilder;

use crate::error::{Error, Result};
use crate::meta::v2::{self, ARRAY_KEY, GROUP_KEY};
use crate::store::{join_key, Store};

/// How a node is opened or created, as zarr-python's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Mode {
    /// `r`: read only; the node must exist.
    Read = 0,
    /// `r+`: read and write; the node must exist.
    ReadWrite = 1,
    /// `a`: read and write; created if missing.
    Append = 2,
    /// `w`: created, replacing whatever is at the path.
    Overwrite = 3,
    /// `w-`: created; fails if anything is at the path.
    CreateNew = 4,
}

impl Mode {
    /// The mode with integer value `code`, if any.
    pub fn from_code(code: i32) -> Option<Self> {
        [
            Mode::Read,
            Mode::ReadWrite,
            Mode::Append,
            Mode::Overwrite,
            Mode::CreateNew,
        ]
        .into_iter()
        .find(|m| *m as i32 == code)
    }

    /// zarr-python's spelling (`"r+"`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Read => "r",
            Mode::ReadWrite => "r+",
            Mode::Append => "a",
            Mode::Overwrite => "w",
            Mode::CreateNew => "w-",
        }
    }
}

/// Whether an array's metadata document is at `path`.
pub fn contains_array(store: &dyn Store, path: &str) -> Result<bool> {
    store.contains(&join_key(path, ARRAY_KEY))
}

/// Whether a group's metadata document is at `path`.
pub fn contains_group(store: &dyn Store, path: &str) -> Result<bool> {
    store.contains(&join_key(path, GROUP_KEY))
}

/// Creates the groups above `path` (the root included) that do not exist yet, as the v2
/// spec requires; an array in the way is an error.
pub fn ensure_parent_groups(store: &dyn Store, path: &str) -> Result<()> {
    let segments: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    for depth in 0..segments.len() {
        let parent = segments[..depth].join("/");
        if contains_array(store, &parent)? {
            return Err(Error::Exists(format!(
                "cannot create {path:?}: an array exists at {parent:?}"
            )));
        }
        if !contains_group(store, &parent)? {
            store.set(&join_key(&parent, GROUP_KEY), &v2::render_group())?;
        }
    }
    Ok(())
}
