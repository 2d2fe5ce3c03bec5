"""Pico entry point: MicroPython runs main.py at power-up.

Hold NEW HAND (GP14 to ground) while plugging the Pico in to skip the panel and keep the USB serial
as MicroPython's REPL (for mpremote or Thonny: updating the firmware, editing panel_config.json).
"""

import machine

if machine.Pin(14, machine.Pin.IN, machine.Pin.PULL_UP).value() == 0:
    print("NEW HAND held at power-up: panel firmware not started, REPL on USB")
else:
    import hal_pico
    import panelfw

    panelfw.run(hal_pico.PicoHal())
