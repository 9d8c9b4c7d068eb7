"""Per-call latency of `cordon mcp`'s exec_command ["true"], from the official Python MCP
client (the `mcp` package). Usage: python mcp_latency.py CORDON CALLS (in the workspace).
Prints one line: `mcp MEDIAN_MS P95_MS` (milliseconds)."""

import asyncio
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters, stdio_client

CORDON, CALLS = sys.argv[1], int(sys.argv[2])
SERVER = StdioServerParameters(
    command=CORDON,
    args=["mcp"],
    env={"HOME": os.environ["HOME"], "PATH": os.environ["PATH"]},
    cwd=os.getcwd(),
)


async def main():
    async with stdio_client(SERVER) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for _ in range(5):  # warm-up
                await s.call_tool("exec_command", {"argv": ["true"]})
            times = []
            for _ in range(CALLS):
                t = time.perf_counter()
                res = await s.call_tool("exec_command", {"argv": ["true"]})
                times.append((time.perf_counter() - t) * 1000)
                assert not res.is_error, res
    times.sort()
    med = times[len(times) // 2]
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(f"mcp {med:.2f} {p95:.2f}")


asyncio.run(main())
