"""The floor: one venue's tables run as one tournament (clock, seating across tables, results, web page).

Pure core (structure, clock, seating, results, alerts) with I/O at the edges (service: MQTT and the
registry database; web: the director's page).
"""
