"""molattn from Python: featurize, train, predict, embed, explain, export and generate.

A thin layer over the Rust crates (the extension module ``molattn._molattn``): the same
code, flags and defaults as ``cargo xtask``. This file only turns Python inputs (lists
of SMILES, pandas DataFrames, RDKit molecules) into the extension's arguments and its
arrays back into DataFrames.

    >>> import molattn
    >>> run = molattn.train("esol.csv", out="runs/esol", target="y", epochs=30)
    >>> run.predict(["CCO", "c1ccccc1O"])          # [2, tasks] float32
    >>> run.embed(["CCO"]).shape                    # [1, d_model]

Molecules, wherever a function takes them: a list (or pandas Series) of SMILES strings
or RDKit ``Chem.Mol`` objects, or a DataFrame with a SMILES (or Mol) column
(``smiles_column``). A Mol with a conformer is read through its MOL block with its own
coordinates; one without, through its SMILES (``train`` takes every Mol by its SMILES:
give an SDF as ``data`` to train on a file's own coordinates). A file (CSV, SDF,
``.sdf.gz``) is given as ``path=``. A molecule that cannot be featurized, and a missing one
(``None``, NaN), is that row's error (NaN values and a reason), never an exception that
loses the other rows.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

# ONNX verification (Run.export_onnx) runs onnx and onnxruntime in this interpreter, not
# whatever `python3` is first on the PATH (export::verify::python).
os.environ.setdefault("MOLATTN_PYTHON", sys.executable)

from . import _molattn  # noqa: E402
from ._molattn import __version__, cli  # noqa: E402

__all__ = ["Run", "cli", "featurize", "generate", "load", "train", "__version__"]


def _is_mol(x: Any) -> bool:
    return type(x).__module__.startswith("rdkit") and hasattr(x, "GetNumConformers")


def _is_frame(x: Any) -> bool:
    return hasattr(x, "columns") and hasattr(x, "iloc")


def _items(molecules: Any, smiles_column: str) -> list:
    """The molecules of a list, Series or DataFrame as a list of SMILES or Mols."""
    if _is_frame(molecules):
        if smiles_column not in molecules.columns:
            raise ValueError(
                f"no column {smiles_column!r} (columns: {', '.join(map(str, molecules.columns))})"
            )
        return list(molecules[smiles_column])
    if isinstance(molecules, str):
        return [molecules]
    if _is_mol(molecules):
        return [molecules]
    return list(molecules)


class _Input:
    """A call's molecules as the extension takes them: SMILES or an SDF file of MOL
    blocks (Mols with a conformer). ``rows`` maps each to its position in the input."""

    def __init__(self, smiles=None, sdf=None, rows=None):
        self.smiles, self.sdf, self.rows = smiles, sdf, rows


def _missing(x: Any) -> bool:
    """None, NaN or pandas' NA: a row without a molecule."""
    if x is None:
        return True
    if isinstance(x, float):
        return math.isnan(x)
    return type(x).__name__ in ("NAType", "NaTType")


def _inputs(items: list) -> tuple[list[_Input], tempfile.TemporaryDirectory | None]:
    """Groups ``items`` into at most two inputs: SMILES (strings, Mols without a
    conformer) and MOL blocks (Mols with one), written as an SDF."""
    smiles, smiles_rows, mols, mol_rows = [], [], [], []
    for k, x in enumerate(items):
        if _missing(x):
            # An empty SMILES: the row's error ("no atoms"), like any molecule that fails.
            x = ""
        if isinstance(x, str):
            smiles.append(x)
            smiles_rows.append(k)
        elif _is_mol(x):
            if x.GetNumConformers() > 0:
                mols.append(x)
                mol_rows.append(k)
            else:
                from rdkit import Chem

                smiles.append(Chem.MolToSmiles(x))
                smiles_rows.append(k)
        else:
            raise ValueError(f"molecule {k}: expected a SMILES string or an RDKit Mol, got {type(x).__name__}")
    groups, tmp = [], None
    if smiles:
        groups.append(_Input(smiles=smiles, rows=smiles_rows))
    if mols:
        from rdkit import Chem

        tmp = tempfile.TemporaryDirectory(prefix="molattn-")
        sdf = os.path.join(tmp.name, "molecules.sdf")
        writer = Chem.SDWriter(sdf)
        for m in mols:
            writer.write(m)
        writer.close()
        groups.append(_Input(sdf=sdf, rows=mol_rows))
    return groups, tmp


