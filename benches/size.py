#!/usr/bin/env python3
"""The release binary's size and the server's memory at 1,000 skills (stdlib only).

    cargo build --release --bin skillserve
    python3 benches/size.py [--rounds 3] [BIN ...]          measure, builds side by side
    python3 benches/size.py --build-time                    also time a clean release build
    python3 benches/size.py --write-readme                  measure and rewrite README.md's figures
    python3 benches/size.py --check-readme [--tolerance 5]  README.md's binary size against BIN's

For each build (default target/release/skillserve), in alternating rounds,
the server is started with its default settings (watching on) on the corpus of
1,000 skills (benches/make_corpus.py, seed 1) and measured from
/proc/PID/status: resident memory when `tools/list` is answered, and settled
(once it has used no CPU for a second: the search index built, every folder
watched), split into what is the process's own (RssAnon) and what is the
binary's and the libraries' pages mapped from their files (RssFile). Medians
of the rounds.

`--build-time` builds the release binary from nothing into
target/size-build (the dependencies too; the registry must be cached) and
times it, with the load average beside it: run it on a quiet machine.

`--write-readme` writes the figures of the first build into README.md between
`<!-- size.py begin -->` and `<!-- size.py end -->` (with `--build-time`, the
build time too; without it the build time already there is kept). So the
README's figures are measured, never typed. `--check-readme` fails (exit 1)
when the README's binary size is more than `--tolerance` percent (default 5)
from the build's: a release build costs minutes, so the CI workflow's size job
runs it, not .ci/run.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import freshness  # noqa: E402

REPO = e2e.REPO
README = os.path.join(REPO, "README.md")
BEGIN = "<!-- size.py begin -->"
END = "<!-- size.py end -->"
MIB = 1024 * 1024


def status(pid):
    """VmRSS, RssAnon and RssFile of `pid`, in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                fields[key] = int(rest.split()[0])
    return fields


def memory(binary, skills, timeout):
    with tempfile.TemporaryDirectory(prefix="skillserve-size-") as home:
        server = e2e.Server(os.path.abspath(binary), skills, home, timeout)
        try:
            server.start()
            start = status(server.proc.pid)
            freshness.settle(server)
            settled = status(server.proc.pid)
            server.stop()
        except e2e.ServerError as err:
            raise e2e.ServerError(f"{err}\n{server.stderr_tail()}") from None
        finally:
            server.kill()
    return {
        "rss-start": start["VmRSS"] / 1024,
        "rss": settled["VmRSS"] / 1024,
        "anon": settled["RssAnon"] / 1024,
        "file": settled["RssFile"] / 1024,
    }


def build_time():
    """Seconds of a clean `cargo build --release`, and the load average before."""
    target = os.path.join(e2e.target_dir(), "size-build")
    shutil.rmtree(target, ignore_errors=True)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "skillserve", "--target-dir", target],
                   cwd=REPO, check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(target, ignore_errors=True)
    return seconds, load


def readme_block(size, rss, build):
    """The README's figures; `build` is the text of the build time."""
    return "\n".join([
        BEGIN,
        "| | Linux x86_64 |",
        "|---|---:|",
        f"| release binary (`cargo install`, stripped) | {size / MIB:.1f} MiB ({size:,} bytes) |",
        f"| resident memory at 1,000 skills, settled (pages of the binary and the C library / the process's own) | "
        f"{rss['rss']:.1f} MiB ({rss['file']:.1f} / {rss['anon']:.1f}) |",
        f"| clean release build on 2 cores (dependencies downloaded) | {build} |",
        END,
    ])


def current_block(text):
    at = text.find(BEGIN)
    end = text.find(END)
    if at < 0 or end < at:
        raise SystemExit(f"size: README.md has no {BEGIN} … {END} block")
    return at, end + len(END)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="*", help="skillserve builds (default target/release/skillserve)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=1000, help="skills in the corpus (default 1,000)")
    ap.add_argument("--build-time", action="store_true", help="also time a clean release build")
    ap.add_argument("--write-readme", action="store_true")
    ap.add_argument("--check-readme", action="store_true")
    ap.add_argument("--tolerance", type=float, default=5.0, help="percent, for --check-readme")
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args(argv)
    servers = a.servers or [os.path.join(e2e.target_dir(), "release", "skillserve")]
    for binary in servers:
        if not os.access(binary, os.X_OK):
            print(f"size: {binary} is not an executable; build it first (see the usage above)", file=sys.stderr)
            return 2

    if a.check_readme:
        with open(README, encoding="utf-8") as fh:
            text = fh.read()
        at, end = current_block(text)
        found = re.search(r"\(([\d,]+) bytes\)", text[at:end])
        if not found:
            raise SystemExit("size: no `(N bytes)` in README.md's block")
        said = int(found.group(1).replace(",", ""))
        size = os.path.getsize(servers[0])
        off = (size - said) * 100 / said
        print(f"size: README.md says {said:,} bytes, {servers[0]} is {size:,} ({off:+.1f}%)")
        if abs(off) > a.tolerance:
            print(f"size: more than {a.tolerance}% apart: run `python3 benches/size.py --write-readme`",
                  file=sys.stderr)
            return 1
        return 0

    skills = e2e.corpus(a.size, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    results = {binary: [] for binary in servers}
    load = [os.getloadavg()[0]]
    try:
        for _ in range(a.rounds):
            for binary in servers:
                results[binary].append(memory(binary, skills, a.timeout))
                load.append(os.getloadavg()[0])
    except e2e.ServerError as err:
        print(f"size: a server misbehaved: {err}", file=sys.stderr)
        return 2
    medians = {binary: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
               for binary, rounds in results.items()}

    print(f"{a.size:,} skills, default settings (watching on), {a.rounds} rounds, medians; "
          f"load average {min(load):.1f}–{max(load):.1f}")
    print()
    print("| build | binary | RSS at tools/list | RSS settled | of it: file pages / anonymous |")
    print("|---|---:|---:|---:|---:|")
    for binary in servers:
        m = medians[binary]
        size = os.path.getsize(binary)
        print(f"| {binary} | {size / MIB:.2f} MiB ({size:,} bytes) | {m['rss-start']:.1f} MiB | {m['rss']:.1f} MiB "
              f"| {m['file']:.1f} / {m['anon']:.1f} MiB |")

    build = None
    if a.build_time:
        seconds, before = build_time()
        build = f"{seconds / 60:.1f} minutes (load {before:.1f} at the start)"
        print(f"\nclean release build: {seconds:.0f} s, load average {before:.2f} at the start")

    if a.write_readme:
        with open(README, encoding="utf-8") as fh:
            text = fh.read()
        at, end = current_block(text)
        if build is None:
            kept = re.search(r"\| clean release build[^|]*\| ([^|]*) \|", text[at:end])
            build = kept.group(1).strip() if kept else "not measured (`--build-time`)"
        text = text[:at] + readme_block(os.path.getsize(servers[0]), medians[servers[0]], build) + text[end:]
        with open(README, "w", encoding="utf-8") as fh:
            fh.write(text)
        print("\nsize: README.md's figures rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
