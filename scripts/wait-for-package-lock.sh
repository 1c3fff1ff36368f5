# Sourced by ensure-system-deps.sh. wait_for_package_lock waits, bounded, while another program
# (apt, unattended-upgrades, a second test run) holds Debian's package locks, saying what it waits
# for; it returns 1 when the locks are still held after PACKAGE_LOCK_WAIT_S seconds (default 600).
# PACKAGE_LOCK_FILES (space-separated) replaces the lock files, for the script's own test.
PACKAGE_LOCK_FILES=${PACKAGE_LOCK_FILES:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}

# The processes (pid and name) that have one of the lock files open, one line; empty when none.
package_lock_holders() {
  local f pids=""
  for f in $PACKAGE_LOCK_FILES; do
    [ -e "$f" ] || continue
    pids+=" $(fuser "$f" 2>/dev/null || true)"
  done
  local pid out=""
  for pid in $(echo "$pids" | tr ' ' '\n' | grep -E '^[0-9]+$' | sort -un); do
    out+="${out:+, }$pid ($(ps -o comm= -p "$pid" 2>/dev/null || echo gone))"
  done
  echo "$out"
}

wait_for_package_lock() {
  local limit=${PACKAGE_LOCK_WAIT_S:-600} waited=0 step=${PACKAGE_LOCK_POLL_S:-5} holders
  holders=$(package_lock_holders)
  [ -z "$holders" ] && return 0
  echo "Waiting up to ${limit}s for Debian's package lock, held by: $holders"
  while [ -n "$holders" ]; do
    if [ "$waited" -ge "$limit" ]; then
      echo "The package lock is still held after ${limit}s by: $holders." >&2
      echo "Let that program finish (or stop it), then run this command again; PACKAGE_LOCK_WAIT_S=<seconds> waits longer." >&2
      return 1
    fi
    sleep "$step"
    waited=$((waited + step))
    holders=$(package_lock_holders)
    if [ -n "$holders" ] && [ $((waited % 30)) -lt "$step" ]; then echo "  still waiting (${waited}s): $holders"; fi
  done
  echo "The package lock is free after ${waited}s."
}
