"""Serial protocol, host-side bridge, LED scene language, and the panel microcontroller firmware."""
