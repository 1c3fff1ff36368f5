#!/usr/bin/env bash
# Installs the Debian packages the tests need, when they are missing: Chromium for the editor tests
# (a real browser drives code-server's workbench), ripgrep and build tools for code-server's native
# modules, and Python's venv module for the trainer's environment (its packages come from PyPI:
# `rehearse trainer setup`, trainer/requirements.txt). Safe to run again.
set -euo pipefail
PKGS=(chromium ripgrep libkrb5-dev pkg-config build-essential python3 python3-venv)
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v rg >/dev/null || missing+=(ripgrep)
[ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v g++ >/dev/null || missing+=(build-essential)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3 python3-venv)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "Installing missing system packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "Not root and no sudo: run as root: apt-get install -y --no-install-recommends ${PKGS[*]}" >&2; exit 1
  fi
fi
. "$(dirname "$0")/wait-for-package-lock.sh"
# apt waits for its own lock too (DPkg::Lock::Timeout) in case another program takes it between our
# check and apt's start.
APT=($SUDO apt-get -o DPkg::Lock::Timeout="${PACKAGE_LOCK_WAIT_S:-600}")
cannot_install() {
  echo "Could not install the system packages the tests need ($1)." >&2
  echo "Install them yourself, as root: apt-get install -y --no-install-recommends ${PKGS[*]}" >&2
  echo "then run the test command again; STAGES=\"lint unit\" npm test runs the stages that need none of them." >&2
  exit 1
}
wait_for_package_lock || cannot_install "the package lock stayed held"
"${APT[@]}" update -qq || cannot_install "apt-get update failed: is a Debian mirror reachable?"
DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null || cannot_install "apt-get install failed"
