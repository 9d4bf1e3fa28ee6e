#!/usr/bin/env python3
"""How fast a settled server exits, builds compared in alternating rounds (stdlib only).

    cargo build --release --bin skillserve
    python3 benches/exit.py [--size N] [--rounds R] BIN [BIN ...]

For each round, each build given (in a shuffled order) is started with its
default settings (watching on) on the corpus of N skills (default 100,000;
benches/make_corpus.py, seed 1) and left to settle (every folder watched),
then stopped, once by closing stdin and once (a second process) by SIGTERM.
Timed from the close or the signal:

  * stdout: until the server's stdout ends (what a client reading it sees);
  * exit: until the process is gone (what a client waiting for it sees).

Medians over the rounds, with the slowest. Linux (a pidfd times the exit).
"""

import argparse
import os
import random
import select
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import freshness  # noqa: E402


def stop(server, how, timeout):
    """(ms to stdout's end, ms to the exit) after closing stdin or SIGTERM."""
    pidfd = os.pidfd_open(server.proc.pid)
    try:
        started = time.perf_counter()
        if how == "eof":
            server.proc.stdin.close()
        else:
            server.proc.send_signal(signal.SIGTERM)
        eof = gone = None
        while eof is None or gone is None:
            waiting = [fd for fd, done in ((server.fd, eof), (pidfd, gone)) if done is None]
            ready, _, _ = select.select(waiting, [], [], timeout)
            if not ready:
                raise e2e.ServerError(f"no exit within {timeout} s after {how}")
            now = (time.perf_counter() - started) * 1e3
            if server.fd in ready and not os.read(server.fd, 1 << 16):
                eof = now
            if pidfd in ready:
                gone = now
                if eof is None:
                    eof = now  # nothing is left to write stdout
        code = server.proc.wait()
        if code != 0:
            raise e2e.ServerError(f"exit status {code} after {how}")
        return eof, gone
    finally:
        os.close(pidfd)


def round_(binary, skills, a):
    figures = {}
    for how in ("eof", "term"):
        with tempfile.TemporaryDirectory(prefix="skillserve-exit-") as home:
            server = e2e.Server(os.path.abspath(binary), skills, home, a.timeout)
            try:
                server.start()
                freshness.settle(server)
                figures[f"{how}-stdout"], figures[f"{how}-exit"] = stop(server, how, a.timeout)
            except e2e.ServerError as err:
                raise e2e.ServerError(f"{err}\n{server.stderr_tail()}") from None
            finally:
                server.kill()
    return figures


ROWS = [
    ("eof-stdout", "stdin closed → stdout ends"),
    ("eof-exit", "stdin closed → process gone"),
    ("term-stdout", "SIGTERM → stdout ends"),
    ("term-exit", "SIGTERM → process gone"),
]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="+", help="skillserve builds")
    ap.add_argument("--size", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)

    skills = e2e.corpus(a.size, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    rng = random.Random(a.seed)
    results = {i: [] for i in range(len(a.servers))}
    load = [os.getloadavg()[0]]
    try:
        for r in range(a.rounds):
            order = list(range(len(a.servers)))
            rng.shuffle(order)
            for i in order:
                print(f"exit: round {r + 1}: {a.servers[i]} …", file=sys.stderr)
                results[i].append(round_(a.servers[i], skills, a))
                load.append(os.getloadavg()[0])
    except e2e.ServerError as err:
        print(f"exit: a server misbehaved: {err}", file=sys.stderr)
        return 2
    print(f"{a.size:,} skills, watching on, settled, {a.rounds} rounds, "
          f"load average {min(load):.1f}–{max(load):.1f}: median (slowest)")
    print()
    print("| | " + " | ".join(a.servers) + " |")
    print("|---|" + "---:|" * len(a.servers))
    for key, title in ROWS:
        cells = []
        for i in range(len(a.servers)):
            values = [r[key] for r in results[i]]
            cells.append(f"{statistics.median(values):.1f} ms ({max(values):.1f})")
        print(f"| {title} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
