//! `cargo xtask export`: an ONNX file from a trained MAT, Transformer-M or smiles-gpt run
//! or from MSA column global attention parameters, checked and verified in ONNX Runtime
//! and tract against Burn (`export::run_export`).

use std::path::PathBuf;

use anyhow::Result;

/// `--model` of `export`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ExportModel {
    /// MAT from a training run.
    Mat,
    /// Transformer-M from a training run.
    TransformerM,
    /// AlphaFold MSA column global attention.
    MsaGlobalAttention,
    /// The SMILES generator's decoder step (past keys / values in and out) from a
    /// `train --model smiles-gpt` run; a smiles-gpt run given with the default `--model`
    /// is exported as this.
    SmilesGpt,
}

/// Flags of `export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Which model.
    #[arg(long, value_enum, default_value = "mat")]
    pub model: ExportModel,
    /// Run directory written by `train` (MAT or Transformer-M: its held-out molecules are
    /// the verification inputs; smiles-gpt: 100 prompts from its own samples, decoded
    /// greedily in ONNX Runtime and Burn).
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// MSA global attention: AlphaFold-named parameters (.safetensors).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Haiku scope of the parameters.
    #[arg(long, default_value = models::msa::ALPHAFOLD_SCOPE)]
    pub scope: String,
    /// MSA global attention: configuration JSON (AlphaFold extra-MSA defaults if absent).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output file.
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `export`.
///
/// # Errors
/// Missing run or parameters, a run of the other model, export or verification failures.
pub fn run_args(args: ExportArgs) -> Result<()> {
    #[cfg(not(feature = "onnx"))]
    {
        let _ = args;
        Err(super::common::missing_feature("onnx", "cargo xtask export"))
    }
    #[cfg(feature = "onnx")]
    export(args)
}

#[cfg(feature = "onnx")]
fn export(args: ExportArgs) -> Result<()> {
    use anyhow::Context;
    use burn::tensor::Device;
    use export::run_export::{Source, export_and_verify};
    use train::RunKind;
    let run = |what: &str| {
        args.run
            .clone()
            .with_context(|| format!("--run DIR is required to export {what}"))
    };
    let source = match args.model {
        ExportModel::Mat => Source::Run {
            dir: run("a MAT")?,
            asked: RunKind::Mat,
        },
        ExportModel::TransformerM => Source::Run {
            dir: run("a Transformer-M")?,
            asked: RunKind::TransformerM,
        },
        ExportModel::SmilesGpt => Source::Run {
            dir: run("a smiles-gpt generator")?,
            asked: RunKind::SmilesGpt,
        },
        ExportModel::MsaGlobalAttention => Source::MsaGlobalAttention {
            params: args.params,
            scope: args.scope,
            config: args.config,
        },
    };
    Ok(export_and_verify(&source, &args.out, &Device::flex())?)
}
