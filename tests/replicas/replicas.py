"""Two `skillserve serve --http` replicas behind HAProxy, on loopback, with
packaging/haproxy/haproxy.cfg exactly as committed (a second file given to
HAProxy adds only a stats socket, for the checks to read and steer it).
Run by tests/replicas/run.sh, which installs what it needs; every check
asserts, and the first that fails stops the run, naming it.

 1. 2026-07-28 clients (the official MCP Python SDK) through the balancer:
    every surface answers, the requests spread round-robin over both
    replicas (HAProxy's log says which answered each), and both replicas
    answer the same request alike.
 2. Cursors: `skills/list`, `prompts/list` and `resources/list` walked with
    each page asked of the other replica than the page before, and through
    the balancer: the same items as one replica's walk.
 3. 2025-11-25 sessions (the SDK) through the balancer: each session's
    requests all reach the replica that opened it (the other answers 404
    for it), and sessions open on both.
 4. A session's request sent to the other replica (its own taken out of
    the balancer): 404 `Not Found: Session not found`, the SDK reports the
    session terminated, and a new session through the balancer works.
 5. `auto_update`: an upstream commit to a local git source reaches both
    replicas, and both locks name that commit.
 6. SIGTERM under load (examples/http_load through the balancer): a replica
    without `--drain` (the balancer retries what it could not deliver), then
    one with `--drain 3` (the health check takes it out first): no client
    call fails, and the replica exits 0.

With `--bench`: the release build over 10,000 skills, calls/s and p50/p99
at 50 clients through the balancer to two replicas, to one replica, and
against one replica alone (benches/README.md, "Replicas").

Usage: replicas.py BIN HTTP_LOAD [--bench [--seconds S] [--rounds N]]
"""

import asyncio
import contextlib
import csv
import http.client
import io
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "packaging" / "haproxy" / "haproxy.cfg"
V2026 = "2026-07-28"
PATIENCE = 30.0


class Failed(Exception):
    """A check that did not hold."""


def check(condition, what):
    if not condition:
        fail(what)
    print(f"ok: {what}", flush=True)


def fail(what):
    # Said here: raised inside the SDK's task groups, the exception reaches
    # main wrapped in exception groups.
    print(f"FAILED: {what}", file=sys.stderr, flush=True)
    raise Failed(what)


def wait_until(what, done, patience=PATIENCE, every=0.05):
    deadline = time.monotonic() + patience
    while True:
        result = done()
        if result:
            return result
        if time.monotonic() > deadline:
            fail(f"{what} (waited {patience:.0f} s)")
        time.sleep(every)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- raw HTTP, for what the SDK does not show (statuses, which replica)


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def messages(self):
        if self.headers.get("content-type", "").startswith("application/json"):
            return [json.loads(self.body)]
        return [
            json.loads(line[5:])
            for line in self.body.splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]

    def result(self):
        for message in self.messages():
            if "id" in message:
                if "error" in message:
                    fail(f"a JSON-RPC error: {message['error']}")
                return message["result"]
        fail(f"no answer in {self.status} {self.body[:300]}")


def post(addr, message, headers=()):
    host, port = addr.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=PATIENCE)
    body = json.dumps(message)
    all_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    all_headers.update(dict(headers))
    connection.request("POST", "/mcp", body=body, headers=all_headers)
    response = connection.getresponse()
    answer = Answer(
        response.status,
        {k.lower(): v for k, v in response.getheaders()},
        response.read().decode(),
    )
    connection.close()
    return answer


def stateless(addr, method, params=None, request_id=1):
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "replicas", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = [("MCP-Protocol-Version", V2026), ("Mcp-Method", method)]
    name = params.get("name") or params.get("uri")
    if name:
        headers.append(("Mcp-Name", name))
    return post(addr, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, headers)


