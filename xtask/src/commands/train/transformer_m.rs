//! `train --model transformer-m --dataset qm9` and `--init-from`; `pretrain` shares the
//! size flags ([`super::tm_flags`]) and the pretraining call.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use models::transformer_m::TransformerMConfig;
use train::transformer_m::{
    PretrainSpec, Qm9Subset, TmData, TmRunSpec, pretrain_denoising, resolve_init_from,
    train_transformer_m,
};

use super::tm_flags::{TmSizeArgs, tm_config};
use super::{TrainArgs, options, train_members};
use crate::commands::common::PresetArg;
use crate::commands::engine_args::EngineArgs;

/// `--init-from`: the model file to start from and the configuration to build (see
/// [`resolve_init_from`]); prints what it loads.
///
/// # Errors
/// Not a pretraining run or model file; a size conflict.
pub fn resolve_tm_init(
    init_from: Option<&Path>,
    model: TransformerMConfig,
    size: &TmSizeArgs,
) -> Result<(Option<PathBuf>, TransformerMConfig)> {
    let Some(p) = init_from else {
        return Ok((None, model));
    };
    let (file, model) = resolve_init_from(p, model, size.overrides().any())
        .with_context(|| format!("--init-from {}", p.display()))?;
    println!(
        "initialising from {} (layers {}, d_model {}, heads {}, kernels {})",
        file.display(),
        model.num_layers,
        model.d_model,
        model.num_heads,
        model.num_kernels
    );
    Ok((Some(file), model))
}

/// `train --model transformer-m --dataset qm9`: trains and prints the metrics (one run:
/// `--ensemble-size` is refused for QM9, whose split follows the seed).
///
/// # Errors
/// No QM9 target, a MAT preset, QM9 unavailable, training failures.
pub fn train_qm9(args: &TrainArgs) -> Result<()> {
    let shared = &args.shared;
    if shared.targets == ["y"] {
        bail!("--dataset qm9 needs --target with a QM9 column, e.g. --target HOMO_LUMO_gap_au");
    }
    if matches!(shared.preset, PresetArg::Pretrained) {
        bail!("--preset pretrained is MAT's; use small or base for Transformer-M");
    }
    let dataset = train::datasets::qm9(
        &mol_featurize::cache::cache_root(shared.cache.clone()),
        false,
    )?;
    let model = tm_config(matches!(shared.preset, PresetArg::Base), &args.tm.size)?
        .with_num_targets(shared.targets.len());
    let control = shared.engine.control()?;
    let device = &shared.engine.main_device()?;
    let data = TmData::Qm9(Qm9Subset {
        dataset,
        limit: args.tm.limit,
        offset: args.tm.offset,
        subset_seed: 0,
    });
    let task = train::Task::Regression;
    let labels = (shared.targets.clone(), task, None);
    let spec = tm_run_spec(args, data, labels, model)?;
    train_members(shared, task, &control, |out, seed| {
        let mut spec = spec.clone();
        spec.train.seed = seed;
        train_transformer_m(&spec, out, &control, device)
    })
}

/// The spec of a Transformer-M run on `data` with `(target columns, task, units)` and the
/// preset `model`: `--mode`, `--loss` (for the task), `--init-from` (which may replace the
/// size) and the optimisation flags applied.
///
/// # Errors
/// `--init-from` is not a pretraining run or model file, or conflicts with the size.
pub(super) fn tm_run_spec(
    args: &TrainArgs,
    data: TmData,
    (target_columns, task, units): (Vec<String>, train::Task, Option<String>),
    model: TransformerMConfig,
) -> Result<TmRunSpec> {
    let (init_from, model) =
        resolve_tm_init(args.shared.init_from.as_deref(), model, &args.tm.size)?;
    let model = model.with_readout(args.tm.readout.readout());
    let (modes, eval_mode) = args.tm.mode.probabilities();
    let loss_scale = args.tm.target_scaling.loss_scale();
    if task == train::Task::Classification && loss_scale != train::masked_loss::LossScale::StdLabels
    {
        anyhow::bail!(
            "--target-scaling std-logits is for regression; classification takes BCE on 0/1 labels"
        );
    }
    if args.tm.clip_norm.is_some() && args.shared.engine.devices.len() > 1 {
        // Each device clips its own gradients before burn-train merges them: that is not
        // the global norm the original clips (one process, one norm).
        anyhow::bail!(
            "--clip-norm clips the gradients' global norm on one device; with --devices each \
             device would clip its own share. Train on one device to clip"
        );
    }
    Ok(TmRunSpec {
        kind: train::RunKind::TransformerM,
        data,
        target_columns,
        task,
        loss: task.loss(args.tm.loss.kind()),
        criterion: train::transformer_m::TmCriterion {
            loss_scale,
            clip_norm: args.tm.clip_norm,
        },
        units,
        modes,
        eval_mode,
        model,
        train: options(&args.shared, train::transformer_m::WARMUP_FRACTION),
        init_from,
        target_mean: Vec::new(),
        target_std: Vec::new(),
    })
}

/// Runs denoising pretraining (conformers cached in `conformer_cache`) and prints the
/// loss at the start and end.
///
/// # Errors
/// Bad data, devices or settings; pretraining failures.
pub fn pretrain(
    spec: PretrainSpec,
    out: &Path,
    engine: &EngineArgs,
    conformer_cache: Option<PathBuf>,
) -> Result<()> {
    let control = train::RunControl {
        conformer_cache,
        ..engine.control()?
    };
    let s = pretrain_denoising(&spec, out, &control, &engine.main_device()?)?;
    println!(
        "denoising loss {:.4} (first 10% of steps) -> {:.4} (last 10%) over {} steps on {} \
         molecules, {:.0} s; wrote {}",
        s.loss_start,
        s.loss_end,
        s.loss.len(),
        s.n_molecules,
        s.seconds,
        out.join("pretrained_model.bpk").display()
    );
    Ok(())
}
