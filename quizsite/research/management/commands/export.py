import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizsite.agents.models import Agent
from quizsite.research import exports
from quizsite.research.fits import fit_active
from quizsite.research.models import FitRun
from quizsite.research.prepare import DataSpec


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(BaseCommand):
    help = (
        "Export data (DATA.md). `export responses --format csv|jsonl|parquet --out FILE` (streamed; '-' is stdout); "
        "`export caimira --out DIR` (the folder `python -m irt fit` reads); "
        "`export fit [--fit ID] --what agents|items --format csv|jsonl --out FILE`."
    )

    def add_arguments(self, parser):
        parser.add_argument("what", choices=["responses", "caimira", "fit"])
        parser.add_argument("--out", required=True, help="file (responses, fit; '-' for stdout) or folder (caimira)")
        parser.add_argument("--format", default="csv", choices=sorted(exports.FORMATS))
        parser.add_argument("--sets", default="", help="item set slugs, comma separated (default: all)")
        parser.add_argument("--item-kinds", default="")
        parser.add_argument("--agent-kinds", default=",".join(k.value for k in Agent.Kind))
        parser.add_argument("--since", default="", help="ISO date or datetime, inclusive")
        parser.add_argument("--until", default="", help="ISO date or datetime, exclusive")
        parser.add_argument("--grouping", default="individual", choices=["individual", "groups"], help="caimira only")
        parser.add_argument("--group-sizes", default="1,5,10,15", help="caimira only")
        parser.add_argument("--fit", type=int, default=None, help="fit run id (default: the active fit)")
        parser.add_argument("--params", default="items", choices=["agents", "items"], help="fit: which parameters")

    def handle(self, *args, **o):
        try:
            spec = DataSpec(item_sets=_csv(o["sets"]), item_kinds=_csv(o["item_kinds"]), agent_kinds=_csv(o["agent_kinds"]),
                            since=o["since"], until=o["until"], grouping=o["grouping"],
                            group_sizes=[int(s) for s in _csv(o["group_sizes"])])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if o["what"] == "caimira":
            counts = exports.caimira_export(spec=spec, directory=Path(o["out"]))
            self.stderr.write(f"caimira folder {o['out']}: {counts['items']} queries, {counts['agents']} agents, "
                              f"{counts['responses']} responses")
            return
        if o["what"] == "responses":
            chunks = exports.stream_responses(o["format"], spec)
        else:
            run = FitRun.objects.filter(pk=o["fit"]).first() if o["fit"] else fit_active()
            if run is None or run.status != FitRun.Status.SUCCEEDED:
                raise CommandError("no such succeeded fit (give --fit ID, or make a fit active)")
            if o["format"] == "parquet":
                raise CommandError("fit parameters export as csv or jsonl")
            chunks = exports.stream_fit(run, o["params"], o["format"])
        out = sys.stdout.buffer if o["out"] == "-" else open(o["out"], "wb")  # noqa: SIM115
        try:
            n = 0
            for chunk in chunks:
                out.write(chunk)
                n += len(chunk)
        finally:
            if out is not sys.stdout.buffer:
                out.close()
        if o["out"] != "-":
            self.stderr.write(f"{o['what']} -> {o['out']} ({n} bytes)")
