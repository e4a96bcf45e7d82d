//! The release link's start-up layout (`link/startup.ld` and packed
//! relocations, see `build.rs`). The suite runs debug builds, which are
//! linked as usual, so this links a small C program the way a release
//! build of the server is linked and runs it: a script lld cannot read,
//! or a loader without packed relocations, fails here and not first on a
//! user's release build.

use std::process::Command;

/// What `rustc` says, trimmed.
fn rustc(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("rustc").args(args).output()?;
    anyhow::ensure!(out.status.success(), "rustc {args:?} failed");
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

#[test]
fn a_program_linked_with_the_startup_layout_runs_with_its_code_in_front() -> anyhow::Result<()> {
    let sysroot = rustc(&["--print", "sysroot"])?;
    let version = rustc(&["-vV"])?;
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .ok_or_else(|| anyhow::anyhow!("rustc -vV names no host"))?;
    let gcc_ld = format!("{sysroot}/lib/rustlib/{host}/bin/gcc-ld");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/link/startup.ld");

    let dir = tempfile::tempdir()?;
    let source = dir.path().join("main.c");
    let program = dir.path().join("main");
    // `main` is among the functions a server's start runs, so the script
    // moves it: unoptimised, with a section per function, it is `.text.main`.
    std::fs::write(&source, "int main(void) { return 0; }\n")?;
    let link = Command::new("cc")
        .args(["-O0", "-ffunction-sections", "-fuse-ld=lld"])
        .arg(format!("-B{gcc_ld}"))
        .arg(format!("-Wl,-T,{script}"))
        .arg("-Wl,-z,pack-relative-relocs")
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .output()?;
    anyhow::ensure!(
        link.status.success(),
        "the link failed: {}",
        String::from_utf8_lossy(&link.stderr)
    );
    assert!(Command::new(&program).status()?.success());
    // The output section exists only when a pattern placed code in it.
    let bytes = std::fs::read(&program)?;
    let named = |name: &[u8]| bytes.windows(name.len()).any(|w| w == name);
    assert!(named(b".text.helm_start\0"), "no code was placed in front");
    assert!(named(b".relr.dyn\0"), "relocations were not packed");
    Ok(())
}