def _path(x: Any) -> str | None:
    return None if x is None else os.fspath(x)


def featurize(
    molecules: Any = None,
    *,
    path: str | os.PathLike | None = None,
    model: str = "mat",
    coords: str | None = None,
    seed: int = 0,
    cache: str | os.PathLike | None = None,
    no_cache: bool = False,
    max_atoms: int | None = None,
    run: str | os.PathLike | Run | None = None,
    smiles_column: str = "smiles",
    delimiter: str = ",",
    id_field: str | None = None,
) -> tuple[dict[str, np.ndarray], list[tuple[int, str]]]:
    """A model's inputs for ``molecules`` (or the file ``path``), as ``cargo xtask
    featurize --format npz`` writes them.

    Returns ``(arrays, errors)``: ``arrays`` maps the exported ONNX model's input names
    to one padded batch of the featurized molecules (MAT: ``node_features`` ``[B, N,
    36]`` float32, ``key_padding_mask`` ``[B, N]`` bool, True = padding, ``adjacency``
    and ``distances`` ``[B, N, N]`` float32, Angstrom; Transformer-M: docs/ONNX.md) and
    ``row`` (``[B]`` int64: each molecule's input row); ``errors`` lists ``(row,
    reason)`` for every molecule skipped. When none is featurized ``arrays`` holds only
    the empty ``row`` (the CLI refuses to write an empty npz; here every row is still
    answered in ``errors``). ``model``: ``mat`` or ``transformer-m``;
    ``run``: featurize exactly as that training run did (its family and settings).
    ``coords``: ``embed3d`` (default for SMILES), ``layout2d``, ``topological``, ``file``
    (default for an SDF and Mols with conformers: their own coordinates).
    """
    if isinstance(run, Run):
        run = run.path
    kw = dict(
        model=model, coords=coords, seed=seed, cache=_path(cache), no_cache=no_cache,
        max_atoms=_max_atoms(max_atoms), run=_path(run), smiles_column=smiles_column,
        delimiter=delimiter, id_field=id_field,
    )
    if molecules is None:
        return _molattn.featurize(path=_path(path), **kw)
    groups, tmp = _inputs(_items(molecules, smiles_column))
    try:
        if len(groups) > 1:
            raise ValueError(
                "featurize makes one padded batch: give either SMILES (and Mols without "
                "a conformer) or Mols with conformers in one call, not both"
            )
        if not groups:
            return {"row": np.zeros(0, dtype=np.int64)}, []
        g = groups[0]
        if g.sdf is not None:
            kw["smiles_column"], kw["delimiter"] = "smiles", ","
            return _molattn.featurize(path=g.sdf, **kw)
        return _molattn.featurize(g.smiles, **kw)
    finally:
        if tmp is not None:
            tmp.cleanup()


def _flags(options: dict) -> list[str]:
    """``epochs=5, no_cache=True, target=["a", "b"]`` as ``--epochs 5 --no-cache
    --target a --target b`` (False and None leave a flag out)."""
    argv = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                argv += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        else:
            argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return argv


