//! Groups: open and create, members, nested paths, delete and move, attributes.

use super::attrs::Attributes;
use super::{
    check_parents, contains_array, contains_group, ensure_parent_groups, Array, ArrayBuilder, Mode,
    Node,
};
use crate::error::{Error, Result};
use crate::meta::v2::{self, ATTRS_KEY, GROUP_KEY};
use crate::store::{check_writable, join_key, node_path, node_prefix, Store};
use std::sync::Arc;

/// What kind of node is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum NodeKind {
    /// Nothing (or nothing Zarr recognises).
    None = 0,
    /// An array.
    Array = 1,
    /// A group.
    Group = 2,
}

/// The kind of node at `path`.
pub fn node_kind(store: &dyn Store, path: &str) -> Result<NodeKind> {
    Ok(if contains_array(store, path)? {
        NodeKind::Array
    } else if contains_group(store, path)? {
        NodeKind::Group
    } else {
        NodeKind::None
    })
}

/// A Zarr group in a store. Safe to share between threads.
#[derive(Debug)]
pub struct Group {
    store: Arc<dyn Store>,
    path: String,
    writable: bool,
    attrs: Attributes,
}

impl Group {
    /// Opens or creates the group at `path` as zarr-python's modes say: `r`/`r+` need it to
    /// exist, `a` creates it if missing, `w` replaces whatever is there, `w-` fails if
    /// anything is there. An array at `path` is an error in every mode but `w`.
    pub fn open(store: Arc<dyn Store>, path: &str, mode: Mode) -> Result<Self> {
        let path = node_path(path)?;
        let writable = mode != Mode::Read;
        if writable {
            check_writable(store.as_ref(), &format!("open group {path:?} for writing"))?;
        }
        check_parents(store.as_ref(), &path)?;
        let kind = node_kind(store.as_ref(), &path)?;
        match (mode, kind) {
            (Mode::Overwrite, _) => {
                store.erase_prefix(&node_prefix(&path))?;
                Self::create_at(store.as_ref(), &path)?;
            }
            (_, NodeKind::Array) => {
                return Err(Error::NodeType(format!(
                    "{path:?} is an array, not a group"
                )))
            }
            (Mode::CreateNew, NodeKind::Group) => {
                return Err(Error::Exists(format!("a group already exists at {path:?}")))
            }
            (Mode::CreateNew | Mode::Append, NodeKind::None) => {
                Self::create_at(store.as_ref(), &path)?
            }
            (Mode::Read | Mode::ReadWrite, NodeKind::None) => {
                return Err(Error::NotFound(format!("no group at {path:?}")))
            }
            (_, NodeKind::Group) => {
                let bytes = store.get(&join_key(&path, GROUP_KEY))?.unwrap_or_default();
                v2::parse_group(&bytes).map_err(|e| match e {
                    Error::Metadata(m) => {
                        let detail = m.strip_prefix(GROUP_KEY).unwrap_or(&m);
                        Error::Metadata(format!("{}{detail}", join_key(&path, GROUP_KEY)))
                    }
                    other => other,
                })?;
            }
        }
        Ok(Group {
            attrs: Attributes::new(&path, ATTRS_KEY),
            store,
            path,
            writable,
        })
    }

    fn create_at(store: &dyn Store, path: &str) -> Result<()> {
        ensure_parent_groups(store, path)?;
        store.set(&join_key(path, GROUP_KEY), &v2::render_group())
    }

    /// The path of a member given relative to this group (`"a/b"`); `.` and `..` are refused.
    pub fn member_path(&self, relative: &str) -> Result<String> {
        let relative = node_path(relative)?;
        if relative.is_empty() {
            return Err(Error::InvalidArg("a member path must not be empty".into()));
        }
        Ok(join_key(&self.path, &relative))
    }

    fn mode_for(&self, mode: Mode) -> Result<Mode> {
        if !self.writable && mode != Mode::Read {
            return Err(Error::ReadOnly(format!(
                "group {:?} was opened read-only: members open only with mode \"r\"",
                self.path
            )));
        }
        Ok(mode)
    }

