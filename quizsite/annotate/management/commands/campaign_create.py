from django.core.management.base import BaseCommand, CommandError

from quizsite.annotate.models import Campaign
from quizsite.annotate.services import campaign_create
from quizsite.annotate.tasks import AnnotateError
from quizsite.items.importers.base import item_set_get_or_create
from quizsite.items.models import ItemSet


def _ids(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(BaseCommand):
    help = "Create an annotation campaign over an item set."

    def add_arguments(self, parser):
        parser.add_argument("--set", required=True, dest="set_slug", help="item set slug (authoring: the target set)")
        parser.add_argument("--task", required=True, choices=Campaign.Task.values)
        parser.add_argument("--per-item", type=int, default=3, help="annotators per item (k)")
        parser.add_argument("--slug", required=True, help="campaign slug (the annotators' link is /annotate/SLUG/)")
        parser.add_argument("--name", default="")
        parser.add_argument("--quota", type=int, default=0, help="items per annotator (0: no limit)")
        parser.add_argument("--instructions", default="", help="text; empty for the task's default")
        parser.add_argument("--consent", default="", help="consent text; empty for the default")
        parser.add_argument("--practice", type=int, default=0,
                            help="practice items drawn from the set: answered first, with feedback, never counted")
        parser.add_argument("--training", default="", help="external ids of further practice items, comma separated")
        parser.add_argument("--gold", default="", help="external ids of gold (attention check) items")
        parser.add_argument("--completion-code", default="")
        parser.add_argument("--completion-url", default="")
        parser.add_argument("--min-answers", type=int, default=None,
                            help="real answers (not skips) before the completion code shows (default: the quota, or 1)")
        parser.add_argument("--lease-minutes", type=int, default=10)
        parser.add_argument("--timer-seconds", type=int, default=60, help="ghigliottina-open time per game")

    def handle(self, *args, **o):
        item_set = ItemSet.objects.filter(slug=o["set_slug"]).first()
        if item_set is None:
            if o["task"] != Campaign.Task.ARCHAEOLOGY_AUTHOR:
                raise CommandError(f"no item set {o['set_slug']!r}; import items first (manage.py import_items)")
            item_set = item_set_get_or_create(slug=o["set_slug"], name=o["set_slug"])
        try:
            campaign = campaign_create(
                slug=o["slug"], item_set=item_set, task=o["task"], per_item=o["per_item"], name=o["name"],
                quota=o["quota"], instructions=o["instructions"], consent_text=o["consent"],
                training_ids=_ids(o["training"]), gold_ids=_ids(o["gold"]), practice=o["practice"],
                completion_code=o["completion_code"], completion_url=o["completion_url"], min_answers=o["min_answers"],
                lease_seconds=o["lease_minutes"] * 60, timer_seconds=o["timer_seconds"],
            )
        except AnnotateError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(self.style.SUCCESS(
            f"campaign {campaign.slug}: {campaign.task} over {item_set.slug}, k={campaign.per_item}, "
            f"{campaign.training_items.count()} practice item(s); "
            f"annotators start at /annotate/{campaign.slug}/"
        ))
