"""Errors: zr's own text, as the ``zr`` command prints it."""


class ZrError(Exception):
    """zr could not run the session (a project that does not load, no model
    provider, a bad option, the binary missing or gone). ``str(error)`` is
    zr's message, with its ``help:`` line when it has one."""

    def __init__(self, message: str, *, exit_code: "int | None" = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class ProtocolError(ZrError):
    """zr and this client do not understand each other (another protocol
    version, a message that does not parse)."""
