//! Helpers shared by the fuzz targets: a byte reader that turns fuzz input into choices,
//! and an end-to-end check that opens whatever a store holds and reads from it.

use std::sync::Arc;
use zarr::meta::Order;
use zarr::node::{Array, Group, Mode};
use zarr::store::Store;

/// Reads choices from fuzz input; past its end every choice is 0.
pub struct Input<'a>(pub &'a [u8]);

impl Input<'_> {
    /// The next byte, or 0 past the end.
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        let v = u16::from_le_bytes([self.byte(), self.byte()]) as u64;
        v % n.max(1)
    }

    /// Whether the next choice is "yes".
    pub fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// What is left of the input.
    pub fn rest(&self) -> &[u8] {
        self.0
    }
}

/// The largest region (in bytes) the end-to-end checks read, so hostile shapes cannot make
/// the harness itself allocate much.
const MAX_READ: u64 = 1 << 16;

/// Opens the array at `path` of `store` (errors are fine) and reads a small region at its
/// origin and at its far corner; reads may fail, never crash.
pub fn read_array(store: Arc<dyn Store>, path: &str) {
    let Ok(array) = Array::open(store, path, Mode::Read) else {
        return;
    };
    let meta = array.metadata();
    let elem = meta.dtype.element_type();
    let item = meta.item_size() as u64;
    let _ = array.dimension_names();
    let _ = array.nchunks_initialized();
    let count: Vec<u64> = meta.shape.iter().map(|&s| s.min(3)).collect();
    let elements = count
        .iter()
        .try_fold(1u64, |acc, &c| acc.checked_mul(c))
        .unwrap_or(u64::MAX);
    if elements.saturating_mul(item) > MAX_READ {
        return;
    }
    let mut buf = vec![0u8; (elements * item) as usize];
    let origin = vec![0u64; meta.shape.len()];
    let _ = array.read(&origin, &count, elem, Order::C, &mut buf);
    let corner: Vec<u64> = meta.shape.iter().zip(&count).map(|(s, c)| s - c).collect();
    let _ = array.read(&corner, &count, elem, Order::F, &mut buf);
}

/// Opens the group at `path` (errors are fine), lists its members and opens each array.
pub fn read_group(store: Arc<dyn Store>, path: &str) {
    let Ok(group) = Group::open(store.clone(), path, Mode::Read) else {
        return;
    };
    let Ok(members) = group.members() else {
        return;
    };
    for (name, _) in members.into_iter().take(8) {
        if let Ok(member) = group.member_path(&name) {
            read_array(store.clone(), &member);
        }
    }
}
