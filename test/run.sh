#!/bin/sh
# `npm test`: the lint and the typecheck run beside the suite instead of before it (their ~25 s of
# one core overlap the suite's start, which waits on the local stack's engines), and the command
# fails when any of the three fails, saying which.
npx biome check . > "${TMPDIR:-/tmp}/npm-test-lint.$$" 2>&1 &
lint=$!
npx tsc --noEmit > "${TMPDIR:-/tmp}/npm-test-types.$$" 2>&1 &
typecheck=$!
npx vitest run --config test/vitest.config.ts
tests=$?
wait "$lint"
lints=$?
wait "$typecheck"
types=$?
if [ "$lints" -ne 0 ]; then
  cat "${TMPDIR:-/tmp}/npm-test-lint.$$" >&2
  echo "npm test: the lint failed (biome check ., above)" >&2
fi
if [ "$types" -ne 0 ]; then
  cat "${TMPDIR:-/tmp}/npm-test-types.$$" >&2
  echo "npm test: the typecheck failed (tsc --noEmit, above)" >&2
fi
rm -f "${TMPDIR:-/tmp}/npm-test-lint.$$" "${TMPDIR:-/tmp}/npm-test-types.$$"
[ "$tests" -eq 0 ] && [ "$lints" -eq 0 ] && [ "$types" -eq 0 ]
