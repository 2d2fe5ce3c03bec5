"""MQTT for the table: topics, a durable outbox, the aiomqtt link, and a small embedded broker."""
