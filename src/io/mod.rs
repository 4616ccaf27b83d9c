//! The data path: region checks, the region → chunk plan, and parallel per-chunk
//! read/decode/scatter and gather/encode/write.

pub mod copy;
pub mod lock;
pub mod pool;
pub mod region;
pub mod shard;
pub mod vlen;
