"""Pressing Ctrl-C from a test, as a student stops a loop that never ends."""
import _thread
import contextlib
import gc
import signal
import threading


@contextlib.contextmanager
def pressing_ctrl_c(every=0.3):
    """Ctrl-C (a KeyboardInterrupt in the main thread) every ``every`` seconds until the block
    ends. Once is not enough: a KeyboardInterrupt that lands in an object's ``__del__``, which
    the garbage collector may run at any moment of the loop, is printed and dropped by Python,
    and the loop would run on.

    Python's own Ctrl-C handler is in place for the block (as in a terminal or a Jupyter
    kernel): ``interrupt_main`` does nothing while SIGINT is ignored or left to the system, and
    a CI run once spent 15 minutes in such a loop. The presses are counted and printed when
    the block ends after more than a few: a test that hangs anyway says what it pressed."""
    done = threading.Event()
    presses = []

    def press():
        while not done.wait(every):
            presses.append(repr(signal.getsignal(signal.SIGINT)))
            _thread.interrupt_main()

    gc.collect()
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    presser = threading.Thread(target=press, daemon=True)
    presser.start()
    try:
        yield
    finally:
        done.set()
        presser.join()                  # (no press after the block)
        signal.signal(signal.SIGINT, before)
        if len(presses) > 5:
            print(f"pressing_ctrl_c: {len(presses)} presses; SIGINT handler before the block "
                  f"{before!r}, during it {sorted(set(presses))}")
