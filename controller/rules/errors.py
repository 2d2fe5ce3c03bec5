"""Why an input line is refused. The engine turns each into an `error` output line and goes on."""


class Rejected(Exception):
    """An input line that is malformed or cannot happen now. The table state must be unchanged."""


class ProfileError(ValueError):
    """A rule profile file that is unusable: names the file, the key and the problem."""
