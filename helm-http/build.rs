//! Embeds the built web UI (`ui/dist`, made by `npm run build` in `ui/`)
//! into release builds of helm-http.
//!
//! `cargo build` never runs npm and never needs the network: when `ui/dist`
//! is absent the table is empty and the server answers `/` with a page
//! saying how to build the UI. Debug builds embed nothing and read
//! `ui/dist` from disk at run time instead, so a rebuilt UI shows up on
//! reload and a missing one costs no recompilation. `HELM_UI_EMBED=1`
//! embeds in any profile, `HELM_UI_EMBED=0` in none.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HELM_UI_EMBED");
    link_for_a_small_start();
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let dist = manifest.join("ui").join("dist");
    let embed = match std::env::var("HELM_UI_EMBED").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => std::env::var("PROFILE").as_deref() == Ok("release"),
    };
    let mut files = Vec::new();
    if embed {
        if dist.join("index.html").is_file() {
            // A rebuilt UI (new hashes, so new and removed files) rebuilds the crate.
            println!("cargo:rerun-if-changed={}", dist.display());
            collect(&dist, &dist, &mut files);
        } else {
            // Not built yet: building it later changes `ui/`, which brings
            // the embedding back here.
            println!("cargo:rerun-if-changed={}", manifest.join("ui").display());
            println!(
                "cargo:warning=the web UI is not built, so this helm-http serves a page saying how \
                 to build it; run `npm ci && npm run build` in helm-http/ui (./scripts/serve does)"
            );
        }
    }
    files.sort();
    let mut table = String::from(
        "/// The built UI's files by path under `dist/` (with their `.gz` and `.br` twins).\n\
         pub static EMBEDDED: &[(&str, &[u8])] = &[\n",
    );
    for (name, path) in &files {
        let _ = writeln!(
            table,
            "    ({name:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    table.push_str("];\n");
    let _ = writeln!(
        table,
        "/// Where debug builds read the UI from at run time.\n\
         pub const DIST_DIR: &str = {:?};",
        dist.display().to_string()
    );
    if let Err(e) = std::fs::write(out.join("ui_assets.rs"), table) {
        println!("cargo:warning=could not write the UI table: {e}");
    }
}

/// Release builds of the server on Linux with glibc start in less memory:
///
/// - `link/startup.ld` (made by `scripts/startup-order`) packs the functions
///   a start runs at the front of the code. The kernel maps code 64 KiB
///   around each page touched, so scattered they mapped about half of it.
/// - Relative relocations are packed (RELR, glibc 2.36 and later): the
///   loader then reads a few KiB of them at start instead of 1.2 MB.
///
/// Debug builds skip both: the linker script's patterns make a debug link
/// (many more, smaller functions) 45 s longer, and their start is not what
/// is measured. `HELM_STARTUP_LAYOUT=0` skips both in any build, for a
/// linker that reads no such script (gold).
fn link_for_a_small_start() {
    let script = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link")
        .join("startup.ld");
    println!("cargo:rerun-if-changed={}", script.display());
    println!("cargo:rerun-if-env-changed=HELM_STARTUP_LAYOUT");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("HELM_STARTUP_LAYOUT") == "0"
        || var("PROFILE") != "release"
        || var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
    {
        return;
    }
    if script.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=helm-http=-Wl,-T,{}",
            script.display()
        );
    }
    println!("cargo:rustc-link-arg-bin=helm-http=-Wl,-z,pack-relative-relocs");
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(relative) = path.strip_prefix(root) {
            let name = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            files.push((name, path));
        }
    }
}
