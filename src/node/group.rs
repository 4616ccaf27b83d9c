//! Groups: open and create, members, nested paths, delete and move, attributes.

use super::attrs::Attributes;
use super::{
    check_entry_point, check_parents, contains_array, contains_group, draft_scheme,
    ensure_parent_groups, erase_node, v3_node_type, write_group, Array, ArrayBuilder, Mode, Node,
};
use crate::error::{Error, Result};
use crate::meta::draft::{self, Kind};
use crate::meta::v2::{self, GROUP_KEY};
use crate::meta::Format;
use crate::store::{check_writable, get_document, join_key, node_path, node_prefix, Memo, Store};
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
    match v3_node_type(store, path)?.as_deref() {
        Some("array") => return Ok(NodeKind::Array),
        Some("group") => return Ok(NodeKind::Group),
        _ => {}
    }
    Ok(if contains_array(store, path)? {
        NodeKind::Array
    } else if contains_group(store, path)? {
        NodeKind::Group
    } else {
        NodeKind::None
    })
}

/// [`node_kind`] in a hierarchy of `format` that is not a 2022-draft one: its own
/// format's documents are looked for first, and the draft's entry point not at all.
fn node_kind_in(store: &dyn Store, format: Format, path: &str) -> Result<NodeKind> {
    let v2 = || -> Result<NodeKind> {
        Ok(if store.contains(&join_key(path, super::ARRAY_KEY))? {
            NodeKind::Array
        } else if store.contains(&join_key(path, super::GROUP_KEY))? {
            NodeKind::Group
        } else {
            NodeKind::None
        })
    };
    let v3 = || -> Result<NodeKind> {
        Ok(match v3_node_type(store, path)?.as_deref() {
            Some("array") => NodeKind::Array,
            Some("group") => NodeKind::Group,
            _ => NodeKind::None,
        })
    };
    let kind = match format.is_v3() {
        true => Some(v3()?)
            .filter(|k| *k != NodeKind::None)
            .map_or_else(v2, Ok)?,
        false => Some(v2()?)
            .filter(|k| *k != NodeKind::None)
            .map_or_else(v3, Ok)?,
    };
    if kind != NodeKind::None {
        return Ok(kind);
    }
    let v1_array = store.contains(&join_key(path, crate::meta::v1::ARRAY_KEY))?;
    Ok(if v1_array {
        NodeKind::Array
    } else {
        NodeKind::None
    })
}

/// The members of the draft group at `path`, sorted: `name.array.json` and
/// `name.group.json` documents below it, and prefixes (groups implied by descendants).
pub(crate) fn draft_children(
    store: &dyn Store,
    scheme: draft::Scheme,
    path: &str,
) -> Result<Vec<(String, NodeKind)>> {
    let listing = store.list_dir(&scheme.meta_dir(path))?;
    let mut members = std::collections::BTreeMap::new();
    for key in &listing.keys {
        if let Some(name) = key.strip_suffix(".array.json") {
            members.insert(name.to_string(), NodeKind::Array);
        } else if let Some(name) = key.strip_suffix(".group.json") {
            members.entry(name.to_string()).or_insert(NodeKind::Group);
        }
    }
    for name in listing.prefixes {
        members.entry(name).or_insert(NodeKind::Group);
    }
    // A document named `..array.json` would make a member `.`: only names that are valid
    // node path segments are members.
    Ok(members
        .into_iter()
        .filter(|(name, _)| !name.is_empty() && node_path(name).is_ok_and(|p| p == *name))
        .collect())
}

/// A Zarr group in a store. Safe to share between threads.
#[derive(Debug)]
pub struct Group {
    store: Arc<dyn Store>,
    path: String,
    writable: bool,
    attrs: Attributes,
    format: Format,
}

impl Group {
    /// Opens or creates the group at `path` as zarr-python's modes say: `r`/`r+` need it to
    /// exist, `a` creates it if missing, `w` replaces whatever is there, `w-` fails if
    /// anything is there. An array at `path` is an error in every mode but `w`. A new group
    /// gets the format of the group above it, or Zarr v3 at the top; see
    /// [`Group::open_as`].
    pub fn open(store: Arc<dyn Store>, path: &str, mode: Mode) -> Result<Self> {
        let memo = Memo::new(store.as_ref());
        let format = super::inherited_format(&memo, &node_path(path)?)?;
        Self::open_probed(
            store.clone(),
            &memo,
            path,
            mode,
            format,
            &serde_json::Map::new(),
        )
    }

    /// As [`Group::open`], creating groups in `format` (2 or 3). An existing group opens in
    /// whatever format it has.
    pub fn open_as(store: Arc<dyn Store>, path: &str, mode: Mode, format: Format) -> Result<Self> {
        Self::open_with(store, path, mode, format, &serde_json::Map::new())
    }

