//! The data path: region checks, the region → chunk plan, parallel per-chunk
//! read/decode/scatter and gather/encode/write, and the chunk locks of concurrent writers
//! (with the real locations of keys they are named by); the call gate that makes `fork()`
//! wait until no call holds a lock.

pub mod append;
pub mod append_lock;
mod arrivals;
pub mod cache;
pub mod cast;
pub mod convert;
pub mod copy;
pub mod encoded;
pub mod gate;
pub mod json_items;
pub mod location;
pub mod lock;
pub mod pool;
pub mod region;
pub mod shard;
pub mod vlen;
