#!/usr/bin/env python3
"""First calls of skills, builds compared in alternating blocks (stdlib only).

    cargo build --release --bin skillserve --example floor_server
    python3 benches/firstcall.py [--size N] [--blocks B] [--per K]
                                 [--pin split|same|none] [--kind all|one-file|with-files]
                                 BIN [BIN ...]

Starts every server given (a path to a skillserve build, or `floor` for
`examples/floor_server.rs`) at once on the corpus of N skills (default 10,000;
from benches/make_corpus.py, seed 1), waits until each has settled, then makes
B blocks (default 20) of K (default 200) `tools/call` requests, each block of
skills no call has named before, sent to every server in turn in a shuffled
order. So every call is the first of its skill, as in `scale.py`'s call
figure, and a noisy neighbour slows every server alike: `scale.py` runs its
servers one after the other, and on a shared machine its call ratios move by
tens of percent between runs, more than most changes to the call path.

Per server: the round trip's median and 99th percentile (the target: under
1 ms at p99 at 10,000 skills), each with its ratio to the first server's, and
the server's CPU per call (all its threads, from /proc/PID/task/*/schedstat),
the median of the blocks'. The page cache is warmed first (every skill file
read once), unless --cold. --kind calls only one-file skills (a folder with
`SKILL.md` alone) or only the others.

Where the processes run decides the round trip more than any server does, so
it is fixed (--pin; Linux): on a virtual machine, waking a process on a CPU
that sits idle costs 70-90 µs, on the same CPU a few. Left to the scheduler
(`none`), each server settles on the client's CPU or on the other one for the
whole run, by chance: one run put the floor at 45 µs and skillserve at 159 µs,
the next (servers started the other way round) at 73 µs and 161 µs.
- `split` (the default): the client on one CPU, every server on another, as
  on a machine with cores to spare; every message wakes the other CPU.
- `same`: the client and the servers on one CPU; no wake-up crosses CPUs, so
  the round trip is the client's and the server's CPU time, nothing else.
The servers start and settle unpinned; every thread of theirs is pinned for
the calls (`e2e.Pinned`).
"""

import argparse
import glob
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import freshness  # noqa: E402


def cpu_ns(pid):
    """On-CPU time of every thread of `pid`, in nanoseconds."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended meanwhile
    return total


def blocks(a, names, rng, servers, trips, cpu):
    """The blocks of first calls, each sent to every server in a shuffled order."""
    for block in range(a.blocks):
        calls = names[block * a.per:(block + 1) * a.per]
        order = list(range(len(servers)))
        rng.shuffle(order)
        for i in order:
            server = servers[i]
            before = cpu_ns(server.proc.pid)
            for name in calls:
                started = time.perf_counter()
                result = server.request("tools/call", {"name": "skill", "arguments": {"name": name}})
                trips[i].append((time.perf_counter() - started) * 1e6)
                if result.get("isError"):
                    raise e2e.ServerError(f"tools/call {name!r}: {str(result)[:200]}")
            cpu[i].append((cpu_ns(server.proc.pid) - before) / a.per / 1000)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="+", help="skillserve builds, or `floor`")
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--per", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pin", choices=e2e.PLACEMENTS, default="split",
                    help="where the client and the servers run (see above)")
    ap.add_argument("--kind", choices=["all", "one-file", "with-files"], default="all",
                    help="call only skills whose folder holds SKILL.md alone, or only the others")
    ap.add_argument("--cold", action="store_true", help="do not warm the page cache first")
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)

    release = os.path.join(e2e.target_dir(), "release")
    floor = os.path.join(release, "examples", "floor_server")
    skills = e2e.corpus(a.size, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    names = sorted(os.listdir(skills))
    if a.kind != "all":
        names = [name for name in names
                 if (os.listdir(os.path.join(skills, name)) == ["SKILL.md"]) == (a.kind == "one-file")]
    if a.blocks * a.per > len(names):
        print(f"firstcall: {a.blocks} blocks of {a.per} need {a.blocks * a.per} skills; the corpus has {len(names)}",
              file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    rng.shuffle(names)
    if not a.cold:
        subprocess.run(["find", skills, "-type", "f", "-exec", "cat", "{}", "+"], stdout=subprocess.DEVNULL, check=True)

    homes, servers = [], []
    try:
        for binary in a.servers:
            home = tempfile.TemporaryDirectory(prefix="skillserve-firstcall-")
            homes.append(home)
            if binary == "floor":
                server = e2e.Server(None, None, home.name, a.timeout, argv=[floor, skills])
                server.start()
            else:
                server = e2e.Server(os.path.abspath(binary), skills, home.name, a.timeout)
                server.start()
                freshness.settle(server)
            servers.append(server)
        pinned = e2e.Pinned([server.proc.pid for server in servers], a.pin)
        trips = {i: [] for i in range(len(servers))}
        cpu = {i: [] for i in range(len(servers))}
        with pinned:
            blocks(a, names, rng, servers, trips, cpu)
    finally:
        for server in servers:
            server.stop()
        for home in homes:
            home.cleanup()

    placement = pinned.describe()
    kind = {"all": "", "one-file": " (one-file skills)", "with-files": " (skills with other files)"}[a.kind]
    print(f"{a.size:,} skills, {a.blocks} blocks of {a.per} first calls{kind}, {placement}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| server | round trip p50 | ratio | p99 | ratio | CPU per call |")
    print("|---|---:|---:|---:|---:|---:|")
    first50 = statistics.median(trips[0])
    first99 = e2e.percentile(trips[0], 99)
    for i, binary in enumerate(a.servers):
        p50 = statistics.median(trips[i])
        p99 = e2e.percentile(trips[i], 99)
        print(f"| {binary} | {p50:.0f} µs | {p50 / first50:.2f}× | {p99:.0f} µs | {p99 / first99:.2f}× "
              f"| {statistics.median(cpu[i]):.1f} µs |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
