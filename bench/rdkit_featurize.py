"""RDKit side of `cargo xtask bench --compare-rdkit`: the MAT reference featurization
(ardigen/MAT `featurization/data_utils.py`: MolFromSmiles, AddHs, EmbedMolecule,
UFFOptimizeMolecule, RemoveHs, 2D fallback, then atom features, adjacency and the
distance matrix), timed over the given SMILES with N worker processes.

Usage: python3 bench/rdkit_featurize.py SMILES_FILE PROCESSES [--graph-only]
Prints one JSON object: molecules, featurized, seconds, molecules_per_second, rdkit.
Our own script (the reference code is not copied); needs only `pip install rdkit numpy`.
"""

import json
import multiprocessing as mp
import sys
import time

import numpy as np
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem

RDLogger.DisableLog("rdApp.*")

ATOMIC_NUMBERS = [5, 6, 7, 8, 9, 15, 16, 17, 35, 53, 999]


def one_hot(value, choices):
    row = [0.0] * len(choices)
    row[choices.index(value) if value in choices else len(choices) - 1] = 1.0
    return row


def atom_features(atom):
    return (
        one_hot(atom.GetAtomicNum(), ATOMIC_NUMBERS)
        + one_hot(len(atom.GetNeighbors()), [0, 1, 2, 3, 4, 5])
        + one_hot(atom.GetTotalNumHs(), [0, 1, 2, 3, 4])
        + one_hot(atom.GetFormalCharge(), [-1, 0, 1])
        + [float(atom.IsInRing()), float(atom.GetIsAromatic())]
    )


def featurize(args):
    smiles, graph_only = args
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return False
    if graph_only:
        dist = None
    else:
        try:
            mol = Chem.AddHs(mol)
            AllChem.EmbedMolecule(mol, maxAttempts=5000, randomSeed=42)
            AllChem.UFFOptimizeMolecule(mol)
            mol = Chem.RemoveHs(mol)
        except ValueError:
            AllChem.Compute2DCoords(mol)
        if mol.GetNumConformers() == 0:
            AllChem.Compute2DCoords(mol)
        pos = mol.GetConformer().GetPositions()
        dist = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
    feats = np.array([atom_features(a) for a in mol.GetAtoms()], dtype=np.float32)
    adj = Chem.GetAdjacencyMatrix(mol) + np.eye(mol.GetNumAtoms())
    return feats is not None and adj is not None and (graph_only or dist is not None)


def main():
    path, processes = sys.argv[1], int(sys.argv[2])
    graph_only = "--graph-only" in sys.argv[3:]
    smiles = [line.strip() for line in open(path) if line.strip()]
    work = [(s, graph_only) for s in smiles]
    start = time.perf_counter()
    if processes == 1:
        ok = [featurize(w) for w in work]
    else:
        with mp.Pool(processes) as pool:
            ok = pool.map(featurize, work, chunksize=8)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "molecules": len(smiles),
                "featurized": sum(ok),
                "seconds": seconds,
                "molecules_per_second": len(smiles) / seconds,
                "rdkit": Chem.rdBase.rdkitVersion,
            }
        )
    )


if __name__ == "__main__":
    main()
