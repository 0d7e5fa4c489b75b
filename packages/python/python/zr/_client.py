"""The session: one ``zr host`` process, its stdio spoken as the host
protocol. Questions from zr (host tool calls, permission questions, hook
calls) are answered by tasks of their own while events stream."""

import asyncio
import json
import logging
import os
import shutil
import sysconfig
from typing import Any, AsyncIterator, Dict, Optional, Set, Union

from ._errors import ProtocolError, ZrError
from ._messages import PROTOCOL_VERSION, Event, ResultMessage, parse_event, parse_result
from ._options import (
    HookContext,
    Options,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

log = logging.getLogger("zr")

Message = Union[Event, ResultMessage]

# Lines may carry whole tool inputs and results.
_LINE_LIMIT = 64 * 1024 * 1024


def find_binary(options: Options) -> str:
    """The zr binary: ``options.cli_path``, ``$ZR_BINARY``, the one this
    wheel installed beside the interpreter, or ``zr`` on ``PATH``."""
    for candidate in (
        options.cli_path,
        os.environ.get("ZR_BINARY"),
        os.path.join(sysconfig.get_path("scripts"), "zr"),
    ):
        if candidate and os.path.isfile(candidate):
            return candidate
    found = shutil.which("zr")
    if found:
        return found
    raise ZrError("the zr binary is not installed: reinstall the zr-agents package, or set ZR_BINARY")


class Client:
    """A session that may span several queries::

        async with Client(Options(tools=[lookup])) as client:
            await client.query("Find the key")
            async for message in client.receive_response():
                print(message)
            await client.query("And the next one")   # the same session
            async for message in client.receive_response():
                ...

    ``interrupt()`` stops the running query (its result has status
    ``interrupted``; the session can be resumed)."""

    def __init__(self, options: Optional[Options] = None):
        self.options = options or Options()
        self._process: Optional[asyncio.subprocess.Process] = None
        self._messages: "asyncio.Queue[Any]" = asyncio.Queue()
        self._reader: Optional[asyncio.Task] = None
        self._tasks: Set[asyncio.Task] = set()
        self._started = False
        self._tools = {t.name: t for t in self.options.tools}
        self.session_id: Optional[str] = None

    async def __aenter__(self) -> "Client":
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def connect(self) -> None:
        """Starts zr and exchanges the protocol version."""
        if self._process is not None:
            return
        env = {**os.environ, **self.options.env}
        self._process = await asyncio.create_subprocess_exec(
            find_binary(self.options),
            "host",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=self.options.cwd,
            env=env,
            limit=_LINE_LIMIT,
        )
        await self._send({"type": "hello", "protocol": PROTOCOL_VERSION, "client": "zr-agents (python)"})
        hello = await self._line()
        if hello is None:
            raise ZrError("zr exited before it answered", exit_code=await self._process.wait())
        if hello.get("type") == "error":
            raise ProtocolError(hello.get("message", "zr refused the session"))
        if hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL_VERSION:
            raise ProtocolError(f"zr answered the hello with {hello}")
        self._reader = asyncio.create_task(self._read())

    async def query(self, prompt: str) -> None:
        """Sends a prompt: the session's first, or the next one of it."""
        await self.connect()
        if not self._started:
            self._started = True
            await self._send({"type": "query", "prompt": prompt, "options": self.options.spec()})
        else:
            await self._send({"type": "prompt", "prompt": prompt})

    async def receive_response(self) -> AsyncIterator[Message]:
        """The events of the running query, then its :class:`ResultMessage`."""
        while True:
            item = await self._messages.get()
            if isinstance(item, BaseException):
                raise item
            yield item
            if isinstance(item, ResultMessage):
                self.session_id = item.session
                return

    async def interrupt(self) -> None:
        """Stops the running query."""
        await self._send({"type": "interrupt"})

    async def close(self) -> None:
        """Closes zr's standard input and waits for it to exit."""
        process = self._process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=30)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        if self._reader is not None:
            self._reader.cancel()
        for task in list(self._tasks):
            task.cancel()

    # --- the wire ---

    async def _send(self, message: Dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write((json.dumps(message) + "\n").encode())
            await self._process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ZrError(f"zr is gone: {e}") from e

    async def _line(self) -> Optional[Dict[str, Any]]:
        assert self._process is not None and self._process.stdout is not None
        raw = await self._process.stdout.readline()
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as e:
            raise ProtocolError(f"zr wrote a line that is not JSON ({e}): {raw[:200]!r}") from e

    async def _read(self) -> None:
        try:
            while True:
                line = await self._line()
                if line is None:
                    code = await self._process.wait() if self._process else None
                    await self._messages.put(ZrError(f"zr exited (code {code}) before the query ended", exit_code=code))
                    return
                kind = line.get("type")
                if kind == "event":
                    await self._messages.put(parse_event(line))
                elif kind == "result":
                    await self._messages.put(parse_result(line))
                elif kind in ("tool_call", "can_use_tool", "hook_call"):
                    task = asyncio.create_task(self._answer(line))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                elif kind == "error":
                    if line.get("fatal"):
                        code = await self._process.wait() if self._process else None
                        await self._messages.put(ZrError(line.get("message", "zr failed"), exit_code=code))
                        return
                    log.warning("zr: %s", line.get("message"))
        except Exception as e:  # reported to whoever reads the messages
            await self._messages.put(e)

    async def _answer(self, line: Dict[str, Any]) -> None:
        kind = line["type"]
        try:
            if kind == "tool_call":
                reply = await self._run_tool(line)
            elif kind == "can_use_tool":
                reply = await self._permission(line)
            else:
                reply = await self._hook(line)
        except Exception as e:
            log.exception("zr: answering %s failed", kind)
            reply = self._failed(line, e)
        await self._send(reply)

    async def _run_tool(self, line: Dict[str, Any]) -> Dict[str, Any]:
        tool = self._tools.get(line["tool"])
        if tool is None:
            text, is_error = f"no host tool '{line['tool']}'", True
        else:
            text, is_error = await tool.run(line.get("input") or {})
        return {"type": "tool_result", "id": line["id"], "content": text, "is_error": is_error}

    async def _permission(self, line: Dict[str, Any]) -> Dict[str, Any]:
        callback = self.options.can_use_tool
        context = ToolPermissionContext(line["agent"], line["agent_type"], line.get("crossing"))
        decision = await callback(line["tool"], line.get("input"), context) if callback else PermissionResultDeny("no can_use_tool")
        if isinstance(decision, PermissionResultAllow) or decision is True:
            return {"type": "permission_answer", "id": line["id"], "behavior": "allow",
                    "for_session": bool(getattr(decision, "for_session", False))}
        message = getattr(decision, "message", "") or "denied by can_use_tool"
        return {"type": "permission_answer", "id": line["id"], "behavior": "deny", "message": message}

    async def _hook(self, line: Dict[str, Any]) -> Dict[str, Any]:
        event = line["event"]
        data = {
            "hook_event_name": event,
            "session_id": line["session"],
            "agent_id": line["agent"],
            "agent_type": line["agent_type"],
        }
        if "tool" in line:
            data["tool_name"] = line["tool"]
            data["tool_input"] = line.get("input")
        if "output" in line:
            data["tool_response" if event == "PostToolUse" else "output"] = line["output"]
        context = HookContext(line["session"], line["agent"], line["agent_type"])
        answer: Dict[str, Any] = {"type": "hook_answer", "id": line["id"]}
        for matcher in self.options.hooks.get(event, []):
            if not matcher.matches(line.get("tool")):
                continue
            for hook in matcher.hooks:
                out = await hook(data, None, context) or {}
                specific = out.get("hookSpecificOutput") or {}
                decision = specific.get("permissionDecision") or {"block": "deny", "approve": "allow"}.get(out.get("decision", ""))
                reason = specific.get("permissionDecisionReason") or out.get("reason")
                if "updatedInput" in specific:
                    answer["updated_input"] = specific["updatedInput"]
                    data["tool_input"] = specific["updatedInput"]
                if decision in ("allow", "deny"):
                    answer["decision"] = decision
                if reason:
                    answer["reason"] = reason
                if decision == "deny":
                    return answer
        return answer

    @staticmethod
    def _failed(line: Dict[str, Any], error: Exception) -> Dict[str, Any]:
        text = f"{type(error).__name__}: {error}"
        if line["type"] == "tool_call":
            return {"type": "tool_result", "id": line["id"], "content": text, "is_error": True}
        if line["type"] == "can_use_tool":
            return {"type": "permission_answer", "id": line["id"], "behavior": "deny",
                    "message": f"the host's can_use_tool failed: {text}"}
        return {"type": "hook_answer", "id": line["id"]}


async def query(prompt: str, *, options: Optional[Options] = None) -> AsyncIterator[Message]:
    """One query in a new session (or the one ``options.resume`` names):
    its events, then its :class:`ResultMessage`. Raises :class:`ZrError`
    with zr's text when the session cannot run."""
    client = Client(options)
    try:
        await client.query(prompt)
        async for message in client.receive_response():
            yield message
    finally:
        await client.close()
