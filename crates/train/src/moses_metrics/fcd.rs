//! The Fréchet ChemNet Distance (Preuer et al. 2018; MOSES's `FCD/<ref>`, computed by
//! `fcd_torch` 1.0.7's `FCD`): the Fréchet distance between the Gaussians (mean and
//! covariance) of ChemNet's activations on the canonical SMILES of two sets,
//! `|mu1 - mu2|^2 + tr(S1 + S2 - 2 (S1 S2)^(1/2))`.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use burn::prelude::*;
use models::chemnet::{CHEMNET_WIDTH, ChemNet};
use mol_featurize::chemnet_input::{CHEMNET_ALPHABET, CHEMNET_LENGTH, chemnet_one_hot};
use nalgebra::{DMatrix, SymmetricEigen};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::canonic_smiles;
use super::stats::{MetricFailure, cache_key};
use crate::checkpoint::write_file_atomically;
use crate::error::TrainError;

/// Molecules per ChemNet batch (fcd_torch's default `batch_size=512`).
pub const CHEMNET_BATCH: usize = 512;

/// Mean `[512]` and covariance `[512 x 512]` (row-major, `np.cov`: normalised by `n - 1`)
/// of ChemNet's activations over a set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChemNetStats {
    /// Molecules behind the statistics.
    pub n: usize,
    /// Mean activation.
    pub mu: Vec<f64>,
    /// Covariance, row-major.
    pub sigma: Vec<f64>,
    /// SMILES left out (not molecules).
    pub failures: Vec<MetricFailure>,
}

/// ChemNet's activations `[n, 512]` (row-major) of `smiles` as given (fcd_torch reads
/// canonical SMILES: pass them canonical), batched on `device`; `progress` gets the count
/// done.
pub fn chemnet_activations(
    model: &ChemNet,
    smiles: &[String],
    device: &Device,
    progress: impl Fn(usize),
) -> Vec<f32> {
    let width = CHEMNET_LENGTH * CHEMNET_ALPHABET.len();
    let mut out = Vec::with_capacity(smiles.len() * CHEMNET_WIDTH);
    for (i, chunk) in smiles.chunks(CHEMNET_BATCH).enumerate() {
        let x: Vec<f32> = chunk
            .par_iter()
            .flat_map_iter(|s| chemnet_one_hot(s))
            .collect();
        debug_assert_eq!(x.len(), chunk.len() * width);
        let x = Tensor::<3>::from_data(
            TensorData::new(x, [chunk.len(), CHEMNET_LENGTH, CHEMNET_ALPHABET.len()]),
            device,
        );
        let a = model.forward(x).into_data();
        out.extend(a.iter::<f32>());
        progress(i * CHEMNET_BATCH + chunk.len());
    }
    out
}

impl ChemNetStats {
    /// The statistics of ChemNet's activations on the canonical SMILES of `smiles`
    /// (SMILES that are not molecules are left out and listed).
    pub fn compute(
        model: &ChemNet,
        smiles: &[String],
        device: &Device,
        progress: impl Fn(usize),
    ) -> Self {
        let done = AtomicUsize::new(0);
        let canonical: Vec<Result<String, MetricFailure>> = smiles
            .par_iter()
            .map(|s| {
                done.fetch_add(1, Ordering::Relaxed);
                canonic_smiles(s).ok_or_else(|| MetricFailure {
                    smiles: s.clone(),
                    part: "chemnet".into(),
                    reason: "not a molecule".into(),
                })
            })
            .collect();
        let (ok, failures): (Vec<_>, Vec<_>) = canonical.into_iter().partition(Result::is_ok);
        let ok: Vec<String> = ok.into_iter().map(Result::unwrap).collect();
        let failures = failures.into_iter().map(|r| r.unwrap_err()).collect();
        let acts = chemnet_activations(model, &ok, device, progress);
        let (mu, sigma) = mean_and_covariance(&acts, ok.len(), CHEMNET_WIDTH);
        ChemNetStats {
            n: ok.len(),
            mu,
            sigma,
            failures,
        }
    }

    /// [`ChemNetStats::compute`] kept in `cache_dir` (keyed by the SMILES list and the
    /// statistics version, as the other reference statistics; the weights are fcd_torch
    /// 1.0.7's, SHA-256 checked when fetched). A cached file of the wrong shape is
    /// recomputed.
    ///
    /// # Errors
    /// A cache file that cannot be written.
    pub fn cached(
        model: &ChemNet,
        smiles: &[String],
        device: &Device,
        cache_dir: &Path,
        progress: impl Fn(usize),
    ) -> Result<Self, TrainError> {
        let path = cache_dir.join(format!("chemnet-{}.json", cache_key(smiles)));
        if let Some(stats) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<ChemNetStats>(&b).ok())
            .filter(|s| {
                s.mu.len() == CHEMNET_WIDTH
                    && s.sigma.len() == CHEMNET_WIDTH * CHEMNET_WIDTH
                    && s.n + s.failures.len() == smiles.len()
            })
        {
            progress(smiles.len());
            return Ok(stats);
        }
        let stats = Self::compute(model, smiles, device, progress);
        std::fs::create_dir_all(cache_dir).map_err(|e| TrainError::io(cache_dir, e))?;
        let bytes = serde_json::to_vec(&stats).map_err(|e| TrainError::Invalid(e.to_string()))?;
        write_file_atomically(&path, &bytes)?;
        Ok(stats)
    }
}

