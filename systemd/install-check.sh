#!/usr/bin/env bash
# Walk docs/install.md on a clean Debian Bookworm: perform its commands, in its order, and check
# what each one leaves behind.  `make install-check` runs it; CI (.ci/run) too.
#
#   systemd/install-check.sh            # inside a throwaway root folder ($ROOT): safe on any machine
#   systemd/install-check.sh --system   # for real, as root, on a clean Debian container or VM
#
# Every command of the guide's ```sh blocks appears below exactly as written, either as
# `guide '<the line>'` (performed: /etc, /opt, /var/lib are moved under $ROOT, sudo dropped, the
# repository URL replaced by this checkout) or in ON_THE_PI (needs the Pi's hardware or the system
# itself, said why). tests/install/test_install_guide.py holds the two in step.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
SYSTEM=0
[ "${1:-}" = "--system" ] && SYSTEM=1
if [ "$SYSTEM" = 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "install-check --system: run as root on a throwaway Debian" >&2; exit 2; }
  ROOT=""
else
  ROOT=$(mktemp -d /tmp/smart-table-install-check.XXXXXX)
fi
KEEP=${KEEP:-0}
export USER=${USER:-$(id -un)}  # the guide chowns to "$USER"; CI shells may not set it
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  # what the guide started must stop on SIGTERM as systemd asks; one that does not is said and
  # killed after 20 s (as TimeoutStopSec would), so a hung stop cannot hang the walk itself
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "  warn process $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-80)) did not stop within 20 s of SIGTERM: killed" >&2
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  if [ -n "$ROOT" ] && [ "$KEEP" != 1 ]; then rm -rf "$ROOT"; fi
}
trap cleanup EXIT
PASSED=0
SKIPPED=0

# Commands of the guide that are not performed here, and why (the test checks this list too).
ON_THE_PI=(
  "sudo apt update && sudo apt full-upgrade -y && sudo reboot"  # reboots the machine
  "sudo apt install -y python3-picamera2"  # Raspberry Pi OS's archive only
  "sudo modprobe -r pn533_usb pn533 port100"  # unloads kernel modules
  "lsusb"  # lists the table's USB devices
  "udevadm info --attribute-walk --name=/dev/ttyACM0 | grep -m2 -E 'idVendor|idProduct'"  # needs the Pico plugged in
  "sudo udevadm control --reload && sudo udevadm trigger"  # the running udev
  "ls -l /dev/smart-table/"  # the devices themselves
  ".venv/bin/mpremote cp firmware_bridge/firmware/panelproto.py firmware_bridge/firmware/panelfw.py firmware_bridge/firmware/hal_pico.py firmware_bridge/firmware/main.py :"  # needs the Pico
  ".venv/bin/mpremote reset"  # needs the Pico
  "sudoedit /etc/smart-table/table.toml"  # a person edits; done below with sed, as a person would
  "sudo systemctl restart mosquitto"  # the system's broker; started below from the same files
  "sudo systemctl daemon-reload"  # the running systemd
  "sudo systemctl enable --now smart-table"  # the running systemd; the unit is verified instead
  "systemctl status smart-table"  # the running systemd
  "journalctl -u smart-table -f"  # follows the journal forever
  "/opt/smart-table/.venv/bin/smart-table top --config /etc/smart-table/table.toml"  # live until Ctrl-C: run with --once below
)

say() { printf '%s\n' "$*"; }
ok() { say "  ok   $*"; PASSED=$((PASSED + 1)); }
fail() { say "  FAIL $*" >&2; exit 1; }
skip() { say "  skip $*"; SKIPPED=$((SKIPPED + 1)); }

