//! The two set similarities behind MOSES's metrics (`moses/metrics/utils.py` and
//! `metrics.py`): nearest-neighbour / mean Tanimoto over fingerprints (SNN, IntDiv) and
//! the cosine similarity of two count tables (Frag, Scaf).

use std::collections::HashMap;

use mol_featurize::MorganFingerprint;
use rayon::prelude::*;

/// How `average_agg_tanimoto` aggregates one generated molecule's similarities to the
/// stock set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// The largest similarity (SNN).
    Max,
    /// The mean similarity (IntDiv).
    Mean,
}

/// MOSES's `average_agg_tanimoto(stock, gen, agg, p)`: for each generated fingerprint,
/// the max or the mean over `stock` of `tanimoto^p` (0/0 counts as 1), then to the power
/// `1/p`, averaged over `generated`. NaN for an empty `generated`; an empty `stock` gives 0 (max) or
/// NaN (mean), as the original's arrays do.
///
/// Cost: `|stock| x |generated|` popcounts over the fingerprints' words, parallel over `generated`
/// (rayon), with the CPU's `popcnt` instruction where it has one (MOSES's SNN against its
/// test set is 176k x 30k pairs).
///
/// # Panics
/// If the fingerprints do not all have the same length.
pub fn average_agg_tanimoto(
    stock: &[MorganFingerprint],
    generated: &[MorganFingerprint],
    aggregate: Aggregate,
    p: f64,
) -> f64 {
    if generated.is_empty() {
        return f64::NAN;
    }
    let width = generated[0].words().len();
    let mut flat = Vec::with_capacity(stock.len() * width);
    for s in stock {
        assert_eq!(s.words().len(), width, "fingerprint lengths");
        flat.extend_from_slice(s.words());
    }
    let counts: Vec<u32> = stock.iter().map(MorganFingerprint::count_ones).collect();
    let per_gen: Vec<f64> = generated
        .par_iter()
        .map(|g| {
            assert_eq!(g.words().len(), width, "fingerprint lengths");
            let mut acc = 0.0f64;
            scan(&flat, &counts, g.words(), |t| {
                let t = if p != 1.0 { t.powf(p) } else { t };
                acc = match aggregate {
                    Aggregate::Max => acc.max(t),
                    Aggregate::Mean => acc + t,
                };
            });
            if aggregate == Aggregate::Mean {
                acc /= stock.len() as f64;
            }
            if p != 1.0 { acc.powf(1.0 / p) } else { acc }
        })
        .collect();
    per_gen.iter().sum::<f64>() / per_gen.len() as f64
}

/// Calls `visit` with the Tanimoto similarity of `query` to each row of `flat` (rows of
/// `query.len()` words, `counts` their popcounts), in row order.
fn scan(flat: &[u64], counts: &[u32], query: &[u64], visit: impl FnMut(f64)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has popcnt (checked just above).
        unsafe { scan_popcnt(flat, counts, query, visit) };
        return;
    }
    scan_portable(flat, counts, query, visit);
}

#[inline(always)]
fn scan_portable(flat: &[u64], counts: &[u32], query: &[u64], mut visit: impl FnMut(f64)) {
    let q: u32 = query.iter().map(|w| w.count_ones()).sum();
    for (row, &c) in flat.chunks_exact(query.len()).zip(counts) {
        let common: u32 = row
            .iter()
            .zip(query)
            .map(|(a, b)| (a & b).count_ones())
            .sum();
        let union = c + q - common;
        visit(if union == 0 {
            1.0
        } else {
            f64::from(common) / f64::from(union)
        });
    }
}

/// [`scan_portable`] compiled with the `popcnt` instruction (the baseline x86-64 target
/// counts bits with a dozen instructions per word).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn scan_popcnt(flat: &[u64], counts: &[u32], query: &[u64], visit: impl FnMut(f64)) {
    scan_portable(flat, counts, query, visit);
}

/// MOSES's `cos_similarity(ref_counts, gen_counts)`: the cosine similarity of two count
/// tables over the union of their keys (absent keys count 0); NaN when either is empty.
pub fn cos_similarity(reference: &HashMap<String, u64>, generated: &HashMap<String, u64>) -> f64 {
    if reference.is_empty() || generated.is_empty() {
        return f64::NAN;
    }
    let dot: f64 = generated
        .iter()
        .filter_map(|(k, g)| reference.get(k).map(|r| *r as f64 * *g as f64))
        .sum();
    let norm =
        |m: &HashMap<String, u64>| m.values().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
    dot / (norm(reference) * norm(generated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(bits: &[usize]) -> MorganFingerprint {
        let mut words = vec![0u64; 2];
        for &b in bits {
            words[b / 64] |= 1 << (b % 64);
        }
        MorganFingerprint::from_words(words)
    }

    #[test]
    fn max_and_mean_by_hand() {
        let stock = [fp(&[0, 1]), fp(&[2, 3])];
        let generated = [fp(&[0, 1, 2]), fp(&[100])];
        // gen0: 2/3 and 1/4; gen1: 0 and 0.
        let max = average_agg_tanimoto(&stock, &generated, Aggregate::Max, 1.0);
        assert!((max - (2.0 / 3.0) / 2.0).abs() < 1e-12);
        let mean = average_agg_tanimoto(&stock, &generated, Aggregate::Mean, 1.0);
        assert!((mean - (2.0 / 3.0 + 0.25) / 2.0 / 2.0).abs() < 1e-12);
        let mean2 = average_agg_tanimoto(&stock, &generated, Aggregate::Mean, 2.0);
        let want = (((4.0 / 9.0 + 1.0 / 16.0) / 2.0f64).sqrt() + 0.0) / 2.0;
        assert!((mean2 - want).abs() < 1e-12);
    }

    #[test]
    fn cosine_by_hand() {
        let r: HashMap<String, u64> = [("a".into(), 2), ("b".into(), 1)].into();
        let g: HashMap<String, u64> = [("a".into(), 1), ("c".into(), 3)].into();
        let want = 2.0 / (5.0f64.sqrt() * 10.0f64.sqrt());
        assert!((cos_similarity(&r, &g) - want).abs() < 1e-12);
        assert!(cos_similarity(&r, &HashMap::new()).is_nan());
    }
}
