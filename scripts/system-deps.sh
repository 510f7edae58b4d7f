#!/usr/bin/env bash
# Install the Debian packages the tests need when they are missing. As root (CI) it installs them;
# otherwise it says what to install.
set -euo pipefail
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v chromium >/dev/null || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v bwrap >/dev/null || need+=(bubblewrap)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "Installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "Please install these Debian packages: ${need[*]}" >&2
  exit 1
fi
