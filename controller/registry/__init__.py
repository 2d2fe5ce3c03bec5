"""Player registry and NFC player cards: members, cards, events, seat draw, check-in at the table.

Modules: `keys` (venue secret file), `card` (signed NDEF record, pure), `db` (SQLite/PostgreSQL,
migrations), `registry` (operations), `draw` (seat draw, pure), `policy` (rulebook facts),
`identify` and `checkin` (tap decisions, pure over the registry), `reader` (nfcpy in a thread),
`cardio` (write/verify cards on a tag), `cli` (`smart-table register ...`).
"""
