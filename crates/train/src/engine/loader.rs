//! The data loader of every training run: a fresh shuffle per epoch drawn from
//! `(seed, epoch)`, the device's random generator (dropout) re-seeded at the start of each
//! training epoch, and a random generator per batch drawn from `(seed, epoch, slice,
//! batch)`. So on one device epoch `k` sees the same order, dropout masks and sampled
//! modes / noise whether the run went through epochs `1..k` in one process or resumed
//! from a checkpoint of `k - 1`.
//!
//! With several devices burn-train cuts the loader into one slice per device. Every slice
//! takes its share of the same per-epoch permutation of all molecules (so no device is
//! stuck with one part of the data, e.g. the large scaffolds of a scaffold split), and
//! every slice has `n / devices` molecules, so all devices run the same number of batches
//! (a DDP all-reduce needs every device to take part); up to `devices - 1` molecules,
//! different ones every epoch, sit out each epoch. Several devices on the CPU backend share
//! its one random generator between threads, so such runs are not bit-reproducible.
//!
//! A long run can checkpoint several times per pass over the data (`parts`, the
//! `--checkpoints-per-epoch` flag): burn-train's epoch `e` is then part
//! `(e - 1) % parts` of data epoch `(e - 1) / parts + 1`, a run of consecutive batches of
//! that data epoch's permutation, so the parts of one data epoch together are exactly the
//! batches of the undivided epoch and a run killed mid-epoch loses at most one part.
//!
//! Written here rather than taken from burn's `DataLoaderBuilder` because burn's shuffle
//! draws every epoch from one generator that a resumed run restarts from the seed (the
//! resumed epoch would see epoch 1's order) and it has no per-batch generator.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn::data::dataset::DatasetError;
use burn::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::engine::interrupt::BatchBudget;

/// Makes one batch of a model's training or validation input from examples.
pub trait EpochBatcher<I>: Send + Sync {
    /// The batch type (`TrainStep::Input` / `InferenceStep::Input`).
    type Batch;
    /// Pads `items` into one batch on `device`. `rng` is this batch's own generator
    /// (mode sampling, coordinate noise); draw from it, not from a global one.
    ///
    /// # Errors
    /// A message naming the molecule that cannot be batched.
    fn batch(&self, items: &[&I], rng: &mut StdRng, device: &Device)
    -> Result<Self::Batch, String>;
}

/// How a loader orders and seeds its epochs.
#[derive(Debug, Clone, Copy)]
pub struct EpochPlan {
    /// Molecules per batch.
    pub batch_size: usize,
    /// Run seed.
    pub seed: u64,
    /// Shuffle every epoch (training) or keep the order (validation).
    pub shuffle: bool,
    /// Re-seed the device's generator at the start of each epoch (training: dropout).
    pub reseed_device: bool,
    /// Batches of epoch `e` are cut to `max_batches_total - (e - 1) * batches_per_epoch`
    /// when set (step-budgeted runs, e.g. pretraining; counted per device).
    pub max_batches_total: Option<usize>,
    /// Devices the loader will be sliced for (1: no slicing).
    pub devices: usize,
    /// Loader epochs (burn-train's epochs: validation and a checkpoint after each) per
    /// pass over the data; 0 is read as 1.
    pub parts: usize,
}

impl EpochPlan {
    /// Molecules of each device's slice out of `n`.
    pub fn slice_len(&self, n: usize) -> usize {
        if self.devices > 1 {
            n / self.devices
        } else {
            n
        }
    }

    /// Batches per data epoch of each device (optimiser steps per pass over the data,
    /// all parts together) for `n` molecules.
    pub fn batches_per_epoch(&self, n: usize) -> usize {
        self.slice_len(n).div_ceil(self.batch_size.max(1))
    }

    /// Loader epochs per data epoch (at least 1).
    pub fn parts(&self) -> usize {
        self.parts.max(1)
    }

