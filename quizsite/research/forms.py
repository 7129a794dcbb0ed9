"""The fit form: what data, which model, which embedder; it builds a FitSpec."""

from __future__ import annotations

from typing import Any

from django import forms

import irt
from quizsite.agents.models import Agent
from quizsite.items.models import Item, ItemSet

from . import selectors
from .embedding import EMBEDDER_CHOICES
from .fits import MODELS, FitSpec
from .prepare import GROUPING_CHOICES, DataSpec


def group_sizes_parse(text: str) -> list[int]:
    """Group sizes as a researcher types them ("1,5,10,15"); the New-fit form and the caimira.zip export
    both read them, and both refuse what is not sizes rather than guess."""
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"group sizes must be whole numbers separated by commas, not {text.strip()[:40]!r}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError("give at least one group size, each a positive whole number")
    return sizes

class FitForm(forms.Form):
    label = forms.CharField(required=False, max_length=200)
    item_sets = forms.MultipleChoiceField(required=False, help_text="None selected: every set.",
                                          widget=forms.SelectMultiple(attrs={"size": 6}))
    item_kinds = forms.MultipleChoiceField(required=False, choices=Item.Kind.choices, help_text="None selected: every kind.",
                                           widget=forms.CheckboxSelectMultiple)
    agent_kinds = forms.MultipleChoiceField(choices=Agent.Kind.choices, initial=[k.value for k in Agent.Kind],
                                            widget=forms.CheckboxSelectMultiple)
    campaigns = forms.MultipleChoiceField(
        required=False, label="Annotation campaigns", widget=forms.SelectMultiple(attrs={"size": 4}),
        help_text="None selected: every response; any selected: those campaigns' answers only.")
    include_practice = forms.BooleanField(required=False, label="Annotation practice answers",
                                          help_text="ticked: fitted too (unticked, as by default: left out)")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), help_text="inclusive")
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), help_text="exclusive")
    grouping = forms.ChoiceField(choices=GROUPING_CHOICES, initial="individual")
    group_sizes = forms.CharField(initial="1,5,10,15", help_text="group sizes, comma separated (with grouping)")
    groups_per_size = forms.IntegerField(min_value=1, initial=5, required=False,
                                         help_text="groups of each size (CAIMIRA paper grouping; the paper: 5)")
    model = forms.ChoiceField(choices=[(m, m) for m in MODELS], initial="caimira")
    dims = forms.IntegerField(min_value=1, max_value=32, initial=5, help_text="latent dimensions m (1pl/2pl use 1)")
    embedder = forms.CharField(initial=EMBEDDER_CHOICES[0][0], help_text="a choice below, a sentence-transformers path, or hashing-<dim>",
                               widget=forms.TextInput(attrs={"list": "embedders"}))
    template = forms.CharField(initial=irt.DEFAULT_TEMPLATE, help_text="'default' (text + answer + the answer's summary when the item has one) or a format string, e.g. {text}")
    max_epochs = forms.IntegerField(required=False, min_value=1, help_text="blank: irt's default with early stopping")
    val_fraction = forms.FloatField(min_value=0, max_value=0.9, initial=0.1)
    seed = forms.IntegerField(initial=0)
    n_clusters = forms.IntegerField(min_value=1, max_value=30, initial=6, label="Item clusters")
    activate = forms.BooleanField(required=False, initial=True, label="Make it the active fit when it succeeds")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        item_sets = self.fields["item_sets"]
        assert isinstance(item_sets, forms.MultipleChoiceField)  # declared above; self.fields is a deep copy of it
        item_sets.choices = [(s.slug, f"{s.slug} ({s.name})") for s in ItemSet.objects.order_by("slug")]
        campaigns = self.fields["campaigns"]
        assert isinstance(campaigns, forms.MultipleChoiceField)
        # the export page's list (same selector, same labels): `fit_caimira --campaign` from the browser
        campaigns.choices = [(c.slug, f"{c.slug} ({c.get_task_display()}, {c.item_set.slug})")
                             for c in selectors.export_campaigns()]

    def clean_group_sizes(self) -> list[int]:
        try:
            return group_sizes_parse(self.cleaned_data["group_sizes"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns; its stub allows None for subclasses that return nothing
        if self.errors:
            return data
        try:
            self.spec = FitSpec(
                data=DataSpec(
                    item_sets=data["item_sets"], item_kinds=data["item_kinds"], agent_kinds=data["agent_kinds"],
                    since=data["since"].isoformat() if data.get("since") else "",
                    until=data["until"].isoformat() if data.get("until") else "",
                    grouping=data["grouping"], group_sizes=data["group_sizes"],
                    groups_per_size=data.get("groups_per_size") or 5, seed=data["seed"],
                    campaigns=data["campaigns"], include_practice=data["include_practice"],
                ),
                model=data["model"], dims=data["dims"], embedder=data["embedder"].strip(), template=data["template"],
                max_epochs=data.get("max_epochs"), val_fraction=data["val_fraction"], seed=data["seed"],
                n_clusters=data["n_clusters"],
            )
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        shortfall = selectors.fit_data_check(spec=self.spec.data)  # refused here, not queued to fail or mislead
        if shortfall:
            raise forms.ValidationError(shortfall)
        return data

    @staticmethod
    def initial_from(settings: dict) -> dict:
        """Form values that repeat an earlier run's settings."""
        spec = FitSpec.from_dict(settings)
        d = spec.data
        return {
            "item_sets": d.item_sets, "item_kinds": d.item_kinds, "agent_kinds": d.agent_kinds, "since": d.since[:10] or None,
            "until": d.until[:10] or None, "grouping": d.grouping, "group_sizes": ",".join(map(str, d.group_sizes)),
            "groups_per_size": d.groups_per_size, "campaigns": d.campaigns, "include_practice": d.include_practice,
            "model": spec.model, "dims": spec.dims, "embedder": spec.embedder, "template": spec.template,
            "max_epochs": spec.max_epochs, "val_fraction": spec.val_fraction, "seed": spec.seed, "n_clusters": spec.n_clusters,
        }


class LabelsForm(forms.Form):
    """One free-text name per dimension (fields dim_0 .. dim_{m-1})."""

    def __init__(self, *args: Any, dims: int, labels: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for k in range(dims):
            self.fields[f"dim_{k}"] = forms.CharField(required=False, max_length=60, label=f"Dimension {k + 1}",
                                                      initial=labels[k] if k < len(labels) else "")

    def labels(self) -> list[str]:
        return [self.cleaned_data[name] for name in self.fields]
