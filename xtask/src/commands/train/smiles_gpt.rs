//! `cargo xtask train --model smiles-gpt`: the SMILES generator's own flags and the call
//! into `train::smiles_gpt`.

use anyhow::{Context, Result, bail};
use clap::ArgMatches;
use models::SmilesGptConfig;
use train::smiles_gpt::{GptCondition, GptRunSpec, SmilesCorpus, train_smiles_gpt as train_run};
use train::{RunControl, RunKind};

use super::SharedTrainArgs;
use super::args::GptTrainArgs;
use super::typed_flags::given;
use crate::commands::common::PresetArg;

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
    let typed = given(matches, &PROPERTY_FLAGS);
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
        train: super::options(shared, 0.1),
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
