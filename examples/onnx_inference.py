#!/usr/bin/env python3
"""Predict with an exported MAT or Transformer-M in ONNX Runtime, on molecules featurized
by molattn.

    cargo xtask train --model mat --data datasets/esol/esol.csv \
      --splits datasets/esol/esol.splits.json --split random-0 --out runs/esol
    cargo xtask export --run runs/esol --out esol.onnx
    cargo xtask featurize --run runs/esol --data molecules.csv --format npz --out molecules.npz
    pip install onnxruntime numpy
    python3 examples/onnx_inference.py esol.onnx molecules.npz

A Transformer-M run works the same way (`export --model transformer-m`; `featurize --run`
writes its inputs in the run's evaluation mode). `--run` makes `featurize` use the run's
own featurizer (conformer seed included), which the exported model also records in its
metadata. The graph's `batch` and `atoms` axes are symbolic: any padded batch works.
"""
import json
import sys

import numpy as np
import onnxruntime as ort


def main(model_path, npz_path):
    session = ort.InferenceSession(model_path)
    meta = session.get_modelmeta().custom_metadata_map
    batch = np.load(npz_path)
    # The graph's own input names: MAT's four arrays or Transformer-M's ten.
    feeds = {i.name: batch[i.name] for i in session.get_inputs()}
    (raw,) = session.run(["prediction"], feeds)
    if json.loads(meta.get("molattn.task", '"regression"')) == "regression":
        # The model predicts standardised targets; undo the training run's scaling.
        mean = np.array(json.loads(meta["molattn.target_mean"]), dtype=np.float32)
        std = np.array(json.loads(meta["molattn.target_std"]), dtype=np.float32)
        values = raw * std + mean
    else:
        values = 1.0 / (1.0 + np.exp(-raw))  # probability of the positive class
    targets = json.loads(meta["molattn.targets"])
    print("row\t" + "\t".join(targets))
    for row, v in zip(batch["row"], values):
        print(f"{row}\t" + "\t".join(f"{x:.4f}" for x in v))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
