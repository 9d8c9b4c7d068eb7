"""`cordon mcp` driven by the official Python MCP client (the `mcp` package from PyPI).

Run by crates/cordon/tests/mcp.rs as: python mcp_client.py CORDON RULES_FILE
in a workspace directory (cwd) whose HOME is outside it. Prints one `ok …` line per step;
any failure raises (non-zero exit).
"""

import asyncio
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types

CORDON, RULES = sys.argv[1], sys.argv[2]
SERVER = StdioServerParameters(
    command=CORDON,
    args=["mcp", "--rules", RULES],
    env={"HOME": os.environ["HOME"], "PATH": os.environ["PATH"]},
    cwd=os.getcwd(),
)


def ok(what):
    print("ok", what, flush=True)


def sc(result):
    """The structured content of a tool result."""
    assert result.structured_content is not None, result
    return result.structured_content


def outcome(result):
    return (sc(result).get("outcome") or {}).get("outcome")


async def call(session, tool, **args):
    return await session.call_tool(tool, args)


async def send(session, sid, chars, needle):
    """Writes `chars` to a session, then reads until `needle` appears in what came back."""
    r = sc(await call(session, "write_stdin", session_id=sid, chars=chars))
    seen = r["output"]["text"]
    if needle in seen:
        return seen
    return seen + await read_until(session, sid, needle, seen=seen)


