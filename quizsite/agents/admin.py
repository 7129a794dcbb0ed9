from django.contrib import admin

from .models import Agent


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("id", "public_id", "kind", "name", "user", "created_at")
    list_filter = ("kind",)
    search_fields = ("name", "public_id", "external_id")
