//! The original's initialisation helpers (`init_params` under `apply_init`): linear and
//! embedding weights from N(0, 0.02), biases 0, padding rows 0.

use burn::module::Param;
use burn::nn::{
    Embedding, EmbeddingConfig, Initializer, LayerNorm, LayerNormConfig, Linear, LinearConfig,
};
use burn::prelude::*;
use mol_featurize::graphormer::ATOM_TYPES;
use serde::{Deserialize, Serialize};

use super::LAYER_NORM_EPS;

/// How the Gaussian layer of the 3D channel starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GaussianInit {
    /// The original's `apply_init`: means, stds and the affine rows from N(0, 0.02), so
    /// `gamma d + beta` starts near 0 for every distance and the kernels are 0.01-0.05 A
    /// wide (the 3D channel must learn its gains first).
    #[default]
    Original,
    /// The Gaussian layer's own initialisation, which `apply_init` overwrites in the
    /// original: means and stds U(0, 3), gain rows 1 (so `gamma` = 2), offset rows 0.
    Uniform,
}

/// The original's `init_params` standard deviation.
pub(super) const STD: f64 = 0.02;

/// `Linear(i, o)` with weight N(0, 0.02) and bias 0 (Burn would draw the bias from the
/// weight's initializer). The bias is a fresh trainable parameter: `Param::map` onto a
/// new tensor would leave it without gradients (frozen at 0).
pub(super) fn normal_linear(i: usize, o: usize, device: &Device) -> Linear {
    let mut linear = LinearConfig::new(i, o)
        .with_initializer(Initializer::Normal {
            mean: 0.0,
            std: STD,
        })
        .init(device);
    linear.bias = Some(Param::from_tensor(Tensor::zeros([o], device)));
    linear
}

pub(super) fn normal_embedding(n: usize, dim: usize, std: f64, device: &Device) -> Embedding {
    EmbeddingConfig::new(n, dim)
        .with_initializer(Initializer::Normal { mean: 0.0, std })
        .init(device)
}

/// `table` with row 0 set to zeros, as a fresh leaf parameter (no autodiff history
/// from the assignment).
pub(super) fn zero_row_0(table: Embedding) -> Embedding {
    let w = table.weight.val();
    let [_, dim] = w.dims();
    let zeros = Tensor::zeros([1, dim], &w.device());
    Embedding {
        weight: Param::from_tensor(w.slice_assign([0..1, 0..dim], zeros).detach()),
    }
}

/// Gaussian means or stds `[K]` under `init`.
pub(super) fn gaussian_param(init: GaussianInit, k: usize, device: &Device) -> Param<Tensor<1>> {
    match init {
        GaussianInit::Original => normal_param([k], device),
        GaussianInit::Uniform => Param::from_tensor(Tensor::random(
            [k],
            burn::tensor::Distribution::Uniform(0.0, 3.0),
            device,
        )),
    }
}

/// An affine table of the Gaussian layer `[ATOM_TYPES, 1]` under `init` (`uniform_value`
/// is the constant of [`GaussianInit::Uniform`]).
pub(super) fn affine_rows(init: GaussianInit, uniform_value: f64, device: &Device) -> Embedding {
    let initializer = match init {
        GaussianInit::Original => Initializer::Normal {
            mean: 0.0,
            std: STD,
        },
        GaussianInit::Uniform => Initializer::Constant {
            value: uniform_value,
        },
    };
    EmbeddingConfig::new(ATOM_TYPES, 1)
        .with_initializer(initializer)
        .init(device)
}

/// A parameter drawn from N(0, 0.02).
pub(super) fn normal_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    Param::from_tensor(Tensor::random(
        shape,
        burn::tensor::Distribution::Normal(0.0, STD),
        device,
    ))
}

/// LayerNorm over `d` with the original's epsilon.
pub(crate) fn layer_norm(d: usize, device: &Device) -> LayerNorm {
    LayerNormConfig::new(d)
        .with_epsilon(LAYER_NORM_EPS)
        .init(device)
}

/// `norm.forward(x)` for a LayerNorm made by [`layer_norm`] (epsilon
/// `LAYER_NORM_EPS`) through [`attn_core::apply_layer_norm()`]. `x: [..., d]`, the same
/// shape back.
pub(crate) fn apply_layer_norm<const D: usize>(norm: &LayerNorm, x: Tensor<D>) -> Tensor<D> {
    attn_core::apply_layer_norm(norm, LAYER_NORM_EPS, x)
}

/// A table with a padding row in the original (`padding_idx = 0`: zeroed by apply_init,
/// never trained), N(0, `std`).
pub(super) fn padded_table(n: usize, dim: usize, std: f64, device: &Device) -> Embedding {
    zero_row_0(normal_embedding(n, dim, std, device))
}

#[cfg(test)]
mod tests {
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::prelude::*;

    use crate::transformer_m::TransformerMConfig;

    /// Paths of the parameters that would get no gradient.
    #[derive(Default)]
    struct Frozen {
        path: Vec<String>,
        frozen: Vec<String>,
        total: usize,
    }

    impl ModuleVisitor for Frozen {
        fn enter_module(&mut self, name: &str, _: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _: &str, _: &str) {
            self.path.pop();
        }
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.total += 1;
            if !param.val().is_require_grad() {
                self.frozen.push(self.path.join("."));
            }
        }
    }

    #[test]
    fn every_parameter_of_a_fresh_model_is_trainable() {
        // The zero biases of the original's init_params once came out frozen (a
        // `Param::map` onto a new tensor drops the gradient flag): 17 parameters of this
        // model never trained.
        let device = Device::flex().autodiff();
        let model = TransformerMConfig::new(2, 16, 16, 4, 8).init(&device);
        let mut v = Frozen::default();
        model.visit(&mut v);
        assert!(v.total > 60, "{}", v.total);
        assert!(v.frozen.is_empty(), "frozen: {:?}", v.frozen);
    }
}
