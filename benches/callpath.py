#!/usr/bin/env python3
"""The call path, side by side with a floor (stdlib only).

    cargo build --release --bin skillserve --example floor_server
    python3 benches/callpath.py [--bin PATH] [--floor PATH] [--also PATH ...]

Drives each server over its stdio pipes with the same Python client as
`e2e.py`, at 1,000 skills (corpus from benches/make_corpus.py, seed 1):

  * one skill:  CALLS sequential `tools/call` round trips for the skill whose
    SKILL.md has the median size (what e2e.py measures);
  * spread:     CALLS sequential round trips over every skill in a shuffled
    order, each skill called two or three times (what a model does: most calls
    are the first of their skill);
  * file:       CALLS sequential `tools/call` round trips with `file`, one
    `references/` file of each skill that has one, in a shuffled order (the
    gate opens the skill folder and the file beneath it);
  * read:       CALLS sequential `resources/read` round trips of the same
    files (the gate, and the bytes as they are on disk);
  * in flight:  CALLS calls with 32 requests outstanding at any time: calls per
    second;
  * exit:       from closing stdin to the process's exit, at 1,000 and 10,000
    skills (skillserve only; the floor has nothing to tear down).

The floor (`examples/floor_server.rs`) is a bare blocking Rust stdio server that
answers each call with the very bytes skillserve returns, from memory: the
difference is what skillserve itself costs. Runs alternate between the servers
(`--rounds`, default 3) and each figure is the median of its rounds' medians,
so that a noisy neighbour skews both sides alike. `--also` adds other builds of
skillserve (an older commit, say) to compare against.
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

IN_FLIGHT = 32


def start(kind, binary, skills_dir, home, timeout):
    if kind == "floor":
        server = e2e.Server(None, None, home, timeout, argv=[binary, skills_dir])
    else:
        server = e2e.Server(binary, skills_dir, home, timeout,
                            extra_args=["--refresh-interval", "0"])
    server.start()
    return server


def call(server, name, file=None):
    arguments = {"name": name} if file is None else {"name": name, "file": file}
    result = server.request("tools/call", {"name": "skill", "arguments": arguments})
    if result.get("isError"):
        raise e2e.ServerError(f"tools/call {name!r} failed: {str(result)[:200]}")


def read(server, name, file):
    result = server.request("resources/read", {"uri": f"skill://{name}/{file}"})
    if len(result.get("contents", [])) != 1:
        raise e2e.ServerError(f"resources/read {name}/{file} failed: {str(result)[:200]}")


def sequential(server, names, how=call):
    """Round trips in µs, one per name (or (name, file)), in order."""
    trips = []
    for name in names:
        args = name if isinstance(name, tuple) else (name,)
        started = time.perf_counter()
        how(server, *args)
        trips.append((time.perf_counter() - started) * 1e6)
    return trips


def in_flight(server, names):
    """Calls per second with IN_FLIGHT requests outstanding."""
    deadline_for = lambda: time.perf_counter() + server.timeout  # noqa: E731
    pending = set()
    started = time.perf_counter()
    queue = list(names)
    while queue or pending:
        while queue and len(pending) < IN_FLIGHT:
            ident = server.next_id
            server.next_id += 1
            server.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                         "params": {"name": "skill", "arguments": {"name": queue.pop()}}})
            pending.add(ident)
        line = server.read_line(deadline_for(), "an in-flight call")
        message = e2e.json.loads(line)
        if "id" in message and "method" not in message:
            if message.get("error") or message.get("result", {}).get("isError"):
                raise e2e.ServerError(f"in-flight call failed: {line[:200]!r}")
            pending.discard(message["id"])
    return len(names) / (time.perf_counter() - started)


def exit_time(binary, skills_dir, home, timeout):
    """Milliseconds from closing stdin to the exit (watcher armed)."""
    server = e2e.Server(binary, skills_dir, home, timeout)
    try:
        server.start()
        # Let the watcher arm itself: that is the state a client leaves.
        time.sleep(2.0)
        started = time.perf_counter()
        server.proc.stdin.close()
        e2e.wait_exit(server.proc, timeout)
        return (time.perf_counter() - started) * 1e3
    finally:
        server.kill()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    release = os.path.join(e2e.target_dir(), "release")
    ap.add_argument("--bin", default=os.path.join(release, "skillserve"))
    ap.add_argument("--floor", default=os.path.join(release, "examples", "floor_server"))
    ap.add_argument("--also", action="append", default=[], help="another skillserve build to compare")
    ap.add_argument("--calls", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skills", type=int, default=1000)
    ap.add_argument("--exit-sizes", default="1000,10000")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args(argv)

    root = os.path.join(e2e.target_dir(), "bench-corpus")
    skills_dir = e2e.corpus(a.skills, root, e2e.MAKE_CORPUS)
    names = sorted(os.listdir(skills_dir))
    typical = e2e.typical_skill(skills_dir)
    rng = random.Random(1)
    spread = []
    while len(spread) < a.calls:
        batch = names[:]
        rng.shuffle(batch)
        spread.extend(batch)
    spread = spread[:a.calls]
    # One references/ file of each skill that has them.
    with_files = []
    for name in names:
        folder = os.path.join(skills_dir, name, "references")
        if os.path.isdir(folder):
            with_files.append((name, "references/" + sorted(os.listdir(folder))[0]))
    files = []
    while len(files) < a.calls:
        batch = with_files[:]
        rng.shuffle(batch)
        files.extend(batch)
    files = files[:a.calls]

    servers = [("floor", "floor", a.floor), ("skillserve", "skillserve", a.bin)]
    servers += [(f"skillserve ({os.path.basename(os.path.dirname(p)) or p})", "skillserve", p)
                for p in a.also]
    for _, _, binary in servers:
        if not os.access(binary, os.X_OK):
            print(f"callpath: {binary} is not an executable; see the usage above", file=sys.stderr)
            return 2
    results = {label: {"one": [], "spread": [], "file": [], "read": [], "flight": []}
               for label, _, _ in servers}
    try:
        for round_ in range(a.rounds):
            for label, kind, binary in servers:
                print(f"callpath: round {round_ + 1}: {label} …", file=sys.stderr)
                with tempfile.TemporaryDirectory(prefix="skillserve-callpath-") as home:
                    server = start(kind, binary, skills_dir, home, a.timeout)
                    try:
                        sequential(server, [typical] * 50)
                        results[label]["one"].append(statistics.median(sequential(server, [typical] * a.calls)))
                        results[label]["spread"].append(statistics.median(sequential(server, spread)))
                        results[label]["file"].append(statistics.median(sequential(server, files)))
                        results[label]["read"].append(statistics.median(sequential(server, files, read)))
                        results[label]["flight"].append(in_flight(server, spread))
                        server.stop()
                    finally:
                        server.kill()
        exits = {}
        for label, kind, binary in servers:
            if kind != "skillserve":
                continue
            for n in [int(s) for s in a.exit_sizes.split(",") if s.strip()]:
                corpus = e2e.corpus(n, root, e2e.MAKE_CORPUS)
                times = []
                for _ in range(a.rounds):
                    with tempfile.TemporaryDirectory(prefix="skillserve-callpath-") as home:
                        times.append(exit_time(binary, corpus, home, a.timeout))
                exits[(label, n)] = statistics.median(times)
    except e2e.ServerError as err:
        print(f"callpath: a server misbehaved: {err}", file=sys.stderr)
        return 2

    floor = {k: statistics.median(v) for k, v in results["floor"].items()}
    print()
    print(f"Call path at {a.skills:,} skills, {a.calls:,} calls per run, median of {a.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| server | one skill p50 | spread p50 | file p50 | resources/read p50 | 32 in flight | exit at " +
          " / ".join(f"{int(n):,}" for n in a.exit_sizes.split(",")) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, kind, _ in servers:
        med = {k: statistics.median(v) for k, v in results[label].items()}
        ratio = "" if kind == "floor" else " ({:.2f}×)"
        one = f"{med['one']:.0f} µs" + (ratio.format(med["one"] / floor["one"]) if ratio else "")
        spr = f"{med['spread']:.0f} µs" + (ratio.format(med["spread"] / floor["spread"]) if ratio else "")
        fil = f"{med['file']:.0f} µs" + (ratio.format(med["file"] / floor["file"]) if ratio else "")
        rea = f"{med['read']:.0f} µs" + (ratio.format(med["read"] / floor["read"]) if ratio else "")
        fl = f"{med['flight']:,.0f}/s" + (ratio.format(med["flight"] / floor["flight"]) if ratio else "")
        ex = " / ".join(f"{exits[(label, int(n))]:.1f} ms" for n in a.exit_sizes.split(",")) \
            if kind == "skillserve" else "–"
        print(f"| {label} | {one} | {spr} | {fil} | {rea} | {fl} | {ex} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