/// Column means and the unbiased covariance (`np.cov(x.T)`) of `x: [n, d]`, in f64; NaN
/// for fewer than two rows (fcd_torch refuses them).
pub fn mean_and_covariance(x: &[f32], n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    if n < 2 {
        return (vec![f64::NAN; d], vec![f64::NAN; d * d]);
    }
    let mut mu = vec![0f64; d];
    for row in x.chunks_exact(d) {
        for (m, v) in mu.iter_mut().zip(row) {
            *m += f64::from(*v);
        }
    }
    mu.iter_mut().for_each(|m| *m /= n as f64);
    // Summed over blocks of rows: an [n, d] f64 copy of MOSES's 176k x 512 activations would
    // be 720 MB.
    let mut cov = DMatrix::<f64>::zeros(d, d);
    for block in x[..n * d].chunks(4096 * d) {
        let rows = block.len() / d;
        let centred = DMatrix::from_fn(rows, d, |i, j| f64::from(block[i * d + j]) - mu[j]);
        cov += centred.tr_mul(&centred);
    }
    let cov = cov / (n as f64 - 1.0);
    let sigma = (0..d * d).map(|k| cov[(k / d, k % d)]).collect();
    (mu, sigma)
}

/// The Fréchet distance between two Gaussians (fcd_torch's `calculate_frechet_distance`).
/// `tr((S1 S2)^(1/2))` is computed as the sum of the square roots of the eigenvalues of
/// the symmetric `S1^(1/2) S2 S1^(1/2)` (the same eigenvalues as `S1 S2`; scipy's `sqrtm`
/// takes the real part of a Schur-based root instead); negative eigenvalues from rounding
/// count as 0.
pub fn frechet_distance(a: &ChemNetStats, b: &ChemNetStats) -> f64 {
    let d = a.mu.len();
    let s1 = DMatrix::from_row_slice(d, d, &a.sigma);
    let s2 = DMatrix::from_row_slice(d, d, &b.sigma);
    let diff: f64 = a.mu.iter().zip(&b.mu).map(|(x, y)| (x - y).powi(2)).sum();
    let root = |m: DMatrix<f64>| {
        let e = SymmetricEigen::new(m);
        let l = e.eigenvalues.map(|v| v.max(0.0).sqrt());
        &e.eigenvectors * DMatrix::from_diagonal(&l) * e.eigenvectors.transpose()
    };
    let r1 = root(s1.clone());
    let m = &r1 * &s2 * &r1;
    let m = (&m + m.transpose()) * 0.5;
    let tr_covmean: f64 = SymmetricEigen::new(m)
        .eigenvalues
        .iter()
        .map(|v| v.max(0.0).sqrt())
        .sum();
    diff + s1.trace() + s2.trace() - 2.0 * tr_covmean
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(mu: Vec<f64>, sigma: Vec<f64>) -> ChemNetStats {
        ChemNetStats {
            n: 10,
            mu,
            sigma,
            failures: Vec::new(),
        }
    }

    #[test]
    fn frechet_distance_by_hand() {
        // Diagonal covariances: |mu1 - mu2|^2 + sum (sqrt(a) - sqrt(b))^2.
        let a = stats(vec![0.0, 1.0], vec![4.0, 0.0, 0.0, 1.0]);
        let b = stats(vec![1.0, 1.0], vec![1.0, 0.0, 0.0, 9.0]);
        let want = 1.0 + (2.0f64 - 1.0).powi(2) + (1.0f64 - 3.0).powi(2);
        assert!((frechet_distance(&a, &b) - want).abs() < 1e-9);
        assert!(frechet_distance(&a, &a).abs() < 1e-9);
        // A rotated, non-diagonal covariance against itself is 0 too.
        let c = stats(vec![0.0, 0.0], vec![2.0, 1.0, 1.0, 2.0]);
        assert!(frechet_distance(&c, &c).abs() < 1e-9);
    }

    #[test]
    fn covariance_as_numpy() {
        // np.cov(np.array([[1, 2], [3, 6], [5, 7]]).T) = [[4, 5], [5, 7]].
        let (mu, sigma) = mean_and_covariance(&[1.0, 2.0, 3.0, 6.0, 5.0, 7.0], 3, 2);
        assert_eq!(mu, vec![3.0, 5.0]);
        let want = [4.0, 5.0, 5.0, 7.0];
        for (g, w) in sigma.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{sigma:?}");
        }
    }
}
