//! libzarr: Zarr arrays for C, C++, Fortran and Rust.
//!
//! Layers, from the store up: [`store`] (key-value stores), [`meta`] (metadata documents ⇄
//! one internal model), [`dtype`] (data types), [`codec`] (the codec chain: array filters, compressors, checksums), [`io`] (region → chunk plan, parallel
//! chunk work), [`node`] (arrays and the groups above them) and `ffi` (the C ABI).
//!
//! ```
//! use std::sync::Arc;
//! use zarr::{store::MemoryStore, node::{ArrayBuilder, Mode}, meta::Order, dtype::ElementType};
//! let store = Arc::new(MemoryStore::new());
//! let mut builder = ArrayBuilder::new(vec![4, 4], ElementType::Int32);
//! builder.chunks(vec![2, 2]);
//! let array = builder.create(store, "a/b", Mode::CreateNew).unwrap();
//! let data: Vec<u8> = (0..16i32).flat_map(|v| v.to_ne_bytes()).collect();
//! array.write(&[0, 0], &[4, 4], ElementType::Int32, Order::C, &data).unwrap();
//! let mut back = vec![0u8; 16 * 4];
//! array.read(&[0, 0], &[4, 4], ElementType::Int32, Order::C, &mut back).unwrap();
//! assert_eq!(back, data);
//! ```

pub mod codec;
pub mod dtype;
pub mod error;
pub mod ffi;
pub mod io;
pub mod meta;
pub mod node;
pub mod store;

pub use error::{Error, Result};
