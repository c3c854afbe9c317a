//! A trained run (MAT, Transformer-M, the SMILES generator) or MSA column global
//! attention exported to ONNX and verified: the ONNX checker, then ONNX Runtime and tract
//! on held-out inputs of two sizes against the Burn model (within [`TOL`]); a generator's
//! decoder step by greedy decoding of 100 prompts in ONNX Runtime against Burn's KV cache
//! (identical tokens, logits within [`TOL`]). What `cargo xtask-onnx export` runs; the
//! held-out inputs and the metadata each graph carries are chosen here
//! ([`held_out`], docs/ONNX.md).

mod held_out;
mod msa;

use std::path::{Path, PathBuf};

use burn::prelude::*;

use train::RunKind;
use train::run_file::RunSpecFile;

use crate::{ExportError, verify};

type Export = (onnx_protobuf::ModelProto, &'static str, Vec<crate::Case>);

/// An [`ExportError::Invalid`] from any message.
fn invalid(e: impl std::fmt::Display) -> ExportError {
    ExportError::Invalid(e.to_string())
}

/// `value` as JSON for the graph's metadata.
fn json(value: &impl serde::Serialize) -> Result<String, ExportError> {
    serde_json::to_string(value).map_err(invalid)
}

/// Largest accepted difference between a runtime and Burn.
pub const TOL: f64 = 1e-4;

/// What to export.
#[derive(Debug, Clone)]
pub enum Source {
    /// A run directory written by `cargo xtask train`, of the family `asked` (its
    /// `run.json` tells; a generator run asked as MAT, the default, is exported as the
    /// generator's decoder step).
    Run {
        /// The run folder.
        dir: PathBuf,
        /// The family the user asked for.
        asked: train::RunKind,
    },
    /// MSA column global attention: AlphaFold-named parameters (`.safetensors`) under
    /// a haiku scope, or a fresh block of a serde config (JSON) when `params` is `None`.
    MsaGlobalAttention {
        /// Parameters file.
        params: Option<PathBuf>,
        /// Haiku scope inside it.
        scope: String,
        /// Configuration JSON (AlphaFold extra-MSA defaults when absent).
        config: Option<PathBuf>,
    },
}

/// Exports `source` to `out` and verifies it; prints the report.
///
/// # Errors
/// [`ExportError::Run`] for an unreadable run; [`ExportError::Invalid`] for a run of
/// another kind, too few held-out molecules, or a runtime that differs from Burn by more
/// than [`TOL`] (or decodes other tokens); [`ExportError::Runtime`] from the checker or a
/// runtime.
pub fn export_and_verify(source: &Source, out: &Path, device: &Device) -> Result<(), ExportError> {
    let (model, output, cases) = match source {
        Source::Run { dir, asked } => match (RunSpecFile::load(dir)?, *asked) {
            (RunSpecFile::SmilesGpt(spec), RunKind::SmilesGpt | RunKind::Mat) => {
                return smiles_gpt_run(*spec, dir, out, device);
            }
            (RunSpecFile::Mat(spec), RunKind::Mat) => held_out::mat_from_run(dir, &spec, device)?,
            (RunSpecFile::TransformerM(spec), RunKind::TransformerM) => {
                held_out::transformer_m_from_run(dir, &spec, device)?
            }
            (found, asked) => {
                return Err(invalid(format!(
                    "{} is a --model {} run, not a --model {asked} run: pass --model {}",
                    dir.display(),
                    found.kind(),
                    found.kind()
                )));
            }
        },
        Source::MsaGlobalAttention {
            params,
            scope,
            config,
        } => msa::msa_block(params.as_deref(), scope, config.as_deref(), device)?,
    };
    write_and_check(&model, out, "")?;
    let mut worst: f64 = 0.0;
    for agreement in verify::compare_in_runtimes(out, output, &cases) {
        let (max_abs, max_rel) = agreement.result?;
        println!(
            "  {:<12} vs Burn: max abs {max_abs:.2e}, max rel {max_rel:.2e} over {} held-out batches",
            agreement.runtime,
            cases.len()
        );
        worst = worst.max(max_abs);
    }
    if worst > TOL {
        return Err(invalid(format!(
            "exported model differs from Burn by {worst:.2e} > {TOL:.0e}"
        )));
    }
    println!("  verified: every runtime within {TOL:.0e} of Burn");
    Ok(())
}

/// Writes `model` to `out`, reports its size (and `what`), and runs the ONNX checker.
pub(super) fn write_and_check(
    model: &onnx_protobuf::ModelProto,
    out: &Path,
    what: &str,
) -> Result<(), ExportError> {
    crate::write_model(model, out)?;
    println!(
        "wrote {} ({:.1} MiB, opset {}, IR {}){what}",
        out.display(),
        std::fs::metadata(out).map_or(0, |m| m.len()) as f64 / (1 << 20) as f64,
        crate::graph::OPSET,
        crate::graph::IR_VERSION
    );
    verify::onnx_checker(out)?;
    println!("  onnx.checker.check_model(full_check=True): ok");
    Ok(())
}

/// Prompts greedy decoding is verified on.
const GREEDY_PROMPTS: usize = 100;

/// Exports a generator run's decoder step, checks it, and decodes
/// [`GREEDY_PROMPTS`] prompts greedily in ONNX Runtime and in Burn: the tokens must be
/// identical and the logits within [`TOL`].
fn smiles_gpt_run(
    spec: train::smiles_gpt::GptRunSpec,
    run: &Path,
    out: &Path,
    device: &Device,
) -> Result<(), ExportError> {
    let gpt = train::smiles_gpt::GptRun::open_spec(spec, run, device)?;
    if gpt.spec.model.is_conditional() {
        return Err(invalid(format!(
            "{}: a conditional generator (properties / scaffold); the ONNX decoder step \
             is exported for unconditional ones only",
            run.display()
        )));
    }
    let mut metadata = run_metadata("smiles-gpt", json(&gpt.spec.model)?, run);
    metadata.push(("molattn.vocab".into(), json(&gpt.vocab)?));
    let model = crate::smiles_gpt_step_to_onnx(&gpt.model, &metadata);
    write_and_check(
        &model,
        out,
        ": the decoder step, past keys / values in and out",
    )?;
    let prompts = crate::smiles_gpt::sampled_prompts(&gpt.model, GREEDY_PROMPTS, 0, device)
        .map_err(invalid)?;
    let a = crate::smiles_gpt::verify_greedy(&gpt.model, out, &prompts, device)?;
    println!(
        "  ONNX Runtime greedy decoding vs Burn (KV cache): {} of {} prompts identical, {} tokens; logits max abs {:.2e}, max rel {:.2e}",
        a.identical, a.prompts, a.tokens, a.max_abs, a.max_rel
    );
    if let Some(d) = &a.first_difference {
        return Err(invalid(format!("greedy decoding differs: {d}")));
    }
    if a.max_abs > TOL {
        return Err(invalid(format!(
            "exported decoder step differs from Burn by {:.2e} > {TOL:.0e}",
            a.max_abs
        )));
    }
    println!("  verified: identical tokens, logits within {TOL:.0e} of Burn");
    Ok(())
}

/// Metadata every exported run carries: model family, molattn version, the model
/// configuration (JSON) and the run id (the run directory's absolute path).
pub(super) fn run_metadata(model: &str, config_json: String, run: &Path) -> Vec<(String, String)> {
    let run_id = std::fs::canonicalize(run)
        .unwrap_or_else(|_| run.to_path_buf())
        .display()
        .to_string();
    vec![
        ("molattn.model".to_string(), model.to_string()),
        ("molattn.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("molattn.model_config".into(), config_json),
        ("molattn.run_id".into(), run_id),
    ]
}
