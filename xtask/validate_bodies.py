"""Checks captured model request bodies against the official SDKs' types.

Usage: validate_bodies.py DIR [--require WIRE]...

DIR holds the bodies the tests' loopback servers captured
(ZR_CAPTURED_BODIES), one JSON file per body in a folder per wire:

- anthropic/: the Anthropic Messages API, checked against the `anthropic`
  package's MessageCreateParamsStreaming (a body with `"stream": true`) or
  MessageCreateParamsNonStreaming;
- openai-chat/: OpenAI Chat Completions, against the `openai` package's
  CompletionCreateParamsStreaming or CompletionCreateParamsNonStreaming;
- openai-responses/: the OpenAI Responses API, against
  ResponseCreateParamsStreaming or ResponseCreateParamsNonStreaming.

The SDKs' request types are TypedDicts, which pydantic validates leniently:
unknown keys pass, and `Iterable[...]` fields (messages, content blocks,
tools) are validated only when iterated. So each type's pydantic core schema
is rewritten before use: every typed-dict (and model) schema, at every
level, forbids extra keys, and every lazy `generator` schema becomes a
`list` schema that checks its items at once. Bodies are validated as JSON
in strict mode (no "5" for 5).

Prints "validated N request bodies (A anthropic, O openai chat, R openai
responses)"; exits 1, naming each invalid file and its pydantic error, when
a body is invalid, a file is not in a wire's folder, or a wire named with
--require has no body.
"""

import argparse
import copy
import json
import sys
from pathlib import Path

from pydantic import TypeAdapter
from pydantic_core import SchemaValidator, ValidationError

# Errors of one body shown before the rest is cut.
MAX_ERRORS = 20


def strict_validator(typed_dict):
    """A validator of `typed_dict` that forbids extra keys at every level
    and checks every item of every iterable."""
    schema = copy.deepcopy(TypeAdapter(typed_dict).core_schema)

    def tighten(node):
        if isinstance(node, dict):
            kind = node.get("type")
            if kind in ("typed-dict", "model-fields"):
                node["extra_behavior"] = "forbid"
            elif kind == "generator":
                node["type"] = "list"
            for value in node.values():
                tighten(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                tighten(value)

    tighten(schema)
    return SchemaValidator(schema)


def wires():
    """Folder name -> (label, streaming validator, non-streaming validator)."""
    from anthropic.types.message_create_params import (
        MessageCreateParamsNonStreaming,
        MessageCreateParamsStreaming,
    )
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsNonStreaming,
        CompletionCreateParamsStreaming,
    )
    from openai.types.responses.response_create_params import (
        ResponseCreateParamsNonStreaming,
        ResponseCreateParamsStreaming,
    )

    return {
        "anthropic": (
            "anthropic",
            MessageCreateParamsStreaming,
            MessageCreateParamsNonStreaming,
        ),
        "openai-chat": (
            "openai chat",
            CompletionCreateParamsStreaming,
            CompletionCreateParamsNonStreaming,
        ),
        "openai-responses": (
            "openai responses",
            ResponseCreateParamsStreaming,
            ResponseCreateParamsNonStreaming,
        ),
    }


