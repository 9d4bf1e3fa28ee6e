#!/usr/bin/env python3
"""skillserve at scale, side by side with `cat` and a floor server (stdlib only).

    cargo build --release --bin skillserve --example floor_server
    python3 benches/scale.py [--sizes 10000,100000] [--rounds 3] [--also OLD_BINARY]

For each corpus size (benches/make_corpus.py, seed 1, cached under
target/bench-corpus/<N>/skills) and each round, in turn:

  * cat:    `find CORPUS -name SKILL.md -print0 | xargs -0 cat > /dev/null`,
            wall time: reading every SKILL.md once, the walk included;
  * floor:  examples/floor_server.rs (a bare blocking stdio server that
            answers every call from memory) answers the same sequence of
            `tools/call` requests as skillserve;
  * skillserve (and every --also build), default settings (watching on,
    30 s interval), one process:
      - start: spawn -> `tools/list` answered; resident memory then;
      - settled: resident memory once the process has used no CPU for a
        second (search index built, watcher armed), and its peak (VmHWM);
      - idle: CPU seconds (user + system) over --idle seconds, per minute;
      - miss: --misses calls of names no skill has, each more than a second
        after the previous one, so that each may rescan (median and max);
      - call: --calls `tools/call` requests over distinct random skills (the
        first call of each skill), p50 and p99, and the floor's; the client
        and the server pinned to a CPU each meanwhile (--pin, as in
        firstcall.py: left to the scheduler, the placement decides);
      - walk: every `skills/list` page, cold (listings and digests computed;
        the OS page cache is warm) and again cached; hashing throughput of
        the cold walk in MB/s of the files hashed;
      - exit: from closing stdin to the process's exit;
    and a second process, settled, for the exit after SIGTERM.

Each figure is the median over rounds; servers alternate within a round so
that a noisy neighbour skews them alike. The ratios are to `cat` (start) and
to the floor (calls) measured in the same round. Exit status 2 when a server
misbehaves.
"""

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (the Server client and corpus helpers)
import freshness  # noqa: E402  (cpu_seconds, settle)


def time_cat(skills_dir):
    started = time.perf_counter()
    subprocess.run(["sh", "-c", 'find "$1" -name SKILL.md -print0 | xargs -0 cat > /dev/null', "sh", skills_dir],
                   check=True)
    return time.perf_counter() - started


def calls(server, names, pin):
    trips = []
    with e2e.Pinned([server.proc.pid], pin):
        for name in names:
            started = time.perf_counter()
            result = server.request("tools/call", {"name": "skill", "arguments": {"name": name}})
            trips.append((time.perf_counter() - started) * 1e6)
            if result.get("isError"):
                raise e2e.ServerError(f"tools/call {name!r}: {str(result)[:200]}")
    return trips


def walk(server, n):
    total, pages, skills = e2e.walk_pages(server, "skills/list", "skills")
    if not n * 0.9 <= skills <= n:
        raise e2e.ServerError(f"skills/list walked {skills} skills of {n}")
    return total * 1e3


def hashed_bytes(skills_dir):
    """Bytes of every file of every skill (what a cold walk hashes)."""
    total = 0
    for root, dirs, files in os.walk(skills_dir):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def skillserve_round(binary, skills_dir, n, names, a):
    figures = {}
    with tempfile.TemporaryDirectory(prefix="skillserve-scale-") as home:
        server = e2e.Server(binary, skills_dir, home, a.timeout)
        try:
            server.start()
            figures["start"] = (time.perf_counter() - server.started) * 1e3
            figures["rss-start"] = server.rss_kib() / 1024
            freshness.settle(server)
            figures["rss-settled"] = server.rss_kib() / 1024
            figures["hwm"] = server.rss_kib("VmHWM") / 1024
            before = freshness.cpu_seconds(server.proc.pid)
            time.sleep(a.idle)
            figures["idle"] = (freshness.cpu_seconds(server.proc.pid) - before) * 60 / a.idle
            misses = []
            for i in range(a.misses):
                time.sleep(1.1)
                started = time.perf_counter()
                result = server.request("tools/call", {"name": "skill", "arguments": {"name": f"zq-no-such-{i}"}})
                misses.append((time.perf_counter() - started) * 1e3)
                if not result.get("isError"):
                    raise e2e.ServerError("a miss was answered as a skill")
            figures["miss"] = statistics.median(misses)
            figures["miss-max"] = max(misses)
            trips = calls(server, names, a.pin)
            figures["call"] = statistics.median(trips)
            figures["call-p99"] = e2e.percentile(trips, 99)
            figures["walk-cold"] = walk(server, n)
            figures["walk-cached"] = walk(server, n)
            figures["rss-walked"] = server.rss_kib() / 1024
            started = time.perf_counter()
            server.stop()
            figures["exit-eof"] = (time.perf_counter() - started) * 1e3
        except e2e.ServerError as err:
            server.kill()
            raise e2e.ServerError(f"{err}\n{server.stderr_tail()}") from None
        finally:
            server.kill()
        server = e2e.Server(binary, skills_dir, home, a.timeout)
        try:
            server.start()
            freshness.settle(server)
            started = time.perf_counter()
            server.proc.send_signal(signal.SIGTERM)
            code = e2e.wait_exit(server.proc, a.timeout)
            figures["exit-term"] = (time.perf_counter() - started) * 1e3
            if code != 0:
                raise e2e.ServerError(f"exit status {code} after SIGTERM")
        finally:
            server.kill()
    return figures


