"""PNG chart from the tables of bench/gpu/compress.sh and decompress.sh (| input | tool |
seconds | MB/s | peak RSS MB |): MB/s per tool and input, the better of the rounds.
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
inputs = list(dict.fromkeys(k[0] for k in best))
tools = list(dict.fromkeys(k[1] for k in best if k[0] == inputs[0]))
fig, ax = plt.subplots(figsize=(10, 0.5 + 0.35 * len(tools) * len(inputs)))
height = 0.8 / len(tools)
for i, tool in enumerate(tools):
    ys = [n + i * height for n in range(len(inputs))]
    xs = [best.get((f, tool), 0) for f in inputs]
    ax.barh(ys, xs, height, label=tool)
    for y, x in zip(ys, xs):
        ax.text(x, y, f" {x}", va="center", fontsize=7)
ax.set_yticks([n + 0.4 - height / 2 for n in range(len(inputs))], inputs)
ax.invert_yaxis()
ax.set_xlabel(sys.argv[3])
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
