#!/usr/bin/env python3
"""`skills/list` pages, builds compared in alternating walks (stdlib only).

    cargo build --release --bin skillserve
    python3 benches/pages.py [--size N] [--walks W] [--pin split|same|none] BIN [BIN ...]

Starts every skillserve build given at once on the corpus of N skills
(default 10,000; benches/make_corpus.py, seed 1), waits until each has
settled and has walked every `skills/list` page once (listings and digests
computed: what follows is the cached page a host meets when it lists skills
again), then makes W walks (default 10) through every page, each walk sent
to every server in turn in a shuffled order, so that a noisy neighbour slows
every server alike. The client and the servers are pinned as in
firstcall.py (`--pin`).

Per server: the round trip of a page, p50 and p99, its ratio to the first
server's, and the server's CPU per page (all its threads, the median of the
walks'). A page is 100 skills, each with its files and their digests.
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
import firstcall  # noqa: E402
import freshness  # noqa: E402


def walk(server, trips):
    """One walk through every page, each round trip appended to `trips`;
    returns the number of pages."""
    cursor, pages = None, 0
    while True:
        started = time.perf_counter()
        page = server.request("skills/list", {"cursor": cursor} if cursor else None)
        trips.append((time.perf_counter() - started) * 1e6)
        pages += 1
        cursor = page.get("nextCursor")
        if not cursor:
            return pages


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="+", help="skillserve builds")
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--walks", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pin", choices=e2e.PLACEMENTS, default="split",
                    help="where the client and the servers run (see firstcall.py)")
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)

    skills = e2e.corpus(a.size, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    rng = random.Random(a.seed)
    homes, servers = [], []
    trips = {i: [] for i in range(len(a.servers))}
    cpu = {i: [] for i in range(len(a.servers))}
    try:
        for binary in a.servers:
            home = tempfile.TemporaryDirectory(prefix="skillserve-pages-")
            homes.append(home)
            server = e2e.Server(os.path.abspath(binary), skills, home.name, a.timeout)
            server.start()
            freshness.settle(server)
            walk(server, [])
            servers.append(server)
        pinned = e2e.Pinned([server.proc.pid for server in servers], a.pin)
        with pinned:
            for _ in range(a.walks):
                order = list(range(len(servers)))
                rng.shuffle(order)
                for i in order:
                    before = firstcall.cpu_ns(servers[i].proc.pid)
                    pages = walk(servers[i], trips[i])
                    cpu[i].append((firstcall.cpu_ns(servers[i].proc.pid) - before) / pages / 1000)
    except e2e.ServerError as err:
        print(f"pages: a server misbehaved: {err}", file=sys.stderr)
        return 2
    finally:
        for server in servers:
            server.stop()
        for home in homes:
            home.cleanup()

    print(f"{a.size:,} skills, {a.walks} walks of every skills/list page (cached), {pinned.describe()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| server | page p50 | ratio | page p99 | ratio | CPU per page |")
    print("|---|---:|---:|---:|---:|---:|")
    first50 = statistics.median(trips[0])
    first99 = e2e.percentile(trips[0], 99)
    for i, binary in enumerate(a.servers):
        p50 = statistics.median(trips[i])
        p99 = e2e.percentile(trips[i], 99)
        print(f"| {binary} | {p50 / 1000:.2f} ms | {p50 / first50:.2f}× | {p99 / 1000:.2f} ms | "
              f"{p99 / first99:.2f}× | {statistics.median(cpu[i]) / 1000:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
