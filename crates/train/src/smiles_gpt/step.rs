//! The generator's training and validation step on the engine: next-token cross-entropy
//! of right-padded token batches.

use burn::prelude::*;
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use models::SmilesGpt;
use models::smiles_gpt::Condition;
use mol_featurize::smiles_tokenizer::PAD;
use rand::rngs::StdRng;

use super::data::GptExample;
use crate::engine::EpochBatcher;

/// A [`SmilesGpt`] trained on next-token cross-entropy.
#[derive(Module, Debug)]
pub struct GptLearner {
    /// The model.
    pub model: SmilesGpt,
}

/// Token ids `[B, T]`, right-padded with `<pad>` to the batch's longest sequence, and
/// their condition.
#[derive(Debug, Clone)]
pub struct GptBatch {
    /// The padded tokens.
    pub tokens: Tensor<2, Int>,
    /// Properties `[B, num_props]` and scaffolds `[B, scaffold_max_len]` of a
    /// conditional model.
    pub condition: Option<Condition>,
}

/// Pads [`GptExample`]s into [`GptBatch`]es.
#[derive(Debug, Clone, Copy, Default)]
pub struct GptBatcher {
    /// Properties per example (0: none).
    pub num_props: usize,
    /// Scaffold positions (0: no scaffold condition); longer scaffolds are refused.
    pub scaffold_max_len: usize,
}

impl EpochBatcher<GptExample> for GptBatcher {
    type Batch = GptBatch;

    fn batch(
        &self,
        items: &[&GptExample],
        _rng: &mut StdRng,
        device: &Device,
    ) -> Result<GptBatch, String> {
        let b = items.len();
        let t = items.iter().map(|s| s.tokens.len()).max().unwrap_or(0);
        if t < 2 {
            return Err("a batch needs sequences of at least <bos> and <eos>".into());
        }
        let mut ids = Vec::with_capacity(b * t);
        for seq in items {
            ids.extend(seq.tokens.iter().map(|&i| i as i64));
            ids.extend(std::iter::repeat_n(PAD as i64, t - seq.tokens.len()));
        }
        let props = (self.num_props > 0)
            .then(|| {
                let values: Vec<f32> = items.iter().flat_map(|e| e.props.iter().copied()).collect();
                if values.len() != b * self.num_props {
                    return Err(format!(
                        "examples without their {} properties",
                        self.num_props
                    ));
                }
                Ok(Tensor::from_data(
                    TensorData::new(values, [b, self.num_props]),
                    device,
                ))
            })
            .transpose()?;
        let scaffold = (self.scaffold_max_len > 0)
            .then(|| {
                let n = self.scaffold_max_len;
                let mut ids = Vec::with_capacity(b * n);
                for e in items {
                    if e.scaffold.len() > n {
                        return Err(format!(
                            "a scaffold of {} tokens; the model takes {n}",
                            e.scaffold.len()
                        ));
                    }
                    ids.extend(e.scaffold.iter().map(|&i| i as i64));
                    ids.extend(std::iter::repeat_n(PAD as i64, n - e.scaffold.len()));
                }
                Ok(Tensor::from_data(TensorData::new(ids, [b, n]), device))
            })
            .transpose()?;
        let condition =
            (props.is_some() || scaffold.is_some()).then_some(Condition { props, scaffold });
        Ok(GptBatch {
            tokens: Tensor::from_data(TensorData::new(ids, [b, t]), device),
            condition,
        })
    }
}

fn loss(model: &SmilesGpt, batch: GptBatch) -> (Tensor<1>, RegressionOutput) {
    let (loss, _) = model
        .next_token_loss(batch.tokens, batch.condition.as_ref())
        .expect("the batcher keeps sequences within max_len, conditions as the model's");
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
