"""The one exception type vrlib raises for bad input, so callers can catch it alone.

The message always says what went wrong and what to do about it; the command line
prints it on one line without a traceback.
"""


class VrlibError(ValueError):
    """Bad input or a missing resource, with a message that says what to do."""
