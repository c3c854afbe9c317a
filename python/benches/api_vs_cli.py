"""The Python API against the CLI on ESOL (1128 molecules), warm conformer cache, best of 3,
in one run (docs/BENCHMARKS.md, "The Python API against the CLI"):

    RAYON_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MOLATTN_XTASK=$CARGO_TARGET_DIR/debug/xtask \\
        python python/benches/api_vs_cli.py [RUN_DIR]

RUN_DIR: a MAT run on ESOL; without it one is trained first (1 epoch, seed 0) in a
temporary folder. Both sides get the same threads from the environment.
"""

import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

t0 = time.perf_counter()
import molattn  # noqa: E402

t_import = time.perf_counter() - t0

xtask = os.environ["MOLATTN_XTASK"]
work = Path(tempfile.mkdtemp(prefix="molattn-bench-"))
data = work / "esol.csv"
repo = Path(__file__).resolve().parents[2]
with gzip.open(repo / "crates/mol-featurize/data/mat/esol/esol.csv.gz", "rt") as f:
    data.write_text(f.read())
cache = os.environ.get("MOLATTN_CACHE", str(Path.home() / ".cache" / "molattn"))
run = sys.argv[1] if len(sys.argv) > 1 else str(work / "run")
if len(sys.argv) <= 1:
    subprocess.run([xtask, "train", "--data", data, "--target", "y", "--epochs", "1", "--seed", "0",
                    "--out", run, "--cache", cache, "--quiet"], check=True, capture_output=True)
smiles = pd.read_csv(data)["smiles"].tolist()
n = len(smiles)


def best(f, k=3):
    times = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def cli(*args):
    subprocess.run([xtask, *map(str, args)], check=True, capture_output=True)


# The warm-up fills the conformer cache for both sides.
cli("predict", "--run", run, "--data", data, "--out", work / "p.csv", "--cache", cache)
rows = [
    ("CLI predict (process, load, predict, CSV)",
     best(lambda: cli("predict", "--run", run, "--data", data, "--out", work / "p.csv", "--cache", cache))),
    ("Python Run.load + predict(path=)",
     best(lambda: molattn.Run.load(run).predict(path=str(data), cache=cache))),
]
opened = molattn.Run.load(run)
rows += [
    ("Python predict(path=) on an open Run", best(lambda: opened.predict(path=str(data), cache=cache))),
    ("Python predict(list of SMILES)", best(lambda: opened.predict(smiles, cache=cache))),
    ("CLI featurize --format npz (process)",
     best(lambda: cli("featurize", "--data", data, "--format", "npz", "--out", work / "f.npz", "--cache", cache))),
    ("Python featurize(list of SMILES)", best(lambda: molattn.featurize(smiles, cache=cache))),
]
print(f"import molattn (after numpy and pandas): {t_import:.3f} s")
for name, t in rows:
    print(f"{name:42s} {t:7.3f} s  {n / t:8.1f} molecules/s")
times = dict(rows)
print(f"predict, Python / CLI molecules/s (load included): "
      f"{times['CLI predict (process, load, predict, CSV)'] / times['Python Run.load + predict(path=)']:.3f}")
print(f"featurize, Python / CLI molecules/s: "
      f"{times['CLI featurize --format npz (process)'] / times['Python featurize(list of SMILES)']:.3f}")
