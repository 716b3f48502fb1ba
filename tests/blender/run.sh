#!/usr/bin/env bash
# Run every Blender test script in the five Blenders Tsubu supports: Debian's
# Blender 3.4 executable (headless) and the bpy 4.2 LTS, 4.5 LTS, 5.0 (Python 3.11)
# and 5.2 (Python 3.13, NumPy 2) modules in their virtual environments.
# Two Blenders run at once (each script makes its own temporary folder); each
# Blender's report is shown whole when it is done. Fails if any run fails.
set -u
cd "$(dirname "$0")/../.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# Every script in one Blender ($1: a file name for its logs, $2: its name; the rest: the command that runs a
# script given last). Blender's own chatter is left out of the report; a failed run is named in it and marked
# by $logs/<file name>.failed.
run_blender() {
    local file=$1 name=$2 script rc
    shift 2
    for script in tests/blender/test_*.py; do
        echo "== $script in $name"
        "$@" "$script" >"$logs/$file.run" 2>&1
        rc=$?
        grep -vE '^(Read prefs|Blender quit|Info: |$)' "$logs/$file.run"
        if [ $rc -ne 0 ]; then
            echo "FAILED (exit $rc): $* $script"
            echo "$name" >"$logs/$file.failed"
        fi
    done >"$logs/$file.report"
    cat "$logs/$file.report"
}

blenders=("Blender 3.4 (blender -b)|blender -b --factory-startup --python-exit-code 1 --python")
for v in 4.2 4.5 5.0 5.2; do
    blenders+=("bpy $v|.venv/bpy-$v/bin/python")
done
running=0
for i in "${!blenders[@]}"; do
    entry=${blenders[$i]}
    read -ra command <<<"${entry#*|}"
    run_blender "blender$i" "${entry%%|*}" "${command[@]}" &
    running=$((running + 1))
    if [ $running -ge 2 ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
if ls "$logs"/*.failed >/dev/null 2>&1; then
    echo "FAILED in: $(cat "$logs"/*.failed | paste -sd, -)"
    exit 1
fi
exit 0
