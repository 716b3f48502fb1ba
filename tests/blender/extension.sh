#!/usr/bin/env bash
# The built extension (make extension) installed into clean Blenders and baked with:
#  - bpy 4.2, 5.0 and 5.2, each with an empty user folder (BLENDER_USER_RESOURCES);
#  - bpy 5.0 inside a minimal Debian 12 made by debootstrap, holding only Python 3.11 and the X/GL
#    libraries the bpy module itself links: none of the libraries the core links (OpenVDB, TBB, Imath,
#    Boost, blosc, Qhull, log4cplus, snappy, libgomp; zlib, lz4 and zstd are part of every Debian), and no network (unshare --net). As a control, the in-place build
#    of the core, which links those libraries from this system, must fail to load there.
# Needs root (chroot, mounts). The Debian tree is kept in build/isolated-debian for the next run.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=$PWD
ZIP=$(ls dist/tsubu-*.zip | grep -v legacy | head -1)
status=0

for v in 4.2 5.0 5.2; do
    user=$(mktemp -d)
    echo "== extension in bpy $v, clean user folder"
    if ! BLENDER_USER_RESOURCES=$user ".venv/bpy-$v/bin/python" tests/blender/extension_install.py "$ZIP" >"$user.log" 2>&1; then
        cat "$user.log"; echo "FAILED: extension in bpy $v"; status=1
    else
        tail -1 "$user.log"
    fi
    rm -rf "$user" "$user.log"
done

ROOTFS=build/isolated-debian
PACKAGES=python3,libx11-6,libxrender1,libxfixes3,libxi6,libxkbcommon0,libsm6,libice6,libgl1,libxext6,libxxf86vm1
if [ ! -f "$ROOTFS/.stamp" ] || [ "$(cat "$ROOTFS/.stamp")" != "$PACKAGES" ]; then
    echo "== making a minimal Debian 12 in $ROOTFS (debootstrap, about a minute once)"
    rm -rf "$ROOTFS"
    log=$(mktemp)
    debootstrap --variant=minbase --include="$PACKAGES" bookworm "$ROOTFS" http://deb.debian.org/debian >"$log" 2>&1 \
        || { tail -20 "$log"; echo "FAILED: debootstrap"; exit 1; }
    rm -f "$log"
    echo "$PACKAGES" >"$ROOTFS/.stamp"
fi
for lib in libopenvdb libtbb libImath libboost_iostreams libblosc libqhull_r liblog4cplus libsnappy libgomp; do
    if ls "$ROOTFS"/usr/lib/x86_64-linux-gnu/"$lib".so* >/dev/null 2>&1; then
        echo "FAILED: $lib is in the isolated system"; exit 1
    fi
done

echo "== extension in bpy 5.0 inside a minimal Debian without the core's libraries, no network"
mkdir -p "$ROOTFS$HERE"
unshare --mount --net bash -euo pipefail -c "
    mount --make-rprivate /
    mount --bind '$HERE' '$ROOTFS$HERE'
    mount -t proc proc '$ROOTFS/proc'
    mount --bind /dev '$ROOTFS/dev'
    in_root() { chroot '$ROOTFS' env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 \"\$@\"; }
    if in_root /usr/bin/python3 -c \"import ctypes; ctypes.CDLL('$HERE/$(ls addon/tsubu/_core.cpython-311-*.so)')\" 2>/dev/null; then
        echo 'FAILED: the in-place build loads in the isolated system, so it is not isolated'; exit 1
    fi
    user=\$(in_root mktemp -d)
    in_root /usr/bin/env BLENDER_USER_RESOURCES=\$user '$HERE/.venv/bpy-5.0/bin/python' \
        '$HERE/tests/blender/extension_install.py' '$HERE/$ZIP' > '$ROOTFS'/tmp/extension.log 2>&1 \
        || { cat '$ROOTFS'/tmp/extension.log; echo 'FAILED: extension in the isolated system'; exit 1; }
    tail -1 '$ROOTFS'/tmp/extension.log
" || status=1
exit $status
