//! Adam with its flex (CPU) update in one multi-threaded pass per parameter.
//!
//! Why by hand: Burn's `Adam` (burn-optim 0.22.1) updates each parameter with about twelve
//! tensor ops (scale, add, square, sqrt, divide, ...), each a single-threaded pass over
//! the whole tensor on flex with a new buffer. On the pretrained-size MAT training step
//! that took 140 ms of 2.0 s on one core while the other idled; PyTorch's multi-tensor
//! Adam took 51 ms on the same two cores. [`FusedAdam`] computes the same update, in the
//! same f32 operations in the same order (so the same bits), reading the parameter,
//! gradient and both moments once and writing them once, in chunks on rayon's threads.
//!
//! The update (Kingma & Ba 2015, Algorithm 1, as Burn writes it; `t` counts from 1):
//!
//! ```text
//! m = beta_1 m + (1 - beta_1) g
//! v = beta_2 v + (1 - beta_2) g^2
//! c = sqrt(1 - beta_2^t) / (1 - beta_1^t)
//! p = p - lr (m c) / (sqrt(v) + epsilon sqrt(1 - beta_2^t))
//! ```
//!
//! Its state is Burn's [`AdamState`], so records and checkpoints are Burn's Adam's. Off
//! flex or off f32, the step is Burn's `Adam`.

use burn::backend::Flex;
use burn::config::Config;
use burn::optim::{
    AdamConfig, AdamState, AdaptiveMomentumState, LearningRate, ModuleOptimizer, Optimizer,
};
use burn::prelude::*;
use burn::tensor::DType;
use burn_flex::FlexTensor;
use rayon::prelude::*;

/// Elements per rayon task; smaller parameters run on the calling thread.
const CHUNK: usize = 1 << 15;

/// Configuration of [`FusedAdam`]: Burn's `AdamConfig` defaults (`beta_1` 0.9, `beta_2`
/// 0.999, `epsilon` 1e-5), without weight decay, AMSGrad or gradient clipping.
#[derive(Config, Debug)]
pub struct FusedAdamConfig {
    /// Decay of the first moment.
    #[config(default = 0.9)]
    pub beta_1: f32,
    /// Decay of the second moment.
    #[config(default = 0.999)]
    pub beta_2: f32,
    /// Added to the second moment's square root (Burn's scaling, equal to PyTorch's).
    #[config(default = 1e-5)]
    pub epsilon: f32,
}

impl FusedAdamConfig {
    /// The optimizer, ready for [`ModuleOptimizer::step`].
    pub fn init(&self) -> ModuleOptimizer {
        ModuleOptimizer::from(self.build())
    }

    /// The per-parameter optimizer.
    pub fn build(&self) -> FusedAdam {
        FusedAdam {
            beta_1: self.beta_1,
            beta_2: self.beta_2,
            epsilon: self.epsilon,
            burn: AdamConfig::new()
                .with_beta_1(self.beta_1)
                .with_beta_2(self.beta_2)
                .with_epsilon(self.epsilon)
                .build(),
        }
    }
}

/// Adam whose flex f32 step is one fused pass (module documentation); Burn's `Adam`
/// (built from the same settings) elsewhere.
#[derive(Clone)]
pub struct FusedAdam {
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    burn: burn::optim::Adam,
}

/// The scalars of one step, computed as Burn computes them (f32).
#[derive(Clone, Copy)]
struct StepScalars {
    beta_1: f32,
    one_minus_beta_1: f32,
    beta_2: f32,
    one_minus_beta_2: f32,
    combined: f32,
    epsilon: f32,
    lr: f32,
}

impl Optimizer for FusedAdam {
    type State<const D: usize> = AdamState<D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        if !fusable(&tensor, &grad, state.as_ref()) {
            return self.burn.step(lr, tensor, grad, state);
        }
        let flex = |t: Tensor<D>| {
            t.try_into_primitive::<Flex>()
                .expect("checked to be a flex tensor")
        };
        let time = state.as_ref().map_or(1, |s| s.momentum.time + 1);
        let moments = state.map(|s| (flex(s.momentum.moment_1), flex(s.momentum.moment_2)));
        let shape = tensor.shape();
        let (param, grad) = (flex(tensor), flex(grad));

        let bias_correction2_sqrt = (1.0 - self.beta_2.powi(time as i32)).sqrt();
        let scalars = StepScalars {
            beta_1: self.beta_1,
            one_minus_beta_1: 1.0 - self.beta_1,
            beta_2: self.beta_2,
            one_minus_beta_2: 1.0 - self.beta_2,
            combined: bias_correction2_sqrt / (1.0 - self.beta_1.powi(time as i32)),
            epsilon: self.epsilon * bias_correction2_sqrt,
            lr: lr as f32,
        };
        let (param, moment_1, moment_2) = fused_step(param, grad, moments, scalars);
        let back = |t: FlexTensor| Tensor::<D>::from_primitive::<Flex>(t).reshape(shape.clone());
        let state = AdaptiveMomentumState::new(time, back(moment_1), back(moment_2));
        (back(param), Some(AdamState::new(state)))
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &Device) -> Self::State<D> {
        burn::optim::Adam::to_device(state, device)
    }
}

/// Whether the fused step applies: parameter, gradient and moments f32 on flex, no
/// AMSGrad maximum.
fn fusable<const D: usize>(
    tensor: &Tensor<D>,
    grad: &Tensor<D>,
    state: Option<&AdamState<D>>,
) -> bool {
    [tensor, grad].into_iter().all(on_flex_f32)
        && state.is_none_or(|s| {
            s.momentum.max_moment_2.is_none()
                && on_flex_f32(&s.momentum.moment_1)
                && on_flex_f32(&s.momentum.moment_2)
        })
}

