"""The one root of the errors papersift expects.

Every error a user can meet (a bad input, an endpoint refused, a warehouse in use, a
missing model, a bad gold file) is a :class:`PapersiftError` whose message is the one line
the CLI prints. Anything else that escapes is a bug and keeps its traceback. Every layer may
import this module; it imports nothing.
"""


class PapersiftError(Exception):
    """An expected failure; ``str(error)`` is the message for the user."""


class InputError(PapersiftError):
    """No input argument names anything to read (the CLI exits 2: nothing to process)."""
