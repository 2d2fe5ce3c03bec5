#!/usr/bin/env bash
# docs/install.md on a clean Debian Bookworm arm64 root, the Raspberry Pi's architecture, under
# qemu-user-static: debootstrap a minimal root, add what Raspberry Pi OS Lite already has (sudo,
# openssl, systemd, ca-certificates), clone this checkout into it and run
# `systemd/install-check.sh --system` there as root, every arm64 binary (pip's wheels included)
# run through the emulator.  Slow (about 20-40 minutes) and needs the network to Debian's archive
# and PyPI, so `make test` does not run it; `make install-check-arm64` does.
#
#   sudo systemd/install-check-arm64.sh            # ROOTFS=/var/tmp/smart-table-bookworm-arm64
#   sudo KEEP_ROOTFS=1 systemd/install-check-arm64.sh   # keep the used root for a look afterwards
#
# Needs: root, debootstrap, qemu-user-static and binfmt-support (apt install -y debootstrap
# qemu-user-static binfmt-support), and binfmt_misc with qemu-aarch64 enabled.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOTFS=${ROOTFS:-/var/tmp/smart-table-bookworm-arm64}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
KEEP_ROOTFS=${KEEP_ROOTFS:-0}

die() { echo "install-check-arm64: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (it makes a chroot)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt install -y debootstrap qemu-user-static binfmt-support"
[ -x /usr/bin/qemu-aarch64-static ] || [ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] \
  || die "qemu-user-static is missing: apt install -y qemu-user-static binfmt-support"
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || die "cannot mount binfmt_misc"
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 \
  || die "qemu-aarch64 is not registered with binfmt_misc (update-binfmts --enable qemu-aarch64)"

MOUNTS=()
cleanup() {
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTS[$i]}" 2>/dev/null || true; done
  if [ "$KEEP_ROOTFS" != 1 ]; then rm -rf "$ROOTFS"; fi  # the base stays for the next run
}
trap cleanup EXIT

# The bare debootstrap is kept beside the root ($ROOTFS.base) and copied afresh for every run, so
# each run starts from a clean Bookworm without fetching it again.
BASE=$ROOTFS.base
if [ ! -x "$BASE/bin/bash" ]; then
  echo "== debootstrap bookworm arm64 into $BASE"
  rm -rf "$BASE"
  debootstrap --arch=arm64 --variant=minbase bookworm "$BASE" "$MIRROR" >/tmp/install-check-arm64-debootstrap.log \
    || { tail -20 /tmp/install-check-arm64-debootstrap.log; rm -rf "$BASE"; die "debootstrap failed"; }
fi
rm -rf "$ROOTFS"
cp -a "$BASE" "$ROOTFS"
for m in proc sys dev dev/pts; do
  mkdir -p "$ROOTFS/$m"
  mount --bind "/$m" "$ROOTFS/$m"
  MOUNTS+=("$ROOTFS/$m")
done
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
# A network whose egress proxy inspects TLS has its own CA in the host's store: the root trusts it
# too, or apt over https and pip cannot reach their archives (a Pi on a venue's LAN needs none of this).
EXTRA_CA=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
  EXTRA_CA=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt)
fi
in_root() { chroot "$ROOTFS" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 USER=pi DEBIAN_FRONTEND=noninteractive "${EXTRA_CA[@]}" "$@"; }

echo "== $(in_root uname -m) root: $(in_root cat /etc/debian_version), $(in_root python3 --version 2>&1 || echo 'no python3 yet')"
echo "== what Raspberry Pi OS Lite already has: sudo, openssl, ca-certificates, systemd, python3, adduser"
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends sudo openssl ca-certificates systemd python3 adduser procps >/dev/null
in_root update-ca-certificates >/dev/null
in_root useradd -m pi 2>/dev/null || true

echo "== this checkout, committed tree only, into the root"
rm -rf "$ROOTFS/home/pi/smart-table"
git clone -q "$REPO" "$ROOTFS/home/pi/smart-table"
echo "== docs/install.md, performed (systemd/install-check.sh --system)"
in_root bash -c 'cd /home/pi/smart-table && systemd/install-check.sh --system'