def in_session(addr, session, method, params=None):
    return post(
        addr,
        {"jsonrpc": "2.0", "id": 9, "method": method, "params": params or {}},
        [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")],
    )


def get(addr, path):
    host, port = addr.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    except OSError:
        return None, ""
    finally:
        connection.close()


# -- the processes


class Replica:
    """`skillserve serve --http` on a loopback port, with a home of its own
    (its sources.lock, store and config.toml), serving the shared catalog
    folder and the installed source."""

    def __init__(self, name, work, bin_path, catalog, extra=(), log="info"):
        self.name = name
        self.log_filter = log
        self.home = work / name / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.log_path = work / name / "serve.log"
        self.bin, self.catalog, self.extra = bin_path, catalog, list(extra)
        self.port = 0
        self.process = None
        self.runs = 0

    def env(self):
        return {"HOME": str(self.home), "PATH": os.environ["PATH"], "SKILLSERVE_LOG": self.log_filter}

    def start(self, extra=()):
        self.runs += 1
        self.log_path = self.log_path.with_name(f"serve-{self.runs}.log")
        command = [
            str(self.bin), "serve", "--http", f"127.0.0.1:{self.port}",
            "--no-user", "--no-plugins", "--skills-dir", str(self.catalog),
            *self.extra, *extra,
        ]
        self.process = subprocess.Popen(
            command, env=self.env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"),
        )
        found = wait_until(
            f"replica {self.name} listens",
            lambda: re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp", self.log()) or self.died(),
        )
        self.port = int(found.group(1))
        wait_until(f"replica {self.name} is healthy", lambda: get(self.addr, "/healthz")[0] == 200 or self.died())
        return self

    def died(self):
        if self.process.poll() is not None:
            fail(f"replica {self.name} exited {self.process.returncode}:\n{self.log()}")
        return False

    @property
    def addr(self):
        return f"127.0.0.1:{self.port}"

    def log(self):
        return self.log_path.read_text(errors="replace")

    def skillserve(self, *args):
        return subprocess.run(
            [str(self.bin), *args], env=self.env(), capture_output=True, text=True, check=True
        ).stdout

    def stop(self, sig=signal.SIGTERM):
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            return self.process.wait(timeout=PATIENCE)
        return self.process.returncode if self.process else None


class Balancer:
    """HAProxy with the committed configuration, in the foreground, its log
    (stdout) in a file; its stats socket to read and steer it."""

    def __init__(self, work, a, b):
        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.socket = work / "haproxy.sock"
        self.log_path = work / "haproxy.log"
        extra = work / "haproxy-test.cfg"
        extra.write_text(f'global\n    stats socket "{self.socket}" mode 600 level admin\n')
        env = dict(os.environ, SKILLSERVE_BIND=self.addr, SKILLSERVE_A=a.addr, SKILLSERVE_B=b.addr)
        self.process = subprocess.Popen(
            ["haproxy", "-db", "-f", str(CONFIG), "-f", str(extra)],
            env=env, stdin=subprocess.DEVNULL,
            stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT,
        )
        wait_until("HAProxy answers on its stats socket", lambda: self.alive() and self.socket.exists() and self.stats(), every=0.1)
        self.wait_for("a", "UP")
        self.wait_for("b", "UP")

    def command(self, line):
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.socket))
            s.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def alive(self):
        if self.process.poll() is not None:
            fail(f"HAProxy exited:\n{self.log_path.read_text()}")
        return True

    def stats(self):
        self.alive()
        try:
            text = self.command("show stat")
        except OSError:
            return None
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {row["svname"]: row for row in rows if row["pxname"] == "skillserve"}

    def status(self, server):
        return self.stats()[server]["status"]

    def wait_for(self, server, status, patience=PATIENCE):
        wait_until(f"HAProxy sees replica {server} {status}", lambda: self.status(server) == status, patience, 0.1)

    def log(self):
        return self.log_path.read_text(errors="replace")

    def mark(self):
        return len(self.log().splitlines())

    def requests(self, since=0, count=0):
        """The requests logged since line `since`: which replica answered,
        the status, the retries, the captured method and session ids.
        HAProxy writes a request's line once its stream has ended, which
        can be just after the client read the answer: this waits for
        `count` lines, then until the log stays the same for 0.2 s."""
        def logged():
            return [found.groupdict() for line in self.log().splitlines()[since:] if (found := HTTPLOG.match(line))]

        wait_until(f"HAProxy logs {count} requests", lambda: len(logged()) >= count, patience=5)
        size = -1
        while size != self.log_path.stat().st_size:
            size = self.log_path.stat().st_size
            time.sleep(0.2)
        return logged()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=PATIENCE)


