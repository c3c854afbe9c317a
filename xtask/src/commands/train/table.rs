//! `cargo xtask train --data`: MAT or Transformer-M on a molecule table (a CSV, an SDF or
//! XYZ files with labels); the table resolved by `train::table_request`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use models::MatConfig;
use train::table_request::{SplitRequest, TableRequest, TargetSelection};
use train::transformer_m::{SmilesSource, TableSource, TmData, train_transformer_m};
use train::{RunControl, RunKind, RunSpec, Task, train_run};

use super::args::TaskArg;
use super::search::Search;
use super::tm_flags::{ModeArg, tm_config};
use super::transformer_m::tm_run_spec;
use super::{TrainArgs, options, train_members};
use crate::commands::common::{
    CoordsArg, ModelArg, PresetArg, conformer_cache_dir, featurizer, spelling,
};
use crate::commands::structure_args::coords_for;

/// Trains `--model mat` or `--model transformer-m` on `--data`: one run (or an
/// ensemble), or with `search` a hyperparameter search whose trials start from this run.
///
/// # Errors
/// Flags that do not fit the family or the file, unreadable data, training failures.
pub(super) fn train_table(args: &TrainArgs, search: Option<&Search>) -> Result<()> {
    let shared = &args.shared;
    let data = shared.data.clone().context(match shared.model {
        ModelArg::TransformerM => "--model transformer-m needs --data or --dataset qm9",
        _ => "--data is required for --model mat",
    })?;
    let source = shared
        .structure
        .source(&data, &shared.smiles_column, shared.delimiter)?;
    let coords = coords_for(shared.coords, &source);
    if let ModelArg::TransformerM = shared.model
        && !matches!(args.tm.mode, ModeArg::TwoD)
        && !matches!(coords, CoordsArg::Embed3d | CoordsArg::File)
    {
        bail!(
            "--mode {} needs 3D conformers, but --coords {} gives none (every molecule \
             would run in 2D): use --coords embed3d or --mode 2d",
            spelling(&args.tm.mode),
            spelling(&coords)
        );
    }
    let request = TableRequest {
        source: source.clone(),
        targets: match &shared.targets_from {
            Some(range) => TargetSelection::From(range.clone()),
            None => TargetSelection::Columns(shared.targets.clone()),
        },
        task: shared.task.map(|t| match t {
            TaskArg::Regression => Task::Regression,
            TaskArg::Classification => Task::Classification,
        }),
        split: match &shared.splits {
            Some(path) => SplitRequest::File {
                path: path.clone(),
                name: shared.split.clone(),
            },
            None => SplitRequest::Named {
                name: shared.split.clone(),
                seed: shared.seed,
            },
        },
    };
    let resolved = request.resolve()?;
    let (targets, task, split) = (resolved.targets, resolved.task, resolved.split);
    let engine = &shared.engine;
    let control = RunControl {
        conformer_cache: conformer_cache_dir(shared.cache.clone(), shared.no_cache),
        ..engine.control()?
    };
    let featurizer = featurizer(coords, shared.seed, args.mat.reference_compat);
    if let ModelArg::TransformerM = shared.model {
        if matches!(shared.preset, PresetArg::Pretrained) {
            bail!("--preset pretrained is MAT's; use small or base for Transformer-M");
        }
        let model = tm_config(matches!(shared.preset, PresetArg::Base), &args.tm.size)?
            .with_num_targets(targets.len());
        let data = TmData::Table(TableSource {
            molecules: SmilesSource {
                path: data,
                format: source.format.clone(),
                smiles_column: shared.smiles_column.clone(),
                delimiter: shared.delimiter,
                conformer: featurizer.conformer,
            },
            split,
        });
        let labels = (targets, task, shared.units.clone());
        let spec = tm_run_spec(args, data, labels, model)?;
        let device = engine.main_device()?;
        if let Some(search) = search {
            return search.run(
                task,
                &control,
                serde_json::to_value(&spec)?,
                &|out, settings, control| {
                    let spec = train::hpopt::tm_trial(&spec, settings)?;
                    train_transformer_m(&spec, out, control, &device)
                },
            );
        }
        return train_members(shared, task, &control, |out, seed| {
            let mut spec = spec.clone();
            spec.train.seed = seed;
            train_transformer_m(&spec, out, &control, &device)
        });
    }
    let model = match &args.mat.config {
        Some(path) => mat_config_file(path, targets.len(), featurizer.d_atom())?,
        None => match shared.preset {
            PresetArg::Small => MatConfig::small(),
            PresetArg::Pretrained => MatConfig::pretrained(),
            PresetArg::Base | PresetArg::Molgpt => bail!(
                "--preset {} is not MAT's; use small or pretrained",
                spelling(&shared.preset)
            ),
        }
        .with_num_targets(targets.len()),
    };
    // --init-from a MAT pretraining run: its architecture, a fresh generator.
    let (init_from, model) = match &shared.init_from {
        Some(run) => {
            if args.mat.pretrained.is_some() {
                bail!("--init-from and --pretrained both name a starting point; give one");
            }
            if matches!(shared.preset, PresetArg::Pretrained) {
                bail!(
                    "--init-from takes the pretraining run's architecture; drop --preset \
                     pretrained (that preset is for the published checkpoint, --pretrained)"
                );
            }
            // A shipped model (`pretrained:<name>`) becomes its folder in this run's cache,
            // named by the model's hash, and the run records that folder: a resume finds
            // the same weights, and the run says which shipped model it started from.
            let run = &train::mat::locate_pretraining_run(run, shared.cache.as_deref())
                .with_context(|| format!("--init-from {}", run.display()))?;
            let (file, model, pre_featurizer) =
                train::mat::resolve_mat_init_from(run, targets.len())
                    .with_context(|| format!("--init-from {}", run.display()))?;
            if pre_featurizer.reference_compat != featurizer.reference_compat {
                bail!(
                    "--init-from {}: pretrained with --reference-compat {}, this run has {}",
                    run.display(),
                    pre_featurizer.reference_compat,
                    featurizer.reference_compat
                );
            }
            if pre_featurizer.conformer.method != featurizer.conformer.method {
                eprintln!(
                    "note: {} pretrained on {:?} coordinates, this run uses {:?}",
                    run.display(),
                    pre_featurizer.conformer.method,
                    featurizer.conformer.method
                );
            }
            if model.d_atom != featurizer.d_atom() {
                bail!(
                    "--init-from {}: pretrained on d_atom {}, this run's features have {}",
                    run.display(),
                    model.d_atom,
                    featurizer.d_atom()
                );
            }
            println!(
                "initialising the embedding and encoder from {} (d_model {}, layers {}, heads {})",
                file.display(),
                model.d_model,
                model.num_layers,
                model.num_heads
            );
            (Some(run.clone()), model)
        }
        None => (None, model),
    };
    // A MAT with edge features reads the bond features: the featurizer makes them.
    let featurizer = mol_featurize::MatFeaturizer {
        edge_features: model.use_edge_features,
        ..featurizer
    };
    let spec = RunSpec {
        kind: RunKind::Mat,
        data,
        format: source.format,
        smiles_column: shared.smiles_column.clone(),
        delimiter: shared.delimiter,
        target_columns: targets,
        units: shared.units.clone(),
        split,
        task,
        featurizer,
        model,
        train: options(shared, train::train_options::MAT_WARMUP_FRACTION),
        target_mean: Vec::new(),
        target_std: Vec::new(),
        pretrained: args.mat.pretrained.clone(),
        init_from,
    };
    let device = engine.main_device()?;
    if let Some(search) = search {
        return search.run(
            task,
            &control,
            serde_json::to_value(&spec)?,
            &|out, settings, control| {
                train_run(
                    &train::hpopt::mat_trial(&spec, settings)?,
                    out,
                    control,
                    &device,
                )
            },
        );
    }
    train_members(shared, task, &control, |out, seed| {
        let mut spec = spec.clone();
        spec.train.seed = seed;
        train_run(&spec, out, &control, &device)
    })
}

/// The MAT architecture of `--config path` ([`MatConfig::from_json_file_text`]) for a run
/// with `num_targets` targets and features of width `d_atom`.
///
/// # Errors
/// Unreadable file, a refused setting, or an `n_output` / `num_targets` or `d_atom` that
/// contradicts the data.
fn mat_config_file(path: &Path, num_targets: usize, d_atom: usize) -> Result<MatConfig> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("--config {}", path.display()))?;
    let config = MatConfig::from_json_file_text(&text)
        .with_context(|| format!("--config {}", path.display()))?;
    let keys: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_default();
    if (keys.contains_key("n_output") || keys.contains_key("num_targets"))
        && config.num_targets != num_targets
    {
        bail!(
            "--config {}: {} outputs, but the data has {num_targets} target column(s)",
            path.display(),
            config.num_targets
        );
    }
    if keys.contains_key("d_atom") && config.d_atom != d_atom {
        bail!(
            "--config {}: d_atom {}, but this run's atom features have {d_atom} (MAT's \
             featurizer; --reference-compat changes it)",
            path.display(),
            config.d_atom
        );
    }
    Ok(config.with_num_targets(num_targets).with_d_atom(d_atom))
}
