#!/usr/bin/env python3
"""Instructions a server executes per request, builds compared (stdlib + valgrind).

    cargo build --release --bin skillserve
    python3 benches/instructions.py [--size N] [--calls K] BIN [BIN ...]

Timings on a shared machine move with the neighbours; the instructions a
server executes for a request do not. Each build given is started under
`valgrind --tool=callgrind` on the corpus of N skills (default 10,000; from
benches/make_corpus.py, seed 1), left to settle, and then, with callgrind's
counters zeroed before and dumped after each (`callgrind_control`):

  * call: K (default 300) `tools/call` requests, each for a skill no call has
    named before (the same skills for every build): the first call of a skill,
    as in firstcall.py and scale.py;
  * page: every `skills/list` page, walked once cold (every file listed and
    hashed) and then again: a cached page, as a host walking the list meets
    it;
  * list: K `tools/list` requests (the tool description: one long string).

It prints the instructions (callgrind's Ir, every thread of the server) per
request, and each build's ratio to the first one given. Counting is exact
but slow (a run at 10,000 skills takes a few minutes), and an instruction
is not a microsecond: a system call or a cache miss costs the same one
instruction. So this compares builds where the change is CPU work (parsing,
serializing, checking); `firstcall.py` gives the round trip a client waits.
Linux with valgrind installed (`apt-get install valgrind`).
"""

import argparse
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import freshness  # noqa: E402


def counted(server, out_dir, body):
    """Runs body() with callgrind's counters zeroed before and dumped after;
    returns the instructions counted meanwhile."""
    pid = server.proc.pid
    before = set(glob.glob(os.path.join(out_dir, f"cg.{pid}.*")))
    subprocess.run(["callgrind_control", "-z", str(pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    body()
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (dump,) = set(glob.glob(os.path.join(out_dir, f"cg.{pid}.*"))) - before
    with open(dump, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise e2e.ServerError(f"no totals in {dump}")


def measure(binary, skills, names, a):
    figures = {}
    with tempfile.TemporaryDirectory(prefix="skillserve-instructions-") as home:
        out_dir = os.path.join(home, "callgrind")
        os.mkdir(out_dir)
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_dir}/cg.%p",
                os.path.abspath(binary), "--skills-dir", skills,
                "--no-user", "--no-project", "--no-plugins"]
        server = e2e.Server(None, None, home, a.timeout, argv=argv)
        try:
            server.start()
            freshness.settle(server, quiet=2.0, limit=a.timeout)

            def calls():
                for name in names:
                    result = server.request("tools/call", {"name": "skill", "arguments": {"name": name}})
                    if result.get("isError"):
                        raise e2e.ServerError(f"tools/call {name!r}: {str(result)[:200]}")

            figures["call"] = counted(server, out_dir, calls) / len(names)
            cold = []
            figures["page-cold"] = counted(
                server, out_dir, lambda: cold.append(e2e.walk_pages(server, "skills/list", "skills")[1]))
            figures["page-cold"] /= cold[0]
            pages = []
            figures["page"] = counted(
                server, out_dir, lambda: pages.append(e2e.walk_pages(server, "skills/list", "skills")[1]))
            figures["page"] /= pages[0]

            def lists():
                for _ in range(len(names)):
                    server.request("tools/list", {})

            figures["list"] = counted(server, out_dir, lists) / len(names)
            server.stop()
        except e2e.ServerError as err:
            raise e2e.ServerError(f"{err}\n{server.stderr_tail()}") from None
        finally:
            server.kill()
    return figures


ROWS = [
    ("call", "first `tools/call` of a skill"),
    ("page-cold", "`skills/list` page, cold (100 skills: every file listed and hashed)"),
    ("page", "`skills/list` page, cached (100 skills)"),
    ("list", "`tools/list`"),
]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="+", help="skillserve builds")
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900.0)
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    skills = e2e.corpus(a.size, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    names = sorted(os.listdir(skills))
    random.Random(a.seed).shuffle(names)
    names = names[:a.calls]
    results = []
    try:
        for binary in a.servers:
            print(f"instructions: {binary} …", file=sys.stderr)
            results.append(measure(binary, skills, names, a))
    except e2e.ServerError as err:
        print(f"instructions: a server misbehaved: {err}", file=sys.stderr)
        return 2
    print(f"{a.size:,} skills, {a.calls} first calls, instructions per request (callgrind Ir, every thread)")
    print()
    print("| request | " + " | ".join(a.servers) + " |")
    print("|---|" + "---:|" * len(a.servers))
    for key, title in ROWS:
        first = results[0][key]
        cells = [f"{r[key]:,.0f} ({r[key] / first:.2f}×)" for r in results]
        print(f"| {title} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