# `option httplog` with the frontend's captures: `{method|session}` and
# `{session}` before the request line. `retries` is `+N` after a redispatch.
HTTPLOG = re.compile(
    r"^\S+ \[[^\]]+\] \S+ (?P<backend>[^/ ]+)/(?P<server>\S+) \S+ (?P<status>-?\d+) \S+ \S+ \S+ (?P<term>\S+) "
    r"\d+/\d+/\d+/\d+/(?P<retries>\+?\d+) \S+ \{(?P<method>[^|}]*)\|(?P<session>[^}]*)\} \{(?P<opened>[^}]*)\} "
    r'"(?P<request>[^"]*)"'
)


# -- the catalog


def make_catalog(work):
    """The shared catalog folder: the `pdf` and `plain` fixtures and 230
    small skills (three pages of 100), and the upstream git repository of
    the installed source `team`."""
    catalog = work / "catalog"
    catalog.mkdir()
    for fixture in ("pdf", "plain"):
        subprocess.run(["cp", "-R", str(ROOT / "fixtures" / "files" / fixture), str(catalog)], check=True)
    for n in range(230):
        folder = catalog / f"team-skill-{n:03}"
        folder.mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: team-skill-{n:03}\ndescription: Team skill number {n}, for the replicas test.\n---\nDo step {n}.\n"
        )
    upstream = work / "upstream"
    (upstream / "skills" / "team-notes").mkdir(parents=True)
    git(upstream, "init", "-q", "-b", "main")
    write_team_notes(upstream, 1)
    return catalog, upstream


def git(folder, *args):
    return subprocess.run(
        ["git", "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
        cwd=folder, check=True, capture_output=True, text=True,
    ).stdout.strip()


def write_team_notes(upstream, version):
    (upstream / "skills" / "team-notes" / "SKILL.md").write_text(
        f"---\nname: team-notes\ndescription: The team's notes, version {version}.\n---\nNotes, version {version}.\n"
    )
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", f"team-notes version {version}")
    return git(upstream, "rev-parse", "HEAD")


# -- the checks


async def surfaces(balancer, a, b):
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client
    from pydantic import TypeAdapter
    import httpx2

    mark = balancer.mark()
    http = httpx2.AsyncClient(timeout=PATIENCE)
    async with http, Client(streamable_http_client(f"http://{balancer.addr}/mcp", http_client=http), mode="auto") as client:
        check(client.protocol_version == V2026, f"[{V2026}] the SDK client speaks {V2026} through the balancer")
        tools = await client.list_tools()
        check([t.name for t in tools.tools] == ["skill"], "tools/list: the one tool")
        for name in ("pdf", "plain", "team-skill-007", "team-notes"):
            result = await client.call_tool("skill", {"name": name})
            check(not result.is_error and result.content[0].text.startswith(f"Loading: {name}\n"), f"tools/call {name}")
        result = await client.call_tool("skill", {"name": "pdf", "file": "references/forms.md"})
        check(result.content[0].text.startswith("Loading: pdf/references/forms.md\n"), "tools/call with a file")
        prompts = await client.list_prompts()
        check(len(prompts.prompts) == 100 and prompts.next_cursor, "prompts/list: a page of 100 and a cursor")
        prompt = await client.get_prompt("team-skill-042", {})
        check("Do step 42." in json.dumps(prompt.model_dump(mode="json")), "prompts/get")
        resources = await client.list_resources()
        check(resources.next_cursor and len(resources.resources) == 100, "resources/list: a page and a cursor")
        templates = await client.list_resource_templates()
        check(len(templates.resource_templates) > 0, "resources/templates/list")
        read = await client.read_resource("skill://team-skill-001/SKILL.md")
        check("Do step 1." in read.contents[0].text, "resources/read")
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="pdf"), {"name": "task", "value": ""}
        )
        check(completion is not None, "completion/complete")
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="skill"), {"name": "name", "value": "team-skill-00"}
        )
        check(
            completion.completion.values[:10] == [f"team-skill-00{n}" for n in range(10)],
            "completion/complete of the skill prompt's name: team-skill-000 to 009 first",
        )
        skills = await client.session.send_request(
            types.Request(method="skills/list", params=None), result_type=TypeAdapter(dict)
        )
        check(len(skills["skills"]) == 100 and skills.get("nextCursor"), "skills/list: a page of 100 and a cursor")
        uri = skills["skills"][0]["uri"]
        class SkillsGetParams(types.RequestParams):
            uri: str

        class SkillsGet(types.Request):
            method: str = "skills/get"
            params: SkillsGetParams

        entry = await client.session.send_request(
            SkillsGet(params=SkillsGetParams(uri=uri)), result_type=TypeAdapter(dict)
        )
        check(entry["skill"] == skills["skills"][0], "skills/get gives the entry skills/list gave")

    served = [r for r in balancer.requests(mark) if r["method"]]
    by = {name: sum(r["server"] == name for r in served) for name in ("a", "b")}
    check(all(r["status"] == "200" for r in served), f"every request through the balancer answered 200 ({len(served)})")
    check(
        min(by.values()) >= len(served) // 3,
        f"round robin: replica a answered {by['a']}, b {by['b']} of {len(served)} requests",
    )
    methods = {r["method"] for r in served}
    for method in ("tools/call", "prompts/get", "resources/read", "skills/list", "skills/get", "completion/complete"):
        check(method in methods, f"HAProxy logged {method} by its Mcp-Method header")

    # Either replica gives the same answer to the same request.
    for method, params in (
        ("tools/list", {}),
        ("tools/call", {"name": "skill", "arguments": {"name": "team-notes"}}),
        ("skills/list", {}),
        ("resources/read", {"uri": "skill://pdf/SKILL.md"}),
    ):
        check(
            stateless(a.addr, method, params).result() == stateless(b.addr, method, params).result(),
            f"{method}: replicas a and b answer alike",
        )


