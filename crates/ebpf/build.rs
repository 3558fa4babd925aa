//! Compiles the kernel programs with clang and checks that the Rust mirror of the
//! shared map types has the C layout.
//!
//! Both steps use the build host's tools and headers, never the target's: the
//! programs are compiled for the BPF machine (`clang -target bpf`), whatever the
//! target, and the layout program runs here. So a cross build (aarch64) needs a
//! cross linker for the Rust code only, and the object is the same byte for byte.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL_HINT: &str =
    "install the eBPF toolchain with: apt-get install -y --no-install-recommends clang libbpf-dev";

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let bpf_dir = Path::new("src/bpf");
    for file in ["bauxite.bpf.c", "bauxite.h", "classify.h", "layout.c"] {
        println!("cargo:rerun-if-changed=src/bpf/{file}");
    }
    println!("cargo:rerun-if-env-changed=BAUXITE_CLANG");

    // `<linux/types.h>` includes `<asm/types.h>`, which Debian keeps per architecture.
    // The host's is always there and gives the BPF target the same fixed-size types
    // as any other 64-bit Linux architecture's.
    let host = env::var("HOST").unwrap();
    let host_arch = host.split('-').next().unwrap();
    let arch_include = format!("/usr/include/{host_arch}-linux-gnu");
    let clang = env::var("BAUXITE_CLANG").unwrap_or_else(|_| "clang".into());
    let object = out.join("bauxite.bpf.o");
    let status = Command::new(&clang)
        .args(["-target", "bpf", "-O2", "-g", "-Wall", "-Werror"])
        .arg(format!("-I{arch_include}"))
        .arg("-c")
        .arg(bpf_dir.join("bauxite.bpf.c"))
        .arg("-o")
        .arg(&object)
        .status()
        .unwrap_or_else(|e| panic!("cannot run `{clang}` ({e}); {INSTALL_HINT}"));
    assert!(status.success(), "clang failed to build the eBPF programs; if headers are missing, {INSTALL_HINT}");

    // The layout check: a host program prints `offset_of!`/`size_of!` assertions
    // from the C header; maps.rs includes them, so a mismatch stops the build.
    // The host compiler: this program runs here, also when cross-building (where `CC`
    // names the target's compiler).
    println!("cargo:rerun-if-env-changed=HOST_CC");
    let cc = env::var("HOST_CC").unwrap_or_else(|_| "cc".into());
    let layout = out.join("layout");
    let status = Command::new(&cc)
        .arg(format!("-I{}", bpf_dir.display()))
        .arg(bpf_dir.join("layout.c"))
        .arg("-o")
        .arg(&layout)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the host C compiler `{cc}`: {e}"));
    assert!(status.success(), "the layout check program did not compile");
    let printed = Command::new(&layout).output().expect("run the layout check program");
    assert!(printed.status.success(), "the layout check program failed");
    std::fs::write(out.join("layout_check.rs"), printed.stdout).expect("write layout_check.rs");
}
