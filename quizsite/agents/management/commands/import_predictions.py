from django.core.management.base import BaseCommand, CommandError

from quizsite.agents.predictions import predictions_import
from quizsite.items.importers import ImportError_


class Command(BaseCommand):
    help = "Import an AI system's answers (JSON lines) and judge them with the project's judge."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--agent", default="", help="agent name for lines without an 'agent' field")

    def handle(self, *args, **opts):
        try:
            report = predictions_import(path=opts["path"], agent_name=opts["agent"])
        except ImportError_ as exc:
            raise CommandError(f"nothing imported: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(report.summary()))
