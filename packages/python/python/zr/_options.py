"""The options of a session, named as in the Claude Agent SDK where the
meaning is the same."""

import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

from ._tool import Tool


@dataclass
class AgentDefinition:
    """An agent type defined in Python: the root delegates to it with
    ``Task``/``MultiTask`` by its name in ``Options.agents``. ``tools``
    names builtins and host tools (``None``: every builtin, no host tool)."""

    description: str
    prompt: str
    tools: Optional[List[str]] = None
    disallowed_tools: Optional[List[str]] = None
    model: Optional[str] = None
    max_turns: Optional[int] = None

    def spec(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"description": self.description, "prompt": self.prompt}
        for key in ("tools", "disallowed_tools", "model", "max_turns"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class PermissionResultAllow:
    """Run the call (``for_session``: and the agent's later calls of the
    tool, without asking)."""

    for_session: bool = False
    behavior: str = "allow"


@dataclass
class PermissionResultDeny:
    """Refuse the call; ``message`` is what the model reads."""

    message: str = ""
    behavior: str = "deny"


PermissionResult = Union[PermissionResultAllow, PermissionResultDeny]


@dataclass
class ToolPermissionContext:
    """Who asks: the agent (``root``, ``root.0001-worker``), its type, and
    why the call is asked about whatever the rules say (``crossing``: it
    reaches outside the project or a protected file)."""

    agent: str
    agent_type: str
    crossing: Optional[str] = None


@dataclass
class HookContext:
    """The session and agent a hook is called for."""

    session: str
    agent: str
    agent_type: str


HookCallback = Callable[[Dict[str, Any], Optional[str], HookContext], Awaitable[Dict[str, Any]]]


@dataclass
class HookMatcher:
    """Hooks for the tools ``matcher`` names (``Bash``, ``Write|Edit``, a
    regular expression; ``None`` or ``*``: every tool)."""

    matcher: Optional[str] = None
    hooks: List[Callable[..., Any]] = field(default_factory=list)

    def matches(self, tool: Optional[str]) -> bool:
        text = (self.matcher or "").strip()
        if tool is None or text in ("", "*"):
            return True
        if re.fullmatch(r"[A-Za-z0-9_|-]+", text):
            return tool in text.split("|")
        return re.fullmatch(text, tool) is not None


@dataclass
class Options:
    """A session's options.

    - ``agents``: agent types defined in Python, by name.
    - ``tools``: :func:`zr.tool` functions the model can call.
    - ``can_use_tool``: ``async (tool_name, input, context) -> PermissionResultAllow | PermissionResultDeny``
      for the calls zr.toml's rules leave open (without it: zr.toml decides,
      host tools run).
    - ``hooks``: ``{"PreToolUse": [HookMatcher(matcher="Bash", hooks=[fn])]}``;
      events PreToolUse, PostToolUse, SubagentStart, SubagentStop, Stop.
    - ``permission_mode``, ``model``, ``system_prompt``, ``max_turns``.
    - ``resume``: a session id (``ResultMessage.session``) to continue.
    - ``cwd``: the project folder (zr.toml, .claude/agents); ``env``: extra
      environment of the zr process; ``cli_path``: the zr binary (default:
      the one in this package).
    """

    agents: Dict[str, AgentDefinition] = field(default_factory=dict)
    tools: List[Tool] = field(default_factory=list)
    can_use_tool: Optional[Callable[[str, Dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]] = None
    hooks: Dict[str, List[HookMatcher]] = field(default_factory=dict)
    permission_mode: Optional[str] = None
    model: Optional[str] = None
    system_prompt: Optional[str] = None
    max_turns: Optional[int] = None
    resume: Optional[str] = None
    cwd: Optional[str] = None
    env: Dict[str, str] = field(default_factory=dict)
    cli_path: Optional[str] = None

    def spec(self) -> Dict[str, Any]:
        """The ``options`` of the protocol's ``query`` message."""
        out: Dict[str, Any] = {
            "agents": {name: a.spec() for name, a in self.agents.items()},
            "tools": [t.spec() for t in self.tools],
            "can_use_tool": self.can_use_tool is not None,
            "hooks": [
                {"event": event, **({"matcher": m.matcher} if m.matcher else {})}
                for event, matchers in self.hooks.items()
                for m in matchers
            ],
        }
        for key in ("permission_mode", "model", "system_prompt", "max_turns", "resume"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out