def walk(addrs, method, key):
    """Every item of the list `method`, each page asked of the next of
    `addrs` in turn, with the cursor the page before gave."""
    items, cursor, pages = [], None, 0
    while True:
        params = {"cursor": cursor} if cursor else {}
        result = stateless(addrs[pages % len(addrs)], method, params).result()
        items += [item[key] for item in result[method.split("/")[0]]]
        pages += 1
        cursor = result.get("nextCursor")
        if not cursor:
            return items, pages


def cursors(balancer, a, b):
    for method, key in (("skills/list", "uri"), ("prompts/list", "name"), ("resources/list", "uri")):
        alone, pages = walk([a.addr], method, key)
        check(pages >= 3, f"{method}: {len(alone)} items in {pages} pages on replica a alone")
        alternate, _ = walk([a.addr, b.addr], method, key)
        check(alternate == alone, f"{method}: pages asked of a, b, a, …, each with the other's cursor, give the same items")
        alternate, _ = walk([b.addr, a.addr], method, key)
        check(alternate == alone, f"{method}: and starting on b")
        mark = balancer.mark()
        through, pages = walk([balancer.addr], method, key)
        check(through == alone, f"{method}: walked through the balancer, the same items")
        servers = [r["server"] for r in balancer.requests(mark, pages)]
        check(
            len(servers) == pages and all(x != y for x, y in zip(servers, servers[1:])),
            f"{method}: through the balancer, the pages came from {''.join(servers)} (alternating)",
        )


async def sessions(balancer, a, b):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    import httpx2

    opened = []

    async def remember(response):
        session = response.headers.get("mcp-session-id")
        if session and session not in opened:
            opened.append(session)

    mark = balancer.mark()
    async with (
        httpx2.AsyncClient(timeout=PATIENCE, event_hooks={"response": [remember]}) as http,
        contextlib.AsyncExitStack() as stack,
    ):
        clients = []
        for _ in range(4):
            client = Client(streamable_http_client(f"http://{balancer.addr}/mcp", http_client=http), mode="legacy")
            clients.append(await stack.enter_async_context(client))
        check(all(c.protocol_version == "2025-11-25" for c in clients), "four 2025-11-25 sessions through the balancer")
        answered = 0
        for round_ in range(3):
            for n, client in enumerate(clients):
                result = await client.call_tool("skill", {"name": f"team-skill-{n * 10 + round_:03}"})
                answered += not result.is_error
                await client.list_prompts()
        check(answered == 12, "each session's calls answered, interleaved with the others'")
        check(len(opened) == 4, "four session ids")
        owners = []
        for session in opened:
            on_a = in_session(a.addr, session, "tools/list").status
            on_b = in_session(b.addr, session, "tools/list").status
            check(sorted([on_a, on_b]) == [200, 404], f"session {session[:8]}…: one replica knows it, the other answers 404")
            owners.append("a" if on_a == 200 else "b")
        check(set(owners) == {"a", "b"}, f"sessions opened on both replicas ({''.join(owners)})")
        logged = balancer.requests(mark)
        for session, owner in zip(opened, owners):
            servers = {r["server"] for r in logged if session in (r["session"], r["opened"])}
            check(servers == {owner}, f"session {session[:8]}…: every request went to replica {owner} (HAProxy's log)")


