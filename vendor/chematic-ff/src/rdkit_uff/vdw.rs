//! UFF van der Waals terms (`Code/ForceField/UFF/Nonbonded.cpp`,
//! `vdWContrib::getEnergy` / `getGrad`), stored as parallel arrays and evaluated in
//! blocks, with RDKit's values bit for bit.
//!
//! These pairs are most of a molecule's UFF terms (every pair beyond 1-3, within
//! `vdwThresh * x_ij`). RDKit evaluates each in turn; each needs a square root and one
//! (energy) or five (gradient) divisions, so the loop is bound by the divider. Here a
//! block of pairs is evaluated in three passes: gather the coordinate differences (the
//! only indexed loads), compute every pair's value in a loop over plain arrays (which the
//! compiler vectorises, so the square roots and divisions run several per instruction),
//! then add the values into the energy or gradient in RDKit's order. Each value is the
//! same IEEE expression RDKit computes (the same operations on the same operands, never
//! fused), and the additions are in the same order, so the energy and gradient are
//! RDKit's exactly.

use super::int_pow;

/// Pairs per block: the per-pair scratch of a block lives on the stack.
const BLOCK: usize = 64;

/// The van der Waals pairs of one molecule, in RDKit's contribution order.
#[derive(Clone, Debug, Default)]
pub(super) struct VdwTerms {
    i: Vec<usize>,
    j: Vec<usize>,
    x_ij: Vec<f64>,
    well_depth: Vec<f64>,
    thresh: Vec<f64>,
    /// `12 * well_depth / x_ij`, the gradient's constant factor (RDKit divides for it at
    /// every evaluation; the same operations once, so the same value).
    grad_factor: Vec<f64>,
}

impl VdwTerms {
    /// Appends the pair `(i, j)` (`i < j`) with RDKit's `x_ij`, well depth and distance
    /// threshold (`10 * x_ij`, RDKit's `threshMultiplier`; the pair's inclusion uses
    /// the force field's `vdwThresh` instead).
    pub(super) fn push(&mut self, i: usize, j: usize, x_ij: f64, well_depth: f64, thresh: f64) {
        self.i.push(i);
        self.j.push(j);
        self.x_ij.push(x_ij);
        self.well_depth.push(well_depth);
        self.thresh.push(thresh);
        self.grad_factor.push(12. * well_depth / x_ij);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.i.is_empty()
    }

    /// `(i, j, x_ij, well_depth)` of every pair, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, usize, f64, f64)> + '_ {
        (0..self.i.len()).map(|k| (self.i[k], self.j[k], self.x_ij[k], self.well_depth[k]))
    }

    /// Adds every pair's energy to `res` in order (`vdWContrib::getEnergy`: nothing
    /// beyond the threshold or at zero distance), distances taken at `dpos`.
    pub(super) fn add_energy(&self, dpos: &[f64], res: &mut f64) {
        let mut d2 = [0.0_f64; BLOCK];
        let mut energy = [0.0_f64; BLOCK];
        let mut counts = [false; BLOCK];
        for start in (0..self.i.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(self.i.len());
            let len = end - start;
            for (k, d2) in d2[..len].iter_mut().enumerate() {
                *d2 = squared_distance(dpos, self.i[start + k], self.j[start + k]);
            }
            let (x_ij, well, thresh) = (
                &self.x_ij[start..end],
                &self.well_depth[start..end],
                &self.thresh[start..end],
            );
            for k in 0..len {
                let dist = d2[k].sqrt();
                let r = x_ij[k] / dist;
                let r6 = int_pow(r, 6);
                let r12 = r6 * r6;
                energy[k] = well[k] * (r12 - 2.0 * r6);
                counts[k] = !(dist > thresh[k] || dist <= 0.0);
            }
            for k in 0..len {
                if counts[k] {
                    *res += energy[k];
                }
            }
        }
    }

    /// Adds every pair's gradient into `grad` in order (`vdWContrib::getGrad`: nothing
    /// beyond the threshold; RDKit's fixed push of 100 at zero distance).
    pub(super) fn add_gradient(&self, pos: &[f64], grad: &mut [f64]) {
        let mut delta = [[0.0_f64; BLOCK]; 3];
        let mut d2 = [0.0_f64; BLOCK];
        let mut step = [[0.0_f64; BLOCK]; 3];
        let mut dist = [0.0_f64; BLOCK];
        for start in (0..self.i.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(self.i.len());
            let len = end - start;
            for k in 0..len {
                let (i, j) = (self.i[start + k], self.j[start + k]);
                d2[k] = squared_distance(pos, i, j);
                for (d, delta) in delta.iter_mut().enumerate() {
                    delta[k] = pos[3 * i + d] - pos[3 * j + d];
                }
            }
            let (x_ij, factor) = (&self.x_ij[start..end], &self.grad_factor[start..end]);
            for k in 0..len {
                dist[k] = d2[k].sqrt();
                let r = x_ij[k] / dist[k];
                let r7 = int_pow(r, 7);
                let r13 = int_pow(r, 13);
                let pre_factor = factor[k] * (r7 - r13);
                for d in 0..3 {
                    step[d][k] = pre_factor * delta[d][k] / dist[k];
                }
            }
            for k in 0..len {
                let (i, j) = (self.i[start + k], self.j[start + k]);
                if dist[k] > self.thresh[start + k] {
                    continue;
                }
                if dist[k] <= 0.0 {
                    for d in 0..3 {
                        grad[3 * i + d] += 100.0;
                        grad[3 * j + d] -= 100.0;
                    }
                    continue;
                }
                for (d, step) in step.iter().enumerate() {
                    grad[3 * i + d] += step[k];
                    grad[3 * j + d] -= step[k];
                }
            }
        }
    }
}

/// The square of `ForceField::distance` (`crate::rdkit_mmff::distance` before its
/// square root): the same sum in the same order.
#[inline(always)]
fn squared_distance(pos: &[f64], i: usize, j: usize) -> f64 {
    let (i, j) = if j < i { (j, i) } else { (i, j) };
    let mut res = 0.0;
    for d in 0..3 {
        let t = pos[3 * i + d] - pos[3 * j + d];
        res += t * t;
    }
    res
}