def floor_round(floor, skills_dir, names, a):
    with tempfile.TemporaryDirectory(prefix="skillserve-scale-") as home:
        server = e2e.Server(None, None, home, a.timeout, argv=[floor, skills_dir])
        try:
            server.start()
            trips = calls(server, names, a.pin)
            server.stop()
        finally:
            server.kill()
    return {"call": statistics.median(trips), "call-p99": e2e.percentile(trips, 99)}


ROWS = [
    ("start", "spawn → tools/list", "ms", "{:.0f}"),
    ("rss-start", "memory at tools/list (VmRSS)", "MiB", "{:.1f}"),
    ("rss-settled", "memory settled (VmRSS)", "MiB", "{:.1f}"),
    ("hwm", "peak memory (VmHWM) when settled", "MiB", "{:.1f}"),
    ("idle", "idle CPU per minute", "s", "{:.3f}"),
    ("miss", "miss round trip, > 1 s apart (median)", "ms", "{:.1f}"),
    ("miss-max", "miss round trip (max)", "ms", "{:.1f}"),
    ("call", "tools/call p50, distinct random skills", "µs", "{:.0f}"),
    ("call-p99", "tools/call p99", "µs", "{:.0f}"),
    ("walk-cold", "skills/list walk, cold", "ms", "{:.0f}"),
    ("walk-cached", "skills/list walk, cached", "ms", "{:.0f}"),
    ("rss-walked", "memory after the walks (VmRSS)", "MiB", "{:.1f}"),
    ("exit-eof", "exit after EOF", "ms", "{:.1f}"),
    ("exit-term", "exit after SIGTERM", "ms", "{:.1f}"),
]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    release = os.path.join(e2e.target_dir(), "release")
    ap.add_argument("--bin", default=os.path.join(release, "skillserve"))
    ap.add_argument("--also", action="append", default=[], help="another skillserve build to compare")
    ap.add_argument("--floor", default=os.path.join(release, "examples", "floor_server"))
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=60.0, help="idle seconds measured (default 60)")
    ap.add_argument("--misses", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--pin", choices=e2e.PLACEMENTS, default="split",
                    help="where the client and the server run while calls are timed "
                         "(split: a CPU each; same: one CPU; see e2e.Pinned)")
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)

    servers = [("skillserve", os.path.abspath(a.bin))]
    servers += [(f"skillserve ({os.path.basename(os.path.dirname(os.path.abspath(p)))})", os.path.abspath(p))
                for p in a.also]
    for path in [a.floor] + [p for _, p in servers]:
        if not os.access(path, os.X_OK):
            print(f"scale: {path} is not an executable; see the usage above", file=sys.stderr)
            return 2
    root = os.path.join(e2e.target_dir(), "bench-corpus")
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    load = [os.getloadavg()[0]]
    print(f"skillserve at scale: {a.rounds} rounds, load average {load[0]:.2f} at the start", file=sys.stderr)
    for n in sizes:
        skills_dir = e2e.corpus(n, root, e2e.MAKE_CORPUS)
        every = sorted(os.listdir(skills_dir))
        rng = random.Random(n)
        hashed = hashed_bytes(skills_dir)
        results = {label: [] for label in ["cat", "floor"] + [label for label, _ in servers]}
        try:
            for round_ in range(a.rounds):
                names = rng.sample(every, min(a.calls, len(every)))
                order = [("cat", None), ("floor", None)] + servers
                rng.shuffle(order)
                for label, binary in order:
                    print(f"scale: {n:,} skills, round {round_ + 1}: {label} …", file=sys.stderr)
                    if label == "cat":
                        results[label].append({"start": time_cat(skills_dir) * 1e3})
                    elif label == "floor":
                        results[label].append(floor_round(a.floor, skills_dir, names, a))
                    else:
                        results[label].append(skillserve_round(binary, skills_dir, n, names, a))
                    load.append(os.getloadavg()[0])
        except e2e.ServerError as err:
            print(f"scale: a server misbehaved: {err}", file=sys.stderr)
            return 2

        def med(label, key):
            values = [r[key] for r in results[label] if key in r]
            return (statistics.median(values), min(values), max(values)) if values else None

        cat_ms = [r["start"] for r in results["cat"]]
        print()
        print(f"### {n:,} skills ({hashed / 1e6:,.0f} MB of skill files), {a.rounds} rounds, "
              f"load average {min(load):.1f}–{max(load):.1f}")
        print()
        print(f"`cat` of every SKILL.md: {statistics.median(cat_ms):.0f} ms "
              f"(rounds {min(cat_ms):.0f}–{max(cat_ms):.0f}); floor tools/call p50 "
              f"{med('floor', 'call')[0]:.0f} µs, p99 {med('floor', 'call-p99')[0]:.0f} µs")
        print()
        labels = [label for label, _ in servers]
        print("| measurement | " + " | ".join(labels) + " |")
        print("|---|" + "---:|" * len(labels))
        for key, title, unit, fmt in ROWS:
            cells = []
            for label in labels:
                m = med(label, key)
                if m is None:
                    cells.append("–")
                    continue
                cell = f"{fmt.format(m[0])} {unit}"
                if a.rounds > 1:
                    cell += f" ({fmt.format(m[1])}–{fmt.format(m[2])})"
                if key == "start":
                    ratios = [r["start"] / c["start"] for r, c in zip(results[label], results["cat"])]
                    cell += f", {statistics.median(ratios):.2f}× cat"
                if key in ("call", "call-p99"):
                    ratios = [r[key] / f[key] for r, f in zip(results[label], results["floor"])]
                    cell += f", {statistics.median(ratios):.2f}× floor"
                if key == "walk-cold":
                    cell += f", {hashed / 1e6 / (m[0] / 1e3):.0f} MB/s"
                cells.append(cell)
            print(f"| {title} | " + " | ".join(cells) + " |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
