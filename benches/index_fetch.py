#!/usr/bin/env python3
"""`skillserve add` of a published index of many skills (stdlib only).

    cargo build --release && python3 benches/index_fetch.py [--bin PATH] [--bin PATH2]
        [--skills 1000] [--latency-ms 50] [--runs 3]

A local web server (threaded, one thread per connection) publishes an index
of SKILLS one-file skills (`type: skill-md`) and answers every request after
LATENCY ms, standing in for a host across the internet (a round trip of
50 ms). Each binary given runs `add URL --yes` with a fresh home RUNS times,
alternating; the median wall time of each is printed, and their ratio when
two are given (e.g. a build before a change and one after).
"""

import argparse
import hashlib
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def publish(root, skills):
    entries = []
    for i in range(skills):
        name = f"skill-{i:04d}"
        text = f"---\nname: {name}\ndescription: Skill number {i}.\n---\n\n# {name}\n"
        os.makedirs(os.path.join(root, name))
        with open(os.path.join(root, name, "SKILL.md"), "w") as f:
            f.write(text)
        digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        entries.append({"name": name, "type": "skill-md", "description": f"Skill number {i}.",
                        "url": f"/{name}/SKILL.md", "digest": digest})
    index = {"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
             "skills": entries}
    well_known = os.path.join(root, ".well-known", "agent-skills")
    os.makedirs(well_known)
    with open(os.path.join(well_known, "index.json"), "w") as f:
        json.dump(index, f)


def serve(root, latency):
    class Slow(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=root, **kwargs)

        def do_GET(self):
            time.sleep(latency)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def add(binary, url):
    with tempfile.TemporaryDirectory() as home:
        env = {"HOME": home, "PATH": os.environ.get("PATH", ""), "SKILLSERVE_LOG": "warn",
               "XDG_CONFIG_HOME": os.path.join(home, "config"),
               "XDG_DATA_HOME": os.path.join(home, "data")}
        started = time.perf_counter()
        done = subprocess.run([binary, "add", url, "--yes"], env=env, capture_output=True)
        took = time.perf_counter() - started
        if done.returncode != 0:
            sys.stderr.write(done.stderr.decode())
            sys.exit(2)
        return took


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", action="append")
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binaries = args.bin or ["target/release/skillserve"]
    with tempfile.TemporaryDirectory() as site:
        publish(site, args.skills)
        url = serve(site, args.latency_ms / 1000)
        times = {b: [] for b in binaries}
        for _ in range(args.runs):
            for binary in binaries:
                times[binary].append(add(binary, url))
    print(f"load: {os.getloadavg()[0]:.2f}  skills: {args.skills}  latency: {args.latency_ms} ms")
    medians = [statistics.median(times[b]) for b in binaries]
    for binary, median in zip(binaries, medians):
        print(f"{binary}: add median {median:.2f} s over {args.runs} runs")
    if len(medians) == 2:
        print(f"ratio (second / first): {medians[1] / medians[0]:.3f}")


if __name__ == "__main__":
    main()
