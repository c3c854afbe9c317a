//! `cargo xtask <command>`: thin commands over the molattn crates. Each command's flags
//! and glue live in `commands/<command>.rs`; this file only dispatches.

use anyhow::Result;

// Burn's CPU backend allocates a buffer per op; mimalloc reuses them where glibc's malloc
// unmaps and re-faults large ones (MAT forward 1.9x small, 1.3x pretrained size against
// glibc's malloc; docs/BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in `mi_option_e` (`mimalloc.h`, the same index in mimalloc 2
/// and 3; libmimalloc-sys 0.1.49, which builds mimalloc 3, exports no name for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> Result<()> {
    // One parse; `train` also reads which flags were typed (commands::train::run).
    let matches = xtask::command().get_matches();
    // SAFETY: no other thread exists yet (clap's parse starts none); init may set
    // OPENBLAS_CORETYPE before OpenBLAS loads (attn_core::blas).
    if xtask::wants_blas(&matches) {
        // A command that runs models installs OpenBLAS at its first matrix product where
        // it is missing and that needs no password (xtask::openblas_install;
        // MOLATTN_INSTALL_BLAS=0 turns it off).
        unsafe { attn_core::blas::init_or_install(xtask::openblas_install::install_openblas) };
    } else {
        unsafe { attn_core::blas::init() };
    }
    // Keep freed pages mapped (mimalloc 3 gives them back to the kernel after 1 s): a
    // pretrained-size training step (2 s) frees its activations and the next one allocates
    // them again, page faults and kernel zeroing each time (MAT pretrained-size training step 3-5% faster;
    // docs/BENCHMARKS.md). The price: the process keeps its peak memory until it exits.
    // SAFETY: a documented mimalloc option, set before the threads that allocate start.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    if matches!(matches.subcommand_name(), Some("predict" | "embed")) {
        // Streaming prediction frees each chunk's features on another thread than the one
        // that allocated them: purged at once, the peak stays flat with the file's size
        // (ESOL repeated, 2D layout: 151 MB at 20k rows, 154 MB at 200k; 140 and 183 MB
        // with pages kept; docs/RESULTS.md).
        // SAFETY: as above; the commands' threads have not started.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    // A usage error found after parsing (a flag of another model family) exits as
    // clap's own do: the message with usage, status 2.
    xtask::run(&matches).inspect_err(|e| {
        if let Some(usage) = e.downcast_ref::<clap::Error>() {
            usage.exit()
        }
    })
}
