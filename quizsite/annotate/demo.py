"""Demo campaigns, one per task type, over the demo sets; made once (idempotent) by load_demo/quickstart."""

from __future__ import annotations

from dataclasses import dataclass

from quizsite.items.importers.base import item_set_get_or_create
from quizsite.items.models import Item, ItemSet

from .models import Campaign
from .services import campaign_create
from .tasks import TASK_KIND, Task

DEMO_CODE = "THINKALIKE-DEMO"

# (campaign slug, task, item set slug, name)
DEMO_CAMPAIGNS: list[tuple[str, str, str, str]] = [
    ("demo-archaeology-choose", Task.ARCHAEOLOGY_CHOOSE, "demo-archaeology", "Which question made them write this?"),
    ("demo-archaeology-write", Task.ARCHAEOLOGY_WRITE, "demo-archaeology", "Write the question behind the text"),
    ("demo-archaeology-author", Task.ARCHAEOLOGY_AUTHOR, "demo-archaeology-authored", "Write a question and its text"),
    ("demo-ghigliottina-choose", Task.GHIGLIOTTINA_CHOOSE, "demo-ghigliottina", "La Ghigliottina: pick the link"),
    ("demo-ghigliottina-open", Task.GHIGLIOTTINA_OPEN, "demo-ghigliottina", "La Ghigliottina: 60 seconds"),
    ("demo-romqa-select", Task.ROMQA_SELECT, "demo-romqa", "Tick every answer"),
]


@dataclass
class CampaignReport:
    slug: str
    created: bool

    def summary(self) -> str:
        return f"campaign {self.slug}: {'created' if self.created else 'already present'}"


def demo_campaigns_ensure() -> list[CampaignReport]:
    """A campaign for each task whose demo set is loaded; sets that are missing are skipped."""
    reports = []
    for slug, task, set_slug, name in DEMO_CAMPAIGNS:
        if Campaign.objects.filter(slug=slug).exists():
            reports.append(CampaignReport(slug, False))
            continue
        item_set: ItemSet | None
        if task == Task.ARCHAEOLOGY_AUTHOR:
            if not Item.objects.filter(item_set__slug="demo-archaeology").exists():
                continue
            item_set = item_set_get_or_create(slug=set_slug, name="Demo archaeology items written by participants")
        else:
            item_set = ItemSet.objects.filter(slug=set_slug).first()
            if item_set is None or not item_set.items.filter(kind=TASK_KIND[task]).exists():
                continue
        campaign_create(
            slug=slug, name=name, item_set=item_set, task=task, per_item=3, completion_code=DEMO_CODE,
            quota=2 if task == Task.ARCHAEOLOGY_AUTHOR else 0,
        )
        reports.append(CampaignReport(slug, True))
    return reports