# Perform one line of the guide, moved into $ROOT.
guide() {
  local line=$1 cmd=$1
  if [ "$SYSTEM" = 0 ]; then
    cmd=${cmd//sudo -u smart-table /}
    cmd=${cmd//sudo /}
    cmd=${cmd//\/etc\//$ROOT/etc/}
    cmd=${cmd//\/opt\/smart-table/$ROOT/opt/smart-table}
    cmd=${cmd//\/var\/lib\//$ROOT/var/lib/}
    cmd=${cmd//\/tmp\/doctor/$ROOT/tmp/doctor}
  fi
  cmd=${cmd//https:\/\/github.com\/your-venue\/smart-table/$REPO}
  say "\$ $line"
  eval "$cmd" || fail "the guide's command failed: $line"
}

# A step that needs the system itself (users, kernel, apt): performed only with --system.
system_only() {
  if [ "$SYSTEM" = 1 ]; then guide "$1"; else skip "(needs --system) $1"; fi
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

say "== walking docs/install.md in ${ROOT:-/} (Debian $(cat /etc/debian_version 2>/dev/null || echo '?'))"
for line in "${ON_THE_PI[@]}"; do skip "(on the Pi) $line"; done

say "== 2. System packages"
if [ "$SYSTEM" = 1 ]; then
  guide 'sudo apt install -y git make python3-venv python3-dev libusb-1.0-0 v4l-utils sqlite3 mosquitto-clients'
else
  apt-get -s install -y git make python3-venv python3-dev libusb-1.0-0 v4l-utils sqlite3 mosquitto-clients >/dev/null \
    || fail "apt cannot install the guide's packages"
  ok "apt resolves the guide's packages (simulated: apt-get -s)"
fi

say "== 3. The service user and the code"
system_only 'sudo adduser --system --group --home /var/lib/smart-table --no-create-home smart-table'
[ "$SYSTEM" = 1 ] && { getent passwd smart-table >/dev/null || fail "no smart-table user"; ok "user smart-table"; }
guide 'sudo mkdir -p /opt/smart-table && sudo chown "$USER" /opt/smart-table'
guide 'git clone https://github.com/your-venue/smart-table /opt/smart-table'
guide 'cd /opt/smart-table'
guide 'python3 -m venv --system-site-packages .venv'
guide '.venv/bin/pip install --upgrade pip'
guide '.venv/bin/pip install .'
guide '.venv/bin/smart-table --version'
[ "$(.venv/bin/smart-table --version)" = "smart-table $(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')" ] \
  || fail "--version does not name the release"
ok "smart-table installed, --version answers"
grep -q 'include-system-site-packages = true' .venv/pyvenv.cfg && ok "the venv sees Debian's python3 packages (picamera2)"

say "== 4. The NFC reader: keep the kernel's drivers off it"
mkdir -p "$ROOT/etc/modprobe.d"
guide "printf 'blacklist pn533_usb\\nblacklist pn533\\nblacklist port100\\n' | sudo tee /etc/modprobe.d/smart-table-nfc.conf"
.venv/bin/python - "$ROOT/etc/modprobe.d" <<'PY' || fail "the blacklist does not keep pn533_usb and port100 off"
import sys
from pathlib import Path
from controller.doctor import _blacklisted
sys.exit(not {"pn533_usb", "port100"} <= _blacklisted(Path(sys.argv[1])))
PY
ok "pn533_usb and port100 blacklisted"

say "== 5. Devices: udev rules"
mkdir -p "$ROOT/etc/udev/rules.d"
guide 'sudo cp systemd/99-smart-table.rules /etc/udev/rules.d/'
grep -q 'ATTRS{idVendor}=="2e8a", ATTRS{idProduct}=="0005".*SYMLINK+="smart-table/panel"' "$ROOT/etc/udev/rules.d/99-smart-table.rules" \
  && ok "udev names the Pico (2e8a:0005) /dev/smart-table/panel"

say "== 6. The LED panel's firmware"
guide '.venv/bin/pip install mpremote'
.venv/bin/mpremote --help >/dev/null 2>&1 || .venv/bin/mpremote version >/dev/null 2>&1 || fail "mpremote does not run"
ok "mpremote installed (copying needs the Pico)"

say "== 7. Configuration"
guide 'sudo mkdir -p /etc/smart-table'
guide 'sudo cp systemd/table.toml /etc/smart-table/table.toml'
CONF=$ROOT/etc/smart-table/table.toml
# What the person does in sudoedit: this table has no calibration or deck yet, no check-in.
sed -i -e 's#^layout = .*#layout = ""#' -e 's#^deck = .*#deck = ""#' -e 's#^keys_file = .*#keys_file = ""#' \
  -e "s#/etc/smart-table#$ROOT/etc/smart-table#g" "$CONF"
guide "echo 'the-table-password' | sudo tee /etc/smart-table/mqtt-password >/dev/null"
guide "echo 'the-director-token' | sudo tee /etc/smart-table/director-token >/dev/null"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=venue-ca -keyout "$ROOT/ca.key" -out venue-ca.crt 2>/dev/null \
  || fail "openssl could not make a test CA"
guide 'sudo cp venue-ca.crt /etc/smart-table/ca.crt'
if [ "$SYSTEM" = 1 ]; then
  guide 'sudo chown -R root:smart-table /etc/smart-table && sudo chmod 640 /etc/smart-table/*'
else
  skip "(needs --system) the chown of: sudo chown -R root:smart-table /etc/smart-table && sudo chmod 640 /etc/smart-table/*"
  chmod 640 "$ROOT"/etc/smart-table/*
fi
SECRETS='sudo chown smart-table: /etc/smart-table/mqtt-password /etc/smart-table/director-token && sudo chmod 600 /etc/smart-table/mqtt-password /etc/smart-table/director-token'
if [ "$SYSTEM" = 1 ]; then
  guide "$SECRETS"
else
  skip "(needs --system) the chown of: $SECRETS"
  chmod 600 "$ROOT"/etc/smart-table/mqtt-password "$ROOT"/etc/smart-table/director-token
fi
[ "$(stat -c %a "$ROOT/etc/smart-table/mqtt-password")" = 600 ] && ok "secrets mode 0600"
guide 'sudo -u smart-table /opt/smart-table/.venv/bin/smart-table run --config /etc/smart-table/table.toml --check'
ok "the configuration passes run --check"

say "== 8. The broker"
if [ "$SYSTEM" = 1 ]; then guide 'sudo apt install -y mosquitto'; fi
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { skip "mosquitto is not installed: broker steps"; MOSQ=""; }
MOSQ=$(command -v mosquitto || echo /usr/sbin/mosquitto)
mkdir -p "$ROOT/etc/mosquitto/conf.d" "$ROOT/var/lib/mosquitto"
guide 'sudo cp systemd/mosquitto/smart-table.conf /etc/mosquitto/conf.d/'
guide 'sudo cp systemd/mosquitto/smart-table.acl /etc/mosquitto/smart-table.acl'
guide "sudo mosquitto_passwd -c -b /etc/mosquitto/smart-table.passwd director 'the-director-password'"
say "\$ sudo systemd/mosquitto/add-table.sh cool-mule table-1"
ADDED=$(systemd/mosquitto/add-table.sh cool-mule table-1 "$ROOT/etc/mosquitto/smart-table.acl" "$ROOT/etc/mosquitto/smart-table.passwd") \
  || fail "add-table.sh failed"
TABLE_PASSWORD=$(printf '%s\n' "$ADDED" | sed -n 's/^user table-1@cool-mule password //p')
[ -n "$TABLE_PASSWORD" ] && ok "add-table.sh made the table's login"
if [ "$(id -u)" = 0 ] && id mosquitto >/dev/null 2>&1; then
  # As root, Mosquitto drops to its own user: the guide's chown is what lets it read the files.
  chmod 755 "$ROOT" "$ROOT/etc" "$ROOT/etc/mosquitto" "$ROOT/var" "$ROOT/var/lib" 2>/dev/null || true
  chown mosquitto: "$ROOT/var/lib/mosquitto"
  guide 'sudo chown mosquitto: /etc/mosquitto/smart-table.passwd /etc/mosquitto/smart-table.acl'
else
  skip "(not root: Mosquitto runs as this user) sudo chown mosquitto: /etc/mosquitto/smart-table.passwd /etc/mosquitto/smart-table.acl"
fi
# The broker from the installed files, as `systemctl restart mosquitto` would run it; the plain
# listener on a free port, the TLS one removed (the guide's closed-LAN choice), state under $ROOT.
PORT=$(free_port)
BROKER_CONF=$ROOT/etc/mosquitto/check.conf
sed -e "s#/etc/mosquitto#$ROOT/etc/mosquitto#g" -e "s#^listener 1883 127.0.0.1#listener $PORT 127.0.0.1#" \
  -e '/^listener 8883/,/^tls_version/d' -e "s#/var/lib/mosquitto/#$ROOT/var/lib/mosquitto/#" \
  "$ROOT/etc/mosquitto/conf.d/smart-table.conf" >"$BROKER_CONF"
"$MOSQ" -c "$BROKER_CONF" >"$ROOT/mosquitto.log" 2>&1 &
PIDS+=($!)
up=0
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && { up=1; break; }; sleep 0.1; done
[ "$up" = 1 ] || { cat "$ROOT/mosquitto.log"; fail "mosquitto did not start from the installed files"; }
ok "mosquitto runs the installed smart-table.conf on 127.0.0.1:$PORT"
printf '%s\n' "$TABLE_PASSWORD" >"$ROOT/etc/smart-table/mqtt-password"
sed -i -e 's#^host = .*#host = "127.0.0.1"#' -e "s#^port = .*#port = $PORT#" -e 's#^tls = .*#tls = false#' \
  -e 's#^ca_file = .*#ca_file = ""#' "$CONF"

say "== 9. The service"
mkdir -p "$ROOT/etc/systemd/system"
guide 'sudo cp systemd/smart-table.service /etc/systemd/system/'
if command -v systemd-analyze >/dev/null; then
  sed "s#/opt/smart-table/.venv/bin/smart-table#$ROOT/opt/smart-table/.venv/bin/smart-table#g" \
    "$ROOT/etc/systemd/system/smart-table.service" >"$ROOT/smart-table.service"
  systemd-analyze verify "$ROOT/smart-table.service" 2>"$ROOT/verify.log" || { cat "$ROOT/verify.log"; fail "systemd-analyze verify"; }
  ok "the unit verifies (systemd-analyze verify)"
else
  skip "systemd-analyze is not installed: the unit is not verified"
fi

say "== 10. Check it end to end"
# The table's hardware is not here: the same configuration with simulated devices.
sed -i -e 's#^camera = .*#camera = "sim"#' -e 's#^panel = .*#panel = "sim"#' -e 's#^nfc = .*#nfc = "sim:install-check"#' \
  -e "s#^path = \"\"#path = \"$ROOT/var/lib/smart-table/events.db\"#" "$CONF"
set +e
guide 'sudo -u smart-table /opt/smart-table/.venv/bin/smart-table doctor --config /etc/smart-table/table.toml --snapshot /tmp/doctor' \
  | tee "$ROOT/doctor.log"
set -e
grep -q '^ok    broker   127.0.0.1:'"$PORT"' as table-1@cool-mule: connected' "$ROOT/doctor.log" \
  && ok "doctor reaches the broker with the table's login" || fail "doctor: broker"
grep -q '^ok    secrets' "$ROOT/doctor.log" && ok "doctor: key and token files" || fail "doctor: secrets"
[ "$(grep -cE '^(ok|warn|FAIL|skip) ' "$ROOT/doctor.log")" = 8 ] && ok "doctor: one line per part (8)"
.venv/bin/smart-table run --config "$CONF" >"$ROOT/service.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q 'event=ready\|READY\|event=started' "$ROOT/service.log" && break; sleep 0.2; done
sleep 1
grep 'event=ready' "$ROOT/service.log" | grep -q ' camera=ok' \
  && ok "the installed table's simulated camera renders from the clone's decks (camera ok at READY)" \
  || { cat "$ROOT/service.log"; fail "the camera is not ok at READY"; }
say "\$ /opt/smart-table/.venv/bin/smart-table top --config /etc/smart-table/table.toml --username director --password-file ~/director-password"
(umask 077 && echo 'the-director-password' >"$ROOT/director-password")
.venv/bin/smart-table top --config "$CONF" --username director --password-file "$ROOT/director-password" --once --wait 3 >"$ROOT/top.log" \
  || { cat "$ROOT/top.log" "$ROOT/service.log"; fail "top did not see the table"; }
grep -q 'cool-mule/table-1' "$ROOT/top.log" && grep -q 'online' "$ROOT/top.log" \
  && ok "the table publishes with its own login through the ACL; top shows it online" || fail "top"

say "== install-check: $PASSED checks passed, $SKIPPED steps not performed here (listed above)"
