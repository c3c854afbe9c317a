//! Raw f32 access to flex tensors for the fused CPU kernels ([`crate::layer_norm`],
//! [`crate::fused_attention`]): the plumbing between Burn's tensors and plain slices.

use burn::backend::BackendTypes;
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use burn::tensor::DType;
use burn_flex::FlexTensor;

/// A vector of `n` floats written in parallel chunks of `chunk` elements: chunk `i` is
/// zeroed by the task that then runs `fill(i, chunk)`, on rayon's threads. Why: `vec![0.0;
/// n]` zeroes all of it on the calling thread before the parallel work (a large output
/// allocation is a memset of its own, 1-3% of a SMILES generator training step per kernel,
/// `perf`); here each chunk is zeroed in parallel and is in cache when `fill` writes it.
pub(crate) fn par_chunks_filled(
    n: usize,
    chunk: usize,
    fill: impl Fn(usize, &mut [f32]) + Sync,
) -> Vec<f32> {
    use rayon::prelude::*;
    let mut out: Vec<f32> = Vec::with_capacity(n);
    out.spare_capacity_mut()[..n]
        .par_chunks_mut(chunk.max(1))
        .enumerate()
        .for_each(|(i, part)| {
            part.fill(std::mem::MaybeUninit::new(0.0));
            // SAFETY: every element of `part` was initialised just above, and
            // `MaybeUninit<f32>` has `f32`'s layout.
            let part = unsafe { &mut *(part as *mut [std::mem::MaybeUninit<f32>] as *mut [f32]) };
            fill(i, part);
        });
    // SAFETY: the first `n` elements were all initialised by the chunks above.
    unsafe { out.set_len(n) };
    out
}

/// The float primitive of flex's autodiff backend.
pub(crate) type AdTensor = <Autodiff<Flex> as BackendTypes>::FloatTensorPrimitive;

/// Whether `x` lives on flex (with or without autodiff) as f32: the fused kernels' domain.
pub(crate) fn on_flex_f32<const D: usize>(x: &Tensor<D>) -> bool {
    x.device().without_autodiff() == Device::flex() && x.dtype() == DType::F32
}

/// Whether `x` is on flex's autodiff device and part of a gradient computation (a leaf
/// that requires a gradient or anything computed from one). Burn's `is_require_grad`
/// reports leaves only.
pub(crate) fn is_tracked<const D: usize>(x: &Tensor<D>) -> bool {
    x.is_autodiff()
        && x.clone()
            .try_into_primitive::<Autodiff<Flex>>()
            .is_ok_and(|p| p.is_tracked())
}

/// `t` with a row-major contiguous layout (a copy only for a strided view).
pub(crate) fn contiguous(t: FlexTensor) -> FlexTensor {
    if t.is_contiguous() {
        t
    } else {
        t.to_contiguous()
    }
}

/// The values of a contiguous f32 tensor in row-major order.
///
/// # Panics
/// If `t` is not f32 or not contiguous (callers pass [`contiguous`]'s result).
pub(crate) fn values(t: &FlexTensor) -> &[f32] {
    assert!(t.is_contiguous(), "values() needs a contiguous tensor");
    let start = t.layout().start_offset();
    &t.storage::<f32>()[start..start + t.layout().num_elements()]
}

/// A flex tensor owning `values` with shape `dims` (row-major).
pub(crate) fn tensor_from(values: Vec<f32>, dims: &[usize]) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(values, dims.to_vec()))
}

/// The shape of a flex tensor.
pub(crate) fn dims_of(t: &FlexTensor) -> Vec<usize> {
    t.layout().shape().to_vec()
}
