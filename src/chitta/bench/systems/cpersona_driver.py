"""JSON-lines driver for cpersona MCP stdio servers, one per realm.

Not part of chitta at run time: ``chitta.bench.systems.cpersona`` copies this file into its
work folder and runs it with the python of CPersona's own virtualenv (which has ``mcp``).
"""

import asyncio
import contextlib
import json
import re
import shutil
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

AGENT = sys.argv[2]
ROOT = Path(sys.argv[1])
CALIBRATION_LINE = "Vector threshold startup calibration:"


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name)[:80] or "realm"


class ToolError(Exception):
    pass


class Realm:
    def __init__(self, name, env):
        self.name = name
        self.dir = ROOT / _safe(name)
        self.env = env
        self.stack = None
        self.session = None
        self.starts = 0
        self.log_path = None

    async def start(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        self.log_path = self.dir / f"server-{self.starts}.log"
        stack = contextlib.AsyncExitStack()
        try:
            log = stack.enter_context(open(self.log_path, "w"))  # noqa: SIM115 (the stack closes it)
            env = {**self.env, "CPERSONA_DB_PATH": str(self.dir / "cpersona.db")}
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "cpersona"], env=env, cwd=str(self.dir)
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=log))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
        except BaseException:
            await stack.aclose()
            raise
        self.stack, self.session = stack, session

    async def stop(self):
        if self.stack is not None:
            stack, self.stack, self.session = self.stack, None, None
            await stack.aclose()

    async def call(self, tool, args):
        res = await self.session.call_tool(tool, args)
        text = "".join(getattr(c, "text", "") for c in res.content)
        try:
            data = json.loads(text)
        except ValueError:
            data = {"raw": text}
        if res.isError or (isinstance(data, dict) and data.get("error")):
            raise ToolError(f"{tool} failed: {text[:500]}")
        return data

    async def drain(self, timeout=900.0):
        """Wait until the background task queue is empty (block construction done)."""
        start = time.perf_counter()
        quiet = 0
        while True:
            status = await self.call("get_queue_status", {})
            quiet = quiet + 1 if not status.get("pending") else 0
            if quiet >= 2:
                return (time.perf_counter() - start) * 1000
            if time.perf_counter() - start > timeout:
                raise ToolError(f"queue still has {status.get('pending')} tasks after {timeout}s")
            await asyncio.sleep(0.05)

    async def calibration(self, timeout=900.0):
        """The startup calibration guard's report, once it has been logged."""
        start = time.perf_counter()
        while True:
            for line in self.log_path.read_text(errors="replace").splitlines():
                if CALIBRATION_LINE in line:
                    return line.split(CALIBRATION_LINE, 1)[1].strip()
                if "Startup calibration failed" in line:
                    raise ToolError(line)
            if time.perf_counter() - start > timeout:
                raise ToolError(f"no startup calibration report after {timeout}s")
            await asyncio.sleep(0.05)


def _iso(ms):
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


async def serve():
    realms = {}
    env = {}
    loop = asyncio.get_running_loop()

    def reply(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            op = cmd.get("op")
            if op == "hello":
                import cpersona

                env = dict(cmd.get("env") or {})
                reply(
                    {
                        "ok": True,
                        "cpersona": getattr(cpersona, "__version__", "?"),
                        "python": sys.version.split()[0],
                    }
                )
            elif op == "load":
                name = cmd["realm"]
                if name in realms:
                    raise ToolError(f"realm {name!r} is already loaded")
                realm = Realm(name, env)
                shutil.rmtree(realm.dir, ignore_errors=True)  # a fresh file, never a past run's
                t0 = time.perf_counter()
                await realm.start()
                realms[name] = realm
                start_ms = (time.perf_counter() - t0) * 1000
                stored, skipped, unembedded = 0, [], []
                t0 = time.perf_counter()
                for turn in cmd["turns"]:
                    args = {"agent_id": AGENT, "content": turn["text"], "id": turn["id"]}
                    if turn.get("time") is not None:
                        args["timestamp"] = _iso(turn["time"])
                    data = await realm.call("store", args)
                    if data.get("result") == "stored":
                        stored += 1
                        if not data.get("embedded"):
                            unembedded.append(turn["id"])
                    else:
                        skipped.append(
                            {
                                "id": turn["id"],
                                "result": data.get("result"),
                                "reason": data.get("reason"),
                                "row": data.get("id"),
                            }
                        )
                store_ms = (time.perf_counter() - t0) * 1000
                drain_ms = await realm.drain()
                out = {
                    "ok": True,
                    "stored": stored,
                    "skipped": skipped,
                    "unembedded": unembedded,
                    "start_ms": start_ms,
                    "store_ms": store_ms,
                    "drain_ms": drain_ms,
                }
                if cmd.get("calibrate") == "restart":
                    t0 = time.perf_counter()
                    await realm.stop()
                    await realm.start()
                    out["calibration"] = await realm.calibration()
                    out["restart_drain_ms"] = await realm.drain()
                    out["restart_ms"] = (time.perf_counter() - t0) * 1000
                reply(out)
            elif op == "query":
                realm = realms.get(cmd["realm"])
                if realm is None:
                    raise ToolError(f"realm {cmd['realm']!r} was never loaded")
                args = {"agent_id": AGENT, "query": cmd["query"], "limit": int(cmd["limit"])}
                t0 = time.perf_counter()
                data = await realm.call("recall", args)
                ms = (time.perf_counter() - t0) * 1000
                messages = data.get("messages") or []
                ids, seen = [], set()
                # The tool lists rows in ascending relevance (the last is the best), with the
                # reserved seats (block reach, ...) before the ranked rows: reversed, best first.
                for m in reversed(messages):
                    mid = m.get("id")
                    if isinstance(mid, str) and mid not in seen:
                        seen.add(mid)
                        ids.append(mid)
                reserved = sum(
                    1
                    for m in messages
                    if (m.get("match_reason") or {}).get("admission") == "reservation"
                )
                reply(
                    {
                        "ok": True,
                        "ids": ids,
                        "ms": ms,
                        "returned": len(messages),
                        "reserved": reserved,
                        "advisory": data.get("advisory"),
                    }
                )
            elif op == "drop":
                realm = realms.pop(cmd["realm"], None)
                if realm is not None:
                    await realm.stop()
                reply({"ok": True})
            elif op == "close":
                for realm in list(realms.values()):
                    await realm.stop()
                realms.clear()
                reply({"ok": True})
                break
            else:
                raise ToolError(f"unknown op {op!r}")
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            reply({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
    for realm in list(realms.values()):
        with contextlib.suppress(Exception):
            await realm.stop()


asyncio.run(serve())
