//! `cargo xtask train --model smiles-gpt`: the SMILES generator's own flags and the call
//! into `train::smiles_gpt`.

use anyhow::{Context, Result, bail};
use clap::{ArgMatches, Args};
use models::SmilesGptConfig;
use mol_featurize::properties::MolProperty;
use train::smiles_gpt::{GptCondition, GptRunSpec, SmilesCorpus, train_smiles_gpt as train_run};
use train::{RunControl, RunKind, TrainOptions};

use super::common::PresetArg;
use super::train::SharedTrainArgs;

/// Flags that only the SMILES generator takes.
#[derive(Args)]
#[command(next_help_heading = "SMILES generator only (--model smiles-gpt)")]
pub struct GptTrainArgs {
    /// Longest sequence in tokens, <bos> and <eos> included (longer SMILES are left out
    /// and reported in skipped.json).
    #[arg(long, default_value_t = 128)]
    pub max_len: usize,
    /// Local attention: each token attends to the last W tokens only (default: dense
    /// causal attention).
    #[arg(long)]
    pub window: Option<usize>,
    /// With --window: this many leading tokens are attended by every position.
    #[arg(long, default_value_t = 0)]
    pub global_tokens: usize,
    /// Use only the first N rows of --data.
    #[arg(long = "max-rows")]
    pub max_rows: Option<usize>,
    /// Share of the SMILES held out for the validation loss.
    #[arg(long, default_value_t = 0.05)]
    pub valid_fraction: f64,
    /// Dropout (embeddings, attention weights, residual branches).
    #[arg(long, default_value_t = 0.1)]
    pub dropout: f64,
    /// Condition on these properties of each molecule (MolGPT's `--props`): logp, tpsa,
    /// qed (RDKit's definitions); comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    pub props: Vec<MolProperty>,
    /// Condition on each molecule's Bemis-Murcko scaffold (MolGPT's `--scaffold`).
    #[arg(long)]
    pub scaffold: bool,
    /// Standardise the --props values with the training set's mean and standard
    /// deviation (stored in run.json) before the model sees them (default: raw, as
    /// MolGPT feeds them).
    #[arg(long, requires = "props")]
    pub standardize_props: bool,
}

/// Flags of other families that describe a property table, refused by name here.
const PROPERTY_FLAGS: [&str; 8] = [
    "targets",
    "targets_from",
    "splits",
    "split",
    "units",
    "task",
    "coords",
    "no_cache",
];

/// Trains the generator from the shared and generator flags.
///
/// # Errors
/// Property-table flags, a missing --data, a preset of another family, training errors.
pub fn train_smiles_gpt(
    shared: &SharedTrainArgs,
    gpt: &GptTrainArgs,
    matches: &ArgMatches,
) -> Result<()> {
    let typed: Vec<String> = PROPERTY_FLAGS
        .iter()
        .filter(|id| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !typed.is_empty() {
        bail!(
            "{} describe property data; --model smiles-gpt reads SMILES only",
            typed.join(", ")
        );
    }
    let data = shared
        .data
        .clone()
        .context("--data (a CSV with a SMILES column) is required for --model smiles-gpt")?;
    let base = match shared.preset {
        PresetArg::Small => SmilesGptConfig::small(0),
        PresetArg::Molgpt => SmilesGptConfig::molgpt(0),
        PresetArg::Pretrained | PresetArg::Base => {
            bail!("--model smiles-gpt takes --preset small or molgpt")
        }
    };
    let pattern = match gpt.window {
        Some(w) => attn_core::AttentionPattern::local(w, gpt.global_tokens),
        None if gpt.global_tokens > 0 => bail!("--global-tokens goes with --window"),
        None => attn_core::AttentionPattern::causal(),
    };
    let spec = GptRunSpec {
        kind: RunKind::SmilesGpt,
        corpus: SmilesCorpus {
            path: data,
            smiles_column: shared.smiles_column.clone(),
            delimiter: shared.delimiter,
            limit: gpt.max_rows,
        },
        model: base
            .with_max_len(gpt.max_len)
            .with_dropout(gpt.dropout)
            .with_pattern(pattern),
        train: TrainOptions {
            epochs: shared.epochs,
            batch_size: shared.batch_size,
            learning_rate: shared.lr,
            warmup_fraction: 0.1,
            patience: shared.patience,
            seed: shared.seed,
        },
        valid_fraction: gpt.valid_fraction,
        condition: GptCondition {
            props: gpt.props.clone(),
            scaffold: gpt.scaffold,
            standardize: gpt.standardize_props,
        },
        prop_scaling: None,
        init_from: shared.init_from.clone(),
    };
    let engine = &shared.engine;
    let control = RunControl {
        conformer_cache: None,
        ..engine.control()?
    };
    let summary = train_run(&spec, &shared.out, &control, &engine.main_device()?)?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    println!("run written to {}", shared.out.display());
    Ok(())
}
