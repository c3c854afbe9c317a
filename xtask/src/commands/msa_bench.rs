//! `cargo xtask msa-bench`: time MSA column global attention on a synthetic MSA.

use anyhow::Result;

use super::common::DeviceArg;

/// Flags of `msa-bench`.
#[derive(clap::Args)]
pub struct MsaBenchArgs {
    /// Sequences N_seq.
    #[arg(long, default_value_t = 5120)]
    pub n_seq: usize,
    /// Residues N_res.
    #[arg(long, default_value_t = 384)]
    pub n_res: usize,
    /// MSA channels c_m.
    #[arg(long, default_value_t = 64)]
    pub c_m: usize,
    /// Timed runs after a warm-up.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// bf16 activations (LayerNorm and softmax in f32).
    #[arg(long)]
    pub bf16: bool,
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
}

/// Runs `msa-bench`.
///
/// # Errors
/// Backend unavailable.
pub fn run(args: MsaBenchArgs) -> Result<()> {
    bench::msa_bench::run(
        &bench::msa_bench::MsaBenchOptions {
            n_seq: args.n_seq,
            n_res: args.n_res,
            c_m: args.c_m,
            runs: args.runs,
            bf16: args.bf16,
        },
        &args.device.device()?,
    )
}
