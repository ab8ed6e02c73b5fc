#!/bin/sh
# `npm test` after the lint: the typecheck runs beside the suite instead of before it (its ~20 s of
# one core overlap the suite's start, which waits on the local stack's engines), and the command
# fails when either fails.
npx tsc --noEmit &
typecheck=$!
npx vitest run --config test/vitest.config.ts
tests=$?
wait "$typecheck"
types=$?
[ "$types" -eq 0 ] || echo "npm test: the typecheck failed (tsc --noEmit, above)" >&2
[ "$tests" -eq 0 ] && [ "$types" -eq 0 ]