    /// As [`Group::open_as`], giving the group `attributes`: a new group is written with
    /// them in one document write (v3; v2 adds `.zattrs`), an existing one gets them set.
    pub fn open_with(
        store: Arc<dyn Store>,
        path: &str,
        mode: Mode,
        format: Format,
        attributes: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self> {
        // The documents probed on the way are read once each.
        let memo = Memo::new(store.as_ref());
        Self::open_probed(store.clone(), &memo, path, mode, format, attributes)
    }

    /// [`Group::open_with`], probing documents through `memo` (in front of `store`).
    fn open_probed(
        store: Arc<dyn Store>,
        memo: &Memo<'_>,
        path: &str,
        mode: Mode,
        format: Format,
        attributes: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self> {
        format.check_group_creatable()?;
        let path = node_path(path)?;
        let writable = mode != Mode::Read;
        if writable {
            check_writable(store.as_ref(), &format!("open group {path:?} for writing"))?;
        }
        let s: &dyn Store = memo;
        check_parents(s, &path)?;
        // A draft hierarchy keeps its layout: new groups in it are written in its scheme.
        let existing_draft = draft_scheme(s)?;
        let format = existing_draft.map_or(format, Format::Draft);
        if let Some(scheme) = format.draft_scheme() {
            check_entry_point(s, scheme)?;
        }
        let kind = node_kind(s, &path)?;
        let create = match (mode, kind) {
            (Mode::Overwrite, _) => {
                erase_node(s, &path)?;
                true
            }
            (_, NodeKind::Array) => {
                return Err(Error::NodeType(format!(
                    "{path:?} is an array, not a group"
                )))
            }
            (Mode::CreateNew, NodeKind::Group) => {
                return Err(Error::Exists(format!("a group already exists at {path:?}")))
            }
            (Mode::CreateNew | Mode::Append, NodeKind::None) => true,
            (Mode::Read | Mode::ReadWrite, NodeKind::None) => {
                return Err(Error::NotFound(format!("no group at {path:?}")))
            }
            (_, NodeKind::Group) => false,
        };
        let format = if create {
            ensure_parent_groups(s, &path, format)?;
            write_group(s, &path, format, attributes, mode == Mode::CreateNew)?;
            format
        } else if let Some(scheme) = existing_draft {
            let key = scheme.doc_key(&path, Kind::Group);
            if let Some(bytes) = get_document(s, &key)? {
                draft::parse_group(&bytes).map_err(|e| match e {
                    Error::Metadata(m) => Error::Metadata(format!("{key}: {m}")),
                    other => other,
                })?;
            }
            Format::Draft(scheme)
        } else if v3_node_type(s, &path)?.is_some() {
            Format::V3
        } else {
            let bytes = get_document(s, &join_key(&path, GROUP_KEY))?.unwrap_or_default();
            v2::parse_group(&bytes).map_err(|e| match e {
                Error::Metadata(m) => {
                    let detail = m.strip_prefix(GROUP_KEY).unwrap_or(&m);
                    Error::Metadata(format!("{}{detail}", join_key(&path, GROUP_KEY)))
                }
                other => other,
            })?;
            Format::V2
        };
        let group = Group {
            attrs: Attributes::new(format.group_attrs_key(&path), format),
            store,
            path,
            writable,
            format,
        };
        if !attributes.is_empty() && (!create || !format.creates_with_attributes()) {
            group.set_attributes(attributes)?;
        }
        Ok(group)
    }

    /// The metadata format of the group.
    pub fn format(&self) -> Format {
        self.format
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
        if let Some(scheme) = self.format.draft_scheme() {
            return self.draft_members(scheme);
        }
        let listing = self.store.list_dir(&node_prefix(&self.path))?;
        let mut members = Vec::new();
        for name in listing.prefixes {
            let path = join_key(&self.path, &name);
            match node_kind_in(self.store.as_ref(), self.format, &path)? {
                NodeKind::None => {}
                kind => members.push((name, kind)),
            }
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(members)
    }

    fn draft_members(&self, scheme: draft::Scheme) -> Result<Vec<(String, NodeKind)>> {
        draft_children(self.store.as_ref(), scheme, &self.path)
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
        Group::open_as(
            self.store.clone(),
            &self.member_path(relative)?,
            self.mode_for(mode)?,
            self.format,
        )
    }

    /// Opens the array at `relative` (`r`, `r+` or `a`).
    pub fn open_array(&self, relative: &str, mode: Mode) -> Result<Array> {
        Array::open_in(
            self.store.clone(),
            &self.member_path(relative)?,
            self.mode_for(mode)?,
            Some(self.format),
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
        erase_node(self.store.as_ref(), &path)
    }

    /// Moves the member at `from` to `to` (both relative to this group), creating the groups
    /// above `to`. The destination must not exist, nor lie inside the member (also through
    /// a link in the store: [`Error::InvalidArg`]). Keys are copied, then the source erased.
    pub fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.check_writable("move a member")?;
        if self.format.draft_scheme().is_some() {
            return Err(Error::Unsupported(
                "moving members of a 2022-draft hierarchy is not supported".into(),
            ));
        }
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
        // Also through a link inside the store leading into the source.
        super::copy::refuse_overlap(
            &super::copy::footprint(&self.store, &source)?,
            &super::copy::footprint(&self.store, &target)?,
        )?;
        ensure_parent_groups(self.store.as_ref(), &target, self.format)?;
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
