"""The panel firmware (MicroPython for the Pico). On the Pico these files sit flat on the flash and
import each other as top-level modules; on the host they form this package (the protocol module is
shared with the bridge, the rest runs in the simulated panel and the tests). Not copied to the Pico."""
