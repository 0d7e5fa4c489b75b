"""The messages zr sends, as dataclasses matching
``schema/host-protocol.schema.json`` (its ``Event`` kinds and
``QueryEnd``). Keys this version does not know are ignored; an event kind
it does not know comes as a plain :class:`Event` with ``kind`` set."""

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Dict, Optional

PROTOCOL_VERSION = 1


@dataclass
class Event:
    """Something that happened in the session: ``at_ms`` since the query
    started, in ``agent`` (``root``, ``root.0001-worker``) of type
    ``agent_type``."""

    at_ms: int
    agent: str
    agent_type: str
    kind: ClassVar[str] = ""


def _event(kind: str):
    def wrap(cls):
        cls = dataclass(cls)
        cls.kind = kind
        _KINDS[kind] = cls
        return cls

    return wrap


_KINDS: Dict[str, type] = {}


@_event("text_delta")
class TextDelta(Event):
    text: str = ""


@_event("thinking_delta")
class ThinkingDelta(Event):
    text: str = ""


@_event("model_retry")
class ModelRetry(Event):
    attempt: int = 0
    delay_ms: int = 0
    reason: str = ""


@_event("turn_finished")
class TurnFinished(Event):
    turn: int = 0
    stop_reason: str = ""
    usage: Dict[str, int] = field(default_factory=dict)


@_event("usage")
class UsageUpdate(Event):
    agent_usage: Dict[str, int] = field(default_factory=dict)
    total_usage: Dict[str, int] = field(default_factory=dict)


@_event("tool_call_started")
class ToolCallStarted(Event):
    call_id: str = ""
    tool: str = ""
    input: Any = None


@_event("tool_call_finished")
class ToolCallFinished(Event):
    call_id: str = ""
    tool: str = ""
    is_error: bool = False
    summary: str = ""
    duration_ms: int = 0


@_event("tool_failed")
class ToolFailed(Event):
    call_id: str = ""
    tool: str = ""
    error: str = ""


@_event("subagent_started")
class SubagentStarted(Event):
    parent: str = ""
    description: str = ""
    index: int = 0
    background: bool = False


@_event("subagent_running")
class SubagentRunning(Event):
    pass


@_event("subagent_finished")
class SubagentFinished(Event):
    result: Dict[str, Any] = field(default_factory=dict)


@_event("subagent_progress")
class SubagentProgress(Event):
    summary: str = ""


@_event("permission_denied")
class PermissionDenied(Event):
    call_id: str = ""
    tool: str = ""
    reason: str = ""


@_event("compacted")
class Compacted(Event):
    before_tokens: int = 0
    after_tokens: int = 0
    messages: int = 0
    usage: Dict[str, int] = field(default_factory=dict)


@_event("compaction_failed")
class CompactionFailed(Event):
    before_tokens: int = 0
    reason: str = ""


@_event("transcript_error")
class TranscriptError(Event):
    path: str = ""
    error: str = ""


@_event("resume_warning")
class ResumeWarning(Event):
    message: str = ""


@_event("hook_stopped")
class HookStopped(Event):
    """A hook stopped the agent (``"continue": false``); it ends with
    status ``stopped``."""

    reason: str = ""


@dataclass
class ResultMessage:
    """The end of a query: ``status`` is ``completed``, ``max_turns``,
    ``denied``, ..., ``interrupted`` or ``error`` (then ``error`` says
    why); ``session`` is what ``Options(resume=...)`` takes."""

    session: str
    status: str
    output: str = ""
    turns: int = 0
    usage: Dict[str, int] = field(default_factory=dict)
    total_usage: Dict[str, int] = field(default_factory=dict)
    duration_ms: int = 0
    error: Optional[str] = None
    #: The session budget that ended the query (status
    #: ``budget_exhausted``): ``{"budget": "tokens", "limit": N}`` or
    #: ``{"budget": "cost_usd", "limit": USD}``.
    budget_ended: Optional[Dict[str, Any]] = None

    @property
    def is_error(self) -> bool:
        return self.status != "completed"

    @property
    def result(self) -> str:
        """The answer (the Claude Agent SDK's name for it)."""
        return self.output


def _known(cls, data: Dict[str, Any]) -> Dict[str, Any]:
    names = {f.name for f in fields(cls) if f.init}
    return {k: v for k, v in data.items() if k in names}


def parse_event(data: Dict[str, Any]) -> Event:
    """The dataclass of one ``event`` line."""
    cls = _KINDS.get(data.get("event", ""), Event)
    event = cls(**_known(cls, data))
    if cls is Event:
        event.kind = data.get("event", "")
    return event


def parse_result(data: Dict[str, Any]) -> ResultMessage:
    return ResultMessage(**_known(ResultMessage, data))


__all__ = [cls.__name__ for cls in _KINDS.values()]
