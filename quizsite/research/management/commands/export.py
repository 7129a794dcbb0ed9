import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizsite.research import exports
from quizsite.research.cli import add_data_arguments, data_spec
from quizsite.research.models import FitRun
from quizsite.research.selectors import fit_active


class Command(BaseCommand):
    help = (
        "Export data (DATA.md). `export responses --format csv|jsonl|parquet --out FILE` (streamed; '-' is stdout); "
        "`export caimira --out DIR` (the folder `python -m irt fit` reads); "
        "`export fit [--fit ID] --params agents|items --format csv|jsonl --out FILE`; "
        "`export figures [--fit ID] [--figure figures|cluster_difficulty|regressions|group_accuracy] --format json|csv "
        "--out FILE` (the analysis figures of a fit, README's definitions)."
    )

    def add_arguments(self, parser):
        parser.add_argument("what", choices=["responses", "caimira", "fit", "figures"])
        parser.add_argument("--out", required=True, help="file (responses, fit; '-' for stdout) or folder (caimira)")
        parser.add_argument("--format", default="csv", choices=[*sorted(exports.FORMATS), "json"])
        add_data_arguments(parser)  # --grouping, --group-sizes and --seed matter for caimira only
        parser.add_argument("--fit", type=int, default=None, help="fit run id (default: the active fit)")
        parser.add_argument("--params", default="items", choices=["agents", "items"], help="fit: which parameters")
        parser.add_argument("--figure", default="figures", choices=[f for f in exports.FIGURES if f != "romqa"],
                            help="figures: one table (csv or json) or all of them (figures, json only)")

    def handle(self, *args, **o):
        try:
            spec = data_spec(o)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if o["what"] == "caimira":
            counts = exports.caimira_export(spec=spec, directory=Path(o["out"]))
            self.stderr.write(f"caimira folder {o['out']}: {counts['items']} queries, {counts['agents']} agents, "
                              f"{counts['responses']} responses")
            return
        if o["what"] == "responses":
            if o["format"] == "json":
                raise CommandError("responses export as csv, jsonl or parquet")
            chunks = exports.stream_responses(o["format"], spec)
        else:
            run = FitRun.objects.filter(pk=o["fit"]).first() if o["fit"] else fit_active()
            if run is None or run.status != FitRun.Status.SUCCEEDED:
                raise CommandError("no such succeeded fit (give --fit ID, or make a fit active)")
            if o["what"] == "figures":
                try:
                    chunks = exports.figure_export(run, o["figure"], o["format"])
                except ValueError:
                    raise CommandError("figures export as json (all, or one table) or csv (one table)") from None
            elif o["format"] in ("parquet", "json"):
                raise CommandError("fit parameters export as csv or jsonl")
            else:
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
