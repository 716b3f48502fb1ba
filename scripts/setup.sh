#!/usr/bin/env bash
# setup.sh - install everything Tsubu needs on a fresh Debian 12 machine.
#
# Idempotent and quiet when everything is there: it checks first and only
# installs what is missing. Debian packages come from apt-get (run as root or
# through sudo); the Blender LTS Python modules (bpy) and test tools go into
# virtual environments under .venv/ with pinned versions (scripts/requirements-*.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
    build-essential python3-dev python3-numpy python3-pytest python3-venv
    libopenvdb-dev libtbb-dev libboost-dev zlib1g-dev libqhull-dev
    clang libclang-rt-14-dev valgrind
    blender xvfb xauth libgl1-mesa-dri
    liggghts openmpi-bin
)
BPY_VERSIONS=(4.2 4.5)

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

# One venv per Blender LTS, on Debian's Python 3.11 (the interpreter the
# extension is built for), and one with Taichi for the elastoplastic
# benchmark's MLS-MPM peer. The stamp holds the requirements it was made from.
make_venv() {
    local venv=".venv/$1" req="scripts/requirements-$1.txt"
    if [ ! -f "$venv/.stamp" ] || ! cmp -s "$req" "$venv/.stamp"; then
        echo "setup: creating $venv ($2)"
        rm -rf "$venv"
        /usr/bin/python3 -m venv "$venv"
        log=$(mktemp)
        if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >"$log" 2>&1; then
            cat "$log"; rm -f "$log"
            echo "setup: installing $req failed"; exit 1
        fi
        rm -f "$log"
        cp "$req" "$venv/.stamp"
    fi
}
for v in "${BPY_VERSIONS[@]}"; do
    make_venv "bpy-$v" "bpy $v, this downloads about 400 MB once"
done
make_venv taichi "Taichi for a benchmark's peer, about 60 MB once"
