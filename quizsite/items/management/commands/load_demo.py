from django.core.management.base import BaseCommand

from quizsite.items.demo import demo_load


class Command(BaseCommand):
    help = "Load the demo content shipped with the project (idempotent)."

    def handle(self, *args, **opts):
        for report in demo_load():
            self.stdout.write(report.summary())
