//! MolGPT's conditioning (devalab/molgpt `train/model.py`, `GPT.forward`): property
//! values through one linear layer into one token, scaffold tokens through the token
//! embedding, both plus the type embedding of row 0 and without position embeddings,
//! placed before the SMILES tokens (whose type row is 1) as `[scaffold, property,
//! SMILES]`; the logits of the conditioning positions are dropped.

use burn::prelude::*;

use super::SmilesGpt;

/// What one batch is conditioned on.
#[derive(Debug, Clone)]
pub struct Condition {
    /// Property values `[B, num_props]`, in the run's property order and units (logP,
    /// TPSA in square Angstrom, QED), unscaled as MolGPT feeds them.
    pub props: Option<Tensor<2>>,
    /// Scaffold token ids `[B, scaffold_max_len]`: the scaffold SMILES's tokens (no
    /// `<bos>` / `<eos>`), right-padded with `<pad>`; attended like any token, as MolGPT
    /// attends its `<` padding.
    pub scaffold: Option<Tensor<2, Int>>,
}

impl Condition {
    /// Conditioning positions this condition adds before `<bos>`.
    pub fn len(&self) -> usize {
        self.scaffold.as_ref().map_or(0, |s| s.dims()[1]) + usize::from(self.props.is_some())
    }

    /// Neither properties nor a scaffold.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows `start .. end` of the batch.
    pub fn rows(&self, start: usize, end: usize) -> Self {
        Self {
            props: self
                .props
                .as_ref()
                .map(|p| p.clone().narrow(0, start, end - start)),
            scaffold: self
                .scaffold
                .as_ref()
                .map(|s| s.clone().narrow(0, start, end - start)),
        }
    }

    /// Batch size (0 when empty).
    pub fn batch(&self) -> usize {
        self.props
            .as_ref()
            .map(|p| p.dims()[0])
            .or_else(|| self.scaffold.as_ref().map(|s| s.dims()[0]))
            .unwrap_or(0)
    }
}

impl SmilesGpt {
    /// The conditioning embeddings `[B, P, d_model]` of `condition` (`P` =
    /// [`Condition::len`]).
    ///
    /// # Errors
    /// A condition the model was not built for: properties without a property layer or
    /// with another count, any condition on an unconditional model.
    pub(crate) fn prefix_embeddings(&self, condition: &Condition) -> Result<Tensor<3>, String> {
        let Some(type_emb) = &self.type_emb else {
            return Err("the model is unconditional; it takes no properties or scaffold".into());
        };
        let d = self.pos_emb.dims()[1];
        let device = self.pos_emb.device();
        let b = condition.batch();
        let type0 = type_emb
            .forward(Tensor::<2, Int>::zeros([1, 1], &device))
            .reshape([1, 1, d]);
        let mut parts = Vec::new();
        if let Some(scaffold) = &condition.scaffold {
            parts.push(self.tok_emb.forward(scaffold.clone()) + type0.clone());
        }
        match (&condition.props, &self.prop_nn) {
            (Some(props), Some(prop_nn)) => {
                let [pb, n] = props.dims();
                let want = prop_nn.weight.dims()[0];
                if n != want || pb != b {
                    return Err(format!(
                        "{n} property values for {pb} rows; the model takes {want} per row \
                         of {b}"
                    ));
                }
                let p = attn_core::linear(prop_nn, props.clone().reshape([b, 1, n]));
                parts.push(p + type0);
            }
            (Some(_), None) => {
                return Err("the model was not trained on properties".into());
            }
            (None, Some(_)) => {
                return Err("the model was trained on properties: give their values".into());
            }
            (None, None) => {}
        }
        if parts.is_empty() {
            return Err("an empty condition".into());
        }
        Ok(Tensor::cat(parts, 1))
    }

    /// The type embedding of SMILES tokens `[1, 1, d_model]` (row 1), when conditional.
    pub(crate) fn smiles_type(&self) -> Option<Tensor<3>> {
        let d = self.pos_emb.dims()[1];
        self.type_emb.as_ref().map(|e| {
            e.forward(Tensor::<2, Int>::ones([1, 1], &self.pos_emb.device()))
                .reshape([1, 1, d])
        })
    }
}
