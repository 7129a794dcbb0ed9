from django.contrib import admin

from .models import Agent


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("id", "public_id", "kind", "subtype", "name", "user", "created_at")
    list_filter = ("kind", "subtype")
    list_editable = ("subtype",)
    search_fields = ("name", "public_id", "external_id")
