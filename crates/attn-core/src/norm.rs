//! MAT's normalisation layers.
//!
//! Source: ardigen/MAT `src/transformer.py` (`LayerNorm`, `ScaleNorm`), docs/SPEC.md 1.2.

use burn::module::Param;
use burn::prelude::*;

use crate::layer_norm::{RowNorm, layer_norm};

/// Configuration of [`MatLayerNorm`].
#[derive(Config, Debug)]
pub struct MatLayerNormConfig {
    /// Feature size d_model.
    pub d_model: usize,
    /// Added to the standard deviation (not the variance). Reference: 1e-6.
    #[config(default = 1e-6)]
    pub eps: f64,
}

/// MAT's LayerNorm: `a_2 * (x - mean) / (std + eps) + b_2` over the last dimension,
/// with the **unbiased** standard deviation (divisor d - 1) and `eps` added to the std.
///
/// This differs from `torch.nn.LayerNorm` (biased variance, eps inside the sqrt); it is
/// what the MAT reference and its pretrained weights use. Parameters keep the
/// reference names `a_2` (gain, init 1) and `b_2` (bias, init 0).
/// Shapes: input and output `[*, d_model]`.
#[derive(Module, Debug)]
pub struct MatLayerNorm {
    /// Gain `[d_model]`.
    pub a_2: Param<Tensor<1>>,
    /// Bias `[d_model]`.
    pub b_2: Param<Tensor<1>>,
    /// Added to the std.
    pub eps: f64,
}

impl MatLayerNormConfig {
    /// Builds the layer on `device` (gain 1, bias 0).
    pub fn init(&self, device: &Device) -> MatLayerNorm {
        MatLayerNorm {
            a_2: Param::from_tensor(Tensor::ones([self.d_model], device)),
            b_2: Param::from_tensor(Tensor::zeros([self.d_model], device)),
            eps: self.eps,
        }
    }
}

impl MatLayerNorm {
    /// Normalises `x: [*, d_model]` over its last dimension.
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        // On flex: one fused op each way (crate::layer_norm); elsewhere the decomposition.
        let kind = RowNorm::UnbiasedStd { eps: self.eps };
        if let Some(y) = layer_norm(x.clone(), self.a_2.val(), self.b_2.val(), kind) {
            return y;
        }
        let d = x.dims()[D - 1];
        let mean = x.clone().mean_dim(D - 1);
        let centred = x - mean;
        // Unbiased variance (torch.std default): divide by d - 1.
        let denom = (d.max(2) - 1) as f64;
        let std = centred
            .clone()
            .square()
            .sum_dim(D - 1)
            .div_scalar(denom)
            .sqrt();
        let normed = centred / std.add_scalar(self.eps);
        normed * unsqueeze_last::<D>(self.a_2.val()) + unsqueeze_last::<D>(self.b_2.val())
    }
}

/// Configuration of [`ScaleNorm`].
#[derive(Config, Debug)]
pub struct ScaleNormConfig {
    /// Feature size d_model; the gain is initialised to `sqrt(d_model)`.
    pub d_model: usize,
    /// Lower bound of the norm. Reference: 1e-5.
    #[config(default = 1e-5)]
    pub eps: f64,
}

/// ScaleNorm (Nguyen & Salazar 2019), as used by MAT: `g * x / max(||x||_2, eps)` with
/// one learned scalar `g` initialised to `sqrt(d_model)`. Shapes: `[*, d_model]` in and out.
#[derive(Module, Debug)]
pub struct ScaleNorm {
    /// Scalar gain `[1]`.
    pub scale: Param<Tensor<1>>,
    /// Lower bound of the L2 norm.
    pub eps: f64,
}

impl ScaleNormConfig {
    /// Builds the layer on `device`.
    pub fn init(&self, device: &Device) -> ScaleNorm {
        ScaleNorm {
            scale: Param::from_tensor(Tensor::from_floats([(self.d_model as f32).sqrt()], device)),
            eps: self.eps,
        }
    }
}

impl ScaleNorm {
    /// Applies ScaleNorm over the last dimension of `x: [*, d_model]`.
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let norm = x.clone().square().sum_dim(D - 1).sqrt().clamp_min(self.eps);
        x / norm * unsqueeze_last::<D>(self.scale.val())
    }
}

/// Which normalisation MAT uses between sublayers.
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum NormKind {
    /// [`MatLayerNorm`] (reference default).
    LayerNorm,
    /// [`ScaleNorm`] (`scale_norm=True` in the reference).
    ScaleNorm,
}

/// Either of MAT's normalisation layers, chosen by [`NormKind`].
#[derive(Module, Debug)]
pub enum MatNorm {
    /// MAT LayerNorm.
    LayerNorm(MatLayerNorm),
    /// ScaleNorm.
    ScaleNorm(ScaleNorm),
}

impl MatNorm {
    /// Builds the chosen normalisation for feature size `d_model`.
    pub fn new(kind: NormKind, d_model: usize, device: &Device) -> Self {
        match kind {
            NormKind::LayerNorm => {
                MatNorm::LayerNorm(MatLayerNormConfig::new(d_model).init(device))
            }
            NormKind::ScaleNorm => MatNorm::ScaleNorm(ScaleNormConfig::new(d_model).init(device)),
        }
    }

    /// Normalises `x: [*, d_model]`.
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        match self {
            MatNorm::LayerNorm(n) => n.forward(x),
            MatNorm::ScaleNorm(n) => n.forward(x),
        }
    }
}

/// Reshapes a `[d]` parameter to `[1, .., 1, d]` for broadcasting against `[*, d]`.
fn unsqueeze_last<const D: usize>(p: Tensor<1>) -> Tensor<D> {
    p.unsqueeze::<D>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_uses_unbiased_std_and_eps_on_std() {
        let dev = Device::flex();
        let ln = MatLayerNormConfig::new(4).init(&dev);
        let x = Tensor::<2>::from_floats([[1.0, 2.0, 3.0, 6.0]], &dev);
        let y: Vec<f32> = ln.forward(x).try_into_vec_as::<f32>().unwrap();
        // mean 3, unbiased std = sqrt((4+1+0+9)/3) = sqrt(14/3) = 2.160247
        let std = (14.0f32 / 3.0).sqrt() + 1e-6;
        let want = [-2.0 / std, -1.0 / std, 0.0, 3.0 / std];
        for (a, b) in y.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    #[test]
    fn scale_norm_scales_to_sqrt_d() {
        let dev = Device::flex();
        let sn = ScaleNormConfig::new(4).init(&dev);
        let x = Tensor::<2>::from_floats([[3.0, 4.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], &dev);
        let y: Vec<f32> = sn.forward(x).try_into_vec_as::<f32>().unwrap();
        // ||x|| = 5, g = 2 -> [1.2, 1.6, 0, 0]; zero row stays 0 (norm clamped to eps).
        let want = [1.2, 1.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        for (a, b) in y.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }
}
