"""PyTorch side of `cargo xtask bench --generate`: the SMILES generator's architecture
(models::smiles_gpt, MolGPT's decoder: token + learned position embeddings, pre-LN blocks of
causal self-attention through a merged QKV projection and a GELU feed-forward, a final
LayerNorm, an LM head without bias) with the weights xtask wrote (safetensors, PyTorch's
[out, in] layout), and one benchmark row as a JSON line.

  check   logits of the token batch in the weights file against ours (max abs difference)
  sample  KV-cached sampling: caches preallocated [B, H, max_len, d] and written in place
          (as ours), the prompt <bos>, then STEPS steps of one token for every row
          (temperature 1, torch.multinomial); molecules/s = B / time
  train   model.train() (dropout as the file says), next-token cross-entropy over a
          [B, T] batch of tokens, backward, Adam step (lr 1e-4); tokens/s = B (T - 1) / time

Timing: one warm-up call, then calls until 3 runs and `--seconds` have passed (at most 20),
median. Peak RSS is this process's (getrusage), the interpreter and torch included.

Usage: python3 bench/torch_gpt.py WEIGHTS.safetensors --mode check|sample|train --threads N
           [--batch B] [--steps S] [--seq-len T] [--seconds S]
Needs: pip install torch numpy safetensors
"""

import argparse
import json
import resource
import statistics
import time

import torch
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn


class Block(nn.Module):
    def __init__(self, d, heads, d_ff, dropout):
        super().__init__()
        self.heads, self.d_k = heads, d // heads
        self.ln_1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d_ff)
        self.proj = nn.Linear(d_ff, d)
        self.attn_drop = dropout
        self.drop = nn.Dropout(dropout)

    def forward(self, x, cache=None, offset=0):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, self.d_k).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            keys, values = cache
            keys[:, :, offset:offset + t] = k
            values[:, :, offset:offset + t] = v
            k, v = keys[:, :, :offset + t], values[:, :, :offset + t]
        # One new token sees every cached key; a whole sequence from position 0 is causal.
        a = F.scaled_dot_product_attention(
            q, k, v, is_causal=t > 1, dropout_p=self.attn_drop if self.training else 0.0)
        x = x + self.drop(self.out_proj(a.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.proj(F.gelu(self.fc(self.ln_2(x)))))


class Gpt(nn.Module):
    def __init__(self, vocab, max_len, d, layers, heads, d_ff, dropout):
        super().__init__()
        self.heads, self.d_k, self.max_len = heads, d // heads, max_len
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Parameter(torch.zeros(max_len, d))
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(d, heads, d_ff, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, caches=None, offset=0):
        t = idx.shape[1]
        x = self.drop(self.tok_emb(idx) + self.pos_emb[offset:offset + t])
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i], offset)
        return self.head(self.ln_f(x))

    def new_caches(self, b):
        shape = (b, self.heads, self.max_len, self.d_k)
        return [(torch.zeros(shape), torch.zeros(shape)) for _ in self.blocks]


def load(path, dropout):
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    cfg = {k: int(meta[k]) for k in ("vocab_size", "max_len", "d_model", "num_layers", "num_heads", "d_ff")}
    model = Gpt(cfg["vocab_size"], cfg["max_len"], cfg["d_model"], cfg["num_layers"],
                cfg["num_heads"], cfg["d_ff"], dropout)
    check = {k: tensors.pop(k) for k in ("check.tokens", "check.logits")}
    model.load_state_dict(tensors, strict=True)
    return model, check, float(meta.get("dropout", "0.1"))


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
    parser.add_argument("weights")
    parser.add_argument("--mode", choices=["check", "sample", "train"], required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model, check, dropout = load(args.weights, 0.0)
    result = {"torch": torch.__version__}
    if args.mode == "check":
        model.eval()
        with torch.inference_mode():
            got = model(check["check.tokens"].long())
        result["max_abs"] = (got - check["check.logits"]).abs().max().item()
    elif args.mode == "sample":
        model.eval()
        b = args.batch

        def step():
            with torch.inference_mode():
                caches = model.new_caches(b)
                idx = torch.ones(b, 1, dtype=torch.long)  # <bos> = 1
                for pos in range(args.steps):
                    logits = model(idx, caches, pos)[:, -1]
                    idx = torch.multinomial(F.softmax(logits, dim=-1), 1)

        median, runs = time_calls(step, args.seconds)
        result.update(per_second=b / median, median_ms=median * 1e3, runs=runs)
    else:
        model, _, _ = load(args.weights, dropout)
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(0)
        vocab = model.head.weight.shape[0]
        tokens = torch.randint(4, vocab, (args.batch, args.seq_len), generator=g)

        def step():
            optimizer.zero_grad(set_to_none=True)
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
            loss.backward()
            optimizer.step()

        median, runs = time_calls(step, args.seconds)
        tokens_per_step = args.batch * (args.seq_len - 1)
        result.update(per_second=tokens_per_step / median, median_ms=median * 1e3, runs=runs)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(result))


if __name__ == "__main__":
    main()
