"""The table service: sources -> rules engine -> panel, MQTT and event log (issue 7)."""
