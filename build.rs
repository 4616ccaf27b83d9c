//! Sets the shared library's soname (cargo does not), so that packagers and linkers
//! record `libzarr.so.0` and future ABI bumps are visible.
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    if target_os == "linux" || target_os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzarr.so.{major}");
    } else if target_os == "macos" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libzarr.{major}.dylib");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
