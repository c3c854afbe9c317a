"""PyTorch side of `cargo xtask bench --compare-torch`: one row of the model throughput table.

Runs our PyTorch MAT reference (fixtures/gen/mat_reference.py, the module tree of the
published MAT) on the padded batch that xtask wrote, with the same thread count as ours, and
prints one JSON object: molecules_per_second, median_ms, runs, peak_rss_mb, torch.

  forward  model.eval(), torch.inference_mode(): output only.
  train    model.train() (dropout 0, as ours), forward, MSE loss against a fixed target,
           backward, Adam step (lr 1e-4): one optimiser step per batch.

Timing: one warm-up call, then calls until 3 runs and `--seconds` have passed (at most 20),
median. Peak RSS is this process's (getrusage), the Python interpreter and torch included.

Usage: python3 bench/torch_models.py BATCH_JSON --model mat-small|mat-pretrained
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
    parser.add_argument("--model", choices=["mat-small", "mat-pretrained"], required=True)
    parser.add_argument("--mode", choices=["forward", "train"], required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    x, adj, dist, mask = load_batch(args.batch)
    config = mat_reference.CONFIGS[args.model.removeprefix("mat-")]
    model = mat_reference.GraphTransformer(config)
    batch = x.shape[0]

    if args.mode == "forward":
        model.eval()

        def step():
            with torch.inference_mode():
                model(x, adj, dist, mask)

    else:
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        target = torch.linspace(-1.0, 1.0, batch).unsqueeze(1)

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x, adj, dist, mask), target)
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


if __name__ == "__main__":
    main()
