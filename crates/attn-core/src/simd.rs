//! The vector loops of the fused CPU kernels ([`crate::fused_attention`]), with an
//! AVX2 + FMA version for the functions compiled for those features.
//!
//! Why intrinsics: at attention sizes (rows of `d_k` = 16 to 64 floats, `N` ~ 30-60 keys)
//! the compiler leaves the portable loops scalar, or keeps the running sum in memory (a
//! store-to-load dependency per term); `perf annotate` showed both. Here the sums stay in
//! registers, up to 32 floats per pass.
//!
//! `AVX = true` may only be used inside a function compiled with
//! `#[target_feature(enable = "avx2,fma")]` that runs after `is_x86_feature_detected!`
//! found both (the callers' `dispatch_*` functions).

/// Whether this CPU has AVX2 and FMA, so that the `AVX = true` versions may run (the
/// check is cached by the standard library after its first call).
pub(crate) fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `y += a x` over the shorter of the two slices.
#[inline(always)]
pub(crate) fn axpy<const AVX: bool>(y: &mut [f32], a: f32, x: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if AVX {
        // SAFETY: `AVX` is true only on a CPU with AVX2 and FMA (module documentation).
        unsafe { axpy_avx2(y, a, x) };
        return;
    }
    for (y, &x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// `out = sum_j coeffs[j] * rows[offset + j * stride ..][..out.len()]`: a linear
/// combination of `coeffs.len()` rows of `out.len()` floats, `stride` apart in `rows`.
///
/// # Panics
/// If the last row ends past `rows`.
#[inline(always)]
pub(crate) fn combine_rows<const AVX: bool>(
    out: &mut [f32],
    coeffs: &[f32],
    rows: &[f32],
    stride: usize,
    offset: usize,
) {
    let m = out.len();
    if let Some(last) = coeffs.len().checked_sub(1) {
        let end = last
            .checked_mul(stride)
            .and_then(|e| e.checked_add(offset))
            .and_then(|e| e.checked_add(m));
        assert!(
            end.is_some_and(|e| e <= rows.len()),
            "combine_rows: rows too short"
        );
    }
    #[cfg(target_arch = "x86_64")]
    if AVX {
        // SAFETY: `AVX` as in `axpy`; the assert above bounds every row read.
        unsafe { combine_rows_avx2(out, coeffs, rows, stride, offset) };
        return;
    }
    out.fill(0.0);
    for (j, &w) in coeffs.iter().enumerate() {
        let row = &rows[offset + j * stride..offset + j * stride + m];
        for (o, &x) in out.iter_mut().zip(row) {
            *o += w * x;
        }
    }
}

/// [`axpy`] with 8-wide fused multiply-adds.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn axpy_avx2(y: &mut [f32], a: f32, x: &[f32]) {
    use std::arch::x86_64::{_mm256_fmadd_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps};
    let n = y.len().min(x.len());
    let va = _mm256_set1_ps(a);
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n` keeps both 8-float accesses inside the slices.
        unsafe {
            let yv = _mm256_loadu_ps(y.as_ptr().add(i));
            let xv = _mm256_loadu_ps(x.as_ptr().add(i));
            _mm256_storeu_ps(y.as_mut_ptr().add(i), _mm256_fmadd_ps(va, xv, yv));
        }
        i += 8;
    }
    for (y, &x) in y[i..n].iter_mut().zip(&x[i..n]) {
        *y = a.mul_add(x, *y);
    }
}

/// [`combine_rows`] with its running sums in registers: columns in blocks of 64 floats
/// (8 registers), then the remaining whole registers, then a scalar tail.
///
/// An FMA waits about 4 cycles for its sum and the core issues two a cycle, so eight
/// independent sums keep it busy: a block of fewer than 8 registers keeps `S` sets of
/// sums (every `S`-th row into one set), added at the end. With one set, the 8-column
/// tail of a 40-column score row took as long as the 32 columns before it.
///
/// # Safety
/// The CPU must have AVX2 and FMA, and every row `offset + j * stride .. + out.len()`
/// (`j < coeffs.len()`) must lie inside `rows`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn combine_rows_avx2(
    out: &mut [f32],
    coeffs: &[f32],
    rows: &[f32],
    stride: usize,
    offset: usize,
) {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_setzero_ps,
        _mm256_storeu_ps,
    };
    /// One block of `R` registers (`8 R` columns from `c0`), in `S` sets of sums.
    ///
    /// # Safety
    /// As the enclosing function, with `c0 + 8 R <= out.len()`.
    #[inline(always)]
    unsafe fn block<const R: usize, const S: usize>(
        out: &mut [f32],
        coeffs: &[f32],
        rows: &[f32],
        stride: usize,
        offset: usize,
        c0: usize,
    ) {
        // SAFETY: the caller bounds every row read and the `8 R` output floats.
        unsafe {
            let mut acc: [[__m256; R]; S] = [[_mm256_setzero_ps(); R]; S];
            let base = rows.as_ptr().add(offset + c0);
            let full = coeffs.len() / S * S;
            let mut j = 0;
            while j < full {
                for (s, set) in acc.iter_mut().enumerate() {
                    let wv = _mm256_set1_ps(*coeffs.get_unchecked(j + s));
                    let row = base.add((j + s) * stride);
                    for (r, a) in set.iter_mut().enumerate() {
                        *a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(row.add(8 * r)), *a);
                    }
                }
                j += S;
            }
            for (j, &w) in coeffs.iter().enumerate().skip(full) {
                let wv = _mm256_set1_ps(w);
                let row = base.add(j * stride);
                for (r, a) in acc[0].iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(row.add(8 * r)), *a);
                }
            }
            for r in 0..R {
                let mut sum = acc[0][r];
                for set in &acc[1..] {
                    sum = _mm256_add_ps(sum, set[r]);
                }
                _mm256_storeu_ps(out.as_mut_ptr().add(c0 + 8 * r), sum);
            }
        }
    }
    let m = out.len();
    let mut c0 = 0;
    // SAFETY: each block stays below `m`; the rows are bounded by the caller.
    unsafe {
        while c0 + 64 <= m {
            block::<8, 1>(out, coeffs, rows, stride, offset, c0);
            c0 += 64;
        }
        if c0 + 32 <= m {
            block::<4, 2>(out, coeffs, rows, stride, offset, c0);
            c0 += 32;
        }
        match (m - c0) / 8 {
            3 => block::<3, 3>(out, coeffs, rows, stride, offset, c0),
            2 => block::<2, 4>(out, coeffs, rows, stride, offset, c0),
            1 => block::<1, 8>(out, coeffs, rows, stride, offset, c0),
            _ => {}
        }
        c0 += (m - c0) / 8 * 8;
    }
    for (c, o) in out.iter_mut().enumerate().skip(c0) {
        *o = coeffs.iter().enumerate().fold(0.0, |acc, (j, &w)| {
            w.mul_add(rows[offset + j * stride + c], acc)
        });
    }
}

/// `x = exp(x)` elementwise: 8-wide when `AVX` ([`exp8`]), else `f32::exp`.
#[inline(always)]
pub(crate) fn exp_in_place<const AVX: bool>(x: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if AVX {
        // SAFETY: `AVX` as in `axpy`.
        unsafe { exp_in_place_avx2(x) };
        return;
    }
    for v in x {
        *v = if *v < -104.0 { 0.0 } else { v.exp() };
    }
}

/// [`exp_in_place`] 8 lanes at a time; the tail through the same vector code.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn exp_in_place_avx2(x: &mut [f32]) {
    use std::arch::x86_64::{_mm256_loadu_ps, _mm256_storeu_ps};
    let mut chunks = x.chunks_exact_mut(8);
    for c in &mut chunks {
        // SAFETY: `c` holds exactly 8 floats.
        unsafe { _mm256_storeu_ps(c.as_mut_ptr(), exp8(_mm256_loadu_ps(c.as_ptr()))) };
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mut buf = [0.0f32; 8];
        buf[..tail.len()].copy_from_slice(tail);
        // SAFETY: `buf` holds 8 floats.
        unsafe { _mm256_storeu_ps(buf.as_mut_ptr(), exp8(_mm256_loadu_ps(buf.as_ptr()))) };
        tail.copy_from_slice(&buf[..tail.len()]);
    }
}

/// `exp` of 8 lanes: Cody-Waite range reduction `x = k ln 2 + r` (`|r| <= ln 2 / 2`), a
/// degree-6 polynomial for `exp(r)` (the Cephes `expf` coefficients), and `2^k` built in
/// the exponent bits. Relative error within 2 ulp of `f32::exp` on `[-87, 88]`; below
/// -87.3 the result is 0 (where `expf` returns subnormals, under 1.2e-38), above 88.38
/// it is clamped (callers pass `x <= 0`); NaN stays NaN.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) unsafe fn exp8(x: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let lo = _mm256_set1_ps(-87.336_54);
    let underflow = _mm256_cmp_ps::<_CMP_LT_OQ>(x, lo);
    // NaN in `x` propagates: min/max return their second operand when either is NaN.
    let x = _mm256_min_ps(_mm256_set1_ps(88.376_26), _mm256_max_ps(lo, x));
    // k = round(x / ln 2)
    let k = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(
        x,
        _mm256_set1_ps(std::f32::consts::LOG2_E),
    ));
    // r = x - k ln 2, ln 2 split in two for exactness.
    let r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693_359_4), x);
    let r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.121_944_4e-4), r);
    let mut p = _mm256_set1_ps(1.987_569_1e-4);
    for c in [1.398_2e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    }
    // exp(r) = 1 + r + r^2 p(r)
    let r2 = _mm256_mul_ps(r, r);
    let e = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0));
    // 2^k: k + 127 in the exponent field.
    let bits = _mm256_slli_epi32::<23>(_mm256_add_epi32(
        _mm256_cvtps_epi32(k),
        _mm256_set1_epi32(127),
    ));
    let y = _mm256_mul_ps(e, _mm256_castsi256_ps(bits));
    _mm256_andnot_ps(underflow, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both versions give the plain sums, at every block size (1 to 81 columns: the 64,
    /// 32, 24, 16 and 8 blocks and the scalar tails), with row counts that do and do not
    /// fill the blocks' sets of sums, and with a stride and offset.
    #[test]
    fn combine_rows_and_axpy_match_plain_sums() {
        let rows: Vec<f32> = (0..2000)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let avx = avx2_fma();
        for count in [1, 3, 8, 9, 17] {
            let coeffs: Vec<f32> = (0..count).map(|j| (j as f32 - 4.0) / 3.0).collect();
            for m in 1..=81 {
                let (stride, offset) = (47, 5);
                let want: Vec<f32> = (0..m)
                    .map(|c| {
                        (0..count)
                            .map(|j| coeffs[j] as f64 * rows[offset + j * stride + c] as f64)
                            .sum::<f64>() as f32
                    })
                    .collect();
                let mut plain = vec![9.0; m];
                combine_rows::<false>(&mut plain, &coeffs, &rows, stride, offset);
                let mut y = vec![1.0; m];
                axpy::<false>(&mut y, 0.5, &rows[..m]);
                let y_want: Vec<f32> = rows[..m].iter().map(|&x| 1.0 + 0.5 * x).collect();
                let mut results = vec![(plain, y)];
                if avx {
                    let mut fast = vec![9.0; m];
                    combine_rows::<true>(&mut fast, &coeffs, &rows, stride, offset);
                    let mut y = vec![1.0; m];
                    axpy::<true>(&mut y, 0.5, &rows[..m]);
                    results.push((fast, y));
                }
                for (got, y) in results {
                    for (g, w) in got.iter().zip(&want) {
                        assert!(
                            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                            "m {m}, {count} rows: {got:?} vs {want:?}"
                        );
                    }
                    for (g, w) in y.iter().zip(&y_want) {
                        assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "m {m}: {y:?}");
                    }
                }
            }
        }
    }

    /// The vector `exp` is within 2 ulp (relative 2.4e-7) of `f32::exp` from -87 to 88,
    /// and 0 far below (the softmax's masked logits).
    #[test]
    fn vector_exp_matches_libm() {
        let avx = avx2_fma();
        let xs: Vec<f32> = (0..200_001)
            .map(|i| -87.0 + 175.0 * i as f32 / 200_000.0)
            .collect();
        let mut got = xs.clone();
        exp_in_place::<false>(&mut got);
        let mut cases = vec![got];
        if avx {
            let mut fast = xs.clone();
            exp_in_place::<true>(&mut fast);
            cases.push(fast);
        }
        for got in cases {
            for (&x, &g) in xs.iter().zip(&got) {
                let want = (x as f64).exp();
                assert!(
                    ((g as f64 - want) / want).abs() < 2.4e-7,
                    "exp({x}) = {g}, want {want}"
                );
            }
        }
        if avx {
            let mut far = vec![-1e12f32, -104.0, -88.0, -1e30];
            exp_in_place::<true>(&mut far);
            assert_eq!(far, [0.0; 4]);
            let mut nan = vec![f32::NAN, 0.0];
            exp_in_place::<true>(&mut nan);
            assert!(nan[0].is_nan() && nan[1] == 1.0, "{nan:?}");
        }
    }
}