async def recovery(balancer, a, b):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    import httpx2

    opened = []

    async def remember(response):
        session = response.headers.get("mcp-session-id")
        if session and session not in opened:
            opened.append(session)

    async with httpx2.AsyncClient(timeout=PATIENCE, event_hooks={"response": [remember]}) as http:
        url = f"http://{balancer.addr}/mcp"
        async with Client(streamable_http_client(url, http_client=http, terminate_on_close=False), mode="legacy") as client:
            check(not (await client.call_tool("skill", {"name": "pdf"})).is_error, "a 2025-11-25 session works")
            session = opened[0]
            owner, other = (a, b) if in_session(a.addr, session, "tools/list").status == 200 else (b, a)
            answer = in_session(other.addr, session, "tools/call", {"name": "skill", "arguments": {"name": "pdf"}})
            check(
                answer.status == 404 and answer.body.strip() == "Not Found: Session not found",
                f"the session's request sent to the other replica ({other.name}): 404 Not Found: Session not found",
            )
            # The balancer loses the session's replica (taken out for
            # maintenance): the session's next request goes to the other.
            balancer.command(f"disable server skillserve/{owner.name}")
            balancer.wait_for(owner.name, "MAINT")
            mark = balancer.mark()
            try:
                await client.call_tool("skill", {"name": "pdf"})
                failed = None
            except Exception as err:  # the SDK's MCPError
                failed = str(err)
            check(failed is not None and "Session terminated" in failed, f"the SDK reports the 404: {failed!r}")
            check(
                [(r["server"], r["status"]) for r in balancer.requests(mark, 1)] == [(other.name, "404")],
                f"HAProxy sent it to replica {other.name}, which answered 404",
            )
        # What a client does on 404: a new session, through the balancer.
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            result = await client.call_tool("skill", {"name": "pdf"})
            check(not result.is_error, f"a new session (initialize again) works, on replica {other.name}")
    balancer.command(f"enable server skillserve/{owner.name}")
    balancer.wait_for(owner.name, "UP")


def auto_update(balancer, a, b, upstream):
    commit = write_team_notes(upstream, 2)
    for replica in (a, b):
        wait_until(
            f"replica {replica.name} serves the upstream commit",
            lambda: "Notes, version 2." in json.dumps(
                stateless(replica.addr, "tools/call", {"name": "skill", "arguments": {"name": "team-notes"}}).result()
            ),
            every=0.2,
        )
        locked = json.loads(replica.skillserve("sources", "--json"))
        check(locked[0]["version"] == commit, f"replica {replica.name}: its lock names the upstream commit {commit[:12]}")
        wait_until(
            f"replica {replica.name} logs the update",
            lambda: re.search(rf"auto_update: source 'team' updated to \S+@{commit} ", replica.log()),
        )
        check(True, f"replica {replica.name} logged the update to {commit[:12]}")
    answers = [stateless(balancer.addr, "tools/call", {"name": "skill", "arguments": {"name": "team-notes"}}, n).result() for n in range(4)]
    check(all(answer == answers[0] for answer in answers), "through the balancer, every answer is version 2")


