"""The table service: rules engine, table state, event log, MQTT, CLI and service wiring."""
