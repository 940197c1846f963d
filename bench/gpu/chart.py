"""PNG chart from the tables of bench/gpu/compress.sh and decompress.sh (| input | tool |
seconds | MB/s | peak RSS MB |): one bar per input and tool, MB/s, the better of the
rounds; each input keeps only the tools it was run with.
usage: chart.py TABLE.md CHART.png TITLE"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

best = {}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 5 or not cells[3].isdigit():
        continue
    key = (cells[0], cells[1])
    best[key] = max(best.get(key, 0), int(cells[3]))
tools = list(dict.fromkeys(k[1] for k in best))
colours = {t: plt.get_cmap("tab10")(i % 10) for i, t in enumerate(tools)}
fig, ax = plt.subplots(figsize=(10, 0.6 + 0.28 * len(best)))
labels = [f"{f}: {t}" for f, t in best]
ax.barh(range(len(best)), list(best.values()), color=[colours[t] for _, t in best])
for y, x in enumerate(best.values()):
    ax.text(x, y, f" {x}", va="center", fontsize=7)
ax.set_yticks(range(len(best)), labels, fontsize=7)
ax.invert_yaxis()
ax.set_xlabel(sys.argv[3])
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
