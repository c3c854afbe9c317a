"""A ridge probe on molecule embeddings (`cargo xtask embed`), against the trained model.

Fits ridge regression (closed form, numpy only) on the embeddings of a split's training
molecules, picks the penalty on its validation molecules, and reports the test RMSE in the
labels' units beside the run's own test RMSE (metrics.json):

    cargo xtask data mat --out datasets
    cargo xtask train --model mat --data datasets/esol/esol.csv \
      --splits datasets/esol/esol.splits.json --split random-0 --out runs/esol
    cargo xtask embed --run runs/esol --data datasets/esol/esol.csv --out runs/esol/emb.npy
    python3 examples/embedding_probe.py runs/esol/emb.npy datasets/esol/esol.csv \
      datasets/esol/esol.splits.json random-0 --run runs/esol

Rows that failed to featurize are NaN in the .npy and are left out (counted).
"""

import argparse
import csv
import json

import numpy as np


def ridge(x, y, alpha):
    """Weights and intercept of ridge regression (the intercept not penalised)."""
    mean_x, mean_y = x.mean(axis=0), y.mean()
    xc = x - mean_x
    w = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ (y - mean_y))
    return w, mean_y - mean_x @ w


def rmse(x, y, w, b):
    return float(np.sqrt(np.mean((x @ w + b - y) ** 2)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("embeddings", help=".npy written by cargo xtask embed")
    p.add_argument("labels", help="the CSV the embeddings were made from")
    p.add_argument("splits", help="split file ({name: {train, valid, test}})")
    p.add_argument("split")
    p.add_argument("--target", default="y")
    p.add_argument("--run", help="run folder: prints its test RMSE beside the probe's")
    a = p.parse_args()

    x = np.load(a.embeddings).astype(np.float64)
    with open(a.labels, newline="") as f:
        y = np.array([float(r[a.target]) for r in csv.DictReader(f)])
    assert len(x) == len(y), f"{len(x)} embeddings for {len(y)} rows"
    split = json.load(open(a.splits))[a.split]
    ok = ~np.isnan(x).any(axis=1)
    part = {k: np.array([i for i in split[k] if ok[i]], dtype=int) for k in ("train", "valid", "test")}
    print(f"{x.shape[1]}-dimensional embeddings; {int((~ok).sum())} rows left out (NaN)")

    best = None
    for alpha in 10.0 ** np.arange(-4, 4):
        w, b = ridge(x[part["train"]], y[part["train"]], alpha)
        valid = rmse(x[part["valid"]], y[part["valid"]], w, b)
        if best is None or valid < best[0]:
            best = (valid, alpha, w, b)
    valid, alpha, w, b = best
    test = rmse(x[part["test"]], y[part["test"]], w, b)
    print(f"ridge probe (alpha {alpha:g} chosen on valid): valid RMSE {valid:.3f}, test RMSE {test:.3f}")
    if a.run:
        m = json.load(open(f"{a.run}/metrics.json"))
        print(f"the run's own head: valid RMSE {m['valid_rmse']:.3f}, test RMSE {m['test_rmse']:.3f}")


if __name__ == "__main__":
    main()
