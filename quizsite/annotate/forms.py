"""The researcher's campaign form; validation of items is left to services.campaign_create."""

from __future__ import annotations

from django import forms
from django.core.validators import validate_slug

from quizsite.items.models import ItemSet

from .models import Campaign


def _ids(value: str) -> list[str]:
    return [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]


def logins(value: str) -> list[str]:
    """Usernames or emails typed into a box, comma or line separated."""
    return _ids(value)


class CampaignForm(forms.Form):
    slug = forms.CharField(max_length=100, validators=[validate_slug], help_text="Used in the annotators' link.")
    name = forms.CharField(max_length=200, required=False)
    item_set = forms.ModelChoiceField(queryset=ItemSet.objects.order_by("slug"), to_field_name="slug")
    task = forms.ChoiceField(choices=Campaign.Task.choices)
    per_item = forms.IntegerField(min_value=1, max_value=100, initial=3, label="Annotators per item (k)")
    quota = forms.IntegerField(min_value=0, initial=0, label="Items per annotator (0: no limit)")
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False,
                                   help_text="Leave empty for the task's default instructions.")
    consent_text = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False,
                                   help_text="Leave empty for the default consent text.")
    practice = forms.IntegerField(
        min_value=0, max_value=100, initial=0, required=False, label="Practice items (drawn from the set)",
        help_text="Answered first, with right/wrong and the correct answer after each; never counted. 0: none.",
    )
    training_ids = forms.CharField(required=False, label="More practice items by external id (comma separated)")
    gold_ids = forms.CharField(required=False, label="Gold items for attention checks (external ids)")
    completion_code = forms.CharField(max_length=64, required=False)
    completion_url = forms.URLField(required=False, help_text="e.g. https://app.prolific.com/submissions/complete?cc=CODE")
    min_answers = forms.IntegerField(
        min_value=0, required=False, label="Answers needed for the code",
        help_text="Real answers (skips do not count) before the completion code shows. Empty: the items per annotator, or 1.",
    )
    lease_minutes = forms.IntegerField(min_value=1, max_value=24 * 60, initial=10)
    timer_seconds = forms.IntegerField(min_value=5, max_value=600, initial=60, label="Open game timer (s)")
    invite_only = forms.BooleanField(required=False, label="Invited accounts only",
                                     help_text="Guests and crowd links are refused; researchers may always look.")
    invited = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False,
                              label="Invited accounts (usernames or emails, comma or line separated)")

    def cleaned_for_service(self) -> dict:
        data = dict(self.cleaned_data)
        data["training_ids"] = _ids(data.get("training_ids") or "")
        data["gold_ids"] = _ids(data.get("gold_ids") or "")
        data["invited_logins"] = _ids(data.pop("invited", "") or "")
        data["lease_seconds"] = data.pop("lease_minutes") * 60
        data["practice"] = data.get("practice") or 0
        return data
