//! `cargo xtask export`: writes an ONNX file from a trained MAT or Transformer-M run (on
//! a CSV or QM9) or from MSA column global attention parameters, then (1) validates it with the ONNX checker, (2) runs it
//! in ONNX Runtime and tract on held-out inputs of two different sizes, (3) compares with
//! the Burn model and fails above 1e-4. A smiles-gpt run gives its decoder step graph
//! (past keys / values in and out), verified by greedy decoding of 100 prompts in ONNX
//! Runtime against Burn's KV-cached decoding: identical tokens, logits within 1e-4.

use std::path::PathBuf;

use anyhow::Result;

/// The ONNX lowering, verification and round trip (built with the `onnx` feature).
#[cfg(feature = "onnx")]
mod onnx {
    use std::path::{Path, PathBuf};

    use anyhow::{Context, Result, bail};
    use burn::prelude::*;
    use export::{Case, Feed, verify};
    use models::{MatBatch, MsaColumnGlobalAttention, MsaColumnGlobalAttentionConfig};
    use mol_featurize::{featurize_all, pad_batch};
    use train::RunSpec;

    /// Largest accepted difference between a runtime and Burn.
    const TOL: f64 = 1e-4;

    /// What to export.
    pub enum Source {
        /// A run directory written by `cargo xtask train` (MAT).
        Run(PathBuf),
        /// A run directory written by `cargo xtask train --model transformer-m`.
        TransformerMRun(PathBuf),
        /// A run directory written by `cargo xtask train --model smiles-gpt`.
        SmilesGptRun(PathBuf),
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
    pub fn run(source: &Source, out: &Path, device: &Device) -> Result<()> {
        let (model, output, cases) = match source {
            Source::SmilesGptRun(run) => return smiles_gpt_run(run, out, device),
            Source::Run(run) => mat_from_run(run, device)?,
            Source::TransformerMRun(run) => transformer_m_from_run(run, device)?,
            Source::MsaGlobalAttention {
                params,
                scope,
                config,
            } => msa_block(params.as_deref(), scope, config.as_deref(), device)?,
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
            bail!("exported model differs from Burn by {worst:.2e} > {TOL:.0e}");
        }
        println!("  verified: every runtime within {TOL:.0e} of Burn");
        Ok(())
    }

