#!/bin/bash
# AWS_LAMBDA_EXEC_WRAPPER of a function that sets SERVICE_NODE_FLAGS. Lambda's Node.js bootstrap runs
# this with the command line it built: node, its flags (heap sizes from the function's memory), and
# the runtime's entry script last. The extra flags go just before that script: V8 keeps the last
# value of a repeated flag, so they override the runtime's sizing (NODE_OPTIONS cannot, the command
# line wins over it). Documented pattern: Lambda "Modifying the runtime environment", wrapper scripts.
set -euo pipefail
if [ "$#" -lt 2 ]; then
  echo "node-flags.sh: expected the runtime's command line (node … script)" >&2
  exit 64
fi
args=("$@")
extra=()
read -r -a extra <<< "${SERVICE_NODE_FLAGS:-}"
last=$(($# - 1))
exec "${args[@]:0:last}" ${extra[@]+"${extra[@]}"} "${args[last]}"
