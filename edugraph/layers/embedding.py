"""Embedding: a trainable lookup table from integer ids (words, users...) to dense vectors."""
from ..nn.module import Module
from ..ops.math import cast
from ..ops.shape import gather
from ..errors import ShapeError


class Embedding(Module):
    r"""Row ``i`` of a (input_dim, output_dim) table for each id ``i``; input_dim·output_dim
    parameters. The gradient of a lookup is *scattered* back into only the rows that were used
    (ids used twice get both contributions). ``weights=[table]`` (Keras 2; Keras 3 also takes
    the table alone) starts it from a table, as ``set_weights`` on the built layer would."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, input_length=None, weights=None, **kwargs):
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        if self.batch_input_shape is None:          # (batch, sequence length): Keras's default
            self.batch_input_shape = (None, input_length)
        if weights is not None:
            self.build_for(self.batch_input_shape)
            self.set_weights(weights if isinstance(weights, list) and len(weights) == 1
                             else [weights])

    def build(self, input_shape):
        self.add_weight("embeddings", (self.input_dim, self.output_dim),
                        self.embeddings_initializer, regularizer=self.embeddings_regularizer)

    def call(self, inputs):
        if inputs.dtype.kind == "f":
            inputs = cast(inputs, "int64")          # Keras accepts float ids, as do we
        elif inputs.dtype.kind not in "iu":
            raise ShapeError(f"Embedding '{self.name}': ids must be integers, got {inputs.dtype}.")
        return gather(self.embeddings, inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def extra_repr(self):
        return f"{self.input_dim}, {self.output_dim}"
