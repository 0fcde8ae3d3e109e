"""Pressing Ctrl-C from a test, as a student stops a loop that never ends."""
import _thread
import contextlib
import gc
import threading


@contextlib.contextmanager
def pressing_ctrl_c(every=0.3):
    """Ctrl-C (a KeyboardInterrupt in the main thread) every ``every`` seconds until the block
    ends. Once is not enough: a KeyboardInterrupt that lands in an object's ``__del__``, which
    the garbage collector may run at any moment of the loop, is printed and dropped by Python,
    and the loop would run on."""
    done = threading.Event()

    def press():
        while not done.wait(every):
            _thread.interrupt_main()

    gc.collect()
    threading.Thread(target=press, daemon=True).start()
    try:
        yield
    finally:
        done.set()
