#!/usr/bin/env bash
# Builds lbot's native helpers (the seccomp entry of box execs, the in-session exec agent) into dist/native/
# Without a C compiler the build goes on and the bwrap backend reports itself unavailable.
set -u
cd "$(dirname "$0")/.."
out=dist/native
mkdir -p "$out"
cc_bin="${CC:-cc}"
if ! command -v "$cc_bin" >/dev/null 2>&1; then
  echo "lbot: no C compiler ($cc_bin); the box sandbox needs dist/native/lbot-seccomp-exec (apt-get install -y gcc libc6-dev)" >&2
  exit 0
fi
"$cc_bin" -O2 -Wall -Wextra -Werror -o "$out/lbot-seccomp-exec.tmp" native/seccomp-exec.c && mv "$out/lbot-seccomp-exec.tmp" "$out/lbot-seccomp-exec"
"$cc_bin" -O2 -Wall -Wextra -Werror -o "$out/lbot-exec-agent.tmp" native/exec-agent.c && mv "$out/lbot-exec-agent.tmp" "$out/lbot-exec-agent"
