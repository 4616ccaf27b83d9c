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
