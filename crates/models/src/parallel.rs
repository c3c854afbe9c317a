//! Batch-parallel CPU inference shared by the models (`MatModel::forward_parallel`,
//! `TransformerM::forward_parallel`, the SMILES generator's sampling).
//!
//! Why by hand: Burn's flex backend parallelises large GEMMs but runs elementwise ops on
//! one thread, so a small model leaves cores idle; molecules of a padded batch do not
//! interact, so contiguous parts of them can run at once on rayon's threads
//! (docs/BENCHMARKS.md, "Both cores").

use burn::prelude::*;
use rayon::prelude::*;

/// How many parts `forward_parallel` should split a batch into for inference on `device`:
/// rayon's threads on the CPU backend (flex), 1 elsewhere (a GPU runs the batch at once)
/// and on an autodiff device, where dropout is active (MC dropout): parts running at once
/// would draw their masks from the one generator in thread order, and a seed would not
/// repeat its predictions.
pub fn inference_parts(device: &Device) -> usize {
    if *device == Device::flex() && !device.is_autodiff() {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// Runs `forward(start, end)` on `parts` contiguous parts of the `batch` molecules at once
/// on rayon's threads and concatenates the `[end - start, ...]` outputs in order along
/// the first (molecule) axis. `parts` is clamped to `1..=batch`; with 1,
/// `forward(0, batch)` runs alone.
///
/// Not for training: burn-autodiff 0.22.1 serialises concurrent graphs.
pub fn forward_in_parts<const D: usize>(
    batch: usize,
    parts: usize,
    forward: impl Fn(usize, usize) -> Tensor<D> + Sync,
) -> Tensor<D> {
    let parts = parts.clamp(1, batch.max(1));
    if parts == 1 {
        return forward(0, batch);
    }
    let outputs: Vec<Tensor<D>> = (0..parts)
        .into_par_iter()
        .map(|i| forward(i * batch / parts, (i + 1) * batch / parts))
        .collect();
    Tensor::cat(outputs, 0)
}

/// Runs `work(start, end)` on `parts` contiguous parts of `batch` items at once, each
/// on a one-thread rayon pool of its own, and returns the results in order. `parts` is
/// clamped to `1..=batch`; with 1, `work(0, batch)` runs alone on the calling thread.
///
/// For work made of many small operations (a decoding step of a few sequences): inside
/// rayon's shared pool their per-operation splitting keeps the threads waiting on each
/// other, while one pool per part runs each part's operations on its own thread alone.
///
/// # Errors
/// Thread pools that cannot be built.
pub fn run_in_parts<T: Send>(
    batch: usize,
    parts: usize,
    work: impl Fn(usize, usize) -> T + Sync,
) -> Result<Vec<T>, String> {
    let parts = parts.clamp(1, batch.max(1));
    if parts == 1 {
        return Ok(vec![work(0, batch)]);
    }
    let pools = (0..parts)
        .map(|_| rayon::ThreadPoolBuilder::new().num_threads(1).build())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("worker threads: {e}"))?;
    let work = &work;
    Ok(std::thread::scope(|scope| {
        let handles: Vec<_> = pools
            .iter()
            .enumerate()
            .map(|(i, pool)| {
                scope.spawn(move || {
                    pool.install(|| work(i * batch / parts, (i + 1) * batch / parts))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    }))
}

/// [`run_in_parts`] with each part's items cut into chunks of at most `chunk_rows`, run
/// one after another on the part's thread: `work(start, end)` on consecutive chunks, the
/// results of all chunks in order. `chunk_rows` is clamped to at least 1; an empty batch
/// runs no chunk and returns no result (where [`run_in_parts`] calls `work(0, 0)`).
///
/// For work whose memory grows with the rows it holds at once: the KV caches of a
/// decoding batch are read whole at every step, and stay in the CPU's caches only for a
/// few sequences (`smiles_gpt::sampling::decode_chunk_rows`).
///
/// # Errors
/// As [`run_in_parts`].
pub fn run_in_parts_chunked<T: Send>(
    batch: usize,
    parts: usize,
    chunk_rows: usize,
    work: impl Fn(usize, usize) -> T + Sync,
) -> Result<Vec<T>, String> {
    let step = chunk_rows.max(1);
    let chunks = run_in_parts(batch, parts, |start, end| {
        (start..end)
            .step_by(step)
            .map(|s| work(s, s.saturating_add(step).min(end)))
            .collect::<Vec<T>>()
    })?;
    Ok(chunks.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_parts_cover_the_batch_in_order() {
        // 10 rows, 2 parts of 5, chunks of at most 2: [0,2) [2,4) [4,5) [5,7) [7,9) [9,10).
        let chunks = run_in_parts_chunked(10, 2, 2, |s, e| (s, e)).unwrap();
        assert_eq!(
            chunks,
            vec![(0, 2), (2, 4), (4, 5), (5, 7), (7, 9), (9, 10)]
        );
        // One part, chunks larger than the batch: the batch at once.
        assert_eq!(
            run_in_parts_chunked(3, 1, 16, |s, e| (s, e)).unwrap(),
            vec![(0, 3)]
        );
        // chunk_rows 0 is taken as 1; usize::MAX is the part at once; no rows, no chunk.
        assert_eq!(
            run_in_parts_chunked(2, 1, 0, |s, e| (s, e)).unwrap(),
            vec![(0, 1), (1, 2)]
        );
        let whole = run_in_parts_chunked(6, 2, usize::MAX, |s, e| (s, e)).unwrap();
        assert_eq!(whole, vec![(0, 3), (3, 6)]);
        assert!(
            run_in_parts_chunked(0, 2, 8, |s, e| (s, e))
                .unwrap()
                .is_empty()
        );
    }
}
