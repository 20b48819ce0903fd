#!/usr/bin/env bash
# The page tests drive Debian's Chromium through playwright-core, which never downloads a browser of
# its own. Runs before `npm test`, so the README's test command passes on a fresh Debian machine.
set -euo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$browser" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the page tests (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q chromium >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
  [ -x "$browser" ] && exit 0
fi
echo "The page tests need Chromium at $browser: install Debian's chromium package" \
  "(apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary." >&2
exit 1
