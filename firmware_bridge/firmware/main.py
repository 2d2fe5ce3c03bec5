"""Pico entry point: MicroPython runs main.py at power-up."""

import hal_pico
import panelfw

panelfw.run(hal_pico.PicoHal())