    /// burn-train's epochs for `data_epochs` passes over `n` molecules: every part of
    /// each pass, up to the one where a step budget (`max_batches_total`) runs out, so a
    /// budgeted run has no empty parts at its end.
    pub fn loader_epochs(&self, n: usize, data_epochs: usize) -> usize {
        let parts = self.parts();
        let all = data_epochs * parts;
        let Some(total) = self.max_batches_total else {
            return all;
        };
        let per_epoch = self.batches_per_epoch(n);
        // Batches through loader epoch k: whole data epochs, then the part boundaries.
        let through = |k: usize| (k / parts) * per_epoch + (k % parts) * per_epoch / parts;
        (1..=all).find(|&k| through(k) >= total).unwrap_or(all)
    }

    /// Loader epoch `epoch` (1-based) -> (its data epoch, 1-based; its part, 0-based).
    pub fn data_epoch(&self, epoch: usize) -> (usize, usize) {
        let e = epoch.max(1) - 1;
        (e / self.parts() + 1, e % self.parts())
    }
}

/// A [`DataLoader`] over positions `start..end` of each epoch's permutation of `items`,
/// with the seeding of [`EpochPlan`]; the first call to `iter` is epoch `first_epoch`.
pub struct EpochLoader<I, B: EpochBatcher<I>> {
    items: Arc<Vec<I>>,
    start: usize,
    end: usize,
    batcher: Arc<B>,
    plan: EpochPlan,
    device: Device,
    next_epoch: Arc<AtomicUsize>,
    budget: Option<BatchBudget>,
}

impl<I, B: EpochBatcher<I>> EpochLoader<I, B> {
    /// A loader over all of `items`, whose first epoch is `first_epoch` (1, or the
    /// checkpoint's epoch + 1 when resuming).
    pub fn new(
        items: Arc<Vec<I>>,
        batcher: B,
        plan: EpochPlan,
        first_epoch: usize,
        device: Device,
    ) -> Self {
        let end = items.len();
        Self {
            items,
            start: 0,
            end,
            batcher: Arc::new(batcher),
            plan,
            device,
            next_epoch: Arc::new(AtomicUsize::new(first_epoch)),
            budget: None,
        }
    }

    /// Stops the run (as an interrupted process would stop) after this many batches in
    /// total: resume tests interrupt a run mid-epoch with it.
    pub fn with_budget(mut self, budget: Option<BatchBudget>) -> Self {
        self.budget = budget;
        self
    }

    fn derived(&self, start: usize, end: usize, device: Device) -> Self {
        Self {
            items: self.items.clone(),
            start,
            end,
            batcher: self.batcher.clone(),
            plan: self.plan,
            device,
            // Each slice (one per device) counts its own epochs.
            next_epoch: Arc::new(AtomicUsize::new(self.next_epoch.load(Ordering::SeqCst))),
            budget: self.budget.clone(),
        }
    }
}

/// The seed of one epoch (or one batch of it) of a run seeded with `seed`. A batch is
/// numbered within its epoch across slices (`slice start * 1_000_003 + batch`; slice start
/// 0 on one device).
pub fn epoch_seed(seed: u64, epoch: usize, batch: Option<usize>) -> u64 {
    let mut s = seed.wrapping_mul(1_000_003).wrapping_add(epoch as u64);
    if let Some(b) = batch {
        s = s
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(b as u64 + 1);
    }
    s
}

