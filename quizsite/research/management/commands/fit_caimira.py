from django.core.management.base import BaseCommand, CommandError

from quizsite.research import fits, selectors, services
from quizsite.research.cli import add_data_arguments, data_spec
from quizsite.research.embedding import DEFAULT_EMBEDDER
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitRun


class Command(BaseCommand):
    help = (
        "Fit CAIMIRA (or a baseline) on the responses table. Without --wait the fit is queued for the Celery "
        "worker and its id printed; with --wait it runs in this process and prints progress and metrics."
    )

    def add_arguments(self, parser):
        parser.add_argument("--model", default="caimira", choices=fits.MODELS)
        parser.add_argument("--dims", type=int, default=5)
        add_data_arguments(parser)
        parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="sentence-transformers name/path, or hashing-<dim>")
        parser.add_argument("--template", default="default", help="'default' or a format string such as '{text}'")
        parser.add_argument("--epochs", type=int, default=None, help="maximum epochs (default: irt's)")
        parser.add_argument("--val-fraction", type=float, default=0.1)
        parser.add_argument("--clusters", type=int, default=6)
        parser.add_argument("--label", default="")
        parser.add_argument("--no-activate", action="store_true", help="keep the current active fit even if this one succeeds")
        parser.add_argument("--wait", action="store_true", help="run here and now instead of queueing for the worker")

    def handle(self, *args, **o):
        try:
            spec = FitSpec(
                data=data_spec(o), model=o["model"], dims=o["dims"], embedder=o["embedder"], template=o["template"],
                max_epochs=o["epochs"], val_fraction=o["val_fraction"], seed=o["seed"], n_clusters=o["clusters"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        shortfall = selectors.fit_data_check(spec=spec.data)  # refused before a run is queued (research README)
        if shortfall:
            raise CommandError(shortfall)
        activate = not o["no_activate"]
        if not o["wait"]:
            run = services.fitrun_start(spec=spec, label=o["label"], reason="command", activate=activate)
            self.stdout.write(f"fit {run.pk} queued; a Celery worker runs it (see /research/fits/{run.pk}/)")
            return
        run = services.fitrun_create(spec=spec, label=o["label"], reason="command", activate=activate)
        self.stdout.write(f"fit {run.pk}: running here")
        run = fits.fit_run_execute(fit_id=run.pk)
        if run.status != FitRun.Status.SUCCEEDED:
            raise CommandError(f"fit {run.pk} {run.status}: {run.error.splitlines()[0] if run.error else ''}")
        m, c = run.metrics, run.counts
        self.stdout.write(
            f"fit {run.pk} succeeded in {run.timing.get('total_s')} s: {c['items']} items, {c['agents']} agents "
            f"{c['agents_by_kind']}, {c['responses']} responses; epochs {m.get('epochs')}"
        )
        for split in ("train", "val"):
            if m.get(split):
                values = ", ".join(f"{k} {v:.4f}" for k, v in m[split].items() if isinstance(v, float))
                self.stdout.write(f"  {split}: {values}")
        if run.is_active:
            self.stdout.write("  now the active fit")
