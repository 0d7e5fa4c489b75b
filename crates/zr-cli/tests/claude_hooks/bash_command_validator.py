#!/usr/bin/env python3
"""A PreToolUse hook for Bash, in the shape of Claude Code's documented
bash command validator: rules as (regular expression, reason) pairs; a
command that matches one is blocked with exit code 2 and the reasons on
standard error, for the model to read.

Settings entry:

  {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/.claude/hooks/bash_command_validator.py"}
  ]}]}}
"""

import json
import re
import sys

RULES = [
    (r"^grep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep': it is faster and skips ignored files"),
    (r"^find\s+\S+\s+-name\b", "Use 'rg --files -g PATTERN' instead of 'find -name'"),
]


def problems(command):
    return [reason for pattern, reason in RULES if re.search(pattern, command)]


def main():
    try:
        event = json.load(sys.stdin)
    except json.JSONDecodeError as error:
        print(f"invalid JSON on standard input: {error}", file=sys.stderr)
        sys.exit(1)
    if event.get("tool_name") != "Bash":
        sys.exit(0)
    command = event.get("tool_input", {}).get("command", "")
    found = problems(command)
    if found:
        for reason in found:
            print(f"• {reason}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
