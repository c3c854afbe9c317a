"""The Python API against the CLI (`cargo xtask`): same arrays, predictions, metrics and
samples; per-row errors; exceptions for bad arguments; RDKit molecules; threads."""

import json
import threading

import numpy as np
import pandas as pd
import pytest

import molattn
from conftest import first_rows


@pytest.mark.parametrize("name", ["esol", "freesolv", "bbbp"])
def test_featurize_equals_cli(name, xtask, data_dir, cache, tmp_path):
    csv = first_rows(name, 200, data_dir)
    npz = tmp_path / "x.npz"
    xtask("featurize", "--data", csv, "--format", "npz", "--out", npz, "--cache", cache)
    expected = np.load(npz)
    smiles = pd.read_csv(csv)["smiles"].tolist()
    arrays, errors = molattn.featurize(smiles, cache=cache)
    assert sorted(arrays) == sorted(expected.files)
    for key in expected.files:
        np.testing.assert_array_equal(arrays[key], expected[key], err_msg=key)
    # Every row is either featurized or reported, once.
    assert sorted(list(arrays["row"]) + [r for r, _ in errors]) == list(range(200))


def test_featurize_transformer_m_inputs(cache):
    arrays, errors = molattn.featurize(["CCO", "c1ccccc1"], model="transformer-m", coords="topological", cache=cache)
    assert errors == []
    assert arrays["row"].tolist() == [0, 1]
    assert all(v.shape[0] == 2 for v in arrays.values())


def test_invalid_molecules_are_row_errors(cli_run, cache):
    run = molattn.Run.load(cli_run)
    out = run.predict(["CCO", "C1CC", "c1ccccc1O"], details=True, cache=cache)
    assert np.isfinite(out["values"][0]).all() and np.isfinite(out["values"][2]).all()
    assert np.isnan(out["values"][1]).all()
    assert out["errors"][0] is None and out["errors"][2] is None
    assert "C1CC" in out["errors"][1]
    arrays, errors = molattn.featurize(["CCO", "C1CC"], coords="topological")
    assert arrays["row"].tolist() == [0]
    assert [r for r, _ in errors] == [1] and "C1CC" in errors[0][1]
    emb = run.embed(["C1CC", "CCO"], cache=cache)
    assert np.isnan(emb[0]).all() and np.isfinite(emb[1]).all()
    # A missing molecule (None, NaN: a DataFrame's empty cell) is its row's error too.
    frame = pd.DataFrame({"smiles": ["CCO", None, np.nan, "CCN"]})
    pred = run.predict(frame, cache=cache)
    assert pred["error"].isna().tolist() == [True, False, False, True]
    assert np.isnan(pred["y"][1]) and np.isnan(pred["y"][2]) and np.isfinite(pred["y"][3])


def test_bad_arguments_raise_with_the_cli_message(cli_run):
    with pytest.raises(ValueError, match="--no-such-flag"):
        molattn.cli(["train", "--no-such-flag"])
    with pytest.raises(FileNotFoundError):
        molattn.Run.load(cli_run.parent / "missing")
    with pytest.raises(ValueError, match="coords"):
        molattn.featurize(["CCO"], coords="bogus")
    with pytest.raises(FileNotFoundError):
        molattn.featurize(path=cli_run / "missing.csv")
    run = molattn.Run.load(cli_run)
    with pytest.raises(ValueError, match="smiles-gpt"):
        run.generate(5)
    # A flag of another model family: the CLI's usage error, not the end of the process.
    with pytest.raises(ValueError, match="--mode is not a flag of --model mat"):
        molattn.train(["CCO", "CCN"], y=[1.0, 2.0], out=cli_run.parent / "foreign", mode="3d")
    # The commands' own argument checks (plain messages in Rust) are ValueErrors too.
    with pytest.raises(ValueError, match="--data is required"):
        molattn.cli(["train", "--out", str(cli_run.parent / "nodata")])
    with pytest.raises(ValueError, match="max_atoms"):
        run.predict(["CCO"], max_atoms=0)


def test_predict_equals_cli(xtask, cli_run, esol200, cache, tmp_path):
    out = tmp_path / "pred.csv"
    xtask("predict", "--run", cli_run, "--data", esol200, "--out", out, "--cache", cache)
    expected = pd.read_csv(out)
    run = molattn.Run.load(cli_run)
    assert run.kind == "mat" and run.tasks == ["y"] and run.members == 1
    frame = run.predict(pd.read_csv(esol200), cache=cache)
    assert list(frame.columns) == ["y", "error"]
    np.testing.assert_array_equal(frame["y"].to_numpy(np.float32), expected["y_pred"].to_numpy(np.float32))
    values = run.predict(path=esol200, cache=cache)
    assert values.shape == (200, 1) and values.dtype == np.float32
    np.testing.assert_array_equal(values[:, 0], frame["y"].to_numpy(np.float32))


def test_embed_equals_cli(xtask, cli_run, esol200, cache, tmp_path):
    out = tmp_path / "emb.npy"
    xtask("embed", "--run", cli_run, "--data", esol200, "--out", out, "--cache", cache)
    run = molattn.Run.load(cli_run)
    emb = run.embed(path=esol200, cache=cache)
    np.testing.assert_array_equal(emb, np.load(out))
    atoms = run.embed(["CCO", "c1ccccc1"], atoms=True, details=True, cache=cache)
    assert atoms["embeddings"].shape == (3 + 6, emb.shape[1])
    assert atoms["row"].tolist() == [0] * 3 + [1] * 6 and atoms["atom"].tolist() == [0, 1, 2, *range(6)]


