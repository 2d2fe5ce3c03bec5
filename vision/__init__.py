"""Camera frames -> card and button observations -> table events."""