impl<I, B> DataLoader<B::Batch> for EpochLoader<I, B>
where
    I: Send + Sync + 'static,
    B: EpochBatcher<I> + 'static,
    B::Batch: Send + 'static,
{
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<B::Batch> + 'a> {
        let epoch = self.next_epoch.fetch_add(1, Ordering::SeqCst);
        let (data_epoch, part) = self.plan.data_epoch(epoch);
        // One permutation of all molecules per data epoch; this slice takes its positions.
        let mut order: Vec<usize> = (0..self.items.len()).collect();
        if self.plan.shuffle {
            order.shuffle(&mut StdRng::seed_from_u64(epoch_seed(
                self.plan.seed,
                data_epoch,
                None,
            )));
        }
        let order = &order[self.start..self.end];
        if self.plan.reseed_device {
            self.device.seed(epoch_seed(self.plan.seed, epoch, None));
        }
        let size = self.plan.batch_size.max(1);
        let mut batches: Vec<Vec<usize>> = order.chunks(size).map(<[usize]>::to_vec).collect();
        // This part's run of batches, cut on the undivided epoch's batch count.
        let (all, parts) = (batches.len(), self.plan.parts());
        let (first, end) = (part * all / parts, (part + 1) * all / parts);
        if let Some(total) = self.plan.max_batches_total {
            let done = (data_epoch - 1) * self.plan.batches_per_epoch(self.items.len());
            batches.truncate(total.saturating_sub(done));
        }
        batches.truncate(end);
        batches.drain(..first.min(batches.len()));
        let items_total = batches.iter().map(Vec::len).sum();
        Box::new(EpochIter {
            loader: self,
            epoch,
            batches,
            next: 0,
            items_processed: 0,
            items_total,
        })
    }

    fn num_items(&self) -> usize {
        self.end - self.start
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<B::Batch>> {
        Arc::new(self.derived(self.start, self.end, device.clone()))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<B::Batch>> {
        // Every slice as long as the others (burn gives the last one the remainder).
        let len = self
            .plan
            .slice_len(self.items.len())
            .min(end.saturating_sub(start));
        let s = (self.start + start).min(self.end);
        let e = (s + len).min(self.end);
        Arc::new(self.derived(s, e, self.device.clone()))
    }
}

struct EpochIter<'a, I, B: EpochBatcher<I>> {
    loader: &'a EpochLoader<I, B>,
    epoch: usize,
    batches: Vec<Vec<usize>>,
    next: usize,
    items_processed: usize,
    items_total: usize,
}

/// A batch that could not be made (the message names the molecule).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BatchFailure(String);

impl<I, B: EpochBatcher<I>> Iterator for EpochIter<'_, I, B> {
    type Item = Result<B::Batch, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        let indices = self.batches.get(self.next)?;
        if let Some(budget) = &self.loader.budget {
            budget.spend_one();
        }
        let batch = self
            .loader
            .start
            .wrapping_mul(1_000_003)
            .wrapping_add(self.next);
        let mut rng =
            StdRng::seed_from_u64(epoch_seed(self.loader.plan.seed, self.epoch, Some(batch)));
        self.next += 1;
        self.items_processed += indices.len();
        let items: Vec<&I> = indices.iter().map(|&i| &self.loader.items[i]).collect();
        Some(
            self.loader
                .batcher
                .batch(&items, &mut rng, &self.loader.device)
                .map_err(|e| DatasetError::new(BatchFailure(e))),
        )
    }
}

