#!/usr/bin/env bash
# Installs the system packages lbot's sandbox needs (bubblewrap, and python3 under /usr for Python runners
# and commands in sandboxes), and the PostgreSQL server the store tests start a private cluster of, when missing.
# Runs before `npm test`; never fails the caller: without root or apt it prints what to install.
set -u
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
# sandboxes (the box, sandboxed runner plugins) see /usr only: a python3 elsewhere (pyenv) is not one they can run
[ -x /usr/bin/python3 ] || missing+=(python3)
# the box's seccomp helper is compiled at build time
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
# the PostgreSQL store tests run initdb/pg_ctl of Debian's server package (test/global-setup-postgres.ts)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "lbot: installing ${missing[*]} (needed by lbot box and the store tests)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >&2 \
    || echo "lbot: could not install ${missing[*]}; box or PostgreSQL tests will be skipped" >&2
else
  echo "lbot: ${missing[*]} missing; install with: sudo apt-get install -y ${missing[*]} (box or PostgreSQL tests will be skipped)" >&2
fi
exit 0
