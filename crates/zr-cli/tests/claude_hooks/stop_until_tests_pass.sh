#!/usr/bin/env bash
# A Stop hook in the shape of Claude Code's documented "run the tests
# before stopping" example: the agent may stop only once the tests pass.
# Exit code 2 blocks the stop; what is on standard error is the agent's
# next instruction.
#
#   {"hooks": {"Stop": [{"hooks": [
#     {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/stop_until_tests_pass.sh"}
#   ]}]}}
set -u
input=$(cat)
cd "$CLAUDE_PROJECT_DIR" || exit 1
# Kept for the test that checks what each stop was told.
printf '%s\n' "$input" >> .claude/hooks/stops.jsonl
if ! output=$(./run-tests.sh 2>&1); then
  echo "The tests fail. Fix them before you stop:" >&2
  echo "$output" >&2
  exit 2
fi
exit 0
