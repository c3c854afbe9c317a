"""PyTorch side of `cargo xtask bench --compare-torch`: one row of the model throughput table.

Runs our PyTorch MAT reference (fixtures/gen/mat_reference.py, the module tree of the
published MAT) or our Transformer-M reference (fixtures/gen/transformer_m_reference.py, its
module constants set to Transformer-M small: 4 layers, d 128, FFN 128, 8 heads, K 32; the
denoising head not run, as ours has none in these rows) on the padded batch that xtask wrote,
with the same thread count as ours, and prints one JSON object: molecules_per_second,
median_ms, runs, peak_rss_mb, torch.

  forward  model.eval(), torch.inference_mode(): output only.
  train    model.train() (dropout 0, as ours), forward, MSE loss against a fixed target,
           backward, Adam step (lr 1e-4): one optimiser step per batch.

Timing: one warm-up call, then calls until 3 runs and `--seconds` have passed (at most 20),
median. Peak RSS is this process's (getrusage), the Python interpreter and torch included.

Usage: python3 bench/torch_models.py BATCH_JSON --model mat-small|mat-pretrained|tm-small
           --mode forward|train --threads N [--seconds S]
Needs: pip install torch numpy rdkit safetensors (the reference module imports them).
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "gen"))
import mat_reference  # noqa: E402  (our reference MAT, written from the paper and MAT's code)
import transformer_m_reference as tm_reference  # noqa: E402  (our Transformer-M reference)


def load_batch(path):
    with open(path) as fh:
        raw = json.load(fh)

    def tensor(name, dtype=np.float32):
        entry = raw[name]
        return torch.from_numpy(np.asarray(entry["values"], dtype=dtype).reshape(entry["shape"]))

    x = tensor("node_features")
    adj = tensor("adjacency")
    dist = tensor("distances")
    # xtask writes key_padding_mask (1 = padding); the reference takes True = real atom.
    mask = tensor("key_padding_mask") < 0.5
    return x, adj, dist, mask


def load_tm_batch(path):
    """The Transformer-M batch (tm_bench.rs): flat arrays and their sizes; every molecule in
    mode 2D+3D; pair types as Transformer-M's Gaussian layer indexes them."""
    with open(path) as fh:
        raw = json.load(fh)
    b, n, m = raw["batch"], raw["atoms"], raw["hops"]

    def arr(name, shape, dtype):
        return torch.from_numpy(np.asarray(raw[name], dtype=dtype).reshape(shape))

    atom_type = arr("atom_type", (b, n), np.int64)
    ti, tj = atom_type[:, :, None], atom_type[:, None, :]
    types = tm_reference.ATOM_TYPES
    return {
        "atom_index": arr("atom_index", (b, n, 9), np.int64),
        "degree_index": arr("degree_index", (b, n), np.int64),
        "spatial_index": arr("spatial_index", (b, n, n), np.int64),
        "edge_index": arr("edge_index", (b, n, n, m, 3), np.int64),
        "path_length": arr("path_length", (b, n, n), np.float32),
        "pair_type": torch.minimum(ti, tj) * types + torch.maximum(ti, tj),
        "coordinates": arr("coordinates", (b, n, 3), np.float32),
        "padding": arr("padding", (b, n), np.bool_),
        "use_2d": torch.ones(b),
        "use_3d": torch.ones(b),
    }, m


def transformer_m_small(hops):
    """Our Transformer-M reference with the small preset's sizes and our encoding limits
    (mol_featurize::graphormer::EncodingLimits::default: degree 8, distance 20)."""
    ref = tm_reference
    ref.D, ref.H, ref.K, ref.FFN, ref.LAYERS = 128, 8, 32, 128, 4
    ref.MAX_DEGREE, ref.MAX_DISTANCE, ref.MAX_HOPS = 8, 20, hops
    model = ref.TransformerM()

    class NoDenoise(torch.nn.Module):
        def forward(self, *args):
            return None

    model.denoise_head = NoDenoise()

    def forward(inp):
        out = {}
        model(inp, out)
        return out["prediction"]

    return model, forward


def time_calls(step, seconds):
    step()  # warm-up
    times, start = [], time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < seconds and len(times) < 20):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("batch")
    parser.add_argument("--model", choices=["mat-small", "mat-pretrained", "tm-small"], required=True)
    parser.add_argument("--mode", choices=["forward", "train", "epoch"], required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.mode == "epoch":
        return epoch(args)

    if args.model == "tm-small":
        inp, hops = load_tm_batch(args.batch)
        model, run = transformer_m_small(hops)
        batch = inp["padding"].shape[0]
    else:
        x, adj, dist, mask = load_batch(args.batch)
        config = mat_reference.CONFIGS[args.model.removeprefix("mat-")]
        model = mat_reference.GraphTransformer(config)
        batch = x.shape[0]

        def run(_):
            return model(x, adj, dist, mask)

        inp = None

    if args.mode == "forward":
        model.eval()

        def step():
            with torch.inference_mode():
                run(inp)

    else:
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        target = torch.linspace(-1.0, 1.0, batch).unsqueeze(1)

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(run(inp), target)
            loss.backward()
            optimizer.step()

    median, runs = time_calls(step, args.seconds)
    print(json.dumps({
        "molecules_per_second": batch / median,
        "median_ms": median * 1e3,
        "runs": runs,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "torch": torch.__version__,
    }))


def epoch(args):
    """One training epoch over every batch of the file (`{"batches": [...]}`, written by
    `cargo xtask bench --esol-epoch`): forward, MSE, backward, Adam step per batch; one
    warm-up epoch, then the median of 3 epochs in seconds."""
    with open(args.batch) as fh:
        raw = json.load(fh)
    batches = []
    for b in raw["batches"]:
        def tensor(name, dtype=np.float32, b=b):
            entry = b[name]
            return torch.from_numpy(np.asarray(entry["values"], dtype=dtype).reshape(entry["shape"]))

        x = tensor("node_features")
        n = x.shape[0]
        batches.append((x, tensor("adjacency"), tensor("distances"),
                        tensor("key_padding_mask") < 0.5, torch.linspace(-1.0, 1.0, n).unsqueeze(1)))
    config = dict(mat_reference.CONFIGS[args.model.removeprefix("mat-")])
    model = mat_reference.GraphTransformer(config)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def one_epoch():
        for x, adj, dist, mask, target in batches:
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x, adj, dist, mask), target)
            loss.backward()
            optimizer.step()

    one_epoch()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        one_epoch()
        times.append(time.perf_counter() - t0)
    print(json.dumps({
        "seconds_per_epoch": statistics.median(times),
        "epochs": len(times),
        "molecules": sum(b[0].shape[0] for b in batches),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
