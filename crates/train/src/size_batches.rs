//! Inference batches grouped by molecule size (issue #37): molecules are padded to the
//! largest of their batch, so one 5,000-atom molecule among small ones made every
//! matrix of its batch 5,000 x 5,000 (a 3.2 GB allocation for 32 molecules). Inference
//! sorts by size, fills a batch up to `batch_size` molecules and a budget of padded
//! atom pairs, and puts every output back at its input's place. Training batches are
//! not touched: their order is the run's seeded shuffle.

/// Padded atom pairs one inference batch may hold: `batch_size` molecules of 128 atoms
/// at the default batch size of 32 (a batch of larger molecules holds fewer of them,
/// at least one).
pub const MAX_BATCH_PAIRS: usize = 32 * 128 * 128;

/// Batches of indices into `sizes` (atoms of each molecule, padding included as the
/// model pads: MAT's dummy node counts), smallest molecules first: each batch has at
/// most `batch_size` molecules and, past its first molecule, at most
/// [`MAX_BATCH_PAIRS`] padded pairs (count x largest size squared).
pub fn size_grouped(sizes: &[usize], batch_size: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    // Stable: molecules of one size keep their input order.
    order.sort_by_key(|&i| sizes[i]);
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        // Sorted ascending: molecule i is the largest of `current` once added.
        let pairs = (current.len() + 1) * sizes[i] * sizes[i];
        if !current.is_empty() && (current.len() >= batch_size.max(1) || pairs > MAX_BATCH_PAIRS) {
            batches.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

/// Runs `forward` on the [`size_grouped`] batches of `sizes` and returns its rows in
/// input order (`forward` gets the batch's indices and returns one row per index).
///
/// # Errors
/// The first error of `forward`.
pub fn predict_grouped<E>(
    sizes: &[usize],
    batch_size: usize,
    mut forward: impl FnMut(&[usize]) -> Result<Vec<Vec<f32>>, E>,
) -> Result<Vec<Vec<f32>>, E> {
    let mut out: Vec<Vec<f32>> = vec![Vec::new(); sizes.len()];
    for batch in size_grouped(sizes, batch_size) {
        for (&i, row) in batch.iter().zip(forward(&batch)?) {
            out[i] = row;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One large molecule gets a batch of its own; the small ones are batched together
    /// up to the batch size; every output returns to its input's place.
    #[test]
    fn a_large_molecule_does_not_inflate_the_others_batch() {
        let mut sizes = vec![20; 60];
        sizes[7] = 5001;
        sizes[30] = 300;
        let batches = size_grouped(&sizes, 32);
        assert!(batches.iter().all(|b| b.len() <= 32));
        let of = |i: usize| batches.iter().find(|b| b.contains(&i)).unwrap();
        assert_eq!(of(7), &vec![7]);
        // 300^2 x 6 = 540,000 > the budget: at most 5 molecules of 300 atoms.
        assert!(of(30).iter().all(|&i| sizes[i] <= 300));
        let largest_small_batch = batches
            .iter()
            .filter(|b| b.iter().all(|&i| sizes[i] == 20))
            .map(Vec::len)
            .max();
        assert_eq!(largest_small_batch, Some(32));
        let mut seen: Vec<usize> = batches.concat();
        seen.sort();
        assert_eq!(seen, (0..60).collect::<Vec<_>>());
        // Rows come back in input order.
        let out = predict_grouped(&sizes, 32, |batch| {
            Ok::<_, ()>(batch.iter().map(|&i| vec![i as f32]).collect())
        })
        .unwrap();
        assert!(out.iter().enumerate().all(|(i, r)| r == &vec![i as f32]));
        // The pair budget: 16 molecules of 200 atoms (640,000 pairs) split.
        let batches = size_grouped(&[200; 16], 32);
        assert!(
            batches
                .iter()
                .all(|b| b.len() * 200 * 200 <= MAX_BATCH_PAIRS)
        );
    }
}
