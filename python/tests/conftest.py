"""Shared fixtures: MAT's datasets (first rows), the `cargo xtask` binary the Python
results are compared with, and small runs trained once per session."""

import gzip
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO / "crates" / "mol-featurize" / "data" / "mat"


def xtask_binary() -> Path:
    """The CLI built with the `onnx` feature (.ci/run's `cargo test --features
    xtask/full` builds it): $MOLATTN_XTASK, else $CARGO_TARGET_DIR/debug/xtask."""
    given = os.environ.get("MOLATTN_XTASK")
    if given:
        return Path(given)
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache" / "molattn-target"))
    return Path(target) / "debug" / "xtask"


@pytest.fixture(scope="session")
def xtask():
    binary = xtask_binary()
    assert binary.exists(), f"{binary}: build it with cargo build -p xtask --features full"

    def run(*args):
        done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return done

    return run


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    """One conformer cache for the session: the CLI and Python read the same conformers."""
    return tmp_path_factory.mktemp("cache")


def first_rows(name: str, n: int, out: Path) -> Path:
    """The header and first `n` rows of MAT's dataset `name` (esol, freesolv, bbbp)."""
    path = out / f"{name}-{n}.csv"
    if not path.exists():
        with gzip.open(DATASETS / name / f"{name}.csv.gz", "rt") as f:
            lines = [next(f) for _ in range(n + 1)]
        path.write_text("".join(lines))
    return path


@pytest.fixture(scope="session")
def esol200(data_dir):
    return first_rows("esol", 200, data_dir)


TRAIN_FLAGS = ["--epochs", "2", "--seed", "3", "--coords", "layout2d", "--quiet"]


@pytest.fixture(scope="session")
def cli_run(xtask, esol200, tmp_path_factory, cache):
    """A small MAT trained by the CLI on ESOL's first 200 molecules."""
    out = tmp_path_factory.mktemp("runs") / "cli"
    xtask("train", "--data", esol200, "--target", "y", "--out", out, "--cache", cache, *TRAIN_FLAGS)
    return out