impl<I, B: EpochBatcher<I>> DataLoaderIterator<B::Batch> for EpochIter<'_, I, B> {
    fn progress(&self) -> Progress {
        Progress::new(self.items_processed, self.items_total, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches of molecule indices (no tensors).
    struct Indices;

    impl EpochBatcher<usize> for Indices {
        type Batch = Vec<usize>;
        fn batch(
            &self,
            items: &[&usize],
            _: &mut StdRng,
            _: &Device,
        ) -> Result<Vec<usize>, String> {
            Ok(items.iter().map(|i| **i).collect())
        }
    }

    fn loader(n: usize, devices: usize, max: Option<usize>) -> EpochLoader<usize, Indices> {
        let plan = EpochPlan {
            batch_size: 4,
            seed: 7,
            shuffle: true,
            reseed_device: false,
            max_batches_total: max,
            devices,
            parts: 1,
        };
        EpochLoader::new(Arc::new((0..n).collect()), Indices, plan, 1, Device::flex())
    }

    fn epoch(l: &dyn DataLoader<Vec<usize>>) -> Vec<Vec<usize>> {
        l.iter().map(Result::unwrap).collect()
    }

    #[test]
    fn device_slices_share_one_permutation_and_have_equal_batches() {
        // 17 molecules on 2 devices: burn slices 0..8 and 8..17; each gets 8 molecules
        // (2 batches), one molecule sits out, a different one each epoch.
        let parent = loader(17, 2, None);
        let (a, b) = (parent.slice(0, 8), parent.slice(8, 17));
        let mut out = Vec::new();
        for _ in 0..3 {
            let (ea, eb) = (epoch(a.as_ref()), epoch(b.as_ref()));
            assert_eq!((ea.len(), eb.len()), (2, 2));
            let mut seen: Vec<usize> = ea.iter().chain(&eb).flatten().copied().collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 16);
            out.push((0..17).find(|i| !seen.contains(i)).unwrap());
        }
        assert!(
            out.iter().any(|&x| x != out[0]),
            "the same molecule sat out: {out:?}"
        );
        // The whole loader (one device) sees every molecule, in the same permutation.
        let one = loader(17, 1, None);
        assert_eq!(epoch(&one).concat().len(), 17);
    }

    #[test]
    fn a_step_budget_counts_steps_per_device_across_epochs() {
        // 17 molecules, 2 devices, batch 4: 2 steps per epoch; a budget of 5 steps is two
        // full epochs and one step of the third, on every device.
        let parent = loader(17, 2, Some(5));
        let slices = [parent.slice(0, 8), parent.slice(8, 17)];
        for s in &slices {
            let steps: Vec<usize> = (0..4).map(|_| epoch(s.as_ref()).len()).collect();
            assert_eq!(steps, vec![2, 2, 1, 0]);
        }
        assert_eq!(parent.plan.batches_per_epoch(17), 2);
    }

    #[test]
    fn resumed_loaders_repeat_the_epochs_of_a_straight_run() {
        let straight = loader(30, 1, None);
        let epochs: Vec<Vec<Vec<usize>>> = (0..4).map(|_| epoch(&straight)).collect();
        let resumed = EpochLoader::new(
            Arc::new((0..30).collect()),
            Indices,
            straight.plan,
            3,
            Device::flex(),
        );
        assert_eq!(epoch(&resumed), epochs[2]);
        assert_eq!(epoch(&resumed), epochs[3]);
        assert_ne!(epochs[0], epochs[1]);
    }

    #[test]
    fn parts_of_an_epoch_are_its_batches_in_order_and_resume_mid_epoch() {
        // 30 molecules, batch 4: 8 batches per data epoch, cut into 3 parts of 2, 3, 3.
        let whole = loader(30, 1, None);
        let data: Vec<Vec<Vec<usize>>> = (0..2).map(|_| epoch(&whole)).collect();
        let plan = EpochPlan {
            parts: 3,
            ..whole.plan
        };
        let items = Arc::new((0..30).collect::<Vec<usize>>());
        let parted = EpochLoader::new(items.clone(), Indices, plan, 1, Device::flex());
        let parts: Vec<Vec<Vec<usize>>> = (0..6).map(|_| epoch(&parted)).collect();
        assert_eq!(
            parts.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![2, 3, 3, 2, 3, 3]
        );
        assert_eq!(parts[..3].concat(), data[0]);
        assert_eq!(parts[3..].concat(), data[1]);
        // Resumed after loader epoch 4 (part 1 of data epoch 2): parts 2 and 3 of it.
        let resumed = EpochLoader::new(items.clone(), Indices, plan, 5, Device::flex());
        assert_eq!(epoch(&resumed), parts[4]);
        assert_eq!(epoch(&resumed), parts[5]);
        // A step budget of 10 (one data epoch and 2 batches) ends in data epoch 2's first
        // part.
        let budget = EpochPlan {
            max_batches_total: Some(10),
            ..plan
        };
        let cut = EpochLoader::new(items, Indices, budget, 1, Device::flex());
        let steps: Vec<usize> = (0..6).map(|_| epoch(&cut).len()).collect();
        assert_eq!(steps, vec![2, 3, 3, 2, 0, 0]);
        // ... so the run stops after 4 loader epochs, not 6 (2 of them empty).
        assert_eq!(budget.loader_epochs(30, 2), 4);
        assert_eq!(plan.loader_epochs(30, 2), 6);
    }
}
