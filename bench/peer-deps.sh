#!/usr/bin/env bash
# Installs what the box bench's peer (srt from @anthropic-ai/sandbox-runtime) needs: ripgrep and socat.
# Called by bench/box.mjs only (never by npm test); without root or apt it prints what to install.
set -u
missing=()
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v socat >/dev/null 2>&1 || missing+=(socat)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "bench: installing ${missing[*]} for the srt peer" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >&2 \
    || echo "bench: could not install ${missing[*]}; the srt comparison will not run" >&2
else
  echo "bench: ${missing[*]} missing; install with: sudo apt-get install -y ${missing[*]} (the srt comparison will not run)" >&2
fi
exit 0
