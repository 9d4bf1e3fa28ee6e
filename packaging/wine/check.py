#!/usr/bin/env python3
"""skillserve's Windows build, run under Wine as a Windows user would run it.
Standard library only; packaging/wine-check.sh builds everything and runs it:

    check.py --skillserve EXE --test-server EXE --work DIR

WINEPREFIX must name a prepared prefix (wine-check.sh puts the
bcryptprimitives.dll shim in it). Every check prints one line, `ok` or
`FAIL` (`LEAK` for the short-name probe), then a summary; the exit status is
0 when every check passed, 1 otherwise. The checks:

- the CLI: `--version`, `list` (user skills under USERPROFILE, also with a
  Git-Bash-style HOME), `check`, `show` with and without a file;
- one MCP session over stdio: initialize, tools/list, tools/call with and
  without `file`, resources/list and resources/read, skills/list,
  prompts/list and prompts/get, a new skill picked up by the watcher
  (tools/list_changed), and exit once stdin closes;
- `import` and `invoke` with `"command": "npx"` found as `npx.cmd` on PATH (a
  fake one starting the test server), arguments with spaces, quotes, `%`,
  `^`, `&` reaching the server unchanged, and a server that hangs killed with
  its launcher on timeout (the whole process tree);
- the short-name probe: a skill's `.git/config`, `.env` and
  `node_modules/pkg/index.js` asked for by their 8.3 short names (as Wine
  makes them) through `show`, the tool's `file` and `resources/read`: each
  must be refused.
"""

import argparse
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path, PurePosixPath

PROTOCOL = "2025-11-25"
TIMEOUT = 30.0  # seconds for one answer or one command (Wine starts slowly)
SECRETS = {
    ".git/config": "SECRET-GIT-CONFIG",
    ".env": "SECRET-DOTENV",
    "node_modules/pkg/index.js": "SECRET-NODE-MODULE",
}
# Arguments that cmd.exe would split, expand or interpret if they were not
# quoted for it, and that must reach the server exactly as written.
TRICKY_ARGS = [
    "two words",
    'say "hi"',
    "a^b",
    "x&y",
    "<in>|out",
    "(p)",
    "bang!",
    "C:\\dir\\",
    'a\\"b',
    "",
    "semi;colon,comma=eq",
    "tab\there",
]
# Arguments with `%`. skillserve passes them as Rust's std does (`%` written
# `%%cd:~,%`, an empty slice of the variable CD, so that Windows' cmd.exe
# never sees `%VAR%`); Wine 8.0's cmd.exe does not honour that in `cmd /c`
# and expands them. What they become under Wine is reported, not failed:
# the exact command line is unit-tested (src/program.rs) and the real cmd.exe
# is exercised by the Windows CI job.
PERCENT_ARGS = ["100%", "%PATH%", "a%b%c"]


class Failure(Exception):
    pass


def win(path):
    """The Windows path of a Unix path under Wine (drive Z: is /)."""
    return "Z:" + str(path).replace("/", "\\")


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def run(self, name, check):
        try:
            detail = check()
        except Failure as failure:
            self.failed.append(name)
            print(f"FAIL {name}: {failure}", flush=True)
        else:
            self.passed += 1
            print(f"ok   {name}: {detail}", flush=True)


class Wine:
    def __init__(self, skillserve, test_server, work):
        self.skillserve = skillserve
        self.test_server = test_server
        self.work = work
        self.env = dict(os.environ, WINEDEBUG="-all")

    def run(self, argv, *, env=None, stdin=None, timeout=TIMEOUT):
        """Runs a Windows program (argv[0] a Unix path) under Wine; returns
        its exit status, stdout and stderr."""
        # Output goes to files, not pipes: Wine may start its services
        # (winedevice.exe) from any process, and they would inherit a pipe and
        # hold it open long after the program exits.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                done = subprocess.run(
                    ["wine", *argv],
                    # Always a stdin that ends: a console program under Wine
                    # waits for an inherited one.
                    input=stdin or b"",
                    stdout=out,
                    stderr=err,
                    env=dict(self.env, **(env or {})),
                    cwd=self.work,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired as error:
                raise Failure(f"{argv} did not finish within {timeout:.0f} s") from error
            out.seek(0)
            err.seek(0)
            return (
                done.returncode,
                out.read().decode("utf-8", "replace").replace("\r\n", "\n"),
                err.read().decode("utf-8", "replace").replace("\r\n", "\n"),
            )

    def skillserve_run(self, args, **kwargs):
        return self.run([str(self.skillserve), *args], **kwargs)

    def cmd_output(self, line):
        """The output of one cmd.exe command line."""
        code, out, err = self.run(["cmd", "/c", line])
        if code != 0:
            raise Failure(f"cmd /c {line} exited {code}: {err.strip()}")
        return out

    def unix(self, windows_path):
        """The Unix path of a C: or Z: path of the prefix."""
        drive, rest = windows_path[:2].upper(), windows_path[2:].replace("\\", "/")
        if drive == "Z:":
            return Path(rest)
        if drive == "C:":
            return Path(os.environ["WINEPREFIX"]) / "drive_c" / rest.lstrip("/")
        raise Failure(f"no Unix path for {windows_path}")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def skill_md(name, description, body=""):
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{body}\n"


