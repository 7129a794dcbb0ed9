import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizsite.agents import runner, runs, selectors, services
from quizsite.agents.models import AgentRun
from quizsite.items.models import ItemSet


class Command(BaseCommand):
    help = (
        "Run an AI agent on an item set: `agent_run AGENT --set SLUG [--wait]` (AGENT is a name, or name@vN). "
        "Without --wait the run is queued for the Celery worker and its id printed. Also: --list, "
        "--register NAME --kind KIND --json SETTINGS, --cancel RUN, --resume RUN, --status RUN."
    )

    def add_arguments(self, parser):
        parser.add_argument("agent", nargs="?", help="agent name (latest version) or name@vN")
        parser.add_argument("--set", dest="item_set", help="item set slug")
        parser.add_argument(
            "--wait", action="store_true", help="run here and now instead of queueing for the worker"
        )
        parser.add_argument("--list", action="store_true", help="print every agent, one a line, name first")
        parser.add_argument("--register", metavar="NAME", help="register a new agent or a new version of one")
        parser.add_argument("--kind", default="", help="with --register: a registered kind (see --list)")
        parser.add_argument(
            "--json",
            dest="agent_settings",
            default="",
            metavar="SETTINGS",
            help="with --register: the settings JSON, or @path to a JSON file",
        )
        parser.add_argument("--description", default="")
        parser.add_argument("--cancel", type=int, metavar="RUN")
        parser.add_argument("--resume", type=int, metavar="RUN")
        parser.add_argument("--status", type=int, metavar="RUN")

    def handle(self, *args, **o):
        runs.agentrun_reap_lost()
        if o["list"]:
            return self._list()
        if o["register"]:
            return self._register(o)
        for action in ("cancel", "resume", "status"):
            if o[action] is not None:
                return self._on_run(action, o[action], o["wait"])
        if not o["agent"] or not o["item_set"]:
            raise CommandError("give AGENT --set SLUG, or --list, --register, --cancel, --resume, --status")
        services.agentconfigs_ensure_builtin()
        try:
            version = selectors.agentversion_resolve(o["agent"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        item_set = ItemSet.objects.filter(slug=o["item_set"]).first()
        if item_set is None:
            raise CommandError(f"no item set {o['item_set']!r} (python manage.py load_demo, or import_items)")
        if o["wait"]:
            run = runs.agentrun_create(version=version, item_set=item_set)
            return self._execute(run.pk)
        run = runs.agentrun_start(version=version, item_set=item_set)
        self.stdout.write(f"{run.pk}")
        self.stderr.write(
            f"agent run {run.pk} queued: {version} on {item_set.slug} (agent_run --status {run.pk})"
        )

    def _list(self):
        services.agentconfigs_ensure_builtin()
        for c in selectors.agent_configs():
            v = selectors.agentversion_latest(c)
            label = f"v{v.number}" if v else "no version"
            self.stdout.write(f"{c.name}\tkind={c.kind}\t{c.subtype}\t{label}\t{c.description[:80]}")

    def _register(self, o):
        raw = o["agent_settings"]
        try:
            if raw.startswith("@"):
                raw = Path(raw[1:]).read_text(encoding="utf-8")
            settings = json.loads(raw) if raw.strip() else {}
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"settings: {exc}") from None
        try:
            version, created = services.agentversion_register(
                name=o["register"], kind=o["kind"], settings=settings, description=o["description"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        word = "registered" if created else "unchanged (same settings)"
        self.stdout.write(f"{version} {word}: {json.dumps(version.settings, sort_keys=True)}")

    def _on_run(self, action: str, pk: int, wait: bool):
        run = AgentRun.objects.filter(pk=pk).first()
        if run is None:
            raise CommandError(f"no agent run {pk}")
        if action == "cancel":
            run = runs.agentrun_cancel(run=run)
        elif action == "resume":
            try:
                run = runs.agentrun_resume(run=run, enqueue=not wait)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            if wait:
                return self._execute(run.pk)
        self._print(AgentRun.objects.get(pk=pk))

    def _execute(self, pk: int):
        t0 = time.perf_counter()
        run = runner.agentrun_execute(run_id=pk, worker_name="agent_run --wait")
        self._print(run, time.perf_counter() - t0)
        if run.status != AgentRun.Status.DONE:
            raise CommandError(
                f"agent run {pk} {run.status}: {run.error.splitlines()[0] if run.error else ''}"
            )

    def _print(self, run: AgentRun, seconds: float | None = None):
        p = selectors.agent_run_progress(run)
        acc = f", accuracy {p['accuracy']:.3f}" if p["accuracy"] is not None else ""
        took = f" in {seconds:.1f} s" if seconds is not None else ""
        self.stdout.write(
            f"agent run {run.pk} {run.status}: {run.done}/{run.total} answered, {run.written} new responses{acc}{took}"
        )
