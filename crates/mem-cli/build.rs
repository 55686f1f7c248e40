//! Links the `mem` binary as a position-dependent executable (`-no-pie`) on Linux with the GNU
//! C library, where `cc` supports it.
//!
//! Why: `mem` runs as a new process for every hook, recall and search, so its start-up counts
//! (issue 29, whole-process search against the `sqlite3` command line). As a position-
//! independent executable its ~24,000 relative relocations are applied by the loader at every
//! start, a copy-on-write fault on each page of `.data.rel.ro` (~100 pages): 17 % of the page
//! faults of a search process. Linked at a fixed address there is nothing to apply:
//! `mem --version` 1.67 → 1.40 ms, every command the same 0.27 ms less (`docs/BENCHMARKS.md`,
//! "Stop 43"). Packed relocations (`-z pack-relative-relocs`) were measured too and gave
//! nothing (the faults are on the relocated pages, not on the table).
//!
//! The cost: the executable's own code is not placed at a random address (ASLR still applies
//! to the C library, the stack, the heap and every mapping). `mem` is safe Rust apart from the
//! SQLite and mimalloc C code it links; set `MEM_BUILD_PIE` (to anything but `0`) when building
//! to link a position-independent executable as before.
//!
//! Support is probed by linking and running a small C program with the flag through the linker
//! driver rustc links with (`RUSTC_LINKER`, else `cc`); without support (a driver that refuses
//! it, a cross build) the binary is linked as rustc links it by default. A static build
//! (`-C target-feature=+crt-static`, which rustc links `-static-pie`) is left alone: with
//! `-no-pie` added it would be a static binary that asks for the dynamic loader and crashes.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MEM_BUILD_PIE");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if std::env::var_os("MEM_BUILD_PIE").is_some_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    // Probed by running the result, so only for a native Linux glibc build; never static.
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("HOST") != var("TARGET")
        || var("CARGO_CFG_TARGET_FEATURE")
            .split(',')
            .any(|f| f == "crt-static")
    {
        return;
    }
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    if position_dependent_links(&linker) {
        println!("cargo:rustc-link-arg-bin=mem=-no-pie");
    }
}

/// Whether `linker` links and the system runs a position-dependent program that holds a
/// pointer in initialised data.
fn position_dependent_links(linker: &str) -> bool {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out.join("no_pie_probe.c");
    let program = out.join("no_pie_probe");
    let text =
        "static int value = 7;\nint *pointer = &value;\nint main(void) { return *pointer - 7; }\n";
    if std::fs::write(&source, text).is_err() {
        return false;
    }
    let linked = Command::new(linker)
        .args(["-fPIC", "-no-pie", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}
