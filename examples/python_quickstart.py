"""molattn from Python, start to end: a DataFrame of SMILES in, a trained MAT, predictions,
embeddings and a plot out.

    pip install ./python pandas matplotlib
    python examples/python_quickstart.py [out_dir]

Uses MAT's ESOL shipped in the repository (log solubility; MAT's CSV holds it standardised,
as z-scores); 20 s on 2 CPU cores with its conformers cached (2026-12-04); a first run
embeds and caches them first.
"""

import gzip
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import molattn

out = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/python-quickstart")
repo = Path(__file__).resolve().parents[1]
with gzip.open(repo / "crates/mol-featurize/data/mat/esol/esol.csv.gz", "rt") as f:
    df = pd.read_csv(f)

# Train: the arguments are `cargo xtask train`'s flags (`--epochs` -> epochs=...).
run = molattn.train(df, out=out / "esol", target="y", epochs=20, seed=0, quiet=True)
print(run)

# Predict: a DataFrame in gives a DataFrame out (one column per task, and `error`).
test = df.sample(50, random_state=0)
pred = run.predict(test)
rmse = float(np.sqrt(np.nanmean((pred["y"] - test["y"]) ** 2)))
print(f"RMSE on 50 molecules (seen in training or not): {rmse:.3f} (standard deviations)")

# Per-row errors, not exceptions.
print(run.predict(["CCO", "C1CC"], details=True)["errors"])

# Embeddings: the vectors MAT's head reads, one per molecule.
emb = run.embed(test)
print("embeddings", emb.shape)

# A plot: predicted against measured, and the first two principal components of the
# embeddings coloured by solubility.
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("pip install matplotlib for the plot")
else:
    centred = emb - emb.mean(0)
    pcs = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 4))
    a.scatter(test["y"], pred["y"], s=10)
    a.set(xlabel="measured log S (z-score)", ylabel="predicted log S (z-score)", title="ESOL, MAT small")
    b.scatter(pcs[:, 0], pcs[:, 1], c=test["y"], s=10)
    b.set(xlabel="PC 1", ylabel="PC 2", title="molecule embeddings")
    fig.tight_layout()
    fig.savefig(out / "quickstart.png", dpi=120)
    print("wrote", out / "quickstart.png")
