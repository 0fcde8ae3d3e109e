"""Keras's optimizer names and defaults (``tf.keras.optimizers.Adam()``, ``compile("adam")``) on
edugraph's update rules (``eg.train``), set up as Keras 3 sets them up: RMSprop's mean square
starts at 0 (TF1's at 1), Adagrad adds its epsilon inside the root (TF1's has none), and SGD's
momentum holds the step itself, learning rate included (TF1's holds the sum of gradients, which
the current rate scales: the same path until the rate changes during training).

Each takes Keras's gradient clipping too: ``clipnorm`` (each gradient to that norm,
``eg.clip_by_norm``), ``global_clipnorm`` (all of them together, ``eg.clip_by_global_norm``) or
``clipvalue`` (each entry), applied inside ``apply_gradients``, so also in ``fit``; one of the
three at a time, as in Keras.

As Keras's, they warn when ``apply_gradients`` gets no gradient (None) for a variable, and
refuse ``lr=``, the learning rate's old name (Keras 3, from TF 2.16, refuses it; TF 2.11-2.15
warned and ignored it)."""
import functools

from .. import train

__all__ = ["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Ftrl", "get"]


def _keras(make):
    """A Keras optimizer made by ``make``: it refuses the old ``lr=`` and warns about
    variables without gradients (``warns_missing_gradients``)."""
    @functools.wraps(make)
    def keras_optimizer(*args, **kwargs):
        if "lr" in kwargs:
            raise ValueError(f"{make.__name__}(lr=...): `lr` is the old name of the learning "
                             "rate, which Keras 3 refuses (Keras 2 ignored it with a warning); "
                             f"write learning_rate={kwargs['lr']!r}.")
        optimizer = make(*args, **kwargs)
        optimizer.warns_missing_gradients = True
        return optimizer
    return keras_optimizer


@_keras
def SGD(learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", clipnorm=None,
        clipvalue=None, global_clipnorm=None):
    """Plain gradient descent, or with ``momentum`` (``nesterov=True``: Nesterov's)."""
    if momentum:
        rule = train.MomentumOptimizer(learning_rate, momentum, use_nesterov=nesterov, name=name,
                                       learning_rate_in_momentum=True)
    else:
        rule = train.GradientDescentOptimizer(learning_rate, name=name)
    return _clipping(rule, clipnorm, clipvalue, global_clipnorm)


@_keras
def Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Adam",
         clipnorm=None, clipvalue=None, global_clipnorm=None):
    rule = train.AdamOptimizer(learning_rate, beta1=beta_1, beta2=beta_2, epsilon=epsilon,
                               name=name)
    return _clipping(rule, clipnorm, clipvalue, global_clipnorm)


@_keras
def RMSprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
            name="RMSprop", clipnorm=None, clipvalue=None, global_clipnorm=None):
    rule = train.RMSPropOptimizer(learning_rate, decay=rho, momentum=momentum,
                                  epsilon=epsilon, centered=centered, name=name,
                                  initial_mean_square=0.0)
    return _clipping(rule, clipnorm, clipvalue, global_clipnorm)


@_keras
def Adagrad(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="Adagrad",
            clipnorm=None, clipvalue=None, global_clipnorm=None):
    rule = train.AdagradOptimizer(learning_rate, initial_accumulator_value, name=name,
                                  epsilon=epsilon, epsilon_in_root=True)
    return _clipping(rule, clipnorm, clipvalue, global_clipnorm)


@_keras
def Adadelta(learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta", clipnorm=None,
             clipvalue=None, global_clipnorm=None):
    rule = train.AdadeltaOptimizer(learning_rate, rho=rho, epsilon=epsilon, name=name)
    return _clipping(rule, clipnorm, clipvalue, global_clipnorm)


@_keras
def Ftrl(learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
         l1_regularization_strength=0.0, l2_regularization_strength=0.0, name="Ftrl",
         clipnorm=None, clipvalue=None, global_clipnorm=None):
    rule = train.FtrlOptimizer(learning_rate, learning_rate_power, initial_accumulator_value,
                               l1_regularization_strength, l2_regularization_strength,
                               name=name)
    return _clipping(rule, clipnorm, clipvalue, global_clipnorm)


def _clipping(optimizer, clipnorm, clipvalue, global_clipnorm):
    """Keras's clipping arguments on ``optimizer`` (used in its ``apply_gradients``)."""
    options = {"clipnorm": clipnorm, "clipvalue": clipvalue, "global_clipnorm": global_clipnorm}
    given = {name: value for name, value in options.items() if value is not None}
    if len(given) > 1:
        raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set "
                         "(each gradient by its own norm, each entry, or all gradients by their "
                         "global norm). Received: "
                         + ", ".join(f"{name}={value}" for name, value in given.items()))
    for name, value in options.items():
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be positive (e.g. {name}=1.0), got {value!r}.")
        setattr(optimizer, name, value)
    return optimizer


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "ftrl": Ftrl}


def get(identifier):
    """An optimizer from a Keras name ("adam"), with Keras's defaults; optimizers pass through."""
    if isinstance(identifier, type) or any(identifier is f for f in _BY_NAME.values()):
        name = identifier.__name__             # (Keras's Adam is a class; here a function)
        by_name = f", or pass its name: optimizer={name.lower()!r}" \
            if name.lower() in _BY_NAME else ""
        raise TypeError(f"optimizer: you passed the class {name} itself, not an optimizer; "
                        f"write {name}() to make one (e.g. {name}(learning_rate=0.01))"
                        f"{by_name}.")
    if not isinstance(identifier, str):
        if not hasattr(identifier, "apply_gradients"):
            raise TypeError(f"optimizer must be a name ('adam') or an optimizer "
                            f"(eg.keras.optimizers.Adam()), not {type(identifier).__name__}.")
        return identifier
    if identifier.lower() not in _BY_NAME:
        raise ValueError(f"Unknown optimizer {identifier!r}. Known: {', '.join(sorted(_BY_NAME))}"
                         ", or pass an optimizer (eg.keras.optimizers.Adam(0.01), eg.train...).")
    return _BY_NAME[identifier.lower()]()
