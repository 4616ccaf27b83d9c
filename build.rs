//! Sets the shared library's soname (cargo does not), so that packagers and linkers
//! record `libzarr.so.0` and future ABI bumps are visible; and puts a `libzarr.so.0`
//! symlink beside cargo's `libzarr.so`, so that a program linked against the cargo build
//! tree (`-L target/release -lzarr`) finds the soname it records without a manual step.
use std::path::{Path, PathBuf};

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let soname_link = if target_os == "linux" || target_os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzarr.so.{major}");
        Some((format!("libzarr.so.{major}"), "libzarr.so"))
    } else if target_os == "macos" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libzarr.{major}.dylib");
        Some((format!("libzarr.{major}.dylib"), "libzarr.dylib"))
    } else {
        None
    };
    if let (Some((link, file)), Some(dir)) = (soname_link, profile_dir()) {
        link_soname(&dir.join(link), Path::new(file));
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// The directory cargo puts the final libraries in (`target/<profile>`, or
/// `target/<triple>/<profile>`): three levels above `OUT_DIR`
/// (`<profile>/build/<package>-<hash>/out`).
fn profile_dir() -> Option<PathBuf> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    let dir = out.ancestors().nth(3)?;
    (dir.join("build").is_dir()).then(|| dir.to_path_buf())
}

/// Makes `link` a relative symlink to `file` (created before the link step, it resolves
/// once cargo has written the library). Failure is not an error: the build still works.
fn link_soname(link: &Path, file: &Path) {
    #[cfg(unix)]
    {
        if std::fs::read_link(link).ok().as_deref() == Some(file) {
            return;
        }
        let _ = std::fs::remove_file(link);
        if let Err(e) = std::os::unix::fs::symlink(file, link) {
            println!("cargo:warning=could not link {}: {e}", link.display());
        }
    }
    #[cfg(not(unix))]
    let _ = (link, file);
}