def branch_errors(errors):
    """The errors of the union branches a body was meant for.

    A union reports every branch's errors. A branch is dropped when its tag
    (`type` or `role`) is the wrong literal, or the value is not of its kind
    at all (`string_type`, `dict_type`, ...), as long as another branch of
    the same union is left: what remains is the mistake itself."""
    locs = [tuple(error["loc"]) for error in errors]

    def branches_beside(branch):
        depth = len(branch) - 1
        return {
            other[: depth + 1]
            for other in locs
            if len(other) > depth and other[:depth] == branch[:depth]
        }

    dropped = set()
    for error, loc in zip(errors, locs):
        if loc and loc[-1] in ("type", "role") and error["type"] == "literal_error":
            branch = loc[:-1]
        elif error["type"].endswith("_type"):
            branch = loc
        else:
            continue
        if branch:
            dropped.add(branch)
    # A union nested in a union (its tag is generic, `union[...]`) failed
    # as a whole when each of its branches did.
    nested = {loc[:end] for loc in locs for end in range(1, len(loc)) if "[" in str(loc[end - 1])}
    grew = True
    while grew:
        grew = False
        for union in nested - dropped:
            inner = {loc[: len(union) + 1] for loc in locs if len(loc) > len(union) and loc[: len(union)] == union}
            if inner and inner <= dropped:
                dropped.add(union)
                grew = True
    # A branch alone, or a union all of whose branches failed on their tag,
    # is the mistake: of those, only the tag errors are kept.
    whole = {branch for branch in dropped if branches_beside(branch) <= dropped}
    dropped -= whole

    def shown(error, loc):
        if any(loc[:end] in dropped for end in range(1, len(loc) + 1)):
            return False
        in_whole = any(loc[:end] in whole for end in range(1, len(loc) + 1))
        tag_error = loc[:-1] in whole and loc[-1] in ("type", "role")
        return not in_whole or tag_error or loc in whole

    kept = [error for error, loc in zip(errors, locs) if shown(error, loc)]
    return kept or errors


def describe(error):
    """The error's lines: a short path to the mistake, then pydantic's
    errors of the branches the body was meant for."""
    errors = error.errors()
    kept = branch_errors(errors)
    lines = [f"{len(errors)} validation errors for {error.title}, {len(kept)} in the matching branches:"]
    for item in kept[:MAX_ERRORS]:
        # Generic tags (`list[union[...]]`) say nothing a reader needs;
        # the names of the branches taken do.
        path = ".".join(str(part) for part in item["loc"] if "[" not in str(part))
        lines.append(f"  {path or '(the body)'}: {item['msg']} [type={item['type']}, input={item['input']!r:.80}]")
    if len(kept) > MAX_ERRORS:
        lines.append(f"  ... and {len(kept) - MAX_ERRORS} more")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        help="a wire folder that must hold at least one body",
    )
    args = parser.parse_args(argv)
    known = wires()
    problems = []
    counts = {folder: 0 for folder in known}
    validators = {}
    for unknown in sorted(args.require):
        if unknown not in known:
            problems.append(f"--require {unknown}: not a wire ({', '.join(known)})")
    if not args.dir.is_dir():
        problems.append(f"{args.dir}: not a folder (were the tests run with ZR_CAPTURED_BODIES?)")
        files = []
    else:
        files = sorted(path for path in args.dir.rglob("*") if path.is_file())
    for path in files:
        relative = path.relative_to(args.dir)
        folder = relative.parts[0] if len(relative.parts) == 2 else None
        if folder not in known or path.suffix != ".json":
            problems.append(f"{path}: not WIRE/NAME.json with WIRE one of {', '.join(known)}")
            continue
        raw = path.read_bytes()
        try:
            streaming = json.loads(raw).get("stream") is True
        except (ValueError, AttributeError) as error:
            problems.append(f"{path}: not a JSON object: {error}")
            continue
        key = (folder, streaming)
        if key not in validators:
            label, stream_type, plain_type = known[folder]
            validators[key] = strict_validator(stream_type if streaming else plain_type)
        try:
            validators[key].validate_json(raw, strict=True)
        except ValidationError as error:
            problems.append(f"{path}: {describe(error)}")
            continue
        counts[folder] += 1
    for folder in sorted(args.require):
        if folder in counts and counts[folder] == 0:
            problems.append(f"{args.dir / folder}: no {known[folder][0]} request body was captured")
    total = sum(counts.values())
    print(
        f"validated {total} request bodies ({counts['anthropic']} anthropic, "
        f"{counts['openai-chat']} openai chat, {counts['openai-responses']} openai responses)"
    )
    for problem in problems:
        print(f"invalid: {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {args.dir}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