def train(
    data: Any = None,
    *,
    out: str | os.PathLike,
    model: str = "mat",
    y: Any = None,
    smiles_column: str = "smiles",
    target: str | Sequence[str] | None = None,
    device: str = "flex",
    **options: Any,
) -> Run:
    """Trains a model as ``cargo xtask train`` does (the same flags, defaults, progress
    output and run folder) on ``device`` (``--device``) and returns the trained ``Run``
    (opened on the same device).

    ``data``: a file (CSV, SDF, ``.sdf.gz``), a pandas DataFrame (written to
    ``<out>/input.csv`` first, so the run can be resumed), or a list of SMILES with
    ``y`` (one value per molecule, or ``[n, tasks]``; columns named by ``target``,
    default ``y``). ``options``: any other flag of ``cargo xtask train``, with ``_`` for
    ``-`` (``epochs=30``, ``batch_size=64``, ``split="scaffold"``, ``ensemble_size=3``,
    ``resume=True``); ``molattn.cli(["train", "--help"])`` lists them. ``data=None``
    with ``dataset="qm9"`` trains on QM9.
    """
    out = Path(out)
    if isinstance(target, str):
        target = [target]
    if y is not None:
        if data is None or _is_frame(data):
            raise ValueError("y goes with a list of SMILES as data")
        smiles = [_smiles_of(s) for s in _items(data, smiles_column)]
        values = np.asarray(y, dtype=float)
        if values.ndim == 1:
            values = values[:, None]
        if values.shape[0] != len(smiles):
            raise ValueError(f"{len(smiles)} SMILES and {values.shape[0]} rows of y")
        target = list(target or (["y"] if values.shape[1] == 1 else [f"y{k}" for k in range(values.shape[1])]))
        if len(target) != values.shape[1]:
            raise ValueError(f"y has {values.shape[1]} columns and target names {len(target)}")
        out.mkdir(parents=True, exist_ok=True)
        data = out / "input.csv"
        with open(data, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([smiles_column, *target])
            for s, row in zip(smiles, values):
                w.writerow([s, *("" if np.isnan(v) else repr(float(v)) for v in row)])
    elif _is_frame(data):
        out.mkdir(parents=True, exist_ok=True)
        frame = data.copy()
        frame[smiles_column] = [_smiles_of(s) for s in frame[smiles_column]]
        data = out / "input.csv"
        frame.to_csv(data, index=False)
    argv = ["train", "--model", model, "--out", os.fspath(out)]
    if data is not None:
        argv += ["--data", os.fspath(data)]
    if smiles_column != "smiles":
        argv += ["--smiles-column", smiles_column]
    argv += _flags({"target": target, "device": None if device == "flex" else device, **options})
    cli(argv)
    return Run.load(out, device=device)


def _smiles_of(x: Any) -> str:
    """A training row's SMILES: the string, a Mol's SMILES, "" for a missing one."""
    if isinstance(x, str):
        return x
    if _missing(x):
        return ""
    if not _is_mol(x):
        raise ValueError(f"expected a SMILES string or an RDKit Mol, got {type(x).__name__}")
    from rdkit import Chem

    return Chem.MolToSmiles(x)


def _max_atoms(max_atoms: int | None) -> int | None:
    if max_atoms is not None and max_atoms < 1:
        raise ValueError(f"max_atoms must be at least 1, got {max_atoms}")
    return max_atoms


class Run:
    """A trained run folder (MAT, Transformer-M, an ensemble, or a SMILES generator)
    opened once: ``Run.load(path)``. Thread-safe: calls from several threads take
    turns on its model."""

    def __init__(self, inner: _molattn.Run):
        self._run = inner

    @staticmethod
    def load(path: str | os.PathLike, device: str = "flex") -> Run:
        """Opens the run folder ``path`` on ``device`` (``flex``: CPU; ``wgpu``)."""
        return Run(_molattn.Run.load(os.fspath(path), device))

    @property
    def path(self) -> Path:
        """The run folder."""
        return Path(self._run.path)

    @property
    def kind(self) -> str:
        """``mat``, ``transformer-m`` or ``smiles-gpt``."""
        return self._run.kind

    @property
    def tasks(self) -> list[str]:
        """Target columns: one prediction each."""
        return self._run.tasks

    @property
    def members(self) -> int:
        """An ensemble's size, else 1."""
        return self._run.members

    @property
    def device(self) -> str:
        """The device the run's model is on (``flex``, ``wgpu``)."""
        return self._run.device

    def __repr__(self) -> str:
        return repr(self._run)

    def _rows(self, method: str, molecules: Any, smiles_column: str, path: Any, kw: dict):
        """Calls ``method`` of the extension once per input group; returns the groups'
        results and their rows in the input."""
        if molecules is None:
            return [(getattr(self._run, method)(path=_path(path), smiles_column=smiles_column, **kw), None)], None
        items = _items(molecules, smiles_column)
        groups, tmp = _inputs(items)
        try:
            results = []
            for g in groups:
                if g.sdf is not None:
                    results.append((getattr(self._run, method)(path=g.sdf, **kw), g.rows))
                else:
                    results.append((getattr(self._run, method)(g.smiles, **kw), g.rows))
            return results, len(items)
        finally:
            if tmp is not None:
                tmp.cleanup()

    def predict(
        self,
        molecules: Any = None,
        *,
        path: str | os.PathLike | None = None,
        smiles_column: str = "smiles",
        details: bool = False,
        members: bool = False,
        mc_dropout: int | None = None,
        seed: int = 0,
        cache: str | os.PathLike | None = None,
        no_cache: bool = False,
        max_atoms: int | None = None,
        delimiter: str = ",",
        id_field: str | None = None,
        chunk_rows: int = 1024,
    ):
        """Predictions as ``cargo xtask predict`` computes them.

        Returns a float32 array ``[n, tasks]`` (target units; the positive class's
        probability for classification; NaN where a molecule was skipped), or for a
        DataFrame a DataFrame with one column per task (``<task>_std`` too with an
        ensemble or ``mc_dropout``) and an ``error`` column. ``details=True``: a dict with
        ``values``, ``std``, ``outputs`` (``[n, tasks, K]``, each member's or pass's, with
        ``members=True`` and an ensemble or ``mc_dropout``; else None), ``errors``,
        ``smiles``. ``path`` takes ``delimiter`` and ``id_field`` (an SDF's identity field)
        as the CLI's ``--data``; rows go through in chunks of ``chunk_rows``. With
        ``mc_dropout``, a list mixing SMILES and Mols with conformers is predicted as two
        groups, each with its own dropout masks (the CLI's for a file of either alone).
        """
        if chunk_rows < 1:
            raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
        kw = dict(cache=_path(cache), no_cache=no_cache, max_atoms=_max_atoms(max_atoms),
                  members=members, mc_dropout=mc_dropout, seed=seed, chunk_rows=chunk_rows)
        if molecules is None:
            kw.update(delimiter=delimiter, id_field=id_field)
        results, n = self._rows("predict", molecules, smiles_column, path, kw)
        result = _merge(results, n)
        if details:
            return result
        if _is_frame(molecules):
            import pandas as pd

            frame = pd.DataFrame(index=molecules.index)
            for t, task in enumerate(result["tasks"]):
                frame[task] = result["values"][:, t]
                if result["std"] is not None:
                    frame[f"{task}_std"] = result["std"][:, t]
            frame["error"] = result["errors"]
            return frame
        return result["values"]

    def embed(
        self,
        molecules: Any = None,
        *,
        path: str | os.PathLike | None = None,
        smiles_column: str = "smiles",
        atoms: bool = False,
        member: int = 0,
        details: bool = False,
        cache: str | os.PathLike | None = None,
        no_cache: bool = False,
        max_atoms: int | None = None,
        delimiter: str = ",",
        id_field: str | None = None,
    ):
        """The vectors the run's head reads, as ``cargo xtask embed`` writes them:
        ``[n, d_model]`` float32 (a row of NaN where a molecule was skipped), or with
        ``atoms=True`` one row per heavy atom. ``details=True``: a dict with
        ``embeddings``, ``row``, ``atom``, ``errors``, ``smiles``. ``path`` takes
        ``delimiter`` and ``id_field`` as the CLI's ``--data``."""
        kw = dict(cache=_path(cache), no_cache=no_cache, max_atoms=_max_atoms(max_atoms),
                  atoms=atoms, member=member)
        if molecules is None:
            kw.update(delimiter=delimiter, id_field=id_field)
        results, n = self._rows("embed", molecules, smiles_column, path, kw)
        if len(results) == 1 and results[0][1] is None:
            result = results[0][0]
        elif atoms:
            parts = sorted(((rows[r], k, res) for res, rows in results for k, r in enumerate(res["row"])), key=lambda t: t[:2])
            result = {
                "embeddings": np.stack([res["embeddings"][k] for _, k, res in parts]) if parts else np.zeros((0, 0), np.float32),
                "row": np.array([row for row, _, _ in parts], dtype=np.int64),
                "atom": np.array([res["atom"][k] for _, k, res in parts], dtype=np.int64),
                **_per_row(results, n, ("errors", "smiles")),
            }
        else:
            result = _merge(results, n, arrays=("embeddings",))
            result["row"] = np.arange(n, dtype=np.int64)
            result["atom"] = np.full(n, -1, dtype=np.int64)
        return result if details else result["embeddings"]

    def explain(self, smiles: str, *, out: str | os.PathLike | None = None,
                layer: int | None = None, head: int | None = None) -> dict:
        """What the run attends to and which atoms drive its prediction, as ``cargo
        xtask explain``: a dict with ``tokens``, ``prediction``, ``attention`` (``[layers,
        heads, T, T]``), ``contribution`` (per atom) and, with ``out``, the pictures'
        ``files``."""
        return self._run.explain(smiles, out=_path(out), layer=layer, head=head)

    def export_onnx(self, path: str | os.PathLike) -> None:
        """Writes the model as an ONNX file and verifies it in ONNX Runtime and tract
        (as ``cargo xtask export``; needs the pip packages onnx and onnxruntime)."""
        self._run.export_onnx(os.fspath(path))

    def generate(self, n: int = 1000, **options: Any) -> list[dict]:
        """``molattn.generate(self, n, ...)``."""
        return generate(self, n, **options)


def _per_row(results, n, keys):
    out = {k: [None] * n for k in keys}
    for res, rows in results:
        for k in keys:
            for i, v in zip(rows, res[k]):
                out[k][i] = v
    return out


def _merge(results, n, arrays=("values", "std", "outputs")) -> dict:
    """One result of the groups' results, rows back in input order."""
    if len(results) == 1 and results[0][1] is None:
        return results[0][0]
    if not results:
        raise ValueError("no molecules given")
    first = results[0][0]
    merged = {k: v for k, v in first.items() if k not in arrays and k not in ("errors", "smiles", "ids")}
    for k in arrays:
        if first.get(k) is None:
            merged[k] = None
            continue
        shape = (n,) + first[k].shape[1:]
        merged[k] = np.full(shape, np.nan, dtype=first[k].dtype)
        for res, rows in results:
            merged[k][rows] = res[k]
    merged.update(_per_row(results, n, ("errors", "smiles", "ids") if "ids" in first else ("errors", "smiles")))
    return merged


def load(path: str | os.PathLike, device: str = "flex") -> Run:
    """``Run.load(path, device)``."""
    return Run.load(path, device)


def generate(
    run: Run | str | os.PathLike,
    n: int = 1000,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
    prefix: str = "",
    props: dict[str, float] | None = None,
    scaffold: str | None = None,
    batch_size: int = 256,
) -> list[dict]:
    """Samples ``n`` molecules from a SMILES generator run (``train(model="smiles-gpt")``)
    as ``cargo xtask generate`` does (the same seed gives the same rows): a list of
    dicts with ``smiles``, ``valid``, ``canonical`` and ``reason``. ``props``
    (``{"logp": 2.0}``) and ``scaffold`` condition a conditional run."""
    if not isinstance(run, Run):
        run = Run.load(run)
    return run._run.generate(
        n, temperature=temperature, top_k=top_k, seed=seed, prefix=prefix,
        props=list((props or {}).items()), scaffold=scaffold, batch_size=batch_size,
    )
