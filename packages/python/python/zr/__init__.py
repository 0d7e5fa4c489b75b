"""zr from Python: a thin typed client over ``zr host`` (the host protocol,
JSON lines over the ``zr`` binary's stdio; the binary ships in this wheel).

    import asyncio
    from zr import query, Options

    async def main():
        async for message in query("What is in this folder?", options=Options()):
            print(message)

    asyncio.run(main())
"""

from ._client import Client, query
from ._messages import (
    PROTOCOL_VERSION,
    Event,
    ResultMessage,
    parse_event,
)
from ._messages import *  # noqa: F401,F403  (the event dataclasses)
from ._messages import __all__ as _event_names
from ._options import (
    AgentDefinition,
    HookContext,
    HookMatcher,
    Options,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)
from ._tool import Tool, tool
from ._errors import ZrError, ProtocolError

__all__ = [
    "Client",
    "query",
    "Options",
    "AgentDefinition",
    "HookMatcher",
    "HookContext",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "ToolPermissionContext",
    "Tool",
    "tool",
    "ZrError",
    "ProtocolError",
    "Event",
    "ResultMessage",
    "parse_event",
    "PROTOCOL_VERSION",
    *_event_names,
]
