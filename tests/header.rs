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
        "include/zarr.h differs from what cbindgen generates: run `ZARR_BLESS=1 cargo test --test suite header::`"
    );
}

/// Every name zarr.h declares at file scope is in libzarr's C namespace (`ZARR_` /
/// `zarr_`): macros, enumeration constants, typedefs, struct and enum tags and functions,
/// so that nothing of the core leaks into a caller's names.
#[test]
fn zarr_h_declares_only_prefixed_names() {
    let header = include_str!("../include/zarr.h");
    let code = without_comments(header);
    let prefixed = |name: &&str| name.starts_with("ZARR_") || name.starts_with("zarr_");
    let macros = code
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("#define "))
        .filter_map(|rest| rest.split(|c: char| !is_ident(c)).next());
    let constants = code
        .lines()
        .map(str::trim)
        .filter(|line| line.contains(" = ") && !line.starts_with('#'))
        .filter_map(|line| line.split(" = ").next());
    let tokens = tokenize(&code);
    // Tags after `enum` / `struct`, the name before a typedef's `;`, and every name called
    // like a function (but the preprocessor's own).
    let mut declared: Vec<&str> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).copied().unwrap_or("");
        if matches!(*token, "enum" | "struct") && next.starts_with(is_ident) {
            declared.push(next);
        }
        if next == ";" && token.starts_with(is_ident) {
            let start = tokens[..i].iter().rposition(|t| *t == ";" || *t == "}");
            let statement = &tokens[start.map_or(0, |s| s + 1)..i];
            if statement.contains(&"typedef") {
                declared.push(token);
            }
        }
        if next == "("
            && token.starts_with(is_ident)
            && !matches!(*token, "defined" | "__declspec" | "__attribute__")
        {
            declared.push(token);
        }
    }
    let leaked: Vec<&str> = macros
        .chain(constants)
        .chain(declared.iter().copied())
        .filter(|name| !name.is_empty() && !prefixed(name))
        .collect();
    assert!(
        leaked.is_empty(),
        "zarr.h declares unprefixed names: {leaked:?}"
    );
    assert!(
        declared.len() > 120,
        "the scan found only {} declarations",
        declared.len()
    );
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers of `code` and its other characters, one token each (spaces dropped).
fn tokenize(code: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while let Some(c) = code[at..].chars().next() {
        let len = if is_ident(c) {
            code[at..]
                .find(|c: char| !is_ident(c))
                .unwrap_or(code.len() - at)
        } else {
            c.len_utf8()
        };
        if !c.is_whitespace() {
            tokens.push(&code[at..at + len]);
        }
        at += len;
    }
    tokens
}

/// `text` without its C comments.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
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

/// The API reference gives every function's errors, ownership and thread safety: each
/// declaration's documentation has the three paragraphs the header's Conventions describe.
#[test]
fn every_function_states_errors_ownership_and_thread_safety() {
    let header = include_str!("../include/zarr.h");
    let mut checked = 0;
    let mut incomplete = Vec::new();
    for (at, _) in header.match_indices("\nZARR_API") {
        let doc_end = header[..at].rfind("*/").expect("a documentation comment");
        let doc_start = header[..doc_end]
            .rfind("/**")
            .expect("a documentation comment");
        let doc = &header[doc_start..doc_end];
        let declaration = &header[at..];
        let name_end = declaration.find('(').expect("a function");
        let name = declaration[..name_end]
            .rsplit(|c: char| !is_ident(c))
            .next()
            .unwrap_or_default();
        let missing: Vec<&str> = ["Errors: ", "Ownership: ", "Thread safety: "]
            .into_iter()
            .filter(|label| !doc.contains(&format!(" * {label}")))
            .collect();
        if !missing.is_empty() {
            incomplete.push(format!("{name} lacks {missing:?}"));
        }
        checked += 1;
    }
    assert!(checked > 120, "only {checked} functions found");
    assert!(incomplete.is_empty(), "{}", incomplete.join("\n"));
}
