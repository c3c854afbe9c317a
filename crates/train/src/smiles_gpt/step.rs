//! The generator's training and validation step on the engine: next-token cross-entropy
//! of right-padded token batches.

use burn::prelude::*;
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use models::SmilesGpt;
use mol_featurize::smiles_tokenizer::PAD;
use rand::rngs::StdRng;

use crate::engine::EpochBatcher;

/// A [`SmilesGpt`] trained on next-token cross-entropy.
#[derive(Module, Debug)]
pub struct GptLearner {
    /// The model.
    pub model: SmilesGpt,
}

/// Token ids `[B, T]`, right-padded with `<pad>` to the batch's longest sequence.
#[derive(Debug, Clone)]
pub struct GptBatch {
    /// The padded tokens.
    pub tokens: Tensor<2, Int>,
}

/// Pads sequences of token ids into [`GptBatch`]es.
#[derive(Debug, Clone, Copy)]
pub struct GptBatcher;

impl EpochBatcher<Vec<u32>> for GptBatcher {
    type Batch = GptBatch;

    fn batch(
        &self,
        items: &[&Vec<u32>],
        _rng: &mut StdRng,
        device: &Device,
    ) -> Result<GptBatch, String> {
        let t = items.iter().map(|s| s.len()).max().unwrap_or(0);
        if t < 2 {
            return Err("a batch needs sequences of at least <bos> and <eos>".into());
        }
        let mut ids = Vec::with_capacity(items.len() * t);
        for seq in items {
            ids.extend(seq.iter().map(|&i| i as i64));
            ids.extend(std::iter::repeat_n(PAD as i64, t - seq.len()));
        }
        Ok(GptBatch {
            tokens: Tensor::from_data(TensorData::new(ids, [items.len(), t]), device),
        })
    }
}

fn loss(model: &SmilesGpt, batch: GptBatch) -> (Tensor<1>, RegressionOutput) {
    let (loss, _) = model
        .next_token_loss(batch.tokens)
        .expect("the batcher keeps sequences within max_len");
    // No per-sequence prediction: the loss is the metric (as denoising pretraining).
    let none = Tensor::<2>::zeros([1, 1], &loss.device());
    (
        loss.clone(),
        RegressionOutput::new(loss, none.clone(), none),
    )
}

impl TrainStep for GptLearner {
    type Input = GptBatch;
    type Output = RegressionOutput;

    fn step(&self, item: GptBatch) -> TrainOutput<RegressionOutput> {
        let (l, output) = loss(&self.model, item);
        TrainOutput::new(self, l.backward(), output)
    }
}

impl InferenceStep for GptLearner {
    type Input = GptBatch;
    type Output = RegressionOutput;

    fn step(&self, item: GptBatch) -> RegressionOutput {
        loss(&self.model, item).1
    }
}