def under_load(balancer, a, http_load, catalog, seconds, stop_after, clients):
    """http_load through the balancer while replica `a` gets SIGTERM;
    what the load generator printed."""
    mark = balancer.mark()
    load = subprocess.Popen(
        [str(http_load), "--connect", balancer.addr, "--skills-dir", str(catalog), "--scenario", "stateless",
         "--clients", str(clients), "--seconds", str(seconds)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    time.sleep(stop_after)
    code = a.stop(signal.SIGTERM)
    output = load.communicate(timeout=seconds + PATIENCE)[0]
    print(output, end="")
    check(load.returncode == 0 and re.search(r" 0\n", output.splitlines()[-1] + "\n"), "no client call failed")
    check(code == 0, f"replica a exited 0 after SIGTERM")
    check("received SIGTERM; exiting" in a.log(), "replica a logged its exit")
    return balancer.requests(mark)


def sigterm(balancer, a, b, http_load, catalog):
    # Without --drain: replica a stops accepting at once; HAProxy retries
    # what it could not deliver on b until its checks take a out.
    logged = under_load(balancer, a, http_load, catalog, seconds=5, stop_after=1.5, clients=20)
    retried = [r for r in logged if r["retries"] != "0"]
    check(retried, f"HAProxy retried {len(retried)} requests on the other replica")
    check(all(r["status"] == "200" for r in logged), f"all {len(logged)} requests through the balancer answered 200")
    balancer.wait_for("a", "DOWN")

    # With --drain 3: a answers on while /healthz says 503; the check
    # takes it out, then it stops.
    a.start(["--drain", "3"])
    balancer.wait_for("a", "UP")
    logged = under_load(balancer, a, http_load, catalog, seconds=7, stop_after=1.5, clients=20)
    check(all(r["status"] == "200" for r in logged), f"all {len(logged)} requests through the balancer answered 200")
    check(
        re.search(r"Server skillserve/a is DOWN, reason: Layer7 wrong status, code: 503", balancer.log()) is not None,
        "HAProxy took replica a out on its /healthz 503 (draining)",
    )
    check("draining for 3 s" in a.log(), "replica a logged its draining")
    served_by_a = [r for r in logged if r["server"] == "a"]
    check(served_by_a, f"replica a answered {len(served_by_a)} requests of the run before it was out")


def main():
    args = sys.argv[1:]
    bench = "--bench" in args
    bin_path, http_load = pathlib.Path(args[0]).resolve(), pathlib.Path(args[1]).resolve()
    if bench:
        return bench_main(bin_path, http_load, args[2:])
    with tempfile.TemporaryDirectory(prefix="skillserve-replicas-") as work:
        work = pathlib.Path(work)
        catalog, upstream = make_catalog(work)
        replicas = []
        balancer = None
        try:
            for name in ("a", "b"):
                replica = Replica(name, work, bin_path, catalog, ["--threads", "2"])
                (replica.home / ".config" / "skillserve").mkdir(parents=True)
                (replica.home / ".config" / "skillserve" / "config.toml").write_text(
                    '[sources.team]\nauto_update = "1s"\n'
                )
                replica.skillserve("add", str(upstream), "--id", "team", "--yes")
                replicas.append(replica.start())
            a, b = replicas
            balancer = Balancer(work, a, b)
            print(f"== replicas a ({a.addr}) and b ({b.addr}) behind HAProxy ({balancer.addr})", flush=True)
            print("== 2026-07-28 clients round robin, every surface", flush=True)
            asyncio.run(surfaces(balancer, a, b))
            print("== cursors from one replica on the other", flush=True)
            cursors(balancer, a, b)
            print("== 2025-11-25 sessions stick to their replica", flush=True)
            asyncio.run(sessions(balancer, a, b))
            print("== a session sent to the other replica: 404, and a new session", flush=True)
            asyncio.run(recovery(balancer, a, b))
            print("== auto_update brings both replicas to the upstream commit", flush=True)
            auto_update(balancer, a, b, upstream)
            print("== SIGTERM under load", flush=True)
            sigterm(balancer, a, b, http_load, catalog)
            errors = [line for r in replicas for line in r.log().splitlines() if " ERROR " in line]
            check(not errors, f"no ERROR line in the replicas' logs {errors[:3]}")
            print("replicas behind HAProxy: all checks passed")
        except BaseException as err:
            for path in [*work.glob("*/serve-*.log"), work / "haproxy.log"]:
                if path.exists():
                    print(f"--- {path.relative_to(work)} (last lines)", file=sys.stderr)
                    print("\n".join(path.read_text(errors="replace").splitlines()[-25:]), file=sys.stderr)
            if isinstance(err, (Failed, BaseExceptionGroup)) and failed_within(err):
                raise SystemExit(1) from None
            raise
        finally:
            if balancer:
                balancer.stop()
            for replica in replicas:
                replica.stop(signal.SIGKILL)


def failed_within(err):
    """Whether `err` is, or wraps, a failed check (already said)."""
    if isinstance(err, Failed):
        return True
    return isinstance(err, BaseExceptionGroup) and any(failed_within(e) for e in err.exceptions)


def cpu_ticks(pid):
    """User and system CPU time of a process, in clock ticks (10 ms)."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def bench_main(bin_path, http_load, args):
    """Calls/s and latency at 50 clients: through the balancer to two
    replicas, through it to one (the other taken out), and against one
    replica alone, in turns over the rounds; with the CPU the replicas and
    HAProxy spent per call."""
    options = {"--seconds": "10", "--rounds": "3", "--clients": "50", "--skills": "10000", "--threads": None}
    for flag, value in zip(args[1::2], args[2::2]):
        if flag not in options:
            raise SystemExit(f"usage: replicas.py BIN HTTP_LOAD --bench [{' '.join(f'[{k} N]' for k in options)}]")
        options[flag] = value
    corpus = ROOT / "target" / "bench-corpus" / options["--skills"]
    if not (corpus / "complete").exists():
        subprocess.run(
            [sys.executable, str(ROOT / "benches" / "make_corpus.py"), str(corpus / "skills"), options["--skills"], "--seed", "1"],
            check=True,
        )
        (corpus / "complete").write_text("")
    threads = ["--threads", options["--threads"]] if options["--threads"] else []
    with tempfile.TemporaryDirectory(prefix="skillserve-replicas-bench-") as work:
        work = pathlib.Path(work)
        # No access log: at thousands of calls a second it would measure
        # the disk.
        quiet = "warn,skillserve=info,skillserve::access=warn"
        a = Replica("a", work, bin_path, corpus / "skills", threads, quiet)
        b = Replica("b", work, bin_path, corpus / "skills", threads, quiet)
        balancer = None
        try:
            a.start()
            b.start()
            balancer = Balancer(work, a, b)
            setups = {
                "balancer, two replicas": (balancer.addr, [a, b]),
                "balancer, one replica": (balancer.addr, [a]),
                "one replica alone": (a.addr, [a]),
            }
            figures = {name: [] for name in setups}
            print(
                f"{options['--clients']} clients, {options['--seconds']} s each run, {options['--skills']} skills, "
                f"release build, replicas with {options['--threads'] or 'the default'} threads; load average {load_average()}"
            )
            for round_ in range(int(options["--rounds"])):
                for name, (addr, used) in setups.items():
                    if name == "balancer, one replica":
                        balancer.command("disable server skillserve/b")
                        balancer.wait_for("b", "MAINT")
                    pids = [r.process.pid for r in used] + ([balancer.process.pid] if addr == balancer.addr else [])
                    before = sum(cpu_ticks(pid) for pid in pids)
                    output = subprocess.run(
                        [str(http_load), "--connect", addr, "--skills-dir", str(corpus / "skills"), "--scenario", "stateless",
                         "--clients", options["--clients"], "--seconds", options["--seconds"]],
                        capture_output=True, text=True,
                    ).stdout
                    spent = sum(cpu_ticks(pid) for pid in pids) - before
                    row = output.strip().splitlines()[-1].split()
                    rate, p50, p99, failures = float(row[3]), float(row[4]), float(row[5]), int(row[-1])
                    if failures:
                        fail(f"{name}: {failures} calls failed:\n{output}")
                    cpu = spent * 1e4 / (rate * float(options["--seconds"]))
                    figures[name].append((rate, p50, p99, cpu))
                    print(f"round {round_ + 1}: {name:<24} {rate:>8.0f} calls/s  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  server side CPU {cpu:5.0f} µs a call", flush=True)
                    if name == "balancer, one replica":
                        balancer.command("enable server skillserve/b")
                        balancer.wait_for("b", "UP")
            print(f"medians (load average now {load_average()}):")
            print("| setup | calls/s | p50 ms | p99 ms | CPU per call (replicas + HAProxy) |")
            print("|---|---:|---:|---:|---:|")
            for name, rows in figures.items():
                median = [sorted(column)[len(column) // 2] for column in zip(*rows)]
                print(f"| {name} | {median[0]:,.0f} | {median[1]:.2f} | {median[2]:.2f} | {median[3]:.0f} µs |")
        finally:
            if balancer:
                balancer.stop()
            for replica in (a, b):
                replica.stop(signal.SIGKILL)


def load_average():
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
