"""PyTorch side of `cargo xtask bench --compare-torch`: one row of the model throughput table.

Runs our PyTorch MAT reference (fixtures/gen/mat_reference.py, the module tree of the
published MAT) or the ORIGINAL Transformer-M (lsj2408/Transformer-M 45647e1 loaded by
fixtures/gen/tm_original.py from the checkout named by MOLATTN_TRANSFORMER_M_REPO; its
`transformer_m_base` architecture at the small preset's sizes: 4 layers, d 128, FFN 128,
8 heads, K 32, 5 hops; every molecule in mode 2D+3D; its denoising head replaced by zeros, as
ours has none in these rows) on the padded batch that xtask wrote (for Transformer-M in the
original collator's format), with the same thread count as ours, and prints one JSON object:
molecules_per_second, median_ms, runs, peak_rss_mb, torch.

  forward  model.eval(), torch.inference_mode(): output only.
  train    model.train() (dropout 0, as ours), forward, MSE loss against a fixed target,
           backward, Adam step (lr 1e-4): one optimiser step per batch.

Timing: one warm-up call, then calls until 3 runs and `--seconds` have passed (at most 20),
median. Peak RSS is this process's (getrusage), the Python interpreter and torch included.

Usage: python3 bench/torch_models.py BATCH_JSON --model mat-small|mat-pretrained|tm-small
           --mode forward|train --threads N [--seconds S]
Needs: pip install torch numpy rdkit safetensors (the reference modules import them).
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
import tm_original  # noqa: E402  (loader of the original Transformer-M code)


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
    """The Transformer-M batch (tm_bench.rs) as the original collator's `batched_data`."""
    with open(path) as fh:
        raw = json.load(fh)
    b, n, m = raw["batch"], raw["atoms"], raw["hops"]
    o = raw["original"]

    def arr(values, shape, dtype=np.int64):
        return torch.from_numpy(np.asarray(values, dtype=dtype).reshape(shape))

    masked = arr(o["masked"], (b, n + 1, n + 1), np.bool_)
    in_degree = arr(o["in_degree"], (b, n))
    return {
        "x": arr(o["x"], (b, n, 9)),
        "in_degree": in_degree,
        "out_degree": in_degree,
        "spatial_pos": arr(o["spatial_pos"], (b, n, n)),
        "edge_input": arr(o["edge_input"], (b, n, n, m, 3)),
        "attn_edge_type": torch.zeros(b, n, n, 3, dtype=torch.long),  # unused by multi_hop
        "attn_bias": torch.zeros(b, n + 1, n + 1).masked_fill(masked, float("-inf")),
        "pos": arr(raw["coordinates"], (b, n, 3), np.float32),
        "node_type_edge": arr(o["node_type_edge"], (b, n, n, 2)),
    }, m


def transformer_m_small(hops):
    """The original Transformer-M at the small preset's sizes, dropout 0, 2D+3D for every
    molecule (training mode draws modes: fixed to "both" here, as ours)."""
    repo = os.environ.get("MOLATTN_TRANSFORMER_M_REPO")
    if not repo:
        sys.exit("set MOLATTN_TRANSFORMER_M_REPO to a lsj2408/Transformer-M checkout (45647e1)")
    models, _ = tm_original.load(repo)
    margs = tm_original.original_args(4, 128, 128, 8, 32, hops)
    model = models.TransformerMModel(margs, models.TransformerM(margs))
    encoder = model.encoder.molecule_encoder

    class NoDenoise(torch.nn.Module):
        def forward(self, query, attn_bias, delta_pos):
            return torch.zeros(query.shape[1], query.shape[0], 3)

    encoder.atom_proc = NoDenoise()
    np.random.choice = lambda a, size, p=None: np.zeros(size, dtype=np.int64)

    def forward(inp):
        out, _, _ = model(dict(inp))
        return out[:, 0, :]

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
        batch = inp["x"].shape[0]
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
