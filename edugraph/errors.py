"""Exceptions. TF1's names (``eg.errors.InvalidArgumentError``...) so lecture code catches them."""


class OpError(Exception):
    """A failure while running an op, like ``tf.errors.OpError``: knows the op that failed."""

    def __init__(self, message, op=None):
        super().__init__(message)
        self.message, self.op = message, op


class InvalidArgumentError(OpError, ValueError):
    """An op got an argument it cannot use (e.g. a placeholder that was not fed)."""


class FailedPreconditionError(OpError):
    """The system is not in a state to run the op (e.g. an uninitialised variable)."""


class NotFoundError(OpError, KeyError):
    """A named tensor, op or file does not exist."""


class UnimplementedError(OpError, NotImplementedError):
    """The operation is not supported (e.g. a gradient an op does not define)."""


class ShapeError(ValueError):
    """Shapes that cannot work together; the message names the op, the shapes and the rule."""


class DeviceError(RuntimeError):
    """A device that is missing, unusable, or mixed with another without an explicit copy."""


class GradientError(RuntimeError):
    """Backward cannot proceed: non-scalar output without a gradient, an op without gradient..."""
