//! Batch-parallel CPU inference shared by the models (`MatModel::forward_parallel`,
//! `TransformerM::forward_parallel`, the SMILES generator's sampling).
//!
//! Why by hand: Burn's flex backend parallelises large GEMMs but runs elementwise ops on
//! one thread, so a small model leaves cores idle; molecules of a padded batch do not
//! interact, so contiguous groups of them can run at once on rayon's threads
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

/// Runs `forward(start, end)` on `parts` contiguous groups of the `batch` molecules at once
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

/// Runs `work(start, end)` on `parts` contiguous groups of `batch` items at once, each
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
