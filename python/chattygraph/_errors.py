"""The exceptions ChattyGraph raises: every one is a ``ChattyError``, and each kind
is also the built-in exception a caller would catch for it."""


class ChattyError(Exception):
    """An error ChattyGraph reports: bad input, a failed engine, no GPU."""


class ParameterError(ChattyError, ValueError):
    """A parameter out of its domain (alpha outside (0, 1), threads=0, a vertex that is not one)."""


class InputError(ChattyError, ValueError):
    """An input that is malformed, corrupt or inconsistent."""


class UnsupportedError(ChattyError, NotImplementedError):
    """Not available on this engine, build or graph (engine='ssd' on a graph in memory)."""


class OutOfMemoryError(ChattyError, MemoryError):
    """More memory, on the host or a GPU, than there is."""


class DeviceError(ChattyError, OSError):
    """The GPU, its driver or NVRTC failed, or there is no GPU."""


class FileError(ChattyError, OSError):
    """A file could not be read or written."""


class ConvergenceError(ChattyError, ArithmeticError):
    """An iterative kernel ran out of iterations before it converged (networkx raises
    ``PowerIterationFailedConvergence`` for PageRank there)."""


class NoPathError(ChattyError, LookupError):
    """No path joins the two vertices (networkx raises ``NetworkXNoPath``)."""
