from django.contrib import admin

from channels_bridge.models import BotState, InboundUpdate


@admin.register(InboundUpdate)
class InboundUpdateAdmin(admin.ModelAdmin):
    list_display = ("id", "platform", "key", "status", "note", "received_at", "processed_at")
    list_filter = ("platform", "status")
    search_fields = ("key", "note")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(BotState)
class BotStateAdmin(admin.ModelAdmin):
    list_display = ("platform", "bot_id", "bot_username", "last_update_at", "last_sent_at")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False
