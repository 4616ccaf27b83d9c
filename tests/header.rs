//! The committed C header must be exactly what the pinned cbindgen generates from the
//! sources. Run with `ZARR_BLESS=1` to rewrite it after changing the C API.

use std::path::Path;

#[test]
fn zarr_h_matches_the_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let header = root.join("include/zarr.h");
    if std::env::var_os("ZARR_BLESS").is_some() {
        std::fs::write(&header, &generated).expect("write include/zarr.h");
        return;
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/zarr.h differs from what cbindgen generates: run `ZARR_BLESS=1 cargo test --test header`"
    );
}

/// Every name zarr.h defines is in libzarr's C namespace (`ZARR_` / `zarr_`), so that no
/// constant of the core leaks into a caller's macros.
#[test]
fn zarr_h_defines_only_prefixed_names() {
    let header = include_str!("../include/zarr.h");
    let leaked: Vec<&str> = header
        .lines()
        .filter_map(|line| line.strip_prefix("#define "))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|name| !name.starts_with("ZARR_") && !name.starts_with("zarr_"))
        .collect();
    assert!(
        leaked.is_empty(),
        "zarr.h defines unprefixed names: {leaked:?}"
    );
}
