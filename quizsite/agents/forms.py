"""Forms of the agent pages: registering an agent (version) and starting a run. Validation is the
services' own (agent_settings_merged), so the page and the command refuse the same settings."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from quizsite.items.models import ItemSet

from . import kinds, services
from .models import AgentConfig, AgentVersion


class RegisterForm(forms.Form):
    name = forms.SlugField(
        max_length=100,
        help_text="New name: a new agent. Existing name: a new version if the settings differ.",
    )
    kind = forms.ChoiceField(choices=())
    subtype = forms.ChoiceField(
        choices=[("", "(the kind's default)"), *AgentConfig.Subtype.choices], required=False
    )
    description = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    settings = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="JSON object; keys you leave out take the kind's defaults (shown below).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["kind"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(k, k) for k in sorted(kinds.load_all())]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        raw = (data.get("settings") or "").strip()
        try:
            settings = json.loads(raw) if raw else {}
        except json.JSONDecodeError as exc:
            self.add_error("settings", f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")
            return data
        name, kind = data.get("name"), data.get("kind")
        config = AgentConfig.objects.filter(name=name).first() if name else None
        if config is not None and kind and config.kind != kind:
            self.add_error(
                "kind", f"agent {name!r} is of kind {config.kind!r}; choose a new name for another kind"
            )
            return data
        if kind:
            try:
                data["merged"] = services.agent_settings_merged(kind=kind, settings=settings)
            except ValueError as exc:
                self.add_error("settings", str(exc))
        data["settings_obj"] = settings
        return data


class StartRunForm(forms.Form):
    version = forms.ModelChoiceField(queryset=AgentVersion.objects.none())
    item_set = forms.ModelChoiceField(queryset=ItemSet.objects.all(), to_field_name="slug")

    def __init__(self, *args: Any, config: AgentConfig, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["version"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = config.versions.order_by("-number")
        latest = config.versions.order_by("-number").first()
        if latest is not None:
            field.initial = latest.pk
