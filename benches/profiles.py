#!/usr/bin/env python3
"""What client profiles cost (stdlib only): a call with three profiles
configured against none, beside the floor server, and memory at 10,000 skills
with three profiles in use.

    cargo build --release --bin skillserve --example floor_server
    python3 benches/profiles.py [--bin PATH] [--floor PATH]

Three setups run in turn each round (`--rounds`, default 3), on the corpus of
benches/make_corpus.py (seed 1), with the Python client of `e2e.py`:

  * floor:       the bare Rust stdio server of `callpath.py`;
  * no profiles: skillserve without a config.toml;
  * 3 profiles:  skillserve with a config.toml of three `[clients."..."]`
    profiles, one of which matches the benchmark client (`skillserve-e2e`) and
    disables one skill, so that every call goes through a filtered view.

Call figures are those of `callpath.py` (one skill, spread over every skill,
32 in flight), medians of the rounds' medians. Memory is VmRSS once the
server has settled (`--no-watch`, as `e2e.py` measures it) after one
`tools/list` for each of the three profiles' clients (the client info of a
request's `_meta` picks the view), so that three filtered views are held.
"""

import argparse
import random
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callpath  # noqa: E402
import e2e  # noqa: E402

# The three clients whose profiles are in use.
CLIENTS = ("skillserve-e2e", "cursor-vscode", "codex-mcp-client")


def config_text(hidden):
    """Three profiles: the benchmark client's hides `hidden`."""
    return f"""# benches/profiles.py
[clients."skillserve-e2e"]
disabled = ["{hidden}"]

[clients."cursor*"]
exclude = ["a*"]
description_budget = 4000

[clients.codex]
include = ["*-*"]
exclude = ["*-9*"]
"""


def write_config(home, hidden):
    folder = os.path.join(home, ".config", "skillserve")
    os.makedirs(folder)
    with open(os.path.join(folder, "config.toml"), "w", encoding="utf-8") as fh:
        fh.write(config_text(hidden))


def views_in_use(server):
    """One tools/list per client of the profiles: three views computed."""
    for client in CLIENTS:
        server.request("tools/list", {"_meta": {
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"}}})


def settled_rss(binary, skills_dir, profiles, hidden, timeout, settle=0.5):
    with tempfile.TemporaryDirectory(prefix="skillserve-profiles-") as home:
        if profiles:
            write_config(home, hidden)

        def body(server):
            server.start()
            if profiles:
                views_in_use(server)
            time.sleep(settle)
            resident = server.rss_kib("VmRSS")
            server.stop()
            return resident

        return e2e.run(binary, skills_dir, home, timeout, body, extra_args=("--no-watch",))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    release = os.path.join(e2e.target_dir(), "release")
    ap.add_argument("--bin", default=os.path.join(release, "skillserve"))
    ap.add_argument("--floor", default=os.path.join(release, "examples", "floor_server"))
    ap.add_argument("--calls", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skills", type=int, default=1000)
    ap.add_argument("--memory-skills", type=int, default=10000)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args(argv)
    for binary in (a.bin, a.floor):
        if not os.access(binary, os.X_OK):
            print(f"profiles: {binary} is not an executable; see the usage above", file=sys.stderr)
            return 2

    root = os.path.join(e2e.target_dir(), "bench-corpus")
    skills_dir = e2e.corpus(a.skills, root, e2e.MAKE_CORPUS)
    names = sorted(os.listdir(skills_dir))
    typical = e2e.typical_skill(skills_dir)
    # The skill the benchmark client's profile hides: never called.
    hidden = next(n for n in names if n != typical)
    called = [n for n in names if n != hidden]
    spread = (called * (a.calls // len(called) + 1))[:a.calls]
    random.Random(1).shuffle(spread)

    setups = [("floor", "floor", False), ("no profiles", "skillserve", False),
              ("3 profiles", "skillserve", True)]
    results = {label: {"one": [], "spread": [], "flight": []} for label, _, _ in setups}
    memory = {"no profiles": [], "3 profiles": []}
    memory_dir = e2e.corpus(a.memory_skills, root, e2e.MAKE_CORPUS)
    memory_hidden = sorted(os.listdir(memory_dir))[0]
    try:
        for round_ in range(a.rounds):
            for label, kind, profiles in setups:
                print(f"profiles: round {round_ + 1}: {label} …", file=sys.stderr)
                binary = a.floor if kind == "floor" else a.bin
                with tempfile.TemporaryDirectory(prefix="skillserve-profiles-") as home:
                    if profiles:
                        write_config(home, hidden)
                    server = callpath.start(kind, binary, skills_dir, home, a.timeout)
                    try:
                        if profiles:
                            views_in_use(server)
                        callpath.sequential(server, [typical] * 50)
                        results[label]["one"].append(
                            statistics.median(callpath.sequential(server, [typical] * a.calls)))
                        results[label]["spread"].append(statistics.median(callpath.sequential(server, spread)))
                        results[label]["flight"].append(callpath.in_flight(server, spread))
                        server.stop()
                    finally:
                        server.kill()
                if kind != "floor":
                    memory[label].append(
                        settled_rss(a.bin, memory_dir, profiles, memory_hidden, a.timeout) / 1024)
    except e2e.ServerError as err:
        print(f"profiles: a server misbehaved: {err}", file=sys.stderr)
        return 2

    med = {label: {k: statistics.median(v) for k, v in r.items()} for label, r in results.items()}
    floor, none = med["floor"], med["no profiles"]
    print()
    print(f"Profiles at {a.skills:,} skills, {a.calls:,} calls per run, median of {a.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| setup | one skill p50 | spread p50 | 32 in flight | settled RSS at "
          f"{a.memory_skills:,} |")
    print("|---|---:|---:|---:|---:|")
    for label, kind, _ in setups:
        m = med[label]
        if kind == "floor":
            print(f"| {label} | {m['one']:.0f} µs | {m['spread']:.0f} µs | {m['flight']:,.0f}/s | – |")
            continue
        rss = statistics.median(memory[label])
        print(f"| {label} | {m['one']:.0f} µs ({m['one'] / floor['one']:.2f}× floor, "
              f"{m['one'] / none['one']:.2f}× none) | {m['spread']:.0f} µs ({m['spread'] / floor['spread']:.2f}×, "
              f"{m['spread'] / none['spread']:.2f}×) | {m['flight']:,.0f}/s ({m['flight'] / none['flight']:.2f}×) "
              f"| {rss:.1f} MiB ({rss / statistics.median(memory['no profiles']):.3f}×) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
