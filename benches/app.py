#!/usr/bin/env python3
"""The skills app at N skills (default 10,000) in headless Chromium.

    target/ui-tests/venv/bin/python benches/app.py [N] [--keep]

(bash tests/ui/run.sh installs Chromium and the venv; build first with
`cargo build --release`.) Generates a corpus with benches/make_corpus.py
under target/tmp, starts `skillserve serve --http` on loopback (release
build), and reports:

- first paint of the catalog: from navigation start to the first rows in
  the DOM (the page's own clock), median of 5 loads;
- each keystroke of a search: from the key press to the summary line
  showing that query's results, median and worst over the keystrokes of a
  few words typed letter by letter;
- the page's JS heap (CDP Performance.getMetrics, JSHeapUsedSize) after
  the catalog was scrolled through 1,000 rows;
- the server's RSS settled before any page was opened, and with the app
  open after it was used: right after its last request and settled
  (VmRSS; the target is settled ≤ +10%);
- usage, after LOADS `skill` calls over HTTP spread over a twentieth of the
  skills by three clients (made before the first RSS reading): the
  `app_usage` answer (the report of `stats
  --json`: every unused skill with its folder) in time and bytes, median of
  5; the Usage view from its tab to its first rows, and a skill's view to
  its loads line (which reads the same report), medians of 5.

The server runs with an admin token (`--auth-tokens`; usage needs admin
over HTTP), which the page receives in its address's fragment.

Prints the load (uptime) beside the timings.
"""

import json
import os
import pathlib
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from playwright.sync_api import sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINARY = ROOT / "target" / "release" / "skillserve"
LOADS = 1000
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def settle(pid):
    """The RSS once two readings 2 s apart are within 1% (at most a minute)."""
    last = rss_kib(pid)
    for _ in range(30):
        time.sleep(2)
        now = rss_kib(pid)
        if abs(now - last) <= last / 100:
            return now
        last = now
    return last


