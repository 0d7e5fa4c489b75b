"""Real queries through the installed package: the zr binary of the
wheel, against the loopback model server of conftest.py."""

import asyncio
import json

import pytest

from conftest import Model, system, turns
from zr import (
    AgentDefinition,
    Client,
    HookMatcher,
    Options,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SubagentFinished,
    PermissionDenied,
    ZrError,
    query,
    tool,
)

WORKER = "You are the worker."


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=60))


async def collect(prompt, options):
    return [m async for m in query(prompt, options=options)]


@tool(read_only=True)
def lookup(key: str) -> str:
    """Looks a key up in the table."""
    return {"answer": "the value is 42"}.get(key, "no such key")


def delegating(body):
    """The root delegates to the worker, which calls lookup, then both answer."""
    sub = WORKER in system(body)
    if not sub and turns(body) == 1:
        return None, [("t1", "Task", {"subagent_type": "worker", "description": "look", "prompt": "find it"})]
    if sub and turns(body) == 1:
        return None, [("l1", "lookup", {"key": "answer"})]
    return ("the worker found it" if sub else "all done"), []


def test_a_subagent_calls_a_python_tool(project):
    model = Model(delegating)
    options = Options(
        cwd=project,
        env=model.env(),
        tools=[lookup],
        agents={"worker": AgentDefinition(description="Looks things up.", prompt=WORKER, tools=["lookup"])},
    )
    messages = run(collect("look it up", options))
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert result.status == "completed", result
    assert result.result == "all done"
    assert any(isinstance(m, SubagentFinished) for m in messages)
    second = [b for b in model.requests if WORKER in system(b) and turns(b) == 3]
    assert second, model.requests
    assert "the value is 42" in json.dumps(second[0]["messages"][2])
    first = next(b for b in model.requests if WORKER in system(b) and turns(b) == 1)
    names = [t["name"] for t in first["tools"]]
    assert "lookup" in names
    schema = next(t for t in first["tools"] if t["name"] == "lookup")["input_schema"]
    assert schema == {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}


def test_a_permission_callback_denies_one_call(project):
    notes = []

    @tool
    def note(text: str) -> str:
        """Writes a note."""
        notes.append(text)
        return "written"

    asked = []

    async def can_use_tool(name, arguments, context):
        asked.append((name, arguments, context.agent))
        if arguments["text"] == "second":
            return PermissionResultDeny(message="no second notes")
        return PermissionResultAllow()

    model = Model(lambda b: (None, [("n1", "note", {"text": "first"}), ("n2", "note", {"text": "second"})])
                  if turns(b) == 1 else ("noted", []))
    messages = run(collect("take notes", Options(cwd=project, env=model.env(), tools=[note], can_use_tool=can_use_tool)))
    assert messages[-1].status == "completed"
    assert notes == ["first"]
    assert len(asked) == 2 and asked[0][2] == "root"
    denied = [m for m in messages if isinstance(m, PermissionDenied)]
    assert len(denied) == 1 and "no second notes" in denied[0].reason
    assert "no second notes" in json.dumps(model.requests[-1]["messages"][2])


def test_a_pre_tool_use_hook_blocks_a_call_and_rewrites_another(project):
    seen = []

    async def guard(data, tool_use_id, context):
        seen.append(data["tool_input"]["key"])
        if data["tool_input"]["key"] == "secret":
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "secrets stay secret"}}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"key": "answer"}}}

    model = Model(lambda b: (None, [("a", "lookup", {"key": "secret"}), ("b", "lookup", {"key": "other"})])
                  if turns(b) == 1 else ("ok", []))
    options = Options(cwd=project, env=model.env(), tools=[lookup],
                      hooks={"PreToolUse": [HookMatcher(matcher="lookup", hooks=[guard])]})
    messages = run(collect("look", options))
    assert messages[-1].status == "completed"
    assert sorted(seen) == ["other", "secret"]
    results = json.dumps(model.requests[-1]["messages"][2])
    assert "secrets stay secret" in results
    assert "the value is 42" in results  # the rewritten input ran


def test_multitask_runs_subagents_that_call_the_python_tool(project):
    calls = []

    @tool(read_only=True)
    async def count(n: int) -> str:
        """Counts."""
        calls.append(n)
        return f"counted {n}"

    def model_answer(body):
        sub = WORKER in system(body)
        if not sub and turns(body) == 1:
            return None, [("m", "MultiTask", {"tasks": [
                {"subagent_type": "worker", "description": "one", "prompt": "count 1"},
                {"subagent_type": "worker", "description": "two", "prompt": "count 2"},
            ]})]
        if sub and turns(body) == 1:
            n = 1 if "count 1" in json.dumps(body["messages"]) else 2
            return None, [("c", "count", {"n": n})]
        return "done", []

    model = Model(model_answer)
    options = Options(cwd=project, env=model.env(), tools=[count],
                      agents={"worker": AgentDefinition(description="Counts.", prompt=WORKER, tools=["count"])})
    messages = run(collect("count twice", options))
    assert messages[-1].status == "completed"
    assert sorted(calls) == [1, 2]
    assert len([m for m in messages if isinstance(m, SubagentFinished)]) == 2


def test_interrupt_stops_a_query_and_resume_continues_the_session(project):
    started = asyncio.Event
    model = Model(lambda b: (None, [("w", "wait", {})]) if turns(b) == 1 else ("resumed answer", []))

    async def scenario():
        entered = asyncio.Event()

        @tool(read_only=True)
        async def wait() -> str:
            """Waits forever."""
            entered.set()
            await asyncio.sleep(3600)
            return "never"

        async with Client(Options(cwd=project, env=model.env(), tools=[wait])) as client:
            await client.query("wait for it")
            messages = client.receive_response()
            await entered.wait()
            await client.interrupt()
            result = [m async for m in messages][-1]
        assert result.status == "interrupted", result
        assert "interrupted" in (result.error or "")
        # A new process continues the saved session.
        resumed = [m async for m in query("go on", options=Options(cwd=project, env=model.env(), resume=result.session))]
        return result, resumed[-1]

    first, second = run(scenario())
    assert second.status == "completed", second
    assert second.session == first.session
    assert second.result == "resumed answer"
    # The resumed request carries the first prompt's history.
    assert "wait for it" in json.dumps(model.requests[-1]["messages"])
    del started


def test_multi_turn_on_one_client(project):
    model = Model(lambda b: (f"answer {turns(b)}", []))

    async def scenario():
        async with Client(Options(cwd=project, env=model.env())) as client:
            await client.query("first")
            one = [m async for m in client.receive_response()][-1]
            await client.query("second")
            two = [m async for m in client.receive_response()][-1]
        return one, two

    one, two = run(scenario())
    assert (one.result, two.result) == ("answer 1", "answer 3")
    assert one.session == two.session


def test_an_error_is_an_exception_with_zr_s_text(project):
    # No provider: zr's own message and help.
    with pytest.raises(ZrError) as error:
        run(collect("hi", Options(cwd=project)))
    assert "no model provider is set" in str(error.value)
