//! Losses over multi-task targets with missing labels (chemprop's convention): each
//! label cell contributes where it is present, and the sum is divided by the number of
//! present cells, so a table without missing labels gets the plain mean.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::target_scaling::TargetScaling;

/// Which loss a supervised step takes over [`MaskedTargets`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// [`MaskedTargets::mse`] (MAT's regression loss).
    Mse,
    /// [`MaskedTargets::l1`] (Transformer-M's regression loss, as the original trains
    /// PCQM4Mv2).
    L1,
    /// [`MaskedTargets::bce_with_logits`] (binary classification).
    BceWithLogits,
}

/// Labels of one batch as the losses take them.
#[derive(Debug, Clone)]
pub struct MaskedTargets {
    /// Labels (standardised for regression, 0/1 for classification), 0 where missing;
    /// `[B, T]`.
    pub values: Tensor<2>,
    /// 1 where a label is present, 0 where missing; `[B, T]`.
    pub mask: Tensor<2>,
    /// Number of present labels (at least 1 for the division).
    pub present: f32,
    /// Labels in target units, NaN where missing; `[B, T]` (for the metrics).
    pub raw: Tensor<2>,
    /// Per-target factors `[1, T]` on each difference before the L1 / MSE reduction
    /// ([`MaskedTargets::in_target_units`]); `None` = 1.
    pub unit_weights: Option<Tensor<2>>,
}

/// Where the regression loss is computed (the original Transformer-M's `--std-type` of
/// its QM9 criterion, `graph_prediction_qm9` in `criterions/graph_prediction.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LossScale {
    /// On standardised labels, `L(pred, (y - mean) / std)` (`std_labels`; every run
    /// before this setting existed).
    #[default]
    StdLabels,
    /// In target units, `L(pred * std + mean, y)` (`std_logits`, the original's QM9
    /// default): the standardised difference times `std` per target.
    StdLogits,
}

impl MaskedTargets {
    /// Targets of a batch: `rows[b][t]` in target units (NaN = missing), standardised
    /// by `scaling` ([`TargetScaling::scale`]; as they are for a task without scaling).
    pub fn new(rows: &[&[f32]], scaling: &TargetScaling, device: &Device) -> Self {
        let b = rows.len();
        let t = rows.first().map_or(0, |r| r.len());
        let mut values = Vec::with_capacity(b * t);
        let mut mask = Vec::with_capacity(b * t);
        let mut raw = Vec::with_capacity(b * t);
        for row in rows {
            for (j, &y) in row.iter().enumerate() {
                raw.push(y);
                if y.is_finite() {
                    values.push(scaling.scale(j, y));
                    mask.push(1.0f32);
                } else {
                    values.push(0.0);
                    mask.push(0.0);
                }
            }
        }
        let present = mask.iter().sum::<f32>().max(1.0);
        let tensor = |v: Vec<f32>| Tensor::<2>::from_data(TensorData::new(v, [b, t]), device);
        Self {
            values: tensor(values),
            mask: tensor(mask),
            present,
            raw: tensor(raw),
            unit_weights: None,
        }
    }

    /// The regression losses taken in target units ([`LossScale::StdLogits`]): each
    /// difference of target `t` times `std[t]`, so L1 is `|pred * std + mean - y|` and
    /// MSE its square, as the original computes them. `std` is the
    /// [`TargetScaling::std`] the labels were standardised with.
    pub fn in_target_units(mut self, std: &[f32]) -> Self {
        let device = self.values.device();
        self.unit_weights = Some(Tensor::<2>::from_data(
            TensorData::new(std.to_vec(), [1, std.len()]),
            &device,
        ));
        self
    }

    /// `(pred - values)` over present labels, times the unit weights.
    fn differences(&self, pred: Tensor<2>) -> Tensor<2> {
        let diff = (pred - self.values.clone()) * self.mask.clone();
        match &self.unit_weights {
            Some(w) => diff * w.clone(),
            None => diff,
        }
    }

    /// The loss `kind` over present labels; `pred` `[B, T]`. Returns `[1]`.
    pub fn loss(&self, kind: LossKind, pred: Tensor<2>) -> Tensor<1> {
        match kind {
            LossKind::Mse => self.mse(pred),
            LossKind::L1 => self.l1(pred),
            LossKind::BceWithLogits => self.bce_with_logits(pred),
        }
    }

