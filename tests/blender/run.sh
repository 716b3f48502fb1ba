#!/usr/bin/env bash
# Run every Blender test script in the five Blenders Tsubu supports: Debian's
# Blender 3.4 executable (headless) and the bpy 4.2 LTS, 4.5 LTS, 5.0 (Python 3.11)
# and 5.2 (Python 3.13, NumPy 2) modules in their virtual environments.
# Fails if any run fails.
set -u
cd "$(dirname "$0")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

# Run a command, show its output without Blender's own chatter, keep its exit status.
run_one() {
    "$@" >"$log" 2>&1
    local rc=$?
    grep -vE '^(Read prefs|Blender quit|Info: |$)' "$log"
    [ $rc -eq 0 ] || { echo "FAILED (exit $rc): $*"; status=1; }
}

for script in tests/blender/test_*.py; do
    echo "== $script in Blender 3.4 (blender -b)"
    run_one blender -b --factory-startup --python-exit-code 1 --python "$script"
    for v in 4.2 4.5 5.0 5.2; do
        echo "== $script in bpy $v"
        run_one ".venv/bpy-$v/bin/python" "$script"
    done
done
exit $status
