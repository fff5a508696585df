#!/usr/bin/env bash
# Runs a command and fails unless it exits with the given code: lit's shell has no `$?`.
# Usage: expect-exit.sh CODE COMMAND [ARGS...]
expected=$1
shift
"$@"
rc=$?
if [ "$rc" -ne "$expected" ]; then
  echo "expect-exit: expected exit code $expected, got $rc from: $*" >&2
  exit 1
fi
