"""Peak resident memory of a command, and where it lies.
usage: memory_profile.py [--at T1,T2,...] CMD...
Reads the command's VmRSS every 5 ms (its output goes to /dev/null) and prints the wall
time, the peak and when it came, and the RSS every 50 ms. With --at, also sums the Rss of
/proc/PID/smaps by mapping at those times (seconds from the start): files by name,
anonymous maps by size (huge-page arrays and glibc's arenas are 2-64 MB maps, the main
arena is [heap]; pinned CUDA memory shows as `zero (deleted)`, the driver as nvidiactl)."""
import collections
import re
import subprocess
import sys
import time

MAP = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


def mapping_name(m):
    if m.group(4):
        return m.group(4).split("/")[-1]
    mb = (int(m.group(2), 16) - int(m.group(1), 16)) >> 20
    size = "<2M" if mb < 2 else "2-8M" if mb <= 8 else "8-64M" if mb <= 64 else ">64M"
    return f"[anon {m.group(3)} {size}]"


def by_mapping(pid):
    rss = collections.Counter()
    name = None
    for line in open(f"/proc/{pid}/smaps"):
        m = MAP.match(line)
        if m:
            name = mapping_name(m)
        elif line.startswith("Rss:"):
            rss[name] += int(line.split()[1])
    return rss


def vm_rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


def main():
    args = sys.argv[1:]
    at = []
    if args[:1] == ["--at"]:
        at = sorted(float(x) for x in args[1].split(","))
        args = args[2:]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    t0 = time.time()
    samples, breakdowns = [], []
    while p.poll() is None:
        now = time.time() - t0
        try:
            samples.append((now, vm_rss_mb(p.pid)))
            if at and now >= at[0]:
                at.pop(0)
                breakdowns.append((now, by_mapping(p.pid)))
        except OSError:  # the command ended between poll() and the read
            break
        time.sleep(0.004)
    p.wait()
    wall = time.time() - t0
    peak = max(samples, key=lambda s: s[1]) if samples else (0, 0)
    line, next_at = [], 0.0
    for t, mb in samples:
        if t >= next_at:
            line.append(f"{t:.2f}:{mb}")
            next_at += 0.05
    print(f"{wall:.3f}s peak {peak[1]} MB at {peak[0]:.3f}s | {' '.join(line)}")
    for t, rss in breakdowns:
        parts = ", ".join(f"{k} {v // 1024}" for k, v in rss.most_common(12))
        print(f"t={t:.3f} total {sum(rss.values()) // 1024} MB: {parts}")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
