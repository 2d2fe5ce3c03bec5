"""Seating across tables: balancing, breaking and late registration (pure)."""
