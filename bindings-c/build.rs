//! Generates the C header with cbindgen into `$OUT_DIR/keyroute.h`; the build never writes
//! into the source tree. `make check-header-c` compares it with the committed
//! `include/keyroute.h` (failing with a diff when they differ) and `make update-header-c`
//! copies it over the committed one.
use std::env;
use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");
    // The shared library's SONAME: libkeyroute.so.MAJOR, or .0.MINOR before 1.0
    // (`make install-c` creates the matching symlinks).
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let (major, minor) = (
            env::var("CARGO_PKG_VERSION_MAJOR").expect("version"),
            env::var("CARGO_PKG_VERSION_MINOR").expect("version"),
        );
        let so = if major == "0" {
            format!("0.{minor}")
        } else {
            major
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libkeyroute.so.{so}");
    }
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("bindings-c/cbindgen.toml");
    let v = |k: &str| env::var(k).expect("cargo sets the package version");
    config.after_includes = Some(format!(
        "\n/* The version of this header; compare with keyroute_version() at run time. */\n\
         #define KEYROUTE_VERSION_MAJOR {}\n\
         #define KEYROUTE_VERSION_MINOR {}\n\
         #define KEYROUTE_VERSION_PATCH {}\n\
         #define KEYROUTE_VERSION_STRING \"{}\"",
        v("CARGO_PKG_VERSION_MAJOR"),
        v("CARGO_PKG_VERSION_MINOR"),
        v("CARGO_PKG_VERSION_PATCH"),
        v("CARGO_PKG_VERSION"),
    ));
    let header = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("keyroute.h");
    match cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
    {
        Ok(bindings) => {
            bindings.write_to_file(&header);
        }
        Err(e) => panic!("cbindgen could not generate {}: {e}", header.display()),
    }
}
