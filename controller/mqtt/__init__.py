"""MQTT for the table: topics, a durable outbox, the aiomqtt link, its local broker (amqtt) and a Mosquitto launcher."""
