//! The forked BFGS minimiser (`vendor/chematic-ff`, `rdkit_bfgs::bfgs_minimize`: the inverse
//! Hessian as a packed triangle, its update held back a sweep, the next direction carried
//! from one iteration to the next) against RDKit's dense algorithm written out here
//! operation for operation from `Code/Numerics/Optimizer/BFGSOpt.h` (RDKit 2026.03:
//! `minimize` and `linearSearch`, the full `dim x dim` inverse Hessian, `-H grad`
//! recomputed every iteration). Smooth functions in 1, 5 and 13 dimensions (the fork's row
//! loops run in blocks of 4 and a remainder) must be evaluated at the same points, to
//! rounding, until convergence: a wrong entry of `H`, a stale update or a wrong
//! direction changes the points long before the minimum.

use std::cell::RefCell;

use chematic_ff::rdkit_bfgs::bfgs_minimize;

/// Relative distance allowed between the two minimisers' evaluation points, over the
/// whole run (the sums run in another order, so the points differ by rounding only).
const TOLERANCE: f64 = 1e-9;

/// RDKit's `BFGSOpt::linearSearch`: (status, value at the new point).
fn linear_search(
    old_pt: &[f64],
    old_val: f64,
    grad: &[f64],
    dir: &mut [f64],
    new_pt: &mut [f64],
    func: &dyn Fn(&[f64]) -> f64,
    max_step: f64,
) -> (i32, f64) {
    let dim = old_pt.len();
    let sum = dir.iter().map(|d| d * d).sum::<f64>().sqrt();
    if sum > max_step {
        for d in dir.iter_mut() {
            *d *= max_step / sum;
        }
    }
    let slope: f64 = (0..dim).map(|i| dir[i] * grad[i]).sum();
    if slope >= 0.0 {
        return (-1, 0.0);
    }
    let test = (0..dim).fold(0.0_f64, |t, i| {
        t.max(dir[i].abs() / old_pt[i].abs().max(1.0))
    });
    let lambda_min = 1e-7 / test;
    let (mut lambda, mut lambda2, mut val2, mut new_val) = (1.0_f64, 0.0_f64, 0.0_f64, 0.0);
    for it in 0..1000 {
        if lambda < lambda_min {
            new_pt.copy_from_slice(old_pt);
            return (1, new_val);
        }
        for i in 0..dim {
            new_pt[i] = old_pt[i] + lambda * dir[i];
        }
        new_val = func(new_pt);
        if new_val - old_val <= 1e-4 * lambda * slope {
            return (0, new_val);
        }
        let mut tmp_lambda = if it == 0 {
            -slope / (2.0 * (new_val - old_val - slope))
        } else {
            let rhs1 = new_val - old_val - lambda * slope;
            let rhs2 = val2 - old_val - lambda2 * slope;
            let a = (rhs1 / (lambda * lambda) - rhs2 / (lambda2 * lambda2)) / (lambda - lambda2);
            let b = (-lambda2 * rhs1 / (lambda * lambda) + lambda * rhs2 / (lambda2 * lambda2))
                / (lambda - lambda2);
            if a == 0.0 {
                -slope / (2.0 * b)
            } else {
                let disc = b * b - 3.0 * a * slope;
                if disc < 0.0 {
                    0.5 * lambda
                } else if b <= 0.0 {
                    (-b + disc.sqrt()) / (3.0 * a)
                } else {
                    -slope / (b + disc.sqrt())
                }
            }
        };
        if it > 0 && tmp_lambda > 0.5 * lambda {
            tmp_lambda = 0.5 * lambda;
        }
        lambda2 = lambda;
        val2 = new_val;
        lambda = tmp_lambda.max(0.1 * lambda);
    }
    new_pt.copy_from_slice(old_pt);
    (-1, new_val)
}

