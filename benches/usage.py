#!/usr/bin/env python3
"""What recording usage costs, with it and without it in one run (stdlib only).

    cargo build --release && python3 benches/usage.py [--bin PATH] [--skills 10000]
        [--calls 2000] [--rounds 5] [--no-callgrind]

At 10,000 skills (corpus from benches/make_corpus.py, seed 1):

  * calls, in instructions: the release binary under `valgrind
    --tool=callgrind` answers `initialize`, `tools/list` and CALLS
    `tools/call` spread over every skill (what a model does), then stdin
    closes; again with the same calls twice over; and again with no call.
    Usage recording on (a fresh data folder) against `--no-usage`.
    Instructions do not depend on the machine's load.
      - one call: (twice over - once) / CALLS, with recording and without:
        what each further call costs, the writer's adding included. The
        write does not grow with it (the same skills, the same rows).
      - one write: what recording adds to the run of CALLS calls beyond
        CALLS times a call's extra: the writer's start and its one write of
        CALLS rows, at the server's stop (a server writes at most every 30 s).
      - a write into a full file: the same with the full usage file (2 MiB,
        its cap) in place and 10 calls: reading, merging and rewriting it.
  * calls, in time: the same CALLS round trips on live servers, the two
    kinds alternating for ROUNDS rounds: the median round trip of each.
  * start-up: spawn -> `tools/list` answered, ROUNDS rounds alternating
    between recording on with a full usage file (2 MiB: the cap) to read for
    the catalog's order, and `--no-usage`: the median of each. And the same
    start-ups' instructions under callgrind (the file is read on a thread of
    its own, beside the scan: instructions grow, the wall time should not).

The load average is printed beside every timing. Needs valgrind for the
instruction counts (`apt-get install valgrind`), else give --no-callgrind.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

SERVER_ARGS = ["--no-watch", "--refresh-interval", "0"]


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def requests(names):
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": e2e.PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        # A miss waits for the search index, which the server builds in the
        # background after start-up: every run counts it, whenever stdin ends.
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "skill", "arguments": {"name": "no-such-skill-at-all"}}},
    ]
    for n, name in enumerate(names):
        lines.append({"jsonrpc": "2.0", "id": 3 + n, "method": "tools/call",
                      "params": {"name": "skill", "arguments": {"name": name}}})
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def home_with(usage_file):
    """A fresh home; with `usage_file`, that file as its usage file."""
    home = tempfile.mkdtemp(prefix="skillserve-usage-bench-")
    if usage_file:
        data = os.path.join(home, ".local", "share", "skillserve")
        os.makedirs(data)
        shutil.copy(usage_file, os.path.join(data, "usage.json"))
    return home


def instructions(binary, skills, names, extra, usage_file=None):
    """Total instructions (Ir) of one run under callgrind."""
    home = home_with(usage_file)
    out = os.path.join(home, "callgrind.out")
    argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--quiet",
            os.path.abspath(binary), "--skills-dir", skills,
            "--no-user", "--no-project", "--no-plugins", *SERVER_ARGS, *extra]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            env={"HOME": home, "PATH": os.environ.get("PATH", ""),
                                 "SKILLSERVE_LOG": "warn"}, cwd=home)
    # One request at a time, as a model calls: the server answers "busy"
    # past 288 requests in flight and queued, and a request still in flight
    # when stdin ends may be left unanswered (and its work uncounted).
    for line in requests(names).splitlines(keepends=True):
        proc.stdin.write(line.encode())
        proc.stdin.flush()
        if '"id"' not in line:
            continue
        answer = proc.stdout.readline()
        if not answer:
            raise SystemExit(f"callgrind run ended early: {proc.stderr.read().decode()[-2000:]}")
        message = json.loads(answer)
        if "error" in message:
            raise SystemExit(f"an error answer: {answer[:300]!r}")
    proc.stdin.close()
    proc.stdout.read()
    error = proc.stderr.read().decode()
    if proc.wait() != 0:
        raise SystemExit(f"callgrind run failed ({proc.returncode}): {error[-2000:]}")
    total = None
    with open(out, encoding="ascii") as fh:
        for line in fh:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    shutil.rmtree(home)
    if total is None:
        raise SystemExit("no total in the callgrind output")
    return total


CAP = 2 * 1024 * 1024


def full_usage_file(skills, directory):
    """A usage file at its cap (2 MiB): uses of the corpus's skills by five
    clients, 2,000 rows a day, as many of the last 90 days as fit."""
    names = sorted(os.listdir(skills))
    root = os.path.abspath(skills)
    today = int(time.time()) // 86400
    clients = ["claude-code", "cursor-vscode", "codex-mcp-client", "goose", "Zed"]
    rng = random.Random(1)

    def document(days):
        totals = {}
        for day in days[:30]:
            for row in day["loads"]:
                totals[row[0]] = totals.get(row[0], 0) + sum(row[2:6])
        top = sorted(totals.items(), key=lambda kv: (-kv[1], names[kv[0]]))[:500]
        recent = [["custom", root, names[skill], loads] for skill, loads in top]
        first = json.dumps({"skillserve_usage": 1, "recent": recent}, separators=(",", ":"))
        history = json.dumps({"skills": [["custom", root, name] for name in names],
                              "clients": clients, "days": list(reversed(days))},
                             separators=(",", ":"))
        return first + "\n" + history + "\n"

    days = []
    for ago in range(90):
        day = today - ago
        loads = [[rng.randrange(len(names)), rng.randrange(5), rng.randrange(1, 5), 0, 0, 0,
                  day * 86400 + 3600] for _ in range(2000)]
        days.append({"day": time.strftime("%Y-%m-%d", time.gmtime(day * 86400)),
                     "loads": loads, "files": []})
        if len(document(days)) > CAP:
            days.pop()
            break
    path = os.path.join(directory, "usage.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(document(days))
    return path


def round_trips(binary, skills, names, extra):
    home = home_with(None)

    def body(server):
        server.start()
        times = []
        for name in names:
            started = time.perf_counter()
            server.request("tools/call", {"name": "skill", "arguments": {"name": name}})
            times.append(time.perf_counter() - started)
        server.stop()
        return statistics.median(times) * 1e6

    try:
        return e2e.run(binary, skills, home, 60, body, extra_args=[*SERVER_ARGS, *extra])
    finally:
        shutil.rmtree(home)


def start_up(binary, skills, extra, usage_file):
    home = home_with(usage_file)

    def body(server):
        server.start()
        elapsed = (time.perf_counter() - server.started) * 1e3
        server.stop()
        return elapsed

    try:
        return e2e.run(binary, skills, home, 60, body, extra_args=[*SERVER_ARGS, *extra])
    finally:
        shutil.rmtree(home)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(e2e.target_dir(), "release", "skillserve"))
    parser.add_argument("--skills", type=int, default=10000)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-callgrind", action="store_true")
    args = parser.parse_args()
    skills = e2e.corpus(args.skills, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    names = sorted(os.listdir(skills))
    rng = random.Random(1)
    calls = [rng.choice(names) for _ in range(args.calls)]
    scratch = tempfile.mkdtemp(prefix="skillserve-usage-file-")
    full = full_usage_file(skills, scratch)
    print(f"usage recording at {args.skills} skills, {args.calls} calls; "
          f"a full usage file is {os.path.getsize(full)} bytes")

    if not args.no_callgrind:
        print(f"\ninstructions (callgrind; {load()}):")
        few = calls[:10]
        runs = {}
        for kind, extra in (("on", []), ("off", ["--no-usage"])):
            runs[kind] = {
                "none": instructions(args.bin, skills, [], extra),
                "once": instructions(args.bin, skills, calls, extra),
                "twice": instructions(args.bin, skills, calls + calls, extra),
                "full, none": instructions(args.bin, skills, [], extra, usage_file=full),
                "full, few": instructions(args.bin, skills, few, extra, usage_file=full),
            }
        call = {kind: (r["twice"] - r["once"]) / args.calls for kind, r in runs.items()}
        on, off = runs["on"], runs["off"]
        ratio = call["on"] / call["off"]
        print(f"  one call: {call['on']:,.0f} Ir recording, {call['off']:,.0f} Ir not: "
              f"{ratio:.4f}x ({(ratio - 1) * 100:+.2f}%)")
        write = (on["once"] - on["none"]) - (off["once"] - off["none"]) \
            - args.calls * (call["on"] - call["off"])
        print(f"  one write of {args.calls} calls' rows (with the writer's start): "
              f"{write:,.0f} Ir, {write / call['off']:.1f} calls' worth")
        full_write = (on["full, few"] - on["full, none"]) - (off["full, few"] - off["full, none"]) \
            - len(few) * (call["on"] - call["off"])
        print(f"  one write into a full file: {full_write:,.0f} Ir, "
              f"{full_write / call['off']:.1f} calls' worth")
        ratio = on["full, none"] / off["full, none"]
        print(f"  start-up with a full usage file: {on['full, none']:,} Ir recording, "
              f"{off['full, none']:,} Ir not ({ratio:.4f}x); without a file "
              f"{on['none'] / off['none']:.4f}x")

    trips = {"on": [], "off": []}
    starts = {"on": [], "off": []}
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for kind, extra in (("on", []), ("off", ["--no-usage"])):
            trips[kind].append(round_trips(args.bin, skills, calls, extra))
            starts[kind].append(start_up(args.bin, skills, extra, full))
    print(f"\ntime ({args.rounds} rounds alternating; load average at each round: "
          + ", ".join(f"{x:.2f}" for x in loads) + ")")
    for kind in ("on", "off"):
        print(f"  usage {kind:3}: call round trip median {statistics.median(trips[kind]):.1f} µs, "
              f"spawn -> tools/list median {statistics.median(starts[kind]):.1f} ms")
    print(f"  ratios on/off: call {statistics.median(trips['on']) / statistics.median(trips['off']):.3f}x, "
          f"start-up {statistics.median(starts['on']) / statistics.median(starts['off']):.3f}x")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