def test_train_from_dataframe_equals_cli(cli_run, esol200, cache, tmp_path):
    frame = pd.read_csv(esol200)
    run = molattn.train(frame, out=tmp_path / "py", target="y", cache=cache, epochs=2, seed=3, coords="layout2d", quiet=True)
    assert run.kind == "mat"
    ours = json.loads((tmp_path / "py" / "metrics.json").read_text())
    cli = json.loads((cli_run / "metrics.json").read_text())
    assert ours["test"] == cli["test"]
    # From a list of SMILES and an array of labels: the same CSV, the same run.
    run2 = molattn.train(frame["smiles"].tolist(), y=frame["y"].to_numpy(), out=tmp_path / "lists",
                         cache=cache, epochs=2, seed=3, coords="layout2d", quiet=True)
    ours2 = json.loads((tmp_path / "lists" / "metrics.json").read_text())
    assert ours2["test"] == cli["test"]
    assert run2.tasks == ["y"]


def test_rdkit_mol_with_conformer_keeps_its_coordinates(xtask, cli_run, cache, tmp_path):
    from rdkit import Chem
    from rdkit.Chem import AllChem

    mol = Chem.AddHs(Chem.MolFromSmiles("OCC(=O)N"))
    assert AllChem.EmbedMolecule(mol, randomSeed=7) == 0
    mol = Chem.RemoveHs(mol)
    xyz = mol.GetConformer().GetPositions()
    own = np.linalg.norm(xyz[:, None] - xyz[None], axis=-1)
    arrays, errors = molattn.featurize([mol])
    assert errors == []
    # MAT's distances: the dummy node first, then the heavy atoms in the Mol's order.
    np.testing.assert_allclose(arrays["distances"][0, 1:, 1:], own, atol=1e-4)
    # A Mol without a conformer goes in as its SMILES; mixed lists keep the input order.
    run = molattn.Run.load(cli_run)
    flat = Chem.MolFromSmiles("CCO")
    mixed = run.predict([flat, mol, "OCC(=O)N"], details=True, cache=cache)
    assert mixed["errors"] == [None, None, None]
    # The Mol with a conformer predicts as the CLI does on the same record in an SDF.
    sdf, out = tmp_path / "mol.sdf", tmp_path / "pred.csv"
    writer = Chem.SDWriter(str(sdf))
    writer.write(mol)
    writer.close()
    xtask("predict", "--run", cli_run, "--data", sdf, "--out", out, "--cache", cache)
    assert mixed["values"][1, 0] == np.float32(pd.read_csv(out)["y_pred"][0])
    # The Mol without one predicts as its SMILES does, in its own row.
    assert mixed["values"][0, 0] == run.predict(["CCO"], cache=cache)[0, 0]
    assert mixed["values"][0, 0] != mixed["values"][2, 0]


def test_explain_and_export(cli_run, tmp_path):
    run = molattn.Run.load(cli_run)
    e = run.explain("c1ccccc1O", out=tmp_path / "explain")
    layers, heads, t, t2 = e["attention"].shape
    assert t == t2 == len(e["tokens"]) == 8  # dummy + 7 heavy atoms
    # Each atom's row of MAT's molecule attention (softmax, adjacency and distance terms
    # mixed by the lambdas) sums to 1; the dummy node has no bonds or distances.
    np.testing.assert_allclose(e["attention"][:, :, 1:].sum(-1), 1.0, atol=1e-5)
    assert (e["attention"] >= 0).all()
    assert e["contribution"].shape == (7,)
    assert any(str(f).endswith(".png") for f in e["files"])
    run.export_onnx(tmp_path / "mat.onnx")
    assert (tmp_path / "mat.onnx").stat().st_size > 10_000


def test_threads_share_a_run(cli_run, cache):
    run = molattn.Run.load(cli_run)
    smiles = ["CCO", "c1ccccc1O", "CC(=O)O", "CCN"] * 5
    expected = run.predict(smiles, cache=cache)
    results = [None] * 4

    def work(k):
        results[k] = run.predict(smiles, cache=cache)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, expected)


def test_generate_equals_cli(xtask, esol200, tmp_path):
    out = tmp_path / "gpt"
    run = molattn.train(esol200, out=out, model="smiles-gpt", epochs=1, seed=0, quiet=True)
    assert run.kind == "smiles-gpt"
    a = molattn.generate(run, 20, seed=5)
    b = run.generate(20, seed=5)
    assert a == b and len(a) == 20
    with pytest.raises(ValueError, match="temperature"):
        run.generate(5, temperature=-1.0)
    with pytest.raises(ValueError, match="bogus"):
        run.generate(5, props={"bogus": 1.0})
    assert set(a[0]) == {"smiles", "valid", "canonical", "reason"}
    csv = tmp_path / "gen.csv"
    xtask("generate", "--run", out, "-n", 20, "--seed", 5, "--out", csv)
    cli = pd.read_csv(csv, keep_default_na=False)
    assert cli["smiles"].tolist() == [r["smiles"] for r in a]
