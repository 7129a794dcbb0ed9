from django.core.management.base import BaseCommand, CommandError

from quizsite.items.importers import IMPORTERS, ImportError_, formats_taking, importer_options, items_import


class Command(BaseCommand):
    help = "Import items (and for some formats agents and responses) from a file in a DATA.md format."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", required=True, choices=sorted(IMPORTERS))
        parser.add_argument("--set", required=True, dest="set_slug", help="item set slug")
        parser.add_argument("--name", default="", help="item set display name")
        parser.add_argument("--vectors", default="", help="ghigliottina: fastText .vec file for distractors")
        parser.add_argument(
            "--blocklist",
            default="",
            help="ghigliottina: words never used as distractors: glin-profanity (the default), none, or word "
            "files, comma-separated (quizsite/items/blocklist.py)",
        )
        parser.add_argument(
            "--split", default="", choices=["", "card"],
            help="ghigliottina: record a train/test split on each game (card: the HF card's 10%%/90%%, "
            "62 / 553 for the 615 games, drawn reproducibly)",
        )

    def handle(self, *args, **opts):
        options = {k: opts[k] for k in ("vectors", "split", "blocklist") if opts[k]}
        for name in options:  # checked here, so the error names the command's option, not a keyword
            if name not in importer_options(opts["format"]):
                raise CommandError(
                    f"--{name} is not an option of --format {opts['format']}; "
                    f"formats that take it: {', '.join(formats_taking(name))}"
                )
        try:
            report = items_import(
                fmt=opts["format"], path=opts["path"], set_slug=opts["set_slug"], set_name=opts["name"], **options
            )
        except ImportError_ as exc:
            raise CommandError(f"nothing imported: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(report.summary(warnings=False)))
        for line in report.warning_lines():
            self.stdout.write(self.style.WARNING(line))
