#!/usr/bin/env bash
# The Debian packages a make stage needs, installed when missing.
#
#   scripts/system-deps.sh [--optional | --check] [PACKAGE...]
#
# PACKAGE is one of bubblewrap, chromium, postgresql, redis-server (default: all of them), or
# fonts-noto-color-emoji (the screenshots' emoji).
# As root (CI, a fresh machine) the missing ones are installed; otherwise the script says what
# to install and fails. --optional: a missing package is only reported (exit 0), and installed
# when root; --check: report what is missing, install nothing (exit 1 if anything is).
set -euo pipefail

mode=required
case "${1:-}" in
  --optional) mode=optional; shift ;;
  --check) mode=check; shift ;;
esac
[ $# -eq 0 ] && set -- bubblewrap chromium postgresql redis-server

# Whether a package's program is here; PostgreSQL is found as tests/peers/postgres.py finds it.
present() {
  case "$1" in
    bubblewrap) command -v bwrap >/dev/null ;;
    chromium) command -v chromium >/dev/null ;;
    redis-server) command -v redis-server >/dev/null ;;
    fonts-noto-color-emoji) [ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] ;;
    postgresql)
      if [ -n "${PG_BIN:-}" ]; then [ -x "$PG_BIN/initdb" ]; return; fi
      compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v pg_ctl >/dev/null ;;
    *) echo "system-deps: unknown package '$1' (bubblewrap, chromium, postgresql, redis-server, fonts-noto-color-emoji)" >&2
       exit 2 ;;
  esac
}

why() {
  case "$1" in
    bubblewrap) echo "sandboxes bots' Pi processes (tests check its arguments)" ;;
    chromium) echo "browser tests" ;;
    postgresql) echo "the PostgreSQL suite, conformance and benchmarks" ;;
    redis-server) echo "the scaled-configuration suite" ;;
    fonts-noto-color-emoji) echo "reactions drawn in the screenshots" ;;
  esac
}

need=()
for package in "$@"; do
  present "$package" || need+=("$package")
done
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$mode" != check ] && [ "$(id -u)" -eq 0 ]; then
  echo "Installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # One index refresh an hour is enough when several stages each install their own packages.
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 -print -quit 2>/dev/null)" ]; then
    apt-get update -qq
  fi
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi

for package in "${need[@]}"; do
  echo "Missing Debian package: $package ($(why "$package"))" >&2
done
if [ "$mode" = optional ]; then
  echo "Continuing without it; as root: apt-get install ${need[*]}" >&2
  exit 0
fi
echo "Please install: apt-get install ${need[*]}" >&2
exit 1
