"""``@tool``: a Python function as a tool the model can call, its JSON
Schema taken from its type hints."""

import inspect
import json
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema_of(hint: Any) -> Dict[str, Any]:
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or str(origin) == "types.UnionType":
        rest = [a for a in args if a is not type(None)]
        return _schema_of(rest[0]) if len(rest) == 1 else {"anyOf": [_schema_of(a) for a in rest]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if hint is list or origin is list:
        return {"type": "array", "items": _schema_of(args[0])} if args else {"type": "array"}
    if hint is dict or origin is dict:
        return {"type": "object"}
    return {}


def _optional(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.Union and type(None) in typing.get_args(hint)


def schema_from_hints(fn: Callable[..., Any]) -> Dict[str, Any]:
    """The input schema of ``fn``: one property per parameter, required
    unless it has a default or is ``Optional``."""
    hints = typing.get_type_hints(fn)
    properties: Dict[str, Any] = {}
    required = []
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name, Any)
        properties[name] = _schema_of(hint)
        if param.default is inspect.Parameter.empty and not _optional(hint):
            required.append(name)
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


@dataclass
class Tool:
    """A host tool: zr offers it to the root (and to agent types whose
    ``tools`` name it) and calls ``handler`` with the model's input as
    keyword arguments. ``read_only`` tools run without a permission
    question and in plan mode."""

    name: str
    description: str
    input_schema: Dict[str, Any]
    handler: Callable[..., Any]
    read_only: bool = False

    def spec(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "read_only": self.read_only,
        }

    async def run(self, arguments: Dict[str, Any]) -> "tuple[str, bool]":
        """The result text and whether it is an error: an exception's text
        goes to the model as an error result."""
        try:
            result = self.handler(**arguments)
            if inspect.isawaitable(result):
                result = await result
        except Exception as e:  # the model is told, the session goes on
            return f"{type(e).__name__}: {e}", True
        if isinstance(result, str):
            return result, False
        return json.dumps(result), False


def tool(
    fn: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    input_schema: Optional[Dict[str, Any]] = None,
    read_only: bool = False,
):
    """Makes a function (sync or async) a :class:`Tool`.

    Its name is the function's, its description the docstring's, its
    input schema from the type hints, unless given::

        @tool
        async def lookup(key: str) -> str:
            "Looks a key up in the table."
            return TABLE[key]
    """

    def make(f: Callable[..., Any]) -> Tool:
        return Tool(
            name=name or f.__name__,
            description=description or inspect.getdoc(f) or f.__name__,
            input_schema=input_schema or schema_from_hints(f),
            handler=f,
            read_only=read_only,
        )

    return make(fn) if fn is not None else make
