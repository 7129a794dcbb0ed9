from django.contrib import admin

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
    list_display = ("id", "created_at", "source", "agent", "item", "given", "verdict", "correct", "points", "room")
    list_filter = ("source", "verdict", "correct")
    search_fields = ("given", "room")
    raw_id_fields = ("agent", "item")
