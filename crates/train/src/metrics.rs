//! Evaluation metrics. burn-train has none of these, so they live here.

/// Root-mean-square error, in the targets' unit (e.g. kcal/mol).
/// Returns NaN for empty input.
pub fn rmse(pred: &[f32], target: &[f32]) -> f64 {
    mse(pred, target).sqrt()
}

/// Mean squared error.
pub fn mse(pred: &[f32], target: &[f32]) -> f64 {
    let n = pred.len().min(target.len());
    pred.iter()
        .zip(target)
        .map(|(p, t)| (*p as f64 - *t as f64).powi(2))
        .sum::<f64>()
        / n as f64
}

/// Mean absolute error, in the targets' unit.
pub fn mae(pred: &[f32], target: &[f32]) -> f64 {
    let n = pred.len().min(target.len());
    pred.iter()
        .zip(target)
        .map(|(p, t)| (*p as f64 - *t as f64).abs())
        .sum::<f64>()
        / n as f64
}

/// Area under the ROC curve of `scores` against binary `labels` (label > 0.5 =
/// positive), with ties counted one half (the Mann-Whitney U statistic, as
/// scikit-learn's `roc_auc_score`). `None` when only one class is present.
pub fn roc_auc(scores: &[f32], labels: &[f32]) -> Option<f64> {
    let mut pairs: Vec<(f32, bool)> = scores
        .iter()
        .zip(labels)
        .map(|(s, l)| (*s, *l > 0.5))
        .collect();
    let n_pos = pairs.iter().filter(|p| p.1).count();
    let n_neg = pairs.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return None;
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Sum of (average) ranks of the positives.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < pairs.len() {
        let mut j = i;
        while j + 1 < pairs.len() && pairs[j + 1].0 == pairs[i].0 {
            j += 1;
        }
        let average_rank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum += average_rank * pairs[i..=j].iter().filter(|p| p.1).count() as f64;
        i = j + 1;
    }
    let u = rank_sum - (n_pos * (n_pos + 1)) as f64 / 2.0;
    Some(u / (n_pos * n_neg) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_metrics() {
        let p = [1.0, 2.0, 3.0];
        let t = [1.0, 4.0, 0.0];
        assert!((rmse(&p, &t) - (13.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((mae(&p, &t) - 5.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn roc_auc_matches_sklearn() {
        // sklearn.metrics.roc_auc_score([0,0,1,1], [0.1,0.4,0.35,0.8]) == 0.75
        assert_eq!(
            roc_auc(&[0.1, 0.4, 0.35, 0.8], &[0.0, 0.0, 1.0, 1.0]),
            Some(0.75)
        );
        // ties: roc_auc_score([0,1,0,1], [0.5,0.5,0.2,0.9]) == 0.875
        assert_eq!(
            roc_auc(&[0.5, 0.5, 0.2, 0.9], &[0.0, 1.0, 0.0, 1.0]),
            Some(0.875)
        );
        assert_eq!(roc_auc(&[0.1, 0.2], &[1.0, 1.0]), None);
    }
}
