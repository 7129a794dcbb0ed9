"""`python slow_worker.py [celery worker options]`: a real Celery worker of the app whose fits can be made slow.

With TEST_EPOCH_DELAY=s in the environment, every epoch of a fit asked for 1000 epochs or more sleeps s
seconds before its progress callback, so a test can kill the worker while a fit is surely running. Nothing
else differs from `celery -A quizsite worker` (the app, its bootsteps and signals, the pool).
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    import irt

    delay = float(os.environ.get("TEST_EPOCH_DELAY") or 0)
    if delay > 0:
        real_fit = irt.fit

        def slow_fit(data, config=None, progress=None, on_epoch=None):  # type: ignore[no-untyped-def]
            if config is None or (config.max_epochs or 0) < 1000 or on_epoch is None:
                return real_fit(data, config, progress, on_epoch=on_epoch)

            def hook(status):  # type: ignore[no-untyped-def]
                time.sleep(delay)
                on_epoch(status)

            return real_fit(data, config, progress, on_epoch=hook)

        irt.fit = slow_fit  # fits.py calls irt.fit through the module

    from quizsite.celery import app

    app.worker_main(["worker", *sys.argv[1:]])


if __name__ == "__main__":
    main()