/// Whether `t` is an f32 tensor on flex without autodiff (what the optimizer receives).
fn on_flex_f32<const D: usize>(t: &Tensor<D>) -> bool {
    !t.is_autodiff() && t.device() == Device::flex() && t.dtype() == DType::F32
}

/// `t` contiguous from offset 0, so that `storage_mut` (which copies a shared buffer
/// first) gives exactly its values.
fn owned(t: FlexTensor) -> FlexTensor {
    if t.is_contiguous() && t.layout().start_offset() == 0 {
        t
    } else {
        t.to_contiguous()
    }
}

/// The parameter and both moments after one step, updated in place (module
/// documentation); `moments` `None` is the first step (zero moments).
fn fused_step(
    param: FlexTensor,
    grad: FlexTensor,
    moments: Option<(FlexTensor, FlexTensor)>,
    s: StepScalars,
) -> (FlexTensor, FlexTensor, FlexTensor) {
    let n = param.layout().num_elements();
    let grad = if grad.is_contiguous() {
        grad
    } else {
        grad.to_contiguous()
    };
    let start = grad.layout().start_offset();
    let g = &grad.storage::<f32>()[start..start + n];
    let mut param = owned(param);
    let first = moments.is_none();
    let (mut m, mut v) = match moments {
        Some((m, v)) => (owned(m), owned(v)),
        None => {
            // Overwritten below without being read (the first step's own formula).
            let zeros = || FlexTensor::from_data(TensorData::new(vec![0.0f32; n], [n]));
            (zeros(), zeros())
        }
    };
    {
        let p = &mut param.storage_mut::<f32>()[..n];
        let mm = &mut m.storage_mut::<f32>()[..n];
        let vv = &mut v.storage_mut::<f32>()[..n];
        let chunk = |p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]| {
            if first {
                update::<true>(p, g, m, v, s)
            } else {
                update::<false>(p, g, m, v, s)
            }
        };
        if n <= CHUNK {
            chunk(p, g, mm, vv);
        } else {
            p.par_chunks_mut(CHUNK)
                .zip(g.par_chunks(CHUNK))
                .zip(mm.par_chunks_mut(CHUNK))
                .zip(vv.par_chunks_mut(CHUNK))
                .for_each(|(((p, g), m), v)| chunk(p, g, m, v));
        }
    }
    (param, m, v)
}

/// One chunk of the update, in Burn's operation order: `m b1 + g (1 - b1)`,
/// `v b2 + g^2 (1 - b2)` (on the first step `g (1 - b1)` and `g^2 (1 - b2)`, as Burn
/// starts its moments: the same bits, a gradient of -0 included),
/// `(m c) / (sqrt(v) + eps')`, `p - u lr`.
fn update<const FIRST: bool>(
    p: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    s: StepScalars,
) {
    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        if FIRST {
            *m = g * s.one_minus_beta_1;
            *v = (g * g) * s.one_minus_beta_2;
        } else {
            *m = *m * s.beta_1 + g * s.one_minus_beta_1;
            *v = *v * s.beta_2 + (g * g) * s.one_minus_beta_2;
        }
        let u = (*m * s.combined) / (v.sqrt() + s.epsilon);
        *p -= u * s.lr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Param;
    use burn::nn::{Linear, LinearConfig};
    use burn::optim::GradientsParams;

    /// Three Adam steps on a linear layer (one weight over `CHUNK`, so the parallel
    /// path runs) with Burn's Adam and ours, from the same start and gradients.
    fn three_steps(ours: bool) -> Vec<TensorData> {
        let device = Device::flex().autodiff();
        let fixed = |dims: Vec<usize>, salt: usize| {
            let n: usize = dims.iter().product();
            let values: Vec<f32> = (0..n)
                .map(|i| ((i * 7919 + salt) % 1009) as f32 / 5000.0 - 0.1)
                .collect();
            TensorData::new(values, dims)
        };
        let mut model: Linear = LinearConfig::new(200, 300).init(&device);
        model.weight = Param::from_tensor(Tensor::from_data(fixed(vec![200, 300], 1), &device));
        model.bias = Some(Param::from_tensor(Tensor::from_data(
            fixed(vec![300], 2),
            &device,
        )));
        let mut optim = if ours {
            FusedAdamConfig::new().with_epsilon(1e-8).init()
        } else {
            AdamConfig::new().with_epsilon(1e-8).init()
        };
        let mut out = vec![];
        for step in 0..3 {
            let x = Tensor::<2>::from_data(
                TensorData::new(
                    (0..8 * 200)
                        .map(|i| ((i * 37 + step * 11) % 101) as f32 / 50.0 - 1.0)
                        .collect::<Vec<_>>(),
                    [8, 200],
                ),
                &device,
            );
            let loss = model.forward(x).powf_scalar(2.0).mean();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            // The fused step is the one taken (else both runs would be Burn's).
            let weight_grad = grads.get::<2>(model.weight.id).expect("weight gradient");
            assert!(fusable(&model.weight.val().inner(), &weight_grad, None));
            model = optim.step(1e-3 * (step + 1) as f64, model, grads);
            out.push(model.weight.val().into_data());
            out.push(model.bias.as_ref().expect("bias").val().into_data());
        }
        out
    }

    #[test]
    fn matches_burns_adam_bit_for_bit() {
        let (burn, ours) = (three_steps(false), three_steps(true));
        for (b, o) in burn.iter().zip(&ours) {
            assert_eq!(
                b.try_to_vec::<f32>().unwrap(),
                o.try_to_vec::<f32>().unwrap()
            );
        }
        // The steps moved the weights (a test of equal no-ops would pass vacuously).
        assert_ne!(
            burn[0].try_to_vec::<f32>().unwrap(),
            burn[4].try_to_vec::<f32>().unwrap()
        );
    }
}
