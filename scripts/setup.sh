#!/usr/bin/env bash
# setup.sh - install everything Tsubu needs on a fresh Debian 12 machine.
#
# Idempotent and quiet when everything is there: it checks first and only
# installs what is missing. Debian packages come from apt-get (run as root or
# through sudo); the Blender Python modules (bpy 4.2, 4.5, 5.0, 5.2), the test tools and
# the build tools of the core's wheels go into virtual environments under .venv/ with
# pinned versions (scripts/requirements-*.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
    build-essential python3-dev python3-numpy python3-pytest python3-pytest-xdist python3-venv
    libopenvdb-dev libtbb-dev libboost-dev zlib1g-dev libqhull-dev
    clang libclang-rt-14-dev valgrind
    blender xvfb xauth libgl1-mesa-dri
    liggghts openmpi-bin debootstrap
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# One venv per Blender Python module: 4.2, 4.5 and 5.0 on Debian's Python 3.11, 5.2 on
# Python 3.13; build venvs for the core's wheels (3.11, 3.13); one with Taichi for the
# elastoplastic benchmark's MLS-MPM peer and one with splashsurf for the surface benchmark's.
# The stamp holds the requirements it was made from.
PYTHON313=$(scripts/python-3.13)
make_venv() {
    local venv=".venv/$1" req="scripts/requirements-$1.txt" python="$3"
    if [ ! -f "$venv/.stamp" ] || ! cmp -s "$req" "$venv/.stamp"; then
        echo "setup: creating $venv ($2)"
        rm -rf "$venv"
        "$python" -m venv "$venv"
        log=$(mktemp)
        if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >"$log" 2>&1; then
            cat "$log"; rm -f "$log"
            echo "setup: installing $req failed"; exit 1
        fi
        rm -f "$log"
        cp "$req" "$venv/.stamp"
    fi
}
# All at once: each is mostly waiting on downloads and pip's own work.
pids=()
for v in 4.2 4.5 5.0; do
    make_venv "bpy-$v" "bpy $v, this downloads about 400 MB once" /usr/bin/python3 & pids+=($!)
done
make_venv bpy-5.2 "bpy 5.2 on Python 3.13, this downloads about 400 MB once" "$PYTHON313" & pids+=($!)
make_venv build-3.11 "the core's wheel tools for Python 3.11" /usr/bin/python3 & pids+=($!)
make_venv build-3.13 "the core's build tools for Python 3.13" "$PYTHON313" & pids+=($!)
make_venv taichi "Taichi for a benchmark's peer, about 60 MB once" /usr/bin/python3 & pids+=($!)
make_venv splashsurf "splashsurf for a benchmark's peer, a few MB once" /usr/bin/python3 & pids+=($!)
failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done
[ $failed -eq 0 ] || { echo "setup: a virtual environment could not be made (above)"; exit 1; }