class Session:
    """An MCP client speaking to `wine skillserve.exe serve` over stdio."""

    def __init__(self, wine, args):
        self.proc = subprocess.Popen(
            ["wine", str(wine.skillserve), "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(wine.env, SKILLSERVE_LOG="info"),
            cwd=wine.work,
        )
        self.lines = queue.Queue()
        self.stderr = []
        self.notifications = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()
        self.next_id = 1

    @staticmethod
    def _pump(stream, put):
        for line in stream:
            put(line)
        put(None)

    def log(self):
        text = b"".join(line for line in self.stderr if line).decode("utf-8", "replace").strip()
        return f"\n--- server stderr ---\n{text}" if text else ""

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def _next(self, deadline, waiting_for):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Failure(f"no {waiting_for} within {TIMEOUT:.0f} s{self.log()}")
        try:
            line = self.lines.get(timeout=remaining)
        except queue.Empty:
            raise Failure(f"no {waiting_for} within {TIMEOUT:.0f} s{self.log()}") from None
        if line is None:
            raise Failure(f"the server closed stdout before {waiting_for}{self.log()}")
        return json.loads(line)

    def request(self, method, params=None, *, error_ok=False):
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline, f"answer to {method}")
            if message.get("id") != request_id:
                self.notifications.append(message.get("method"))
                continue
            if "error" in message:
                if error_ok:
                    return message
                raise Failure(f"{method} {params} failed: {message['error']}")
            return message["result"]

    def wait_for_notification(self, method):
        deadline = time.monotonic() + TIMEOUT
        while method not in self.notifications:
            message = self._next(deadline, method)
            self.notifications.append(message.get("method"))

    def close(self):
        """Closes stdin; returns the exit status and the seconds it took."""
        started = time.monotonic()
        self.proc.stdin.close()
        try:
            status = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failure(f"the server did not exit within {TIMEOUT:.0f} s of stdin closing") from None
        return status, time.monotonic() - started


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def short_names(wine, folder):
    """{long name: 8.3 short name} of the entries of `folder`, from `dir /x /a`."""
    names = {}
    # Unquoted: Wine passes a quoted argument on to cmd.exe as \"…\".
    if " " in str(folder):
        raise Failure(f"the work folder {folder} must not hold spaces")
    for line in wine.cmd_output(f"dir /x /a {win(folder)}").splitlines():
        # date time  <DIR>|size  SHORT  long   (SHORT is blank when the long name is 8.3 already)
        match = re.match(r"^\S+\s+\S+\s+(?:[AP]M\s+)?(?:<DIR>|[\d,]+)\s+(\S+)\s+(\S+)\s*$", line)
        if match:
            names[match.group(2)] = match.group(1)
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skillserve", type=Path, required=True)
    parser.add_argument("--test-server", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True, help="an empty folder for the checks")
    args = parser.parse_args()
    work = args.work.resolve()
    wine = Wine(args.skillserve.resolve(), args.test_server.resolve(), work)
    checks = Checks()

    # The skills: a custom folder with a skill that has a file, the probe
    # skill with hidden entries, and a user skill under USERPROFILE.
    skills = work / "skills"
    write(skills / "demo" / "SKILL.md", skill_md("demo", "A demo skill for the Windows check.", "Read references/guide.md."))
    write(skills / "demo" / "references" / "guide.md", "# Guide\n\nThe guide's text.\n")
    probe = skills / "probe"
    write(probe / "SKILL.md", skill_md("probe", "Holds hidden files that must never be served."))
    for relative, secret in SECRETS.items():
        write(probe / relative, secret + "\n")
    profile = wine.cmd_output("echo %USERPROFILE%").strip()
    user_skills = wine.unix(profile) / ".claude" / "skills"
    write(user_skills / "from-profile" / "SKILL.md", skill_md("from-profile", "A user skill under USERPROFILE."))
    common = ["--skills-dir", win(skills), "--no-project", "--no-plugins"]

    def version():
        code, out, err = wine.skillserve_run(["--version"])
        if code != 0 or not out.startswith("skillserve "):
            raise Failure(f"exit {code}: {out!r} {err!r}")
        return out.strip()

    def listed(code, out, err):
        if code != 0:
            raise Failure(f"exit {code}: {err}")
        items = {item["name"]: item["source"] for item in json.loads(out)}
        expected = {"demo": "custom", "probe": "custom", "from-profile": "user"}
        if items != expected:
            raise Failure(f"listed {items}, expected {expected}\n{err}")
        return items

    def list_user_skills():
        items = listed(*wine.skillserve_run(["list", "--json", *common]))
        return f"{items} (HOME unset under Wine: USERPROFILE {profile})"

    def list_with_git_bash_home():
        # Wine does not pass HOME on to Windows programs: a batch file sets it,
        # as Git Bash, MSYS or Cygwin would.
        script = work / "git-bash-home.cmd"
        script.write_text(f'@set HOME=/c/Users/me\r\n@"{win(wine.skillserve)}" %*\r\n', encoding="utf-8")
        items = listed(*wine.run(["cmd", "/c", win(script), "list", "--json", *common]))
        code, out, err = wine.run(
            ["cmd", "/c", win(script), "serve", "--no-watch", *common],
            env={"SKILLSERVE_LOG": "info"},
            stdin=b"",
        )
        said = f"home folder: {profile} (from USERPROFILE; HOME is `/c/Users/me`, not an absolute Windows path)"
        if code != 0 or said not in err:
            raise Failure(f"serve exited {code} without logging {said!r}:\n{err}")
        return f"{items}; serve logs {said!r}"

    def check_command():
        code, out, err = wine.skillserve_run(["check", *common])
        if code != 0:
            raise Failure(f"exit {code}:\n{out}{err}")
        broken = work / "broken"
        write(broken / "bad" / "SKILL.md", "---\nname: [unclosed\n---\n")
        code, out, err = wine.skillserve_run(["check", "--skills-dir", win(broken), "--no-user", "--no-project", "--no-plugins"])
        bad = win(broken / "bad" / "SKILL.md")
        if code != 1 or bad not in out:
            raise Failure(f"a broken skill gave exit {code}, not naming {bad}:\n{out}{err}")
        return f"clean tree exit 0; broken skill exit 1 naming {bad}"

    def show():
        code, out, err = wine.skillserve_run(["show", "demo", *common])
        base = f"Base directory: {win(skills / 'demo')}"
        if code != 0 or not out.startswith(f"Loading: demo\n{base}\n"):
            raise Failure(f"exit {code}: {out[:300]!r} {err!r}")
        code, out, err = wine.skillserve_run(["show", "demo", "references/guide.md", *common])
        if code != 0 or "The guide's text." not in out:
            raise Failure(f"with a file: exit {code}: {out[:300]!r} {err!r}")
        return f"{base!r}; references/guide.md served"

    def mcp_session():
        session = Session(wine, common)
        try:
            init = session.request(
                "initialize",
                {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "wine-check", "version": "1"}},
            )
            session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools = session.request("tools/list")["tools"]
            if [t["name"] for t in tools] != ["skill"]:
                raise Failure(f"tools: {[t['name'] for t in tools]}")
            text = text_of(session.request("tools/call", {"name": "skill", "arguments": {"name": "demo"}}))
            if not text.startswith("Loading: demo\n"):
                raise Failure(f"tools/call demo: {text[:200]!r}")
            text = text_of(
                session.request("tools/call", {"name": "skill", "arguments": {"name": "demo", "file": "references/guide.md"}})
            )
            if "The guide's text." not in text:
                raise Failure(f"tools/call demo with file: {text[:200]!r}")
            uris = [r["uri"] for r in session.request("resources/list")["resources"]]
            if "skill://demo/SKILL.md" not in uris:
                raise Failure(f"resources/list: {uris}")
            contents = session.request("resources/read", {"uri": "skill://demo/references/guide.md"})["contents"]
            if "The guide's text." not in contents[0].get("text", ""):
                raise Failure(f"resources/read: {contents}")
            entries = session.request("skills/list")["skills"]
            demo = next((e for e in entries if e["uri"] == "skill://demo/SKILL.md"), None)
            files = sorted(r["uri"] for r in (demo or {}).get("resources", []))
            if files != ["skill://demo/SKILL.md", "skill://demo/references/guide.md"]:
                raise Failure(f"skills/list entry of demo: {demo}")
            prompts = [p["name"] for p in session.request("prompts/list")["prompts"]]
            if "demo" not in prompts:
                raise Failure(f"prompts/list: {prompts}")
            messages = session.request("prompts/get", {"name": "demo", "arguments": {"task": "try it"}})["messages"]
            if not messages[0]["content"]["text"].endswith("Task: try it"):
                raise Failure(f"prompts/get: {messages}")
            # The watcher (ReadDirectoryChangesW under Wine) sees a new skill.
            write(skills / "later" / "SKILL.md", skill_md("later", "Added while the server runs."))
            session.wait_for_notification("notifications/tools/list_changed")
            text = text_of(session.request("tools/call", {"name": "skill", "arguments": {"name": "later"}}))
            if not text.startswith("Loading: later\n"):
                raise Failure(f"tools/call later: {text[:200]!r}")
            status, seconds = session.close()
            if status != 0:
                raise Failure(f"exit status {status} after stdin closed{session.log()}")
        finally:
            if session.proc.poll() is None:
                session.proc.kill()
            shutil.rmtree(skills / "later", ignore_errors=True)
        return (
            f"protocol {init['protocolVersion']}; tools/call with and without file, resources/list+read, "
            f"skills/list, prompts/list+get, watcher picked up a new skill; exit 0 {seconds:.1f} s after stdin closed"
        )

    # `npx` as Windows installs it: a .cmd launcher on PATH (here WINEPATH)
    # that starts the real program with the arguments it was given.
    launchers = work / "bin"
    launchers.mkdir(exist_ok=True)
    shutil.copy(wine.test_server, launchers / "mcp_test_server.exe")
    (launchers / "npx.cmd").write_text('@"%~dp0mcp_test_server.exe" %*\r\n', encoding="utf-8")
    wine.env["WINEPATH"] = win(launchers)

    def settings(servers):
        path = work / "mcp.json"
        path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
        return win(path)

    def import_with_cmd_launcher():
        mcp = settings(
            {
                "varied": {"command": "npx", "args": ["varied"]},
                "args": {"command": "npx", "args": ["argv", *TRICKY_ARGS]},
                "percent": {"command": "npx", "args": ["argv", *PERCENT_ARGS]},
                "ghost": {"command": "no-such-npx"},
            }
        )
        out_dir = work / "imported"
        code, out, err = wine.skillserve_run(["import", "--mcp-settings", mcp, "--output-dir", win(out_dir)])
        first = "Generated 10 skills from 3 servers\n"
        ghost = "  failed ghost: cannot start `no-such-npx`: not found in PATH ("
        if code != 1 or not out.startswith(first) or ghost not in out or ".com, .exe, .bat, .cmd)" not in out:
            raise Failure(f"exit {code}:\n{out}{err}")
        code, check_out, err = wine.skillserve_run(["check", "--skills-dir", win(out_dir), "--no-user", "--no-project", "--no-plugins"])
        if code != 0:
            raise Failure(f"check of the generated skills: exit {code}\n{check_out}{err}")
        code, echoed, err = wine.skillserve_run(["invoke", "--mcp-settings", mcp, "varied", "echo", '{"text": "hello from npx.cmd"}'])
        if (code, echoed) != (0, "hello from npx.cmd\n"):
            raise Failure(f"invoke varied echo: exit {code}: {echoed!r} {err!r}")
        code, argv, err = wine.skillserve_run(["invoke", "--mcp-settings", mcp, "args", "argv", "{}"])
        if code != 0 or json.loads(argv) != TRICKY_ARGS:
            raise Failure(f"arguments through npx.cmd: exit {code}\n  sent     {TRICKY_ARGS}\n  received {argv.strip()}\n{err}")
        code, argv, err = wine.skillserve_run(["invoke", "--mcp-settings", mcp, "percent", "argv", "{}"])
        if code != 0:
            raise Failure(f"invoke percent argv: exit {code}\n{err}")
        percent = json.loads(argv)
        verdict = "unchanged" if percent == PERCENT_ARGS else "changed by Wine's cmd.exe (see PERCENT_ARGS)"
        print(f"note `%` arguments through npx.cmd under Wine: sent {PERCENT_ARGS}, received {percent}: {verdict}", flush=True)
        return (
            f"{out.splitlines()[0]}; invoke through npx.cmd; {len(TRICKY_ARGS)} arguments with spaces, quotes, "
            f"^ & | < > ( ) ! ; , = and backslashes arrived unchanged; {ghost.strip()}…"
        )

    def timeout_kills_the_tree():
        marker = f"pid-{os.getpid()}-{time.time_ns()}"
        pidfile = work / marker
        mcp = settings({"slow": {"command": "npx", "args": ["hang", win(pidfile)]}})
        code, out, err = wine.skillserve_run(["import", "--mcp-settings", mcp, "--output-dir", win(work / "slow"), "--timeout", "3"])
        said = "  failed slow: did not answer `initialize` within 3 s"
        if code != 1 or said not in out:
            raise Failure(f"exit {code}:\n{out}{err}")
        if not pidfile.exists():
            raise Failure("the hanging server never started (no pid file)")
        # Wine runs each Windows process as a Linux process whose command line
        # is the Windows one: cmd.exe running npx.cmd, and the server, both
        # carry the marker.
        deadline = time.monotonic() + 15
        while True:
            alive = [p for p in Path("/proc").iterdir() if p.name.isdigit() and marker in cmdline(p)]
            if not alive:
                break
            if time.monotonic() > deadline:
                survivors = "; ".join(cmdline(p) for p in alive)
                for process in alive:  # started by this check: the marker is unique
                    try:
                        os.kill(int(process.name), signal.SIGKILL)
                    except OSError:
                        pass
                raise Failure(f"still running 15 s after import returned (now killed): {survivors}")
            time.sleep(0.2)
        return f"{said.strip()}; cmd.exe and the server it started (Windows pid {pidfile.read_text().strip()}) are gone"

    def short_name_probe():
        found = {}
        for relative in SECRETS:
            parts = PurePosixPath(relative).parts
            short = short_names(wine, probe).get(parts[0])
            if not short:
                raise Failure(f"Wine gave {parts[0]} no short name")
            found[relative] = "/".join([short, *parts[1:]])
        served = []
        lines = []
        session = Session(wine, [*common, "--no-watch"])
        try:
            session.request(
                "initialize",
                {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "wine-check", "version": "1"}},
            )
            session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            for relative, asked in found.items():
                secret = SECRETS[relative]
                _, out, _ = wine.skillserve_run(["show", "probe", asked, *common])
                result = session.request("tools/call", {"name": "skill", "arguments": {"name": "probe", "file": asked}})
                read = session.request("resources/read", {"uri": f"skill://probe/{asked}"}, error_ok=True)
                answers = {"show": out, "tools/call file": text_of(result), "resources/read": json.dumps(read)}
                verdicts = []
                for surface, answer in answers.items():
                    leaked = secret in answer
                    verdicts.append(f"{surface} {'SERVED' if leaked else 'refused'}")
                    if leaked:
                        served.append(f"{asked} ({relative}) via {surface}")
                lines.append(f"{asked} for {relative}: {', '.join(verdicts)}")
            # The long names are refused: the probe can tell the two apart.
            result = session.request("tools/call", {"name": "skill", "arguments": {"name": "probe", "file": ".git/config"}})
            if SECRETS[".git/config"] in text_of(result):
                raise Failure(".git/config itself is served")
            session.close()
        finally:
            if session.proc.poll() is None:
                session.proc.kill()
        detail = "\n       ".join(lines)
        if served:
            print(f"LEAK short names: {detail}", flush=True)
            raise Failure("hidden files served by their 8.3 short names: " + "; ".join(served))
        return detail

    checks.run("--version", version)
    checks.run("list: user skills under USERPROFILE", list_user_skills)
    checks.run("list/serve: HOME=/c/Users/me falls back to USERPROFILE", list_with_git_bash_home)
    checks.run("check", check_command)
    checks.run("show", show)
    checks.run("MCP stdio session", mcp_session)
    checks.run('import/invoke: "command": "npx" as npx.cmd', import_with_cmd_launcher)
    checks.run("import: timeout kills the launcher's process tree", timeout_kills_the_tree)
    checks.run("short-name probe (.git/config, .env, node_modules)", short_name_probe)

    print(f"\n{checks.passed} checks passed, {len(checks.failed)} failed" + (f": {', '.join(checks.failed)}" if checks.failed else ""))
    sys.exit(1 if checks.failed else 0)


def cmdline(proc):
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


if __name__ == "__main__":
    main()