    /// The kind of node at `relative`.
    pub fn contains(&self, relative: &str) -> Result<NodeKind> {
        node_kind(self.store.as_ref(), &self.member_path(relative)?)
    }

    /// The direct members (arrays and groups) with their kinds, sorted by name.
    pub fn members(&self) -> Result<Vec<(String, NodeKind)>> {
        let listing = self.store.list_dir(&node_prefix(&self.path))?;
        let mut members = Vec::new();
        for name in listing.prefixes {
            match node_kind(self.store.as_ref(), &join_key(&self.path, &name))? {
                NodeKind::None => {}
                kind => members.push((name, kind)),
            }
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(members)
    }

    /// Names of the direct members of one kind, sorted.
    pub fn member_names(&self, kind: NodeKind) -> Result<Vec<String>> {
        Ok(self
            .members()?
            .into_iter()
            .filter(|(_, k)| *k == kind)
            .map(|(name, _)| name)
            .collect())
    }

    /// Opens (or, by mode, creates) the group at `relative`.
    pub fn open_group(&self, relative: &str, mode: Mode) -> Result<Group> {
        Group::open(
            self.store.clone(),
            &self.member_path(relative)?,
            self.mode_for(mode)?,
        )
    }

    /// Opens the array at `relative` (`r`, `r+` or `a`).
    pub fn open_array(&self, relative: &str, mode: Mode) -> Result<Array> {
        Array::open(
            self.store.clone(),
            &self.member_path(relative)?,
            self.mode_for(mode)?,
        )
    }

    /// Creates an array at `relative` from `builder` (`w`, `w-` or `a`).
    pub fn create_array(
        &self,
        relative: &str,
        builder: &ArrayBuilder,
        mode: Mode,
    ) -> Result<Array> {
        self.check_writable("create an array")?;
        builder.create(self.store.clone(), &self.member_path(relative)?, mode)
    }

    /// Deletes the member at `relative` and everything under it.
    pub fn delete(&self, relative: &str) -> Result<()> {
        self.check_writable("delete a member")?;
        let path = self.member_path(relative)?;
        if node_kind(self.store.as_ref(), &path)? == NodeKind::None {
            return Err(Error::NotFound(format!("no member at {path:?}")));
        }
        self.store.erase_prefix(&node_prefix(&path))
    }

    /// Moves the member at `from` to `to` (both relative to this group), creating the groups
    /// above `to`. The destination must not exist. Keys are copied, then the source erased.
    pub fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.check_writable("move a member")?;
        let source = self.member_path(from)?;
        let target = self.member_path(to)?;
        if node_kind(self.store.as_ref(), &source)? == NodeKind::None {
            return Err(Error::NotFound(format!("no member at {source:?}")));
        }
        if node_kind(self.store.as_ref(), &target)? != NodeKind::None
            || !self.store.list_prefix(&node_prefix(&target))?.is_empty()
        {
            return Err(Error::Exists(format!(
                "something already exists at {target:?}"
            )));
        }
        if target.starts_with(&node_prefix(&source)) {
            return Err(Error::InvalidArg(format!(
                "cannot move {source:?} inside itself"
            )));
        }
        ensure_parent_groups(self.store.as_ref(), &target)?;
        let source_prefix = node_prefix(&source);
        for key in self.store.list_prefix(&source_prefix)? {
            let value = self
                .store
                .get(&key)?
                .ok_or_else(|| Error::Io(format!("{key:?} vanished while moving {source:?}")))?;
            self.store
                .set(&join_key(&target, &key[source_prefix.len()..]), &value)?;
        }
        self.store.erase_prefix(&source_prefix)
    }
}

impl Node for Group {
    fn path(&self) -> &str {
        &self.path
    }
    fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
    fn attrs(&self) -> &Attributes {
        &self.attrs
    }
    fn writable(&self) -> bool {
        self.writable
    }
}
