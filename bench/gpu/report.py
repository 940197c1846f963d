"""Markdown table and PNG chart from bench/gpu/run.sh's measurements."""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

out, size, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3]
times = dict(line.split() for line in open(f"{out}/times.txt"))
labels = {
    "gpbzip2_gpu": f"gpbzip2 (GPU + {threads} threads)",
    "gpbzip2_cpu": f"gpbzip2 --gpu=off -n{threads}",
    "lbzip2": f"lbzip2 -n{threads}",
    "pbzip2": f"pbzip2 -p{threads}",
    "bzip2": "bzip2",
}
identical = open(f"{out}/identical.txt").read()
rows = []
for key, label in labels.items():
    s = float(times[key])
    same = "yes" if key == "bzip2" or f"{key} identical" in identical else ("no" if key.startswith("gpbzip2") else "n/a (multi-stream)")
    rows.append((label, s, size / s / 1e6, same))
bwt = [m.groups() for l in open(f"{out}/gpu_bwt.txt") if (m := re.search(r"lanes (\d+).* = (\d+) MB/s", l))]

with open(f"{out}/results.md", "w") as f:
    f.write("".join(f"- {l}" for l in open(f"{out}/machine.txt")))
    f.write("\n| tool (-9) | seconds (best of 3; bzip2 once) | MB/s | output = bzip2 -9 |\n|---|---:|---:|---|\n")
    for label, s, mbs, same in rows:
        f.write(f"| {label} | {s:.2f} | {mbs:.0f} | {same} |\n")
    f.write("\nGPU BWT alone (silesia-7x4 cut into -9 blocks, 6 MiB batches, best of 3):\n\n")
    for lanes, mbs in bwt:
        f.write(f"- {lanes} lane(s): {mbs} MB/s of block bytes\n")
    for l in open(f"{out}/gpu_bwt.txt"):
        if l.startswith("encode"):
            f.write(f"\nCPU side alone, blocks pre-sorted on the GPU: {l.split(': ')[1]}")

plt.figure(figsize=(7, 3.2))
plt.barh([r[0] for r in rows][::-1], [r[2] for r in rows][::-1], color="#4477aa")
plt.xlabel("MB/s (silesia-7x4, -9)")
plt.title("Compression throughput")
plt.tight_layout()
plt.savefig(f"{out}/throughput.png", dpi=120)
print(open(f"{out}/results.md").read())
