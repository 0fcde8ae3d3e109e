"""Devices: tensors know where they live, copies are explicit, and the sim:0 stand-in guards
against silent host conversion exactly as CuPy does (so CPU-only CI exercises device paths)."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.devices import SimArray
from edugraph.errors import DeviceError


def test_tensor_creation_places_and_copies(device):
    data = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    t = eg.tensor(data, device=device)
    assert t.device.name == device and t.device is eg.get_device(device)
    assert t.shape == (2, 2) and t.dtype == eg.float32 and t.ndim == 2 and t.size == 4
    data[0, 0] = 99                                     # the tensor owns a copy
    assert t.numpy()[0, 0] == 1.0
    assert isinstance(t.numpy(), np.ndarray) and t.tolist() == [[1, 2], [3, 4]]
    assert t[1, 0].item() == 3.0 and isinstance(t[1, 0].item(), float)


def test_default_dtypes():
    assert eg.tensor(1.5).dtype == eg.float32 and eg.tensor([1, 2]).dtype == eg.int64
    assert eg.tensor([True]).dtype == eg.bool_
    assert eg.tensor(np.array([1.0])).dtype == eg.float64            # numpy keeps its dtype
    assert eg.tensor([1, 2], dtype=eg.float64).dtype == eg.float64
    assert eg.tensor([1.0], dtype="float").dtype == eg.float32
    assert eg.tensor([1.0], dtype=np.int32).dtype == eg.int32


def test_device_scope_places_new_tensors(device):
    with eg.device(device):
        t = eg.tensor([1.0]) * 2
        z = eg.zeros((2,))
    assert t.device.name == device and z.device.name == device
    assert eg.current_device().name == "cpu:0"


def test_made_like_a_tensor_lands_on_its_device(device):
    """zeros_like / ones_like follow their input's device, not the scope (TF and PyTorch)."""
    x = eg.tensor([1.0, 2.0], device=device)
    for made in (eg.zeros_like(x), eg.ones_like(x, dtype=eg.float64), x * 1 + eg.zeros_like(x)):
        assert made.device.name == device and made.shape == (2,)
    assert eg.ones_like(x, dtype=eg.float64).dtype == eg.float64


@pytest.mark.parametrize("spec, name", [("/cpu:0", "cpu:0"), ("cpu", "cpu:0"),
                                        ("/device:CPU:0", "cpu:0"), ("sim", "sim:0"),
                                        ("/job:localhost/replica:0/task:0/device:sim:0", "sim:0")])
def test_device_specs(spec, name):
    assert eg.get_device(spec).name == name


def test_to_cpu_and_back(device):
    x = eg.tensor([1.0, 2.0], device=device, requires_grad=True)
    host = x.cpu()
    assert host.device.name == "cpu:0" and host.requires_grad
    back = host.to(device)
    np.testing.assert_array_equal(back.numpy(), [1, 2])
    assert x.to(x.device) is x and x.to(device) is x
    assert x.to(eg.float64).device is x.device


def test_cuda_without_a_gpu_says_what_is_missing():
    if eg.gpu_available():
        assert eg.tensor([1.0]).cuda().device.name == "gpu:0"
        return
    with pytest.raises(DeviceError, match="CuPy|CUDA"):
        eg.tensor([1.0]).cuda()
    # Naming a missing device is fine, as in PyTorch (d2l's try_gpu); using it is the error.
    cuda = eg.device("cuda")
    assert (str(cuda), cuda.type) == ("gpu:0", "cuda")       # torch.device('cuda').type
    for use in (lambda: eg.ones(2).to(cuda), lambda: eg.ones(2, device=cuda),
                lambda: eg.nn.Linear(2, 2).to(cuda), cuda.__enter__):
        with pytest.raises(DeviceError, match="CuPy|CUDA"):
            use()


def test_list_devices():
    names = [d.name for d in eg.list_devices()]
    assert names[0] == "cpu:0" and names[-1] == "sim:0"
    assert ("gpu:0" in names) == eg.gpu_available()


# --------------------------------------------------------------- the stand-in really guards
def test_eager_placement_logging_prints_each_op_and_its_device(device, capsys):
    x = eg.tensor([1.0, 2.0], device=device)
    eg.log_device_placement()
    try:
        eg.reduce_sum(x * 2.0)
    finally:
        eg.log_device_placement(False)
    assert capsys.readouterr().out == f"mul: {device}\nsum: {device}\n"
    x + 1.0                                             # off again: nothing printed
    assert capsys.readouterr().out == ""


def test_sim_refuses_silent_conversion_to_host():
    t = eg.tensor([1.0, 2.0], device="sim:0")
    assert isinstance(t._value, SimArray)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(t._value)
    with pytest.raises(TypeError, match="sim:0"):
        np.asarray(t)                                   # through Tensor.__array__ too
    np.testing.assert_array_equal(t.numpy(), [1, 2])    # the explicit copy works


def test_sim_refuses_mixing_with_host_arrays():
    t = eg.tensor([1.0, 2.0], device="sim:0")
    with pytest.raises(TypeError, match="host array"):
        t._value + np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="host array"):
        np.add(t._value, np.ones(2))
    with pytest.raises(TypeError, match="device.put"):
        eg.get_device("sim:0").xp.asarray(np.ones(2))
    assert isinstance(t._value * 2.0, SimArray)         # scalars are fine, as in CuPy


