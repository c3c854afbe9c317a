//! Gradient clipping by the global L2 norm over every parameter of a model (the
//! original Transformer-M's `--clip-norm`, fairseq's `clip_grad_norm_`, as
//! `torch.nn.utils.clip_grad_norm_`). Burn's `GradientClippingConfig::Norm` clips each
//! parameter's gradient by its own norm, a different rule, so this one is written here.

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::prelude::*;

/// Sums the squares of every float parameter's gradient on the device (one tensor,
/// read back once).
struct SquaredNorm<'a> {
    grads: &'a GradientsParams,
    sum: Option<Tensor<1>>,
}

impl ModuleVisitor for SquaredNorm<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(g) = self.grads.get::<D>(param.id) {
            let squares = g.powi_scalar(2).sum();
            self.sum = Some(match self.sum.take() {
                Some(s) => s + squares,
                None => squares,
            });
        }
    }
}

/// Multiplies every float parameter's gradient by a factor.
struct Scale<'a> {
    grads: &'a mut GradientsParams,
    factor: f64,
}

impl ModuleVisitor for Scale<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let id: ParamId = param.id;
        if let Some(g) = self.grads.remove::<D>(id) {
            self.grads.register::<D>(id, g.mul_scalar(self.factor));
        }
    }
}

/// Scales the gradients of `module`'s parameters in `grads` so that their global L2
/// norm is at most `max_norm`: every gradient times `max_norm / (norm + 1e-6)` when that
/// is below 1 (PyTorch's `clip_grad_norm_`, which fairseq calls with `--clip-norm`).
/// `max_norm <= 0` leaves them as they are. Returns the norm before clipping.
pub fn clip_global_norm<M: Module>(module: &M, grads: &mut GradientsParams, max_norm: f64) -> f64 {
    let mut norm = SquaredNorm { grads, sum: None };
    module.visit(&mut norm);
    let total = norm
        .sum
        .map_or(0.0, |s| f64::from(s.into_scalar::<f32>()).sqrt());
    if max_norm > 0.0 {
        let factor = max_norm / (total + 1e-6);
        if factor < 1.0 {
            module.visit(&mut Scale { grads, factor });
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::{Linear, LinearConfig};

    fn grads_of(model: &Linear, device: &Device) -> GradientsParams {
        let x = Tensor::<2>::from_data(
            TensorData::new(vec![1.0f32, -2.0, 3.0, 0.5, 4.0, -1.0], [2, 3]),
            device,
        );
        let loss = model.forward(x).powi_scalar(2).sum().mul_scalar(10.0);
        GradientsParams::from_grads(loss.backward(), model)
    }

    fn squared_norm(model: &Linear, grads: &GradientsParams) -> f64 {
        let w = grads.get::<2>(model.weight.id).unwrap();
        let b = grads.get::<1>(model.bias.as_ref().unwrap().id).unwrap();
        f64::from(w.powi_scalar(2).sum().into_scalar::<f32>())
            + f64::from(b.powi_scalar(2).sum().into_scalar::<f32>())
    }

    #[test]
    fn the_global_norm_is_clipped_and_directions_kept() {
        let device = Device::flex().autodiff();
        device.seed(3);
        let model = LinearConfig::new(3, 2).init(&device);
        let mut grads = grads_of(&model, &device);
        let before = squared_norm(&model, &grads).sqrt();
        let w_before = grads.get::<2>(model.weight.id).unwrap();
        assert!(before > 1.0, "{before}");
        let reported = clip_global_norm(&model, &mut grads, 1.0);
        assert!(
            (reported - before).abs() < 1e-6 * before,
            "{reported} vs {before}"
        );
        let after = squared_norm(&model, &grads).sqrt();
        assert!(
            (after - 1.0).abs() < 1e-5,
            "global norm after clipping: {after}"
        );
        // Every gradient scaled by the same factor (the weight's by 1 / before).
        let w_after = grads.get::<2>(model.weight.id).unwrap();
        let ratio = (w_after - w_before.div_scalar(before + 1e-6)).abs().max();
        assert!(ratio.into_scalar::<f32>() < 1e-6);
        // Below the threshold, or switched off: untouched.
        let mut grads = grads_of(&model, &device);
        clip_global_norm(&model, &mut grads, before * 2.0);
        assert!(
            (squared_norm(&model, &grads).sqrt() - before).abs() < 1e-9 * before.max(1.0) + 1e-6
        );
        clip_global_norm(&model, &mut grads, 0.0);
        assert!((squared_norm(&model, &grads).sqrt() - before).abs() < 1e-6 * before);
    }
}
