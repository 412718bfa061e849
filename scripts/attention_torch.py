#!/usr/bin/env python3
"""veda's attention on the GPU beside PyTorch's scaled_dot_product_attention.

    scripts/attention_torch.py VEDA_BINARY [--seqs 1024,4096]

Runs `VEDA_BINARY bench --op flash --sizes SEQS` (veda's gpu-naive and
gpu-flash, [1, 16, seq, 128], median of 5 synchronised calls), times
PyTorch's SDPA on the same shapes and types the same way, and prints one
table: veda's time, PyTorch's, and veda / PyTorch (issue 18's target:
gpu-flash <= 1.3x PyTorch at seq 4096, bfloat16). Without PyTorch or a GPU
it prints veda's lines alone and says why.
"""
import argparse
import statistics
import subprocess
import sys
import time

HEADS, DIM = 16, 128


def veda_lines(binary, seqs):
    out = subprocess.run([binary, "bench", "--op", "flash", "--sizes", seqs], check=True, capture_output=True,
                         text=True).stdout
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] in ("bfloat16", "half", "float"):
            rows[(f[0], f[1], int(f[2]), f[3])] = None if f[4] == "n/a" else float(f[4])
    return out, rows


def torch_us(torch, dtype, seq, causal):
    q, k, v = (torch.randn(1, HEADS, seq, DIM, device="cuda", dtype=dtype) for _ in range(3))
    f = torch.nn.functional.scaled_dot_product_attention
    times = []
    for i in range(7):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        if i >= 2:
            times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("veda")
    ap.add_argument("--seqs", default="1024,4096")
    a = ap.parse_args()
    text, rows = veda_lines(a.veda, a.seqs)
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device for PyTorch")
    except Exception as e:  # no PyTorch, or no GPU
        print(text)
        print(f"PyTorch comparison skipped: {e}")
        return 0
    types = {"bfloat16": torch.bfloat16, "half": torch.float16, "float": torch.float32}
    print(f"attention [1, {HEADS}, seq, {DIM}]: veda beside PyTorch {torch.__version__} "
          f"scaled_dot_product_attention ({torch.cuda.get_device_name()}), median us of 5 synchronised calls")
    print(f"{'type':>9} {'causal':>6} {'seq':>6} {'veda tier':>10} {'veda us':>10} {'torch us':>10} {'veda/torch':>10}")
    for (t, causal, seq, tier), us in sorted(rows.items()):
        ref = torch_us(torch, types[t], seq, causal == "yes")
        ratio = f"{us / ref:.2f}" if us else "n/a"
        print(f"{t:>9} {causal:>6} {seq:>6} {tier:>10} {us if us else 'n/a':>10} {ref:>10.1f} {ratio:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
