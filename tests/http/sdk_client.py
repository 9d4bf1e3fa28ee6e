"""The official MCP Python SDK's Streamable HTTP client against `skillserve
serve --http`, in both protocol eras: every surface, a change reaching the
client (list-changed on the session stream for 2025-11-25, on a
`subscriptions/listen` stream for 2026-07-28), and answers that name no
server path.

Usage: sdk_client.py URL SKILLS_DIR TOKEN
(run by tests/http/run.sh, which starts the server). Exits non-zero on the
first failed check, naming it.
"""

import asyncio
import json
import pathlib
import sys

import anyio
import httpx2  # the SDK's HTTP client (a fork of httpx), already installed with `mcp`
from pydantic import TypeAdapter
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REMOTE_BASE = (
    "Base directory: skill://pdf/ (this server is remote: read the skill's files "
    'with the skill tool\'s "file" argument)'
)


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def dump(value):
    if hasattr(value, "model_dump"):
        return json.dumps(value.model_dump(mode="json", by_alias=True))
    return json.dumps(value)


async def exercise(url, skills_dir, token, mode):
    era = "2025-11-25" if mode == "legacy" else "2026-07-28"
    changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http_client)
    async with http_client, Client(transport, mode=mode, message_handler=on_message) as client:
        check(client.protocol_version == era, f"[{era}] negotiated {client.protocol_version}")
        check("This server is remote" in (client.instructions or ""), f"[{era}] remote instructions")
        seen = []

        tools = await client.list_tools()
        seen.append(tools)
        check([t.name for t in tools.tools] == ["skill"], f"[{era}] tools/list has the one tool")
        check("- pdf: " in tools.tools[0].description, f"[{era}] the description lists pdf")

        result = await client.call_tool("skill", {"name": "pdf"})
        seen.append(result)
        text = result.content[0].text
        check(text.startswith(f"Loading: pdf\n{REMOTE_BASE}\n\n---\n"), f"[{era}] tools/call: Base directory names skill://")
        check(not result.is_error, f"[{era}] tools/call succeeds")
        result = await client.call_tool("skill", {"name": "pdf", "file": "references/forms.md"})
        seen.append(result)
        check(
            result.content[0].text.startswith(f"Loading: pdf/references/forms.md\n{REMOTE_BASE}\n\n"),
            f"[{era}] tools/call with file",
        )
        result = await client.call_tool("skill", {"name": "pfd"})
        seen.append(result)
        check(result.is_error and "not found" in result.content[0].text, f"[{era}] a miss is a tool error")

        prompts = await client.list_prompts()
        seen.append(prompts)
        check("pdf" in [p.name for p in prompts.prompts], f"[{era}] prompts/list")
        prompt = await client.get_prompt("pdf", {})
        seen.append(prompt)
        check(json.dumps(REMOTE_BASE)[1:-1] in dump(prompt), f"[{era}] prompts/get carries the remote Base directory")

        resources = await client.list_resources()
        seen.append(resources)
        uris = [str(r.uri) for r in resources.resources]
        check("skill://pdf/SKILL.md" in uris, f"[{era}] resources/list")
        templates = await client.list_resource_templates()
        seen.append(templates)
        check(len(templates.resource_templates) > 0, f"[{era}] resources/templates/list")
        read = await client.read_resource("skill://pdf/SKILL.md")
        seen.append(read)
        check("name: pdf" in read.contents[0].text, f"[{era}] resources/read")

        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="pdf"), {"name": "task", "value": ""}
        )
        seen.append(completion)
        check(completion is not None, f"[{era}] completion/complete")

        skills = await client.session.send_request(
            types.Request(method="skills/list", params=None), result_type=TypeAdapter(dict)
        )
        seen.append(skills)
        names = [s["frontmatter"]["name"] for s in skills.get("skills", [])]
        check("pdf" in names, f"[{era}] skills/list (SEP-2640) lists pdf")

        for item in seen:
            check(str(skills_dir) not in dump(item), f"[{era}] no server path in {type(item).__name__}")

        # A change reaches the client.
        name = "fresh-" + era.replace("-", "")
        folder = pathlib.Path(skills_dir) / name
        if mode == "legacy":
            folder.mkdir()
            (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Added while serving.\n---\nbody\n")
            with anyio.fail_after(20):
                await changed.wait()
            check(True, f"[{era}] tools/list_changed on the session stream")
        else:
            async with client.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
                folder.mkdir()
                (folder / "SKILL.md").write_text(
                    f"---\nname: {name}\ndescription: Added while serving.\n---\nbody\n"
                )
                with anyio.fail_after(20):
                    async for _event in subscription:
                        break
            check(True, f"[{era}] a change on the subscriptions/listen stream")
        tools = await client.list_tools(cache_mode="refresh") if mode != "legacy" else await client.list_tools()
        check(f"- {name}: Added while serving." in tools.tools[0].description, f"[{era}] the new skill is listed")


async def unauthorized(url):
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    check(response.status_code == 401, "no token: 401")
    check(response.headers.get("www-authenticate") == 'Bearer realm="skillserve"', "no token: WWW-Authenticate")


async def main():
    url, skills_dir, token = sys.argv[1], pathlib.Path(sys.argv[2]).resolve(), sys.argv[3]
    await unauthorized(url)
    await exercise(url, skills_dir, token, "legacy")
    # "auto" asks server/discover first and lands on 2026-07-28.
    await exercise(url, skills_dir, token, "auto")
    print("python sdk: all checks passed")


asyncio.run(main())
