from django.contrib import admin

from .models import Assignment, AuthoredItem, Campaign, Participant


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "task", "item_set", "per_item", "quota", "is_open", "created_at")
    list_filter = ("task", "is_open")
    search_fields = ("slug", "name")
    raw_id_fields = ("created_by", "training_items", "gold_items")


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
