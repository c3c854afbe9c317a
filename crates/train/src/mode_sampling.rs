//! Training-time sampling of Transformer-M's channel modes per molecule (original
//! `TransformerMEncoder.forward`: `np.random.choice(3, n_mol, p=mode_prob)`).

use burn::prelude::*;
use models::transformer_m::Mode;
use rand::Rng;

/// Probabilities of the training-time modes of a molecule with coordinates (the original's
/// `mode_prob` 0.2 / 0.2 / 0.6 for 2D+3D / 2D / 3D). Molecules without coordinates
/// always use 2D.
#[derive(Config, Debug, PartialEq)]
pub struct ModeProbabilities {
    /// P(2D + 3D).
    #[config(default = 0.2)]
    pub both: f64,
    /// P(2D only).
    #[config(default = 0.2)]
    pub two_d: f64,
    /// P(3D only).
    #[config(default = 0.6)]
    pub three_d: f64,
}

impl ModeProbabilities {
    /// Always the given mode (for 2D-only or 3D-only training runs).
    pub fn fixed(mode: Mode) -> Self {
        let (both, two_d, three_d) = match mode {
            Mode::Both => (1.0, 0.0, 0.0),
            Mode::TwoD => (0.0, 1.0, 0.0),
            Mode::ThreeD => (0.0, 0.0, 1.0),
        };
        Self {
            both,
            two_d,
            three_d,
        }
    }

    /// Checks the three weights: finite, not negative, not all 0 (they are used
    /// relative to their sum).
    ///
    /// # Errors
    /// [`crate::TrainError::Invalid`] naming the weights.
    pub fn validate(&self) -> Result<(), crate::TrainError> {
        let all = [self.both, self.two_d, self.three_d];
        if all.iter().all(|p| p.is_finite() && *p >= 0.0) && all.iter().sum::<f64>() > 0.0 {
            return Ok(());
        }
        Err(crate::TrainError::Invalid(format!(
            "mode probabilities (2D+3D, 2D, 3D) = {all:?}: each must be a finite number >= 0, \
             not all 0"
        )))
    }

    /// Draws one mode per molecule; `has_3d[b]` false forces [`Mode::TwoD`].
    pub fn sample(&self, has_3d: &[bool], rng: &mut impl Rng) -> Vec<Mode> {
        let total = self.both + self.two_d + self.three_d;
        has_3d
            .iter()
            .map(|&geometry| {
                if !geometry {
                    return Mode::TwoD;
                }
                let u = rng.random::<f64>() * total;
                if u < self.both {
                    Mode::Both
                } else if u < self.both + self.two_d {
                    Mode::TwoD
                } else {
                    Mode::ThreeD
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn molecules_without_coordinates_are_always_2d() {
        let sampled = ModeProbabilities::new().sample(
            &[true, false, true, true, true, true, true, true],
            &mut rand::rngs::StdRng::seed_from_u64(0),
        );
        assert_eq!(sampled[1], Mode::TwoD);
        assert!(sampled.iter().any(|m| *m != Mode::TwoD));
        let fixed = ModeProbabilities::fixed(Mode::ThreeD)
            .sample(&[true; 5], &mut rand::rngs::StdRng::seed_from_u64(1));
        assert_eq!(fixed, vec![Mode::ThreeD; 5]);
    }
}