def test_sim_maths_stays_on_the_device():
    xp = eg.get_device("sim:0").xp
    a = xp.asarray(np.float64(3.0))
    results = [xp.exp(a), a.sum(), xp.maximum(a, 1.0), xp.zeros((2,)), a * a]
    assert all(isinstance(r, SimArray) for r in results)
    buf = xp.zeros((3,))
    xp.add.at(buf, eg.get_device("sim:0").put(np.array([0, 2, 0])), 1.0)   # as cupy.add.at
    np.testing.assert_array_equal(buf.get(), [2, 0, 1])


def test_mixing_host_data_in_an_op_is_copied_only_when_explicit():
    t = eg.tensor([1.0, 2.0], device="sim:0")
    np.testing.assert_array_equal((t * 2).numpy(), [2, 4])     # Python numbers are fine
    np.testing.assert_array_equal((t + [1.0, 1.0]).numpy(), [2, 3])   # lists become constants
    with pytest.raises(DeviceError):
        t + eg.tensor([1.0, 1.0])                              # a cpu tensor is not copied


def test_variables_on_a_device(device):
    with eg.device(device):
        v = eg.Variable([1.0, 2.0])
    v.assign_sub(eg.tensor([0.5, 0.5], device=device))
    np.testing.assert_array_equal(v.numpy(), [0.5, 1.5])
    v.assign([3.0, 4.0])
    np.testing.assert_array_equal(v.numpy(), [3, 4])
    assert v.device.name == device
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])
    # A copy of a tensor stays on its device, as torch.tensor(t) and nn.Parameter(t) do
    # (eg.Variable(t) of a GPU tensor went to the CPU).
    t = eg.tensor([1.0, 2.0], device=device)
    assert eg.tensor(t).device.name == device and eg.Variable(t).device.name == device
    assert eg.tensor(t, device="cpu").device.name == "cpu:0"


@pytest.fixture
def without_cupy(monkeypatch):
    """This machine as one without CuPy (also where CuPy and a GPU are present)."""
    from edugraph import devices

    def no_cupy(index=0):
        raise eg.errors.DeviceError(f"Device 'gpu:{index}' needs CuPy, which is not installed.")
    monkeypatch.setattr(devices, "_cupy", no_cupy)
    monkeypatch.setattr(devices, "_devices", {k: v for k, v in devices._devices.items()
                                              if k[0] != "gpu"})


def test_a_tf1_graph_on_a_missing_gpu_builds_and_runs_with_soft_placement(without_cupy, capsys):
    """TF1: tf.device('/gpu:0') builds on any machine; the Session refuses the missing GPU
    with a message that says how to fall back, or places the nodes on the CPU when
    allow_soft_placement is set. Eager code still fails at once."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(2, 2), name="x")
        with eg.device("/gpu:0"):
            y = eg.matmul(x, x, name="square")
        assert y.op.device == "/device:GPU:0" and y.device.name == "gpu:0"
        with eg.Session() as sess:
            with pytest.raises(eg.errors.InvalidArgumentError,
                               match=r"(?s)square.*'/device:GPU:0'.*CuPy.*allow_soft_placement"):
                sess.run(y, feed_dict={x: np.eye(2)})
        config = eg.ConfigProto(allow_soft_placement=True, log_device_placement=True)
        with eg.Session(config=config) as sess:
            value = sess.run(y, feed_dict={x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_allclose(value, [[7.0, 10.0], [15.0, 22.0]])
    assert "square: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0" in \
        capsys.readouterr().out
    with pytest.raises(eg.errors.DeviceError, match="CuPy"):
        with eg.device("/gpu:0"):
            pass
    traced = eg.function(lambda v: eg.matmul(v, v))

    def on_gpu(v):
        with eg.device("/gpu:0"):
            return traced(v)
    with pytest.raises(eg.errors.DeviceError, match="CuPy"):
        eg.function(on_gpu)(eg.tensor(np.eye(2)))


def test_the_slides_multi_gpu_sum_logs_the_ops_as_written(without_cupy, capsys):
    """The slide's tf.add_n over two GPUs' matmuls: without those GPUs, soft placement runs it
    on the CPU and the log lists every op built (also those constant folding then removes);
    without soft placement the first op on a missing device is named."""
    with eg.Graph().as_default():
        c = []
        for d in ["/gpu:2", "/gpu:3"]:
            with eg.device(d):
                a = eg.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
                b = eg.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2])
                c.append(eg.matmul(a, b))
        with eg.device("/cpu:0"):
            total = eg.add_n(c)
        sess = eg.Session(config=eg.ConfigProto(log_device_placement=True,
                                                allow_soft_placement=True))
        np.testing.assert_array_equal(sess.run(total), [[44, 56], [98, 128]])
        log = capsys.readouterr().out.splitlines()
        assert [line.split(":")[0] for line in log] == \
            ["Const", "Const_1", "MatMul", "Const_2", "Const_3", "MatMul_1", "AddN"]
        assert log[-1] == "AddN: (AddN): /job:localhost/replica:0/task:0/device:CPU:0"
        with pytest.raises(eg.errors.InvalidArgumentError,
                           match=r"^Cannot assign a device for operation Const: .*'/device:GPU:2'"
                                 r".*Device 'gpu:2' needs CuPy"):
            eg.Session().run(total)