/// RDKit's `BFGSOpt::minimize` with the dense inverse Hessian. Returns (status, number of
/// BFGS updates skipped because `fac` was too small).
fn dense_bfgs(
    pos: &mut [f64],
    grad_tol: f64,
    max_its: u32,
    func: &dyn Fn(&[f64]) -> f64,
    grad_fn: &dyn Fn(&[f64], &mut [f64]),
) -> (i32, usize) {
    const EPS: f64 = 3e-8;
    let dim = pos.len();
    let (mut grad, mut dgrad, mut hdg, mut xi, mut new_pos) = (
        vec![0.0; dim],
        vec![0.0; dim],
        vec![0.0; dim],
        vec![0.0; dim],
        vec![0.0; dim],
    );
    let mut h = vec![0.0; dim * dim];
    let mut skipped = 0;
    let mut fp = func(pos);
    grad_fn(pos, &mut grad);
    for i in 0..dim {
        h[i * dim + i] = 1.0;
        xi[i] = -grad[i];
    }
    let max_step = 100.0
        * pos
            .iter()
            .map(|p| p * p)
            .sum::<f64>()
            .sqrt()
            .max(dim as f64);
    for _ in 0..max_its {
        let (status, value) = linear_search(pos, fp, &grad, &mut xi, &mut new_pos, func, max_step);
        if status < 0 {
            return (-1, skipped);
        }
        fp = value;
        let mut test = 0.0_f64;
        for i in 0..dim {
            xi[i] = new_pos[i] - pos[i];
            pos[i] = new_pos[i];
            test = test.max(xi[i].abs() / pos[i].abs().max(1.0));
            dgrad[i] = grad[i];
        }
        if test < 4.0 * EPS {
            return (0, skipped);
        }
        grad_fn(pos, &mut grad);
        let term = (fp * 1.0).max(1.0);
        test = 0.0;
        for i in 0..dim {
            test = test.max(grad[i].abs() * pos[i].abs().max(1.0));
            dgrad[i] = grad[i] - dgrad[i];
        }
        if test / term < grad_tol {
            return (0, skipped);
        }
        for i in 0..dim {
            hdg[i] = (0..dim).map(|j| h[i * dim + j] * dgrad[j]).sum();
        }
        let fac: f64 = (0..dim).map(|i| dgrad[i] * xi[i]).sum();
        let fae: f64 = (0..dim).map(|i| dgrad[i] * hdg[i]).sum();
        let sum_dgrad: f64 = dgrad.iter().map(|d| d * d).sum();
        let sum_xi: f64 = xi.iter().map(|x| x * x).sum();
        if fac > (EPS * sum_dgrad * sum_xi).sqrt() {
            let (fac, fad) = (1.0 / fac, 1.0 / fae);
            let u: Vec<f64> = (0..dim).map(|i| fac * xi[i] - fad * hdg[i]).collect();
            for i in 0..dim {
                for j in 0..dim {
                    h[i * dim + j] +=
                        fac * xi[i] * xi[j] - fad * hdg[i] * hdg[j] + fae * u[i] * u[j];
                }
            }
        } else {
            skipped += 1;
        }
        for i in 0..dim {
            xi[i] = -(0..dim).map(|j| h[i * dim + j] * grad[j]).sum::<f64>();
        }
    }
    (1, skipped)
}

/// A smooth, non-quadratic test function of `x` (`dim` coordinates): a coupled quadratic
/// bowl, a quartic term and, with `wavy`, cosines that make it non-convex (so that BFGS
/// sometimes skips its update). Returns the value and fills `grad`.
fn test_function(x: &[f64], grad: Option<&mut [f64]>, wavy: bool) -> f64 {
    let dim = x.len();
    let mut value = 0.0;
    let mut g = vec![0.0; dim];
    for i in 0..dim {
        let a = 1.0 + i as f64 * 0.7;
        let c = (i as f64 * 0.37).sin();
        value += a * (x[i] - c).powi(2) + 0.05 * x[i].powi(4);
        g[i] += 2.0 * a * (x[i] - c) + 0.2 * x[i].powi(3);
        if i + 1 < dim {
            value += 0.4 * x[i] * x[i + 1];
            g[i] += 0.4 * x[i + 1];
            g[i + 1] += 0.4 * x[i];
        }
        if wavy {
            value += 1.5 * (2.0 * x[i]).cos();
            g[i] -= 3.0 * (2.0 * x[i]).sin();
        }
    }
    if let Some(grad) = grad {
        grad.copy_from_slice(&g);
    }
    value
}

