"""A name TF or PyTorch has and edugraph lacks never ends in a bare AttributeError: eg.<name>,
eg.nn.<name> and x.<name> say what to use instead, why it is left out, or what is close."""
import pytest

import edugraph as eg
import edugraph.nn.functional as F
from edugraph.missing import INSTEAD, MissingNameError

OWNERS = {"eg": lambda: eg, "eg.nn": lambda: eg.nn, "eg.Tensor": lambda: eg.tensor([1.0]),
          "eg.nn.functional": lambda: F}


@pytest.mark.parametrize("where, name", [(w, n) for w in INSTEAD for n in INSTEAD[w]])
def test_every_name_in_the_table_is_missing_and_gets_its_advice(where, name):
    """(A name that edugraph gains must leave the table: this fails until it does.)"""
    owner = OWNERS[where]()
    assert not hasattr(owner, name)
    with pytest.raises(AttributeError) as info:
        getattr(owner, name)
    assert isinstance(info.value, MissingNameError)
    assert str(info.value) == f"{where} has no attribute '{name}': {INSTEAD[where][name]}"


def test_the_advice_for_copied_code():
    x = eg.tensor([1.0, 2.0])
    with pytest.raises(AttributeError, match=r"^eg.Tensor has no attribute 'copy': use "
                       r"\.clone\(\), as in PyTorch \(numpy's x\.copy\(\)\)\.$"):
        x.copy()
    with pytest.raises(AttributeError, match=r"'exp_': the in-place methods here are add_, "):
        x.exp_()
    with pytest.raises(AttributeError, match=r"^eg has no attribute 'reduce_summ': Did you mean "
                       r"reduce_sum or .*If TensorFlow or PyTorch has it, edugraph leaves it"):
        eg.reduce_summ
    with pytest.raises(AttributeError, match=r"^eg\.nn has no attribute 'Conv1d': convolutions "
                       r"are 2-D only here"):
        eg.nn.Conv1d
    with pytest.raises(AttributeError, match=r"'SymbolicTensor' object has no attribute "
                       r"'_private'"):
        with eg.Graph().as_default():
            eg.placeholder(eg.float32)._private
    with pytest.raises(ImportError, match="cannot import name 'einsum'"):
        from edugraph import einsum  # noqa: F401


def test_pytorchs_device_type():
    torch = pytest.importorskip("torch")
    assert eg.tensor([1.0]).device.type == torch.tensor([1.0]).device.type == "cpu"
    assert eg.device("cuda").type == torch.device("cuda").type == "cuda"
    assert eg.device("cpu").type == "cpu" and eg.device("sim").type == "sim"


def test_every_torch_functional_name_is_there_or_said_missing():
    """Issue 44: F.<name> for each of torch.nn.functional's public names works or raises
    MissingNameError (an AttributeError that says what to do), never a bare AttributeError."""
    torch_functional = pytest.importorskip("torch.nn.functional")
    bare = []
    for name in dir(torch_functional):
        if name.startswith("_"):
            continue
        try:
            getattr(F, name)
        except MissingNameError as error:
            assert str(error).startswith(f"eg.nn.functional has no attribute '{name}': ")
        except AttributeError:
            bare.append(name)
    assert not bare, bare


def test_a_misspelt_functional_name_gets_the_close_ones():
    with pytest.raises(MissingNameError, match=r"'softmx'.*Did you mean softmax"):
        F.softmx
