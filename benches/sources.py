#!/usr/bin/env python3
"""Benchmarks of installed sources (stdlib only).

    cargo build --release && python3 benches/sources.py [--bin PATH] [--runs 15] [--add-runs 7]

1. `skillserve add` of a 200-skill git repository (make_corpus.py, seed 1,
   committed into a temporary repository; a local path, so no network):
   wall time of the whole command (fetch, find, hash, plan, store, lock),
   and the share of it spent in git, measured by a `git` wrapper on PATH
   that records how long each real git call took.

2. Server start-up (spawn -> tools/list, as e2e.py measures it) with the
   1,000 skills of make_corpus.py (seed 1) installed with `skillserve add`,
   against the same 1,000 skills served from a plain folder
   (`--skills-dir`). The two are started alternately, RUNS times each. The
   target: installed within 10% of the plain folder. The CPU time of each
   server process (user + system, start-up to exit) is reported too: on a
   busy machine it is the steadier of the two.

Prints medians (and the ratio). Corpora are shared with e2e.py under
target/bench-corpus/. Exit status 0, or 2 when a command failed.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (the corpus cache and the stdio client)

GIT_WRAPPER = """#!/bin/sh
start=$(date +%s%N)
"{git}" "$@"
status=$?
end=$(date +%s%N)
echo $((end - start)) >> "{log}"
exit $status
"""


def git_repo(skills, dest):
    """A repository at dest whose one commit holds `skills` as skills/."""
    shutil.copytree(skills, os.path.join(dest, "skills"))
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b", GIT_CONFIG_NOSYSTEM="1")
    for args in (["init", "--quiet"], ["add", "--all"], ["commit", "--quiet", "-m", "corpus"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True)
    return dest


def add(binary, repo, home, path):
    """Runs `skillserve add REPO --yes` with a fresh home; returns seconds."""
    env = {"HOME": home, "PATH": path, "SKILLSERVE_LOG": "warn", "GIT_CONFIG_NOSYSTEM": "1"}
    started = time.perf_counter()
    done = subprocess.run([binary, "add", repo, "--yes"], env=env, cwd=home,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"sources: add failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def bench_add(binary, corpus_root, runs):
    skills = e2e.corpus(200, corpus_root, e2e.MAKE_CORPUS)
    real_git = shutil.which("git")
    if real_git is None:
        raise SystemExit("sources: git is not on PATH")
    with tempfile.TemporaryDirectory(prefix="skillserve-bench-add-") as tmp:
        repo = git_repo(skills, os.path.join(tmp, "repo"))
        bin_dir = os.path.join(tmp, "bin")
        os.makedirs(bin_dir)
        log = os.path.join(tmp, "git.log")
        wrapper = os.path.join(bin_dir, "git")
        with open(wrapper, "w", encoding="utf-8") as fh:
            fh.write(GIT_WRAPPER.format(git=real_git, log=log))
        os.chmod(wrapper, 0o755)
        path = bin_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")
        walls, shares = [], []
        for i in range(runs):
            home = os.path.join(tmp, f"home-{i}")
            os.makedirs(home)
            if os.path.exists(log):
                os.remove(log)
            wall = add(binary, repo, home, path)
            with open(log, encoding="ascii") as fh:
                in_git = sum(int(line) for line in fh) / 1e9
            walls.append(wall)
            shares.append(in_git / wall)
            # Store entries are read-only: make them removable.
            for root, dirs, _ in os.walk(home):
                for d in dirs:
                    os.chmod(os.path.join(root, d), 0o755)
    return statistics.median(walls), statistics.median(shares)


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def startup(binary, argv, home, timeout):
    """(spawn -> tools/list seconds, CPU seconds of the whole process)."""
    cpu = cpu_of_children()
    server = e2e.Server(binary, None, home, timeout, argv=argv)
    try:
        server.start()
        elapsed = time.perf_counter() - server.started
        server.stop()
        return elapsed, cpu_of_children() - cpu
    finally:
        server.kill()
        server.stderr.close()


def bench_startup(binary, corpus_root, runs, timeout):
    skills = e2e.corpus(1000, corpus_root, e2e.MAKE_CORPUS)
    with tempfile.TemporaryDirectory(prefix="skillserve-bench-start-") as tmp:
        repo = git_repo(skills, os.path.join(tmp, "repo"))
        installed_home = os.path.join(tmp, "installed-home")
        plain_home = os.path.join(tmp, "plain-home")
        os.makedirs(installed_home)
        os.makedirs(plain_home)
        add(binary, repo, installed_home, os.environ.get("PATH", "/usr/bin:/bin"))
        common = ["--no-user", "--no-project", "--no-plugins"]
        plain_argv = [os.path.abspath(binary), "--skills-dir", os.path.abspath(skills), *common]
        installed_argv = [os.path.abspath(binary), *common]
        # One of each first: warm caches, the stamps record is in place.
        startup(binary, plain_argv, plain_home, timeout)
        startup(binary, installed_argv, installed_home, timeout)
        plain, installed = [], []
        for _ in range(runs):
            plain.append(startup(binary, plain_argv, plain_home, timeout))
            installed.append(startup(binary, installed_argv, installed_home, timeout))
        for root, dirs, _ in os.walk(installed_home):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)

    def medians(runs):
        return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)

    return medians(plain), medians(installed)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(e2e.REPO, "target", "release", "skillserve"))
    ap.add_argument("--runs", type=int, default=15, help="start-ups of each kind (default 15)")
    ap.add_argument("--add-runs", type=int, default=7, help="runs of `add` (default 7)")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)
    corpus_root = os.path.join(e2e.target_dir(), "bench-corpus")
    wall, share = bench_add(args.bin, corpus_root, args.add_runs)
    (plain, plain_cpu), (installed, installed_cpu) = bench_startup(
        args.bin, corpus_root, args.runs, args.timeout)
    print("| measurement | median |")
    print("|---|---|")
    print(f"| `add` of 200 skills (local repository), wall | {wall * 1e3:.1f} ms |")
    print(f"| … of which in git | {share * 100:.0f}% |")
    print(f"| start-up (spawn → tools/list), 1,000 skills in a plain folder | {plain * 1e3:.1f} ms |")
    print(f"| start-up, the same 1,000 skills installed | {installed * 1e3:.1f} ms |")
    print(f"| installed / plain, start-up (target ≤ 1.10) | {installed / plain:.3f} |")
    print(f"| CPU time of a server run (start-up to exit), plain | {plain_cpu * 1e3:.1f} ms |")
    print(f"| CPU time, installed | {installed_cpu * 1e3:.1f} ms |")
    print(f"| installed / plain, CPU time | {installed_cpu / plain_cpu:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
