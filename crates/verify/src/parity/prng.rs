//! Deterministic weights identical to `fixtures/gen/prng.py`: splitmix64 over
//! (FNV-1a 64 of the tensor name, element index), uniform in `[low, high)` with 24-bit
//! resolution, computed in f64 and cast to f32 (bit-identical in both languages).

/// FNV-1a 64 of `name`'s UTF-8 bytes (`fixtures/gen/prng.py`'s `fnv1a64`).
fn fnv1a64(name: &str) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    std::hash::Hasher::write(&mut hasher, name.as_bytes());
    std::hash::Hasher::finish(&hasher)
}

/// `n` values for tensor `name`, uniform in `[low, high)`.
pub fn uniform(name: &str, n: usize, low: f64, high: f64) -> Vec<f32> {
    let seed = fnv1a64(name);
    (1..=n as u64)
        .map(|i| {
            let mut z = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 40) as f64 / (1u64 << 24) as f64;
            (low + (high - low) * u) as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_python() {
        // python3 -c "import prng; print(prng.uniform('a.weight',(2,3),-1,1))"
        let v = super::uniform("a.weight", 6, -1.0, 1.0);
        let want = [
            0.34106362,
            -0.54166114,
            0.8066677,
            0.9545592,
            -0.913972,
            -0.54326427,
        ];
        for (a, b) in v.iter().zip(want) {
            assert_eq!(*a, b as f32);
        }
    }
}
