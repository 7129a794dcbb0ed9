from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .models import Item, ItemSet, Response


@admin.register(ItemSet)
class ItemSetAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "source", "created_at")
    search_fields = ("slug", "name")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("id", "item_set", "external_id", "kind", "category", "answer")
    list_filter = ("kind", "item_set", "category")
    search_fields = ("external_id", "text", "answer")


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    """Responses are the record of what was answered and how it was judged: read-only here, for every
    account. Overruling is a researcher's decision (core.roles: staff status is not enough) and is kept
    as a ResponseOverride beside the untouched response (research/services.py); an edit here would flip a
    ruling with neither the permission nor the record. Deleting is refused too: nothing cascades into a
    response (its agent and item are PROTECT), so no other deletion needs it, and a deleted response
    would silently drop out of every fit and export."""

    list_display = ("id", "created_at", "source", "agent", "item", "given", "verdict", "correct", "points", "room")
    list_filter = ("source", "verdict", "correct")
    search_fields = ("given", "room")
    raw_id_fields = ("agent", "item")
    readonly_fields = ("overrule",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Response | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Response | None = None) -> bool:
        return False

    @admin.display(description="Overrule")
    def overrule(self, obj: Response) -> SafeString:
        return format_html(
            "Rulings are overruled on the research <a href=\"{}\">ruling reports</a> page (researchers "
            "only), which records the new verdict beside this response.",
            reverse("research:reports"),
        )
