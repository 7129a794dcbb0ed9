from django.contrib import admin

from .models import ChatMessage, Player, Room


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("slug", "phase", "item", "created_at", "last_active")
    readonly_fields = ("driver", "driver_until")


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = ("id", "room", "name", "agent", "score", "last_seen")
    list_filter = ("room",)


@admin.register(ChatMessage)
class ChatMessageAdmin(admin.ModelAdmin):
    list_display = ("created_at", "room", "player", "text")
