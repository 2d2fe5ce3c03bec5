#!/bin/sh
# Add a table's MQTT login and ACL block:  sudo ./add-table.sh VENUE TABLE [ACL] [PASSWD]
# Prints the generated password once; put it in the table's /etc/smart-table/mqtt-password.
set -eu
venue=$1 table=$2
acl=${3:-/etc/mosquitto/smart-table.acl}
passwd=${4:-/etc/mosquitto/smart-table.passwd}
user="table-$venue-$table"
prefix="smarttable/v1/$venue/$table"
ha_id=$(printf 'smart_table_%s_%s' "$venue" "$table" | tr '.A-Z-' '_a-z_')  # Home Assistant discovery
case "$venue$table" in *[!A-Za-z0-9_.-]*) echo "venue and table: letters, digits, _ . - only" >&2; exit 2;; esac
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
[ -f "$passwd" ] || { touch "$passwd"; chmod 600 "$passwd"; }
mosquitto_passwd -b "$passwd" "$user" "$password"
cat >>"$acl" <<ACL

user $user
topic write $prefix/status
topic write $prefix/state
topic write $prefix/events
topic write $prefix/rulings
topic write $prefix/reply
topic write $prefix/reply/#
topic read $prefix/cmd/+
topic write homeassistant/+/$ha_id/#
ACL
echo "user $user password $password"
echo "reload the broker: sudo systemctl reload mosquitto"
