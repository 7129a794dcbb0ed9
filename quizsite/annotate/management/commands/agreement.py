import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from quizsite.annotate.models import Campaign
from quizsite.annotate.selectors import campaign_stats
from quizsite.annotate.services import written_score
from quizsite.annotate.tasks import Task


class Command(BaseCommand):
    help = "Campaign statistics: progress, per annotator and item figures, Fleiss' kappa and Krippendorff's alpha."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("--json", action="store_true", help="print everything as JSON")
        parser.add_argument("--no-score", action="store_true",
                            help="archaeology-write: do not compute similarities of unscored questions first")

    def handle(self, *args, **opts):
        found = Campaign.objects.select_related("item_set").filter(slug=opts["campaign"]).first()
        if found is None:
            raise CommandError(f"no campaign {opts['campaign']!r}")
        if found.task == Task.ARCHAEOLOGY_WRITE and not opts["no_score"]:
            written_score(campaign=found)
        stats = campaign_stats(found, timezone.now())
        if opts["json"]:
            self.stdout.write(json.dumps(stats, indent=2, ensure_ascii=False))
            return
        p = stats["progress"]
        lines = [
            f"{stats['campaign']} ({stats['task']}, set {stats['item_set']}, k={stats['per_item']})",
            f"answers {p['answers']}/{p['target_answers']}, items complete {p['items_complete']}/{p['pool_items']}, "
            f"annotators {p['participants']}: {p['earned_code']} earned the completion code ({p['answers_for_code']} real "
            f"answers), {p['out_of_items']} with no more items to be given",
            f"accuracy {_f(stats['accuracy'])}, median ms {_f(stats['median_ms'])}",
        ]
        agreement = stats["agreement"]
        if agreement and not agreement["computable"]:
            lines.append(agreement["reason"])
        elif agreement:
            a = agreement
            lines.append(
                f"Fleiss kappa over {a['categories']}: {_f(a['fleiss_kappa'])} (P_bar {_f(a['observed_p_bar'])}, P_e {_f(a['chance_p_e'])}), "
                f"Krippendorff alpha {_f(a['krippendorff_alpha'])} over {a['n_units']} units "
                f"({a['items_with_overlap']} of {a['items_answered']} answered items have answers from 2+ annotators)"
            )
            if a["reason"]:
                lines.append(f"  {a['reason']}")
        if "choose" in stats:
            c = stats["choose"]
            if agreement and agreement["computable"]:
                for label, a in (("slot shown", c["agreement_by_slot"]), ("option text", c["agreement_by_option_text"])):
                    lines.append(f"  over {label}: kappa {_f(a['fleiss_kappa'])} (P_bar {_f(a['observed_p_bar'])}, "
                                 f"P_e {_f(a['chance_p_e'])}) over {a['n_units']} units")
            lines.append(f"macro-F1 {_f(c['macro_f1'])} ({c['macro_f1_classes']})")
            for s in c["positions"]:
                lines.append(f"  slot {s['slot']}: true shown {s['true_shown']}, accuracy {_f(s['accuracy_when_true_here'])}, "
                             f"chosen {s['chosen']} ({_f(s['choice_rate'])})")
        for key in ("similarity", "romqa"):
            if key in stats:
                lines.append(f"{key}: " + ", ".join(f"{k} {_f(v)}" for k, v in stats[key].items() if k != "per_agent"))
        for row in stats.get("romqa", {}).get("per_agent", []):
            lines.append(f"  {row['agent']} ({row['kind']}): F1 {_f(row['f1'])}, accuracy {_f(row['accuracy'])}, robust F1 "
                         f"{_f(row['robust_f1'])}, robust accuracy {_f(row['robust_accuracy'])} over {row['n_clusters']} clusters")
        for row in stats["human_vs_ai"]:
            lines.append(f"vs {row['agent']}: AI {_f(row['ai_accuracy'])}, humans {_f(row['human_accuracy'])} on {row['n_items']} items")
        self.stdout.write("\n".join(lines))



def _f(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
