//! molattn's fork: the inverse Hessian of [`super::bfgs_minimize`] as a packed triangle,
//! one sweep per iteration (vendor/chematic-ff/FORK.md, item 1).

/// BFGS's inverse Hessian `H` (`dim x dim`, symmetric), stored as its upper triangle packed
/// row by row (row `i` holds columns `i..dim`), with the update of each iteration
/// (`BFGSOpt::minimize`, Numerical Recipes `dfpmin`)
/// `H += fac * xi xi^T - fad * hdg hdg^T + fae * u u^T` held back until the next sweep.
///
/// RDKit keeps the full matrix and walks it three times per iteration (`H * dgrad`, the
/// update, `-H * grad`). Here one sweep over half of it applies the pending update and
/// computes `H dgrad`; the next direction needs no sweep of its own, as
/// `H_new grad = H grad + fac * xi (xi . grad) - fad * hdg (hdg . grad) + fae * u (u . grad)`
/// and `H grad = H dgrad - direction` (the caller's unscaled direction was `-H grad_old`).
/// The same quantities in exact arithmetic; the sums are reassociated (partial sums per row,
/// the two triangles' contributions added apart) and the direction is carried from one
/// iteration to the next instead of recomputed from `H`, so its rounding errors add up
/// (relatively about `eps * |grad_0| / |grad_k|`; when a carried direction fails the line
/// search, the minimiser recomputes it from `H` and searches once more before giving up).
/// Results agree with RDKit's to rounding, not bit for bit.
pub(super) struct PackedInverseHessian {
    dim: usize,
    packed: Vec<f64>,
    /// The held-back update, if any: `fac`, `fad`, `fae`; its vectors `xi`, `hdg`, `u`
    /// are in `vectors` (`3 * dim`).
    pending: Option<[f64; 3]>,
    vectors: Vec<f64>,
    /// `H v` of the last sweep (`H` with the pending update applied).
    hv: Vec<f64>,
}

impl PackedInverseHessian {
    pub(super) fn identity(dim: usize) -> Self {
        let mut packed = vec![0.0; dim * (dim + 1) / 2];
        let mut offset = 0;
        for i in 0..dim {
            packed[offset] = 1.0;
            offset += dim - i;
        }
        Self {
            dim,
            packed,
            pending: None,
            vectors: vec![0.0; 3 * dim],
            hv: vec![0.0; dim],
        }
    }

    /// `H v` of the last sweep.
    pub(super) fn hv(&self) -> &[f64] {
        &self.hv
    }

    /// Applies the pending update (if any) and sets `hv = H v`.
    pub(super) fn update_and_mat_vec(&mut self, v: &[f64]) {
        match self.pending.take() {
            Some(factors) => self.sweep::<true>(v, factors),
            None => self.sweep::<false>(v, [0.0; 3]),
        }
    }

    /// Holds back the update `H += fac * xi xi^T - fad * hdg hdg^T + fae * u u^T` (`hdg`:
    /// the `hv` of the last sweep) for the next sweep, and turns `h_grad = H grad` into
    /// `H_new grad`.
    pub(super) fn defer_update(
        &mut self,
        [fac, fad, fae]: [f64; 3],
        xi: &[f64],
        u: &[f64],
        grad: &[f64],
        h_grad: &mut [f64],
    ) {
        let dim = self.dim;
        let hdg = &self.hv;
        let (mut xi_grad, mut hdg_grad, mut u_grad) = (0.0, 0.0, 0.0);
        for k in 0..dim {
            xi_grad += xi[k] * grad[k];
            hdg_grad += hdg[k] * grad[k];
            u_grad += u[k] * grad[k];
        }
        let (cx, ch, cu) = (fac * xi_grad, fad * hdg_grad, fae * u_grad);
        for k in 0..dim {
            h_grad[k] += cx * xi[k] - ch * hdg[k] + cu * u[k];
        }
        let (vx, rest) = self.vectors.split_at_mut(dim);
        let (vh, vu) = rest.split_at_mut(dim);
        vx.copy_from_slice(xi);
        vh.copy_from_slice(hdg);
        vu.copy_from_slice(u);
        self.pending = Some([fac, fad, fae]);
    }

    /// One sweep of the packed rows: with `UPDATE`, `h_ij += (fac x_i) x_j - (fad hdg_i)
    /// hdg_j + (fae u_i) u_j`; then `hv_i += h_ij v_j` and `hv_j += h_ij v_i`.
    fn sweep<const UPDATE: bool>(&mut self, v: &[f64], [fac, fad, fae]: [f64; 3]) {
        let dim = self.dim;
        let (vx, rest) = self.vectors.split_at(dim);
        let (vh, vu) = rest.split_at(dim);
        let hv = &mut self.hv;
        hv.fill(0.0);
        let mut offset = 0;
        for i in 0..dim {
            let row = &mut self.packed[offset..offset + dim - i];
            offset += dim - i;
            let factors = if UPDATE {
                [fac * vx[i], fad * vh[i], fae * vu[i]]
            } else {
                [0.0; 3]
            };
            if UPDATE {
                row[0] += factors[0] * vx[i] - factors[1] * vh[i] + factors[2] * vu[i];
            }
            let diag = row[0];
            let j = i + 1;
            let sum = packed_row::<UPDATE>(
                &mut row[1..],
                &mut hv[j..],
                &v[j..],
                [&vx[j..], &vh[j..], &vu[j..]],
                factors,
                v[i],
            );
            hv[i] += diag * v[i] + sum;
        }
    }
}

/// One packed row right of the diagonal (see [`PackedInverseHessian::sweep`]): applies the
/// update when `UPDATE`, adds `h_j * vi` to `hv[j]` and returns `sum_j h_j v_j`. A function
/// of its own so that its slices are known not to alias: the loops vectorise.
#[inline]
fn packed_row<const UPDATE: bool>(
    row: &mut [f64],
    hv: &mut [f64],
    v: &[f64],
    [vx, vh, vu]: [&[f64]; 3],
    [a, b, c]: [f64; 3],
    vi: f64,
) -> f64 {
    const LANES: usize = 4;
    let n = row.len();
    let (hv, v, vx, vh, vu) = (&mut hv[..n], &v[..n], &vx[..n], &vh[..n], &vu[..n]);
    let mut acc = [0.0_f64; LANES];
    let blocked = n - n % LANES;
    for k in (0..blocked).step_by(LANES) {
        let h: &mut [f64; LANES] = (&mut row[k..k + LANES]).try_into().unwrap();
        let hvb: &mut [f64; LANES] = (&mut hv[k..k + LANES]).try_into().unwrap();
        let vb: &[f64; LANES] = v[k..k + LANES].try_into().unwrap();
        if UPDATE {
            let xb: &[f64; LANES] = vx[k..k + LANES].try_into().unwrap();
            let gb: &[f64; LANES] = vh[k..k + LANES].try_into().unwrap();
            let ub: &[f64; LANES] = vu[k..k + LANES].try_into().unwrap();
            for l in 0..LANES {
                h[l] += a * xb[l] - b * gb[l] + c * ub[l];
            }
        }
        for l in 0..LANES {
            acc[l] += h[l] * vb[l];
            hvb[l] += h[l] * vi;
        }
    }
    let mut sum = 0.0;
    for k in blocked..n {
        if UPDATE {
            row[k] += a * vx[k] - b * vh[k] + c * vu[k];
        }
        sum += row[k] * v[k];
        hv[k] += row[k] * vi;
    }
    for a in acc {
        sum += a;
    }
    sum
}
