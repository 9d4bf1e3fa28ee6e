#!/usr/bin/env python3
"""One real MCP session against an installed skillserve, as a client would
run it. Standard library only; used by packaging/verify.sh.

    mcp_session.py [--version V] COMMAND [ARG...]
        Creates a temporary skills folder holding one skill, starts
        `COMMAND ARG... --skills-dir FOLDER --no-user --no-project --no-plugins`
        and checks that the skill is listed and served.

    mcp_session.py --launch FILE --home DIR --expect NAME [--expect NAME...] [--version V]
        Starts exactly the command in FILE ({"command", "args", "env"}, as
        packaging/mcpb/resolve.mjs prints it for a bundle), with HOME=DIR, and
        checks that each NAME is listed and served.

The session: `initialize` (protocol 2025-11-25), `notifications/initialized`,
`tools/list` (the tool `skill` is there and its description lists each skill),
one `tools/call` per skill (the answer starts with `Loading: NAME`), then stdin
is closed and the server must exit with status 0. The server runs in an empty
temporary directory with HOME pointing at an empty folder unless --home is
given, so nothing from the real home or the current project leaks in.
Exit status 0 when every check passes; 1 with a message otherwise.
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROTOCOL = "2025-11-25"
TIMEOUT = 15.0  # seconds for any one answer, and for the exit after stdin closes
SMOKE_SKILL = "packaging-smoke-test"


class Failure(Exception):
    pass


def write_skill(folder: Path, name: str) -> None:
    skill = folder / name
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Checks that an installed skillserve serves skills. "
        f"Use when testing the package.\n---\n\n# {name}\n\nIf you can read this, the package works.\n",
        encoding="utf-8",
    )


class Session:
    def __init__(self, argv, env, cwd):
        self.argv = argv
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
            )
        except OSError as err:
            raise Failure(f"cannot start {argv[0]}: {err}") from err
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.next_id = 1

    def _read_stdout(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def send(self, message):
        data = (json.dumps(message) + "\n").encode("utf-8")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError as err:
            raise Failure(f"the server closed its stdin{self.log()}") from err

    def request(self, method, params):
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failure(f"no answer to {method} within {TIMEOUT:.0f} s{self.log()}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise Failure(f"the server closed stdout before answering {method}{self.log()}")
            try:
                message = json.loads(line)
            except ValueError as err:
                raise Failure(f"stdout carried a line that is not JSON: {line[:200]!r}") from err
            if message.get("id") != request_id:
                continue  # a notification (tools/list_changed, say)
            if "error" in message:
                raise Failure(f"{method} failed: {message['error']}")
            return message["result"]

    def close(self):
        """Closes stdin, as a client does at the end, and returns the exit status."""
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure(f"the server did not exit within {TIMEOUT:.0f} s of stdin closing")

    def log(self):
        time.sleep(0.1)
        text = "".join(self.stderr).strip()
        return f"\n--- server stderr ---\n{text}" if text else ""


def run(argv, env, cwd, expect, version):
    started = time.monotonic()
    session = Session(argv, env, cwd)
    try:
        init = session.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "skillserve-packaging-check", "version": "1"},
            },
        )
        info = init.get("serverInfo", {})
        if info.get("name") != "skillserve":
            raise Failure(f"serverInfo is {info}, not skillserve")
        if version and info.get("version") != version:
            raise Failure(f"the server says version {info.get('version')}, expected {version}")
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        tools = session.request("tools/list", {}).get("tools", [])
        skill = next((t for t in tools if t.get("name") == "skill"), None)
        if skill is None:
            raise Failure(f"no tool named `skill` in {[t.get('name') for t in tools]}")
        for name in expect:
            if f"- {name}:" not in skill.get("description", ""):
                raise Failure(f"the `skill` tool does not list {name}:\n{skill.get('description')}{session.log()}")

        for name in expect:
            result = session.request("tools/call", {"name": "skill", "arguments": {"name": name}})
            text = "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
            if result.get("isError") or not text.startswith(f"Loading: {name}"):
                raise Failure(f"calling skill {name} returned {text[:300]!r}{session.log()}")

        status = session.close()
        if status != 0:
            raise Failure(f"the server exited with status {status}{session.log()}")
    finally:
        if session.proc.poll() is None:
            session.proc.kill()
            session.proc.wait()
    elapsed = (time.monotonic() - started) * 1000
    print(
        f"MCP session OK: {argv[0]} ({info.get('name')} {info.get('version')}, protocol "
        f"{init.get('protocolVersion')}) listed and served {', '.join(expect)}; exit 0; {elapsed:.0f} ms"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launch", type=Path, help="JSON file with command, args and env")
    parser.add_argument("--home", type=Path, help="HOME for the server (default: an empty folder)")
    parser.add_argument("--expect", action="append", default=[], help="a skill that must be served")
    parser.add_argument("--version", help="the version serverInfo must report")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="skillserve-session-") as tmp:
        tmp = Path(tmp)
        cwd = tmp / "cwd"
        cwd.mkdir()
        home = args.home or tmp / "home"
        home.mkdir(exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "USERPROFILE": str(home),
        }
        for var in ("SYSTEMROOT", "TEMP", "TMP"):  # Windows needs these to start programs
            if var in os.environ:
                env[var] = os.environ[var]

        if args.launch:
            if args.command or not args.expect:
                parser.error("--launch takes no COMMAND and needs at least one --expect")
            launch = json.loads(args.launch.read_text(encoding="utf-8"))
            argv = [launch["command"], *launch.get("args", [])]
            env.update(launch.get("env", {}))
            expect = args.expect
        else:
            if not args.command:
                parser.error("give the COMMAND to test")
            if args.expect or args.home:
                parser.error("--expect and --home go with --launch")
            skills = tmp / "skills"
            write_skill(skills, SMOKE_SKILL)
            argv = [*args.command, "--skills-dir", str(skills), "--no-user", "--no-project", "--no-plugins"]
            expect = [SMOKE_SKILL]

        try:
            run(argv, env, cwd, expect, args.version)
        except Failure as failure:
            print(f"MCP session FAILED: {' '.join(argv)}\n{failure}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