/// One minimisation by each side: the points at which it evaluates the function, its
/// status, the final position, and (for the dense reference) the updates it skipped.
struct Run {
    points: Vec<Vec<f64>>,
    status: i32,
    pos: Vec<f64>,
    skipped: usize,
}

/// The fork's run and the dense reference's from the same start (`shift` picks it).
fn runs(dim: usize, wavy: bool, shift: usize) -> [Run; 2] {
    let scale = 1.7 * (1 + shift % 3) as f64;
    let start: Vec<f64> = (0..dim)
        .map(|i| 2.0 + (i as f64 * 1.3 + shift as f64 * 0.77).cos() * scale)
        .collect();
    [true, false].map(|fork| {
        let points = RefCell::new(Vec::new());
        let func = |p: &[f64]| {
            points.borrow_mut().push(p.to_vec());
            test_function(p, None, wavy)
        };
        let mut pos = start.clone();
        let (status, skipped) = if fork {
            let status = bfgs_minimize(&mut pos, 1e-10, 500, func, |p, g| {
                test_function(p, Some(g), wavy);
                1.0
            });
            (status, 0)
        } else {
            dense_bfgs(&mut pos, 1e-10, 500, &func, &|p, g| {
                test_function(p, Some(g), wavy);
            })
        };
        Run {
            points: points.into_inner(),
            status,
            pos,
            skipped,
        }
    })
}

/// Cases: 1, 5 and 13 coordinates, convex and not; the last (one coordinate, non-convex,
/// another start) makes the dense reference skip its update 7 times in 14 iterations, so
/// the branch that keeps `H` is followed too.
#[test]
fn packed_bfgs_follows_rdkits_dense_algorithm() {
    let cases = [
        (1, false, 0),
        (5, false, 0),
        (13, false, 0),
        (1, true, 0),
        (5, true, 0),
        (13, true, 0),
        (1, true, 17),
    ];
    let mut skipped = 0;
    for (dim, wavy, shift) in cases {
        let [fork, dense] = runs(dim, wavy, shift);
        let case = format!("dim {dim}, wavy {wavy}, start {shift}");
        assert_eq!(fork.status, 0, "{case}: the fork converges");
        assert_eq!(dense.status, 0, "{case}: the dense reference converges");
        assert_eq!(
            fork.points.len(),
            dense.points.len(),
            "{case}: function evaluations"
        );
        assert!(
            fork.points.len() > 2 * dim,
            "{case}: {} evaluations",
            fork.points.len()
        );
        let worst = fork
            .points
            .iter()
            .zip(&dense.points)
            .flat_map(|(a, b)| a.iter().zip(b))
            .map(|(a, b)| (a - b).abs() / a.abs().max(1.0))
            .fold(0.0_f64, f64::max);
        assert!(worst <= TOLERANCE, "{case}: points differ by {worst:.2e}");
        for (a, b) in fork.pos.iter().zip(&dense.pos) {
            assert!(
                (a - b).abs() <= TOLERANCE * a.abs().max(1.0),
                "{case}: {a} vs {b}"
            );
        }
        skipped += dense.skipped;
        if shift == 17 {
            assert!(
                dense.skipped >= 3,
                "{case}: {} updates skipped",
                dense.skipped
            );
        }
    }
    println!(
        "{} cases, {skipped} updates skipped by the dense reference",
        cases.len()
    );
}
