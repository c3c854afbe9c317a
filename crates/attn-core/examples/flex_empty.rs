//! Burn-only case for an upstream report: burn-flex 0.22.1's `FlexTensor::empty` (and
//! `zeros`) builds a zeroed `Vec<u8>` and hands it to `Bytes::from_bytes_vec`, which copies
//! it into a 64-byte aligned buffer whenever the element type's alignment is below 64 (a
//! `u8` vector's always is): a memset and a memcpy of the whole tensor on one thread. The
//! same zeroed tensor built from a `Vec<f32>` (`TensorData::new`) is one memset.
//!
//! ```sh
//! cargo run -p attn-core --release --example flex_empty
//! ```
use std::time::Instant;

use burn::tensor::{DType, Shape, TensorData};
use burn_flex::FlexTensor;

fn main() {
    let (rows, cols) = (1056, 1024); // a MAT pretrained-size activation: 32 x 33 atoms, d 1024
    let time = |f: &dyn Fn() -> FlexTensor| {
        let mut t: Vec<f64> = (0..51)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let empty = time(&|| FlexTensor::empty(Shape::new([rows, cols]), DType::F32));
    let from_vec =
        time(&|| FlexTensor::from_data(TensorData::new(vec![0.0f32; rows * cols], [rows, cols])));
    println!(
        "[{rows}, {cols}] f32, median of 51: FlexTensor::empty {empty:.0} us, \
         from a zeroed Vec<f32> {from_vec:.0} us"
    );
}