def call(url, token, name, arguments, client="bench"):
    """A stateless tools/call over HTTP with the UI extension: the answer
    and its size in bytes."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}}}}).encode()
    request = urllib.request.Request(url + "/mcp", data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer " + token, "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call", "Mcp-Name": name})
    with urllib.request.urlopen(request, timeout=60) as r:
        raw = r.read()
    return json.loads(raw), len(raw)


def load_skills(url, token, corpus):
    """LOADS `skill` calls over a twentieth of the skills by three clients:
    what the usage report then shows."""
    names = sorted(p.name for p in corpus.iterdir() if (p / "SKILL.md").exists())
    used = names[::20]
    for i in range(LOADS):
        call(url, token, "skill", {"name": used[i % len(used)]}, client=["claude-code", "cursor-vscode", "goose"][i % 3])


def usage(page, url, token, n):
    answers = []
    for _ in range(5):
        start = time.perf_counter()
        answer, size = call(url, token, "app_usage", {})
        answers.append(((time.perf_counter() - start) * 1000, size))
    report = answer["result"]["structuredContent"]
    print(f"app_usage at {n} skills ({len(report['skills'])} used, {len(report['unused'])} unused, {LOADS} loads): "
          f"median {statistics.median(a[0] for a in answers):.1f} ms, {answers[0][1] / 1e6:.2f} MB "
          f"(of {', '.join(f'{a[0]:.1f}' for a in answers)} ms)")
    views = []
    skills = []
    for _ in range(5):
        page.click("nav.tabs button:text-is('Catalog')")
        page.wait_for_selector("table.catalog tbody tr")
        start = time.perf_counter()
        page.click("nav.tabs button:text-is('Usage')")
        page.wait_for_selector("table.usage.used tbody tr")
        views.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        page.locator("table.usage.used button.link").first.click()
        deadline = start + 30
        while time.perf_counter() < deadline:
            line = page.locator("#skill-usage")
            if line.count() and "load" in line.inner_text():
                break
            time.sleep(0.002)
        skills.append((time.perf_counter() - start) * 1000)
    print(f"Usage view, tab to first rows: median {statistics.median(views):.0f} ms (of {', '.join(f'{x:.0f}' for x in views)}); "
          f"a skill's view to its loads line: median {statistics.median(skills):.0f} ms (of {', '.join(f'{x:.0f}' for x in skills)})")


def main():
    n = int(next((a for a in sys.argv[1:] if a.isdigit()), "10000"))
    corpus = ROOT / "target" / "tmp" / f"app-corpus-{n}"
    if not corpus.exists():
        subprocess.run([sys.executable, str(ROOT / "benches" / "make_corpus.py"), str(corpus), str(n), "--seed", "1"], check=True,
                       stdout=subprocess.DEVNULL)
    home = ROOT / "target" / "tmp" / "app-home"
    home.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "SKILLSERVE_LOG": "warn"}
    # A fresh usage record and token file each run.
    for stale in [home / ".local" / "share" / "skillserve" / "usage.json", home / "tokens"]:
        stale.unlink(missing_ok=True)
    made = subprocess.run([str(BINARY), "token", "new", "bench", "--admin", "--file", str(home / "tokens")],
                          env=env, capture_output=True, text=True, check=True)
    token = made.stdout.strip().splitlines()[-1].strip()
    server = subprocess.Popen([str(BINARY), "serve", "--http", f"127.0.0.1:{port}", "--skills-dir", str(corpus),
                               "--no-user", "--no-project", "--no-plugins", "--auth-tokens", str(home / "tokens")],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except Exception:
                time.sleep(0.05)
        # Before the app: skills loaded (the texts a server keeps of called
        # skills are not the app's), the watcher armed, the search index
        # built, settled.
        load_skills(url, token, corpus)
        rss_before = settle(server.pid)
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=FLAGS)
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.goto(url + "/#token=" + token)
            page.wait_for_selector("table.catalog tbody tr")
            paints = []
            for _ in range(5):
                page.goto(url + "/")
                page.wait_for_selector("table.catalog tbody tr")
                paints.append(page.evaluate("performance.now()"))
            print(f"first paint of the catalog at {n} skills: median {statistics.median(paints):.0f} ms "
                  f"(of {', '.join(f'{x:.0f}' for x in paints)})")
            search = page.locator("input[type=search]")
            keystrokes = []
            for word in ["pdf", "spreadsheet", "deploy", "translate"]:
                search.fill("")
                time.sleep(0.3)
                typed = ""
                for ch in word:
                    typed += ch
                    start = time.perf_counter()
                    page.keyboard.type(ch)
                    # The results are in when the page has drawn the rows of
                    # the query typed so far (it drops answers to older ones).
                    deadline = start + 5
                    while time.perf_counter() < deadline:
                        if page.evaluate("window.skillserveApp.state.query.query") == typed and \
                                not page.evaluate("window.skillserveApp.state.loading"):
                            break
                        time.sleep(0.002)
                    keystrokes.append((time.perf_counter() - start) * 1000)
            print(f"search keystroke to results: median {statistics.median(keystrokes):.1f} ms, "
                  f"worst {max(keystrokes):.1f} ms over {len(keystrokes)} keystrokes")
            search.fill("")
            time.sleep(0.5)
            for _ in range(9):
                button = page.locator("#more button")
                if button.count() == 0:
                    break
                button.click()
                time.sleep(0.2)
            rows = page.locator("table.catalog tbody tr").count()
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            cdp.send("HeapProfiler.collectGarbage")
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            print(f"page JS heap with {rows} rows: {metrics['JSHeapUsedSize'] / 1e6:.1f} MB "
                  f"(nodes {int(metrics['Nodes'])})")
            usage(page, url, token, n)
            # With the page still open: right after its last request, and
            # settled (two readings 2 s apart within 1%).
            rss_after = rss_kib(server.pid)
            rss_settled = settle(server.pid)
            browser.close()
        print(f"server RSS: {rss_before / 1024:.1f} MiB settled before the app; with the app open "
              f"{rss_after / 1024:.1f} MiB right after its last request ({(rss_after / rss_before - 1) * 100:+.1f}%), "
              f"{rss_settled / 1024:.1f} MiB settled ({(rss_settled / rss_before - 1) * 100:+.1f}%)")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
