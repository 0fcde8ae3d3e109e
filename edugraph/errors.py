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


class OutOfRangeError(OpError):
    """An iterator ran past its data: ``next(iterator)`` in a traced function or a graph
    (``tf.errors.OutOfRangeError``, which TF1's input loops catch to end an epoch)."""


class DataLossError(OpError):
    """A file's data is damaged: a TFRecord whose checksum does not match, or that ends in
    the middle of a record (``tf.errors.DataLossError``)."""


class TracingTypeError(TypeError, ValueError):
    """A traced function got a value it cannot use: arguments that do not match its
    ``input_signature``, or a tensor of another graph (one leaked out of an earlier trace).
    TF raises TypeError, which its guides catch; it is a ValueError too (a wrong value)."""


class NoValueError(NotImplementedError, AttributeError):
    """``.numpy()`` of a graph tensor, which has no value while its graph is built. TF's
    symbolic tensors have no ``numpy`` attribute, so TF's guides catch AttributeError."""


class ShapeError(ValueError):
    """Shapes that cannot work together; the message names the op, the shapes and the rule."""


class DeviceError(RuntimeError):
    """A device that is missing, unusable, or mixed with another without an explicit copy."""


class GradientError(RuntimeError):
    """Backward cannot proceed: non-scalar output without a gradient, an op without gradient..."""
