#!/usr/bin/env python3
"""Freshness benchmark of the real skillserve binary (stdlib only).

    cargo build --release && python3 benches/freshness.py [--bin PATH] [--skills 10000]

One server over the 10,000-skill corpus (or --skills N; shared with e2e.py
and the divan benches, under target/bench-corpus) plus a small writable
skills folder, with the default settings (watching on, 30 s interval). Once
it has settled (no CPU used for a second: the watcher armed, the search index
built) it measures:

  * write -> notification: from writing a SKILL.md of the writable folder
    with a new name until `notifications/tools/list_changed` arrives (median
    and p90 over --writes edits, with watching on). The name changes, not the
    description, because 10,000 names already fill the default description
    budget: the list shows names only, and a new description alone rightly
    sends no notification. The name sorts first so that it is listed. The
    refresh rescans all 10,000 skills, so the figure includes that rescan;
  * idle CPU: user + system CPU seconds the process used while idle for
    --idle seconds (default 60), from /proc/PID/stat, and as a share of one
    core; with the default interval that spans two interval ticks (which
    rescan nothing while the watcher covers every folder);
  * resident memory once the watcher is armed (a few seconds after start).

Targets: write -> notification under 300 ms (at 10,000 skills); idle CPU at
most 0.05 s a minute.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (the Server client and corpus helpers)


def skill_text(name, description):
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nBody.\n"


def wait_for_notification(server, before, deadline):
    """Reads stdout until the server has sent one more notification."""
    while server.notifications <= before:
        if time.perf_counter() > deadline:
            raise e2e.ServerError("no tools/list_changed within the deadline")
        line = server.read_line(deadline, "tools/list_changed")
        if b'"notifications/tools/list_changed"' in line:
            server.notifications += 1


def settle(server, quiet=1.0, limit=300.0):
    """Waits until the server has used no CPU for `quiet` seconds."""
    deadline = time.perf_counter() + limit
    last, since = cpu_seconds(server.proc.pid), time.perf_counter()
    while time.perf_counter() < deadline:
        time.sleep(0.1)
        now = cpu_seconds(server.proc.pid)
        if now != last:
            last, since = now, time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            return
    raise e2e.ServerError(f"still busy {limit} s after start-up")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    # utime and stime are fields 14 and 15 of stat(5); index 11 and 12 here.
    return (int(fields[11]) + int(fields[12])) / ticks


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(e2e.target_dir(), "release", "skillserve"))
    parser.add_argument("--skills", type=int, default=10_000, help="corpus size (default 10000)")
    parser.add_argument("--writes", type=int, default=20, help="edits to time (default 20)")
    parser.add_argument("--idle", type=float, default=60.0, help="idle seconds to measure (default 60)")
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()

    corpus = e2e.corpus(args.skills, os.path.join(e2e.target_dir(), "bench-corpus"), e2e.MAKE_CORPUS)
    home = tempfile.mkdtemp(prefix="skillserve-fresh-home-")
    live = tempfile.mkdtemp(prefix="skillserve-fresh-live-")
    path = os.path.join(live, "aaa-live", "SKILL.md")
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(skill_text("aaa-live-0", "A skill edited by the benchmark."))

    # The writable folder comes after the corpus: both are --skills-dir.
    server = e2e.Server(args.bin, corpus, home, args.timeout, extra_args=("--skills-dir", live))
    try:
        server.start()
        # Let the watcher arm itself (it watches every skill folder).
        settle(server)
        rss_armed = server.rss_kib() / 1024

        latencies = []
        for i in range(1, args.writes + 1):
            before = server.notifications
            started = time.perf_counter()
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(skill_text(f"aaa-live-{i}", "A skill edited by the benchmark."))
            wait_for_notification(server, before, started + args.timeout)
            latencies.append((time.perf_counter() - started) * 1e3)
            time.sleep(0.4)  # let the follow-up refresh settle

        settle(server)
        cpu_before = cpu_seconds(server.proc.pid)
        notes_before = server.notifications
        time.sleep(args.idle)
        idle_cpu = cpu_seconds(server.proc.pid) - cpu_before
        server.request("ping")
        idle_notes = server.notifications - notes_before
        server.stop()
    except e2e.ServerError as err:
        server.kill()
        print(f"freshness: {err}\n{server.stderr_tail()}", file=sys.stderr)
        return 2

    latencies.sort()
    p90 = e2e.percentile(latencies, 90)
    print(f"skillserve freshness: {args.skills} skills + 1 writable, default settings, "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print("| measurement | median | spread | target |")
    print("|---|---:|---:|---:|")
    print(f"| write → tools/list_changed ({args.writes} edits) | {statistics.median(latencies):.0f} ms "
          f"| p90 {p90:.0f} ms | < 300 ms |")
    print(f"| CPU while idle for {args.idle:.0f} s | {idle_cpu:.3f} s "
          f"| {idle_cpu * 60 / args.idle:.3f} s a minute | ≤ 0.05 s a minute |")
    print(f"| notifications while idle | {idle_notes} | | 0 |")
    print(f"| memory with the watcher armed (VmRSS) | {rss_armed:.1f} MiB | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
