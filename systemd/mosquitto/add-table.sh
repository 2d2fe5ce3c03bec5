#!/bin/sh
# Add a table's MQTT login and ACL block:  sudo ./add-table.sh VENUE TABLE [ACL] [PASSWD]
# The login is TABLE@VENUE: '@' is no character of a venue or table id (the rule of table.toml:
# a letter or digit, then up to 63 letters, digits, '_', '.', '-'), so every (venue, table) pair
# has its own login and no two pairs share one ("cool-mule" "table-1" is table-1@cool-mule,
# "cool" "mule-table-1" is mule-table-1@cool). Prints the generated password once; put it in the
# table's /etc/smart-table/mqtt-password (mode 0600) and the login in table.toml's broker.username.
set -eu
[ $# -ge 2 ] && [ $# -le 4 ] || { echo "usage: $0 VENUE TABLE [ACL] [PASSWD]" >&2; exit 2; }
venue=$1 table=$2
acl=${3:-/etc/mosquitto/smart-table.acl}
passwd=${4:-/etc/mosquitto/smart-table.passwd}
valid_id() {  # one MQTT topic level, as controller/service/config.py's SEGMENT
    printf '%s' "$1" | LC_ALL=C grep -Eq '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' && [ "$(printf '%s' "$1" | wc -l)" -eq 0 ]
}
valid_id "$venue" || { echo "venue '$venue': a letter or digit, then up to 63 letters, digits, _ . -" >&2; exit 2; }
valid_id "$table" || { echo "table '$table': a letter or digit, then up to 63 letters, digits, _ . -" >&2; exit 2; }
user="$table@$venue"
prefix="smarttable/v1/$venue/$table"
ha_id=$(printf 'smart_table_%s_%s' "$venue" "$table" | tr '.A-Z-' '_a-z_')  # Home Assistant discovery
if [ -f "$acl" ] && grep -qxF "user $user" "$acl"; then
    echo "$user already has an ACL block in $acl; its password is replaced" >&2
    block=no
else
    block=yes
fi
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
umask 077
[ -f "$passwd" ] || touch "$passwd"
chmod 600 "$passwd"
mosquitto_passwd -b "$passwd" "$user" "$password"
if [ "$block" = yes ]; then
    cat >>"$acl" <<ACL

user $user
topic write $prefix/status
topic write $prefix/state
topic write $prefix/events
topic write $prefix/rulings
topic write $prefix/reply
topic write $prefix/reply/#
topic write $prefix/picture
topic read $prefix/cmd/+
topic write homeassistant/+/$ha_id/#
ACL
fi
echo "user $user password $password"
echo "reload the broker: sudo systemctl reload mosquitto"