async def read_until(session, sid, needle, seconds=20, seen=""):
    """Reads a session's output until `needle` appears (bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r = sc(await call(session, "read_output", session_id=sid, wait_ms=500))
        seen += r["output"]["text"]
        if needle in seen:
            return seen
        assert r["running"], f"ended before {needle!r}: {seen!r} {r}"
    raise AssertionError(f"no {needle!r} in {seen!r}")


asked = []
schemas = []
next_answers = []


async def approve_once(context, params):
    asked.append(params.message)
    schemas.append(params.requested_schema)
    answer = next_answers.pop(0) if next_answers else "once"
    if answer == "(decline)":
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content={"answer": answer})


async def with_person():
    async with stdio_client(SERVER) as (read, write):
        async with ClientSession(read, write, elicitation_callback=approve_once) as s:
            init = await s.initialize()
            # nu24 F7a: the server names itself, not the SDK (the field's Python name
            # differs between releases of the `mcp` package).
            info = getattr(init, "server_info", None) or getattr(init, "serverInfo")
            assert info.name == "cordon", info
            ok("server is " + info.name + " " + info.version)

            tools = {t.name for t in (await s.list_tools()).tools}
            assert {"exec_command", "write_stdin", "read_output", "kill"} <= tools, tools
            ok("tools listed")

            res = (await s.list_resources()).resources
            assert any(str(r.uri) == "cordon://environment_context" for r in res), res
            ctx = (await s.read_resource("cordon://environment_context")).contents[0].text
            assert "environment_context" in ctx and os.getcwd() in ctx, ctx
            ok("environment_context resource")

            # A confined command: writes in the workspace, reports what was applied.
            r = await call(s, "exec_command", argv=["sh", "-c", "echo hello > inside.txt; cat inside.txt"])
            assert outcome(r) == "success", sc(r)
            assert "hello" in sc(r)["output"]["text"], sc(r)
            assert sc(r)["sandbox"]["applied"], sc(r)
            assert "success" in r.content[0].text
            ok("confined command: " + "; ".join(sc(r)["sandbox"]["applied"][:2]))

            # Input given with the call (nu11 M9: a string stdin was ignored), and an
            # argument of the wrong type is an error naming it, not ignored.
            r = await call(s, "exec_command", argv=["cat"], stdin="from the call\n")
            assert outcome(r) == "success", sc(r)
            assert sc(r)["output"]["text"] == "from the call\n", sc(r)
            r = await call(s, "exec_command", argv=["true"], timeout_ms="5000")
            assert r.is_error and "timeout_ms" in r.content[0].text, r.content
            ok("stdin text; a wrongly typed argument is an error naming it")

            # A write outside the workspace is denied by the sandbox, and classified.
            # (In a directory of its own: the home itself is never offered as a grant.)
            out = os.path.join(os.environ["HOME"], "out")
            os.makedirs(out, exist_ok=True)
            r = await call(s, "exec_command", script=f"echo x > {out}/outside.txt")
            o = sc(r)["outcome"]
            assert o["outcome"] == "sandbox-denied", sc(r)
            assert o.get("path", "").endswith("outside.txt"), o
            assert not os.path.exists(f"{out}/outside.txt")
            assert r.is_error
            assert "additional_permissions" in r.content[0].text, r.content[0].text
            ok("denied write classified sandbox-denied: " + o.get("hint", ""))

            # A command the rules say to ask about: asked through elicitation, approved.
            r = await call(s, "exec_command", argv=["touch", "approved.txt"],
                           justification="the test needs the marker file")
            assert outcome(r) == "success", sc(r)
            assert os.path.exists("approved.txt")
            assert len(asked) == 1 and "touch approved.txt" in asked[0], asked
            assert "the test needs the marker file" in asked[0], asked[0]
            assert sc(r)["approval"]["by"] == "mcp client", sc(r)["approval"]
            ok("approved via elicitation")

            # A declined form is a denial that says it was declined (new-user pass 243 #6).
            next_answers.append("(decline)")
            r = await call(s, "exec_command", argv=["touch", "declined.txt"])
            o = sc(r)["outcome"]
            assert o["outcome"] == "refused" and "declined" in o["why"], o
            assert not os.path.exists("declined.txt")
            ok("declined form: refused, said so")

            # The form describes exactly the answers it offers; an answer it does not offer
            # is a denial that says so (nu20 G5, nu21 K4).
            answer = schemas[-1]["properties"]["answer"]
            described = {d.split(":")[0].strip() for d in answer["description"].split(";")}
            assert described == set(answer["enum"]), answer
            next_answers.append("yes please")
            r = await call(s, "exec_command", argv=["touch", "approved-2.txt"])
            o = sc(r)["outcome"]
            assert o["outcome"] == "refused", o
            assert "is not one this request offers" in o["why"], o
            assert not os.path.exists("approved-2.txt")
            ok("an answer the form does not offer is refused, and said")

            # A 20-command session: one shell, cwd and variables persist.
            r = sc(await call(s, "exec_command", argv=["bash"], stdin=True, yield_time_ms=200))
            sid = r["session_id"]
            assert r["running"] and sid, r
            await call(s, "write_stdin", session_id=sid, chars="mkdir -p sub && cd sub; N=0\n")
            for i in range(1, 21):
                await send(s, sid, f"N=$((N+1)); echo \"step {i} $N $(basename $PWD)\"\n",
                           f"step {i} {i} sub")
            r = sc(await call(s, "write_stdin", session_id=sid, chars="exit 3\n", close_stdin=True))
            if r["running"] or r["outcome"] is None:
                r = sc(await call(s, "read_output", session_id=sid, wait_for_exit=True, wait_ms=10000))
            assert r["outcome"]["outcome"] == "command-failed" and r["outcome"]["exit_code"] == 3, r
            ok("20-command session")

            # An interactive Python REPL on a terminal inside the sandbox.
            r = sc(await call(s, "exec_command", argv=["python3", "-q", "-i"], tty=True,
                              rows=30, cols=100, yield_time_ms=300))
            sid = r["session_id"]
            out = r["output"]["text"]
            if ">>> " not in out:
                await read_until(s, sid, ">>> ")
            await send(s, sid, "print(6*7)\n", "42")
            await send(s, sid, "import os, shutil; print('TTY', os.isatty(0), shutil.get_terminal_size())\n",
                       "TTY True os.terminal_size(columns=100, lines=30)")
            await call(s, "read_output", session_id=sid, rows=40, cols=120, wait_ms=100)
            await send(s, sid, "print('SIZE', shutil.get_terminal_size())\n",
                       "SIZE os.terminal_size(columns=120, lines=40)")
            r = sc(await call(s, "write_stdin", session_id=sid, chars="exit()\n"))
            # The answer that sees the end carries the outcome; the session is then gone.
            if r["outcome"] is None:
                r = sc(await call(s, "read_output", session_id=sid, wait_for_exit=True, wait_ms=10000))
            assert r["outcome"]["outcome"] == "success", r
            ok("interactive python REPL on a terminal")

            # Kill ends the whole tree; the outcome says cancelled.
            r = sc(await call(s, "exec_command", script="sleep 100 & sleep 100", yield_time_ms=200))
            sid = r["session_id"]
            raw = await call(s, "kill", session_id=sid)
            r = sc(raw)
            assert r["outcome"]["outcome"] == "cancelled", r
            assert r["session_id"] is None
            # What the agent asked for: not an error (nu19 F14).
            assert not raw.is_error, raw
            r = await call(s, "read_output", session_id=sid)
            assert r.is_error and "no session" in r.content[0].text, r
            ok("kill")


async def without_person():
    # No elicitation capability: what would be asked is denied with the reason (R-A6).
    async with stdio_client(SERVER) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            r = await call(s, "exec_command", argv=["touch", "approved-2.txt"])
            o = sc(r)["outcome"]
            assert o["outcome"] == "refused" and "R-A6" in o["why"], o
            # The note speaks MCP, not the CLI's flags.
            assert "elicitation" in o["why"] and "--yes" not in o["why"], o
            assert not os.path.exists("approved-2.txt")
            ok("no elicitation: refused (R-A6)")
            # A session left running when the client goes away.
            r = sc(await call(s, "exec_command", argv=["sleep", "3133"], yield_time_ms=100))
            assert r["running"], r


def sleepers():
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read() == b"sleep\x003133\x00":
                        n += 1
            except OSError:
                pass
    return n


async def main():
    await with_person()
    await without_person()
    deadline = time.monotonic() + 10
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sleepers() == 0, "a session outlived the server"
    ok("server exit killed the sessions")


asyncio.run(main())