    /// Mean squared error over present labels; `pred` `[B, T]`. Returns `[1]`.
    pub fn mse(&self, pred: Tensor<2>) -> Tensor<1> {
        self.differences(pred)
            .powi_scalar(2)
            .sum()
            .div_scalar(self.present)
    }

    /// Mean absolute error over present labels; `pred` `[B, T]`. Returns `[1]`.
    pub fn l1(&self, pred: Tensor<2>) -> Tensor<1> {
        self.differences(pred).abs().sum().div_scalar(self.present)
    }

    /// Binary cross-entropy with logits over present labels (the numerically stable form
    /// `max(x, 0) - x y + log(1 + exp(-|x|))`, as PyTorch's `BCEWithLogitsLoss`); `logits`
    /// `[B, T]`. Returns `[1]`.
    pub fn bce_with_logits(&self, logits: Tensor<2>) -> Tensor<1> {
        let per_label = logits.clone().clamp_min(0.0) - logits.clone() * self.values.clone()
            + logits.abs().neg().exp().log1p();
        (per_label * self.mask.clone())
            .sum()
            .div_scalar(self.present)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_labels_do_not_count() {
        let dev = Device::flex();
        let nan = f32::NAN;
        let (r0, r1) = ([1.0, nan], [3.0, 2.0]);
        let rows: Vec<&[f32]> = vec![&r0, &r1];
        let t = MaskedTargets::new(&rows, &TargetScaling::default(), &dev);
        let pred =
            Tensor::<2>::from_data(TensorData::new(vec![2.0f32, 100.0, 1.0, 2.5], [2, 2]), &dev);
        // Present errors: 1, 2, 0.5 -> MSE (1 + 4 + 0.25) / 3, MAE 3.5 / 3.
        let mse = t.mse(pred.clone()).into_scalar::<f32>();
        assert!((mse - 5.25 / 3.0).abs() < 1e-6, "{mse}");
        let l1 = t.l1(pred).into_scalar::<f32>();
        assert!((l1 - 3.5 / 3.0).abs() < 1e-6, "{l1}");
    }

    /// `std_logits` as the original computes it: `L(pred * std + mean, y)` in target
    /// units, here by hand for two targets with different scalings and a missing label.
    #[test]
    fn target_unit_losses_are_the_originals_std_logits() {
        let dev = Device::flex();
        let scaling = TargetScaling {
            mean: vec![1.0, -2.0],
            std: vec![0.5, 4.0],
        };
        let (r0, r1) = ([2.0f32, f32::NAN], [0.0, 6.0]);
        let rows: Vec<&[f32]> = vec![&r0, &r1];
        let t = MaskedTargets::new(&rows, &scaling, &dev).in_target_units(&scaling.std);
        let p = [0.4f32, 7.0, -1.0, 1.5];
        let pred = Tensor::<2>::from_data(TensorData::new(p.to_vec(), [2, 2]), &dev);
        // pred * std + mean: 1.2, (missing), 0.5, 4.0 against 2.0, 0.0, 6.0.
        let errors = [1.2f64 - 2.0, 0.5 - 0.0, 4.0 - 6.0];
        let l1 = errors.iter().map(|e| e.abs()).sum::<f64>() / 3.0;
        let mse = errors.iter().map(|e| e * e).sum::<f64>() / 3.0;
        let got_l1 = t.l1(pred.clone()).into_scalar::<f32>() as f64;
        let got_mse = t.mse(pred).into_scalar::<f32>() as f64;
        assert!((got_l1 - l1).abs() < 1e-6, "{got_l1} vs {l1}");
        assert!((got_mse - mse).abs() < 1e-5, "{got_mse} vs {mse}");
    }

    #[test]
    fn bce_matches_the_definition_where_labels_are_present() {
        let dev = Device::flex();
        let rows: Vec<&[f32]> = vec![&[1.0], &[0.0], &[f32::NAN]];
        let t = MaskedTargets::new(&rows, &TargetScaling::default(), &dev);
        let logits =
            Tensor::<2>::from_data(TensorData::new(vec![0.5f32, -30.0, 7.0], [3, 1]), &dev);
        let got = t.bce_with_logits(logits).into_scalar::<f32>() as f64;
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        let want = (-(sig(0.5).ln()) - (1.0 - sig(-30.0)).ln()) / 2.0;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
}
