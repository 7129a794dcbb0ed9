"""The benchmark's garbage-collection probe, loaded into the project's server processes only
(`benchmarks/wsbench.py` puts this folder on their PYTHONPATH and names a log in WSBENCH_GC_LOG).

A full collection stops the process's event loop, and with it every room's clock, for as long as it
walks the heap: a word due then reaches every player of the process that much late. The probe logs
each full collection (and any other over 2 ms) as `epoch_ms generation ms collected`, so that the
benchmark can print the pauses that fell within a case.
"""

import gc
import os
import time

_path = os.environ.get("WSBENCH_GC_LOG")
if _path:
    _log = open(_path, "a", buffering=1)  # noqa: SIM115 - open for the life of the process
    _started = [0.0]

    def _probe(phase: str, info: dict) -> None:
        if phase == "start":
            _started[0] = time.perf_counter()
            return
        ms = (time.perf_counter() - _started[0]) * 1000
        if info["generation"] == 2 or ms > 2:
            _log.write(f"{time.time() * 1000:.1f} {info['generation']} {ms:.2f} {info['collected']}\n")

    gc.callbacks.append(_probe)
