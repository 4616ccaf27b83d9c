//! The integration tests, one module per subject, built as one program: one link and one
//! binary instead of one per file. Programs of their own: `object_store` and
//! `object_store_credentials` (they set process-wide environment variables),
//! `object_store_hostile` (it measures the whole process's allocations) and `crash_safety`
//! (its own harness). `hostile` installs this program's allocator, which counts per thread.

mod common;

mod append_lock;
mod cache;
mod cf;
mod cf_types;
mod cli;
mod cli_header;
mod cli_icechunk;
mod cli_paths;
mod cli_safety;
mod codec_chain;
mod concurrency;
mod draft;
mod encoded;
mod filters;
mod header;
mod hierarchy;
mod hostile;
mod icechunk;
mod lossy_codecs;
mod memory_limit;
mod netcdf_export;
mod netcdf_hostile;
mod netcdf_virtualize;
mod nonblocking;
mod object_store_faults;
mod rectilinear;
mod reference;
mod regions;
mod registered_codecs;
mod safety;
mod sharding;
mod types;
mod v3;
