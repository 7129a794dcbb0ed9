from django.contrib import admin
from django.http import HttpRequest

from .models import Assignment, AuthoredItem, Campaign, CrowdIdentity, Participant


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "task", "item_set", "per_item", "quota", "min_answers", "is_open", "created_at")
    list_filter = ("task", "is_open")
    search_fields = ("slug", "name")
    raw_id_fields = ("created_by", "training_items", "gold_items")


@admin.register(CrowdIdentity)
class CrowdIdentityAdmin(admin.ModelAdmin):
    """Delete a row to release a crowd id to the next browser that presents it (a worker who lost cookies)."""

    list_display = ("external_id", "claimed_at")
    search_fields = ("external_id",)
    readonly_fields = ("external_id", "browser_hash", "claimed_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "agent", "external_id", "consented_at", "finished_at")
    list_filter = ("campaign",)
    search_fields = ("external_id", "agent__public_id")
    raw_id_fields = ("agent",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "participant", "item", "role", "state", "leased_at", "expires_at", "done_at")
    list_filter = ("campaign", "role", "state")
    raw_id_fields = ("participant", "item", "response")


@admin.register(AuthoredItem)
class AuthoredItemAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "question", "status", "reviewed_at")
    list_filter = ("campaign", "status")
    raw_id_fields = ("participant", "item", "reviewed_by")
