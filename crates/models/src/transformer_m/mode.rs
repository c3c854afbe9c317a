//! Which channels a molecule uses (Transformer-M section 4.1). Training-time sampling of
//! modes is training policy and lives in `train` (`ModeProbabilities`).

use serde::{Deserialize, Serialize};

/// Which channels a molecule uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Graph structure only (degree, SPD, edge encodings).
    TwoD,
    /// Geometry only (Gaussian pair bias, 3D atom feature).
    ThreeD,
    /// Both channels.
    Both,
}

impl Mode {
    /// `(m2D, m3D)` switches (the original's `mask_2d`, `mask_3d`).
    pub fn switches(self) -> (f32, f32) {
        match self {
            Mode::TwoD => (1.0, 0.0),
            Mode::ThreeD => (0.0, 1.0),
            Mode::Both => (1.0, 1.0),
        }
    }

    /// The mode a molecule actually runs in: the requested one, except that a molecule
    /// without coordinates can only use the 2D channel (inference uses what the input
    /// carries).
    pub fn for_input(self, has_3d: bool) -> Mode {
        if has_3d { self } else { Mode::TwoD }
    }

    /// [`Mode::switches`] of each molecule of a batch after [`Mode::for_input`]:
    /// `(use_2d, use_3d)`, each `[B]`.
    ///
    /// # Panics
    /// If `modes` and `has_3d` differ in length.
    pub fn batch_switches(modes: &[Mode], has_3d: &[bool]) -> (Vec<f32>, Vec<f32>) {
        assert_eq!(modes.len(), has_3d.len(), "one mode per molecule");
        modes
            .iter()
            .zip(has_3d)
            .map(|(m, &geometry)| m.for_input(geometry).switches())
            .unzip()
    }
}
