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

/// The header test compiled in every language standard (c-tests/test_header_std.c) uses
/// every macro and every enumeration constant zarr.h defines, so a new one is checked too.
#[test]
fn the_header_standards_test_uses_every_constant() {
    let header = include_str!("../include/zarr.h");
    let test = include_str!("../c-tests/test_header_std.c");
    let macros = header
        .lines()
        .filter_map(|line| line.strip_prefix("#define "))
        .filter_map(|rest| rest.split_whitespace().next());
    let constants = header.lines().filter_map(|line| {
        let name = line.trim_start().split(" = ").next()?;
        (line.starts_with("  ZARR_") && line.contains(" = ")).then_some(name)
    });
    let missing: Vec<&str> = macros
        .chain(constants)
        .filter(|name| *name != "ZARR_API" && !uses(test, name))
        .collect();
    assert!(
        missing.is_empty(),
        "c-tests/test_header_std.c does not use {missing:?}"
    );
}

/// Whether `name` occurs in `text` as a whole identifier.
fn uses(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}
