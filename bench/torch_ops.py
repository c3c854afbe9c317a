"""PyTorch side of xtask/examples/burn_op_threads.rs: the same ops and shapes, median
microseconds of 200 calls, with the thread count given (1 or 2).

Usage: python3 bench/torch_ops.py THREADS      (pip install torch)
"""
import statistics
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]))
scores = torch.rand(32, 8, 33, 33)
other = torch.rand(32, 8, 33, 33)
mask = torch.rand(32, 8, 33, 33) > 0.9
rows = torch.rand(1056, 128)
weight = torch.rand(128, 128)
big_rows = torch.rand(1056, 1024)
big_weight = torch.rand(1024, 1024)
v = torch.rand(32, 8, 33, 16)
ops = [
    ("softmax [32,8,33,33] last dim", lambda: torch.softmax(scores, -1)),
    ("exp [32,8,33,33]", lambda: scores.exp()),
    ("a * 0.3 + b [32,8,33,33]", lambda: scores * 0.3 + other),
    ("mask_fill [32,8,33,33]", lambda: scores.masked_fill(mask, -1e9)),
    ("matmul [32,8,33,33] x [32,8,33,16]", lambda: scores @ v),
    ("matmul [1056,128] x [128,128]", lambda: rows @ weight),
    ("matmul [1056,1024] x [1024,1024]", lambda: big_rows @ big_weight),
]
print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
with torch.inference_mode():
    for name, op in ops:
        op()
        times = []
        for _ in range(20 if "1024" in name else 200):
            t0 = time.perf_counter()
            op()
            times.append((time.perf_counter() - t0) * 1e6)
        print(f"  {name:<44} {statistics.median(times):>9.1f} us")
