"""`import irt` (every Django process does it, through the research app) does not import torch."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_django_process_starts_without_torch_until_a_fit_needs_it():
    code = (
        "import sys, django; django.setup(); import irt; assert 'torch' not in sys.modules, 'torch at start-up';"
        "irt.FitConfig(); assert 'torch' in sys.modules; print('ok')"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.settings.test"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_unknown_names_are_still_attribute_errors():
    import irt

    try:
        irt.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("irt.no_such_name did not raise")