    type Export = (onnx_protobuf::ModelProto, &'static str, Vec<Case>);

    /// Writes `model` to `out`, reports its size (and `what`), and runs the ONNX checker.
    fn write_and_check(model: &onnx_protobuf::ModelProto, out: &Path, what: &str) -> Result<()> {
        export::write_model(model, out)?;
        println!(
            "wrote {} ({:.1} MiB, opset {}, IR {}){what}",
            out.display(),
            std::fs::metadata(out)?.len() as f64 / (1 << 20) as f64,
            export::graph::OPSET,
            export::graph::IR_VERSION
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
    fn smiles_gpt_run(run: &Path, out: &Path, device: &Device) -> Result<()> {
        let gpt = train::smiles_gpt::GptRun::open(run, device)?;
        if gpt.spec.model.is_conditional() {
            anyhow::bail!(
                "{}: a conditional generator (properties / scaffold); the ONNX decoder step \
                 is exported for unconditional ones only",
                run.display()
            );
        }
        let mut metadata = run_metadata("smiles-gpt", serde_json::to_string(&gpt.spec.model)?, run);
        metadata.push(("molattn.vocab".into(), serde_json::to_string(&gpt.vocab)?));
        let model = export::smiles_gpt_step_to_onnx(&gpt.model, &metadata);
        write_and_check(
            &model,
            out,
            ": the decoder step, past keys / values in and out",
        )?;
        let prompts = export::smiles_gpt::sampled_prompts(&gpt.model, GREEDY_PROMPTS, 0, device)
            .map_err(anyhow::Error::msg)?;
        let a = export::smiles_gpt::verify_greedy(&gpt.model, out, &prompts, device)?;
        println!(
            "  ONNX Runtime greedy decoding vs Burn (KV cache): {} of {} prompts identical, {} tokens; logits max abs {:.2e}, max rel {:.2e}",
            a.identical, a.prompts, a.tokens, a.max_abs, a.max_rel
        );
        if let Some(d) = &a.first_difference {
            bail!("greedy decoding differs: {d}");
        }
        if a.max_abs > TOL {
            bail!(
                "exported decoder step differs from Burn by {:.2e} > {TOL:.0e}",
                a.max_abs
            );
        }
        println!("  verified: identical tokens, logits within {TOL:.0e} of Burn");
        Ok(())
    }

    /// Metadata every exported run carries: model family, molattn version, the model
    /// configuration (JSON) and the run id (the run directory's absolute path).
    fn run_metadata(model: &str, config_json: String, run: &Path) -> Vec<(String, String)> {
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

    /// A run's best MAT, with held-out molecules from its test predictions as inputs.
    fn mat_from_run(run: &Path, device: &Device) -> Result<Export> {
        let spec = RunSpec::load(run)?;
        let model = spec.load_best_model(run, device)?;
        let held_out = run.join("test_predictions.csv");
        let smiles = train::data::read_smiles_csv(&held_out, "smiles")
            .with_context(|| format!("held-out molecules from {}", held_out.display()))?;
        // SMILES carry no coordinates: a run trained on a file's gets the closest
        // pipeline (ETKDG conformers, or 2D layouts after 2D depictions); the metadata
        // records that featurizer, the one a user of the graph must apply.
        let featurizer = mol_featurize::MatFeaturizer {
            conformer: train::predict::conformer_for_smiles(&spec.featurizer.conformer, run),
            ..spec.featurizer.clone()
        };
        let (features, report) = featurize_all(&smiles, &featurizer, false);
        let ok: Vec<_> = features.iter().flatten().collect();
        if ok.len() < 4 {
            bail!(
                "{}: only {} featurizable held-out molecules ({} skipped)",
                held_out.display(),
                ok.len(),
                report.skipped.len()
            );
        }
        // Two batches of different sizes and atom counts: 8 molecules, then 3 others.
        let batches = [&ok[..8.min(ok.len() - 3)], &ok[ok.len() - 3..]];
        let mut cases = Vec::new();
        for chunk in batches {
            let data = pad_batch(chunk).map_err(anyhow::Error::msg)?;
            let want: Vec<f32> = model
                .forward(&MatBatch::from_data(&data, device))
                .try_into_vec_as()?;
            cases.push(Case {
                label: format!("{} x {} atoms", data.batch_size, data.n_atoms),
                feeds: export::mat_feeds(&data),
                want,
            });
        }
        let mut metadata = run_metadata("mat", serde_json::to_string(&spec.model)?, run);
        metadata.extend([
            (
                "molattn.featurizer".to_string(),
                serde_json::to_string(&featurizer)?,
            ),
            (
                "molattn.featurizer_version".into(),
                format!("mol-featurize {}", mol_featurize::VERSION),
            ),
            ("molattn.task".into(), serde_json::to_string(&spec.task)?),
            (
                "molattn.targets".into(),
                serde_json::to_string(&spec.target_columns)?,
            ),
            (
                "molattn.target_mean".into(),
                serde_json::to_string(&spec.target_mean)?,
            ),
            (
                "molattn.target_std".into(),
                serde_json::to_string(&spec.target_std)?,
            ),
        ]);
        Ok((export::mat_to_onnx(&model, &metadata), "prediction", cases))
    }

    /// A Transformer-M run's best model; inputs: held-out molecules in the run's
    /// evaluation mode, as batches of 8 and 3 (a QM9 run: the QM9 molecules right after
    /// its subset, never trained on, with their DFT geometries; a table run: molecules of
    /// its test predictions, then of its table if those are too few, featurized as in
    /// training).
    fn transformer_m_from_run(run: &Path, device: &Device) -> Result<Export> {
        use models::transformer_m::TransformerMBatch;
        use train::transformer_m::{TmData, TmRunSpec};
        let spec = TmRunSpec::load(run)?;
        let model = spec.load_best_model(run, device)?;
        let feats = match &spec.data {
            TmData::Qm9(subset) => held_out_qm9(run, subset, spec.model.limits.max_hops)?,
            TmData::Table(source) => {
                // The test molecules first; a small run tops them up from its table
                // (the numbers are compared, so seen molecules serve as well).
                let held_out = run.join("test_predictions.csv");
                let mut smiles = train::data::read_smiles_csv(&held_out, "smiles")
                    .with_context(|| format!("held-out molecules from {}", held_out.display()))?;
                smiles.truncate(20);
                if smiles.len() < 20 {
                    let more = source.molecules.read_smiles()?;
                    smiles.extend(more.into_iter().take(20 - smiles.len()));
                }
                let featurizer = spec.featurizer();
                let featurizer = mol_featurize::GraphormerFeaturizer {
                    conformer: train::predict::conformer_for_smiles(&featurizer.conformer, run),
                    ..featurizer
                };
                let (features, _) = featurize_all(&smiles, &featurizer, false);
                features.into_iter().flatten().take(11).collect()
            }
        };
        if feats.len() < 11 {
            bail!(
                "{}: {} featurizable held-out molecules, 11 needed",
                run.display(),
                feats.len()
            );
        }
        let mut cases = Vec::new();
        for chunk in [&feats[..8], &feats[8..]] {
            let refs: Vec<&mol_featurize::GraphormerFeatures> = chunk.iter().collect();
            let data = mol_featurize::pad_graphormer_batch(&refs, &spec.model.limits)
                .map_err(anyhow::Error::msg)?;
            let modes = vec![spec.eval_mode; data.batch_size];
            let want: Vec<f32> = model
                .forward(&TransformerMBatch::from_data(&data, &modes, device))
                .try_into_vec_as()?;
            cases.push(Case {
                label: format!("{} x {} atoms", data.batch_size, data.n_atoms),
                feeds: export::transformer_m::transformer_m_feeds(&data, &modes),
                want,
            });
        }
        let mut metadata = run_metadata("transformer-m", serde_json::to_string(&spec.model)?, run);
        metadata.extend([
            (
                "molattn.featurizer_version".to_string(),
                format!("mol-featurize {} (graphormer)", mol_featurize::VERSION),
            ),
            ("molattn.task".into(), serde_json::to_string(&spec.task)?),
            (
                "molattn.targets".into(),
                serde_json::to_string(&spec.target_columns)?,
            ),
            (
                "molattn.eval_mode".into(),
                serde_json::to_string(&spec.eval_mode)?,
            ),
            (
                "molattn.conformer".into(),
                serde_json::to_string(&spec.featurizer().conformer)?,
            ),
            (
                "molattn.target_mean".into(),
                serde_json::to_string(&spec.target_mean)?,
            ),
            (
                "molattn.target_std".into(),
                serde_json::to_string(&spec.target_std)?,
            ),
        ]);
        Ok((
            export::transformer_m_to_onnx(&model, &metadata),
            "prediction",
            cases,
        ))
    }

    /// The 11 QM9 molecules right after a run's subset, with their DFT geometries.
    fn held_out_qm9(
        run: &Path,
        subset: &train::transformer_m::Qm9Subset,
        max_hops: usize,
    ) -> Result<Vec<mol_featurize::GraphormerFeatures>> {
        let qm9 = train::qm9::Qm9::load(&subset.dataset)?;
        let Some(limit) = subset.limit else {
            bail!(
                "{}: the run used all of QM9 (no --limit), so no molecule is held out to verify on",
                run.display()
            );
        };
        let held_out = train::transformer_m::Qm9Subset {
            offset: subset.offset + limit,
            limit: Some(11),
            ..subset.clone()
        };
        let mut feats = Vec::new();
        for r in held_out.rows(qm9.len()) {
            let mol = mol_featurize::Molecule::from_smiles(&qm9.index.smiles[r])?;
            feats.push(mol_featurize::graphormer::featurize(
                &mol,
                max_hops,
                Some(qm9.coordinates_of(r).to_vec()),
            )?);
        }
        Ok(feats)
    }

    /// The MSA block, with a synthetic ragged MSA of two sizes as inputs.
    fn msa_block(
        params: Option<&Path>,
        scope: &str,
        config: Option<&Path>,
        device: &Device,
    ) -> Result<Export> {
        let config: MsaColumnGlobalAttentionConfig = match config {
            Some(path) => serde_json::from_str(
                &std::fs::read_to_string(path).with_context(|| path.display().to_string())?,
            )
            .with_context(|| {
                format!(
                    "{}: not an MSA column global attention config",
                    path.display()
                )
            })?,
            None => MsaColumnGlobalAttentionConfig::new(),
        };
        let mut block: MsaColumnGlobalAttention = config.init(device);
        if let Some(path) = params {
            block = block.load_alphafold_params(path, scope)?;
        }
        device.seed(7);
        let mut cases = Vec::new();
        for (n_seq, n_res) in [(16, 12), (5, 3)] {
            let act = Tensor::<3>::random(
                [n_seq, n_res, config.c_m],
                burn::tensor::Distribution::Normal(0.0, 1.0),
                device,
            );
            // Ragged columns; the last column fully masked.
            let mask: Vec<bool> = (0..n_seq * n_res)
                .map(|i| {
                    let (s, r) = (i / n_res, i % n_res);
                    r == n_res - 1 || s >= n_seq - r % n_seq
                })
                .collect();
            let padding =
                Tensor::<2, Bool>::from_data(TensorData::new(mask.clone(), [n_seq, n_res]), device);
            let want: Vec<f32> = block.forward(act.clone(), padding).try_into_vec_as()?;
            cases.push(Case {
                label: format!("{n_seq} x {n_res}"),
                feeds: vec![
                    Feed::f32(
                        "msa_act",
                        &[n_seq, n_res, config.c_m],
                        act.try_into_vec_as()?,
                    ),
                    Feed::bool("msa_padding_mask", &[n_seq, n_res], mask),
                ],
                want,
            });
        }
        let metadata = vec![
            (
                "molattn.model".to_string(),
                "msa_column_global_attention".to_string(),
            ),
            ("molattn.version".into(), env!("CARGO_PKG_VERSION").into()),
            (
                "molattn.model_config".into(),
                serde_json::to_string(&config)?,
            ),
            (
                "molattn.params".into(),
                params.map_or("fresh AlphaFold initialisation".into(), |p| {
                    format!("{} [{scope}]", p.display())
                }),
            ),
        ];
        Ok((
            export::msa_global_attention_to_onnx(&block, &metadata),
            "msa_update",
            cases,
        ))
    }
}

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
    use anyhow::{Context, bail};
    use burn::tensor::Device;
    use onnx::{Source, run};
    let source = match args.model {
        ExportModel::Mat => {
            let run = args.run.context("--run DIR is required to export a MAT")?;
            if train::run_kind(&run)? == train::RunKind::SmilesGpt {
                return onnx::run(&Source::SmilesGptRun(run), &args.out, &Device::flex());
            }
            if train::run_kind(&run)? == train::RunKind::TransformerM {
                bail!(
                    "{} is a Transformer-M run: pass --model transformer-m",
                    run.display()
                );
            }
            Source::Run(run)
        }
        ExportModel::TransformerM => Source::TransformerMRun(
            args.run
                .context("--run DIR is required to export a Transformer-M")?,
        ),
        ExportModel::SmilesGpt => Source::SmilesGptRun(
            args.run
                .context("--run DIR is required to export a smiles-gpt generator")?,
        ),
        ExportModel::MsaGlobalAttention => Source::MsaGlobalAttention {
            params: args.params,
            scope: args.scope,
            config: args.config,
        },
    };
    run(&source, &args.out, &Device::flex())
}
