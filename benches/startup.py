#!/usr/bin/env python3
"""Start-up, builds compared in alternating runs (stdlib only).

    cargo build --release --bin skillserve
    python3 benches/startup.py [--size N] [--runs R] BIN [BIN ...]

Each run starts every build given, in a shuffled order, on the corpus of N
skills (default 10,000; benches/make_corpus.py, seed 1) and times spawn →
`tools/list` answered (the scan, the parse of every SKILL.md's frontmatter,
the tool description), as e2e.py does, then stops it. Alternating runs keep a
noisy neighbour from favouring one build. Per build: the median and p90 over
--runs (default 15), and the ratio of the medians to the first build's.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="+", help="skillserve builds")
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args(argv)
    skills = e2e.corpus(a.size, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    rng = random.Random(a.seed)
    times = {i: [] for i in range(len(a.servers))}
    load = [os.getloadavg()[0]]
    try:
        for _ in range(a.runs):
            order = list(range(len(a.servers)))
            rng.shuffle(order)
            for i in order:
                with tempfile.TemporaryDirectory(prefix="skillserve-startup-") as home:
                    server = e2e.Server(os.path.abspath(a.servers[i]), skills, home, a.timeout)
                    try:
                        server.start()
                        times[i].append((time.perf_counter() - server.started) * 1e3)
                        server.stop()
                    finally:
                        server.kill()
            load.append(os.getloadavg()[0])
    except e2e.ServerError as err:
        print(f"startup: a server misbehaved: {err}", file=sys.stderr)
        return 2
    print(f"{a.size:,} skills, spawn → tools/list, {a.runs} alternating runs, "
          f"load average {min(load):.1f}–{max(load):.1f}")
    print()
    print("| server | median | p90 | ratio |")
    print("|---|---:|---:|---:|")
    first = statistics.median(times[0])
    for i, binary in enumerate(a.servers):
        median = statistics.median(times[i])
        print(f"| {binary} | {median:.0f} ms | {e2e.percentile(times[i], 90):.0f} ms | {median / first:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
