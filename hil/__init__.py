"""Hardware in the loop: simulated camera, NFC reader, LED panel and the scenario runner."""
