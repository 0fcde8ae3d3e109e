"""Distributed training (``tf.distribute``), small enough to read: ``eg.distribute``.

* ``MirroredStrategy``: data parallelism on the devices of this process; the slide's
  ``with strategy.scope():`` and ``model.fit`` (``strategy.py``);
* the all-reduce algorithms, all-to-all, all-to-master and the ring, each the code one worker
  runs, with the log of what it sent (``all_reduce.py``); ``all_reduce(arrays, "ring")`` runs
  one over the replicas' arrays and ``replay`` shows who holds what after each step;
* the communicator they run on: threads (``communicator.py``), processes over 127.0.0.1 sockets
  (``sockets.py``, with ``wire.py``: arrays as a header and raw bytes, never pickle) and MPI
  (``mpi.py``);
* ``MultiWorkerMirroredStrategy``: one replica per process, the cluster from ``TF_CONFIG``,
  and ``launch`` to start the workers (``multi_worker.py``);
* parameter servers and Downpour SGD with stale gradients (``parameter_server.py``);
* model parallelism against data parallelism on Y = ReLU(XW)V (``model_parallel.py``).
"""
from .all_reduce import (ALGORITHMS, Message, all_reduce, all_to_all_reduce,
                         all_to_master_reduce, broadcast, bytes_received, bytes_sent, replay,
                         ring_all_reduce)
from .communicator import (Communicator, DistributedError, LocalCommunicator, ProtocolError,
                           WorkerLostError, WorkerTimeoutError, run_local)
from .model_parallel import BatchSplit, HiddenSplit, Transfer, unsplit_layer
from .mpi import MPICommunicator
from .multi_worker import (TOKEN_VARIABLE, MultiWorkerMirroredStrategy, WorkerFailedError,
                           WorkerResult, cluster_from_tf_config, launch)
from .parameter_server import ParameterServers, Update, downpour_sgd, place_variables
from .sockets import SocketCommunicator, new_token
from .strategy import MirroredStrategy, Strategy, get_strategy, has_strategy, shard_bounds

__all__ = [
    "MirroredStrategy", "MultiWorkerMirroredStrategy", "Strategy", "get_strategy",
    "has_strategy", "shard_bounds",
    "all_reduce", "ring_all_reduce", "all_to_all_reduce", "all_to_master_reduce", "broadcast",
    "ALGORITHMS", "Message", "bytes_sent", "bytes_received", "replay",
    "Communicator", "LocalCommunicator", "SocketCommunicator", "MPICommunicator", "run_local",
    "new_token", "DistributedError", "WorkerTimeoutError", "WorkerLostError", "ProtocolError",
    "cluster_from_tf_config", "launch", "WorkerResult", "WorkerFailedError", "TOKEN_VARIABLE",
    "ParameterServers", "place_variables", "downpour_sgd", "Update",
    "HiddenSplit", "BatchSplit", "unsplit_layer", "Transfer",
]
