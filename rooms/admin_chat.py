"""Django admin for chats, chat accounts, links, codes and the delivery outbox (read-only records)."""
from django.contrib import admin

from rooms.models import Chat, ChatCode, ChatIdentity, ChatLink, ChatMember, Delivery


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records of what happened in chats: viewable, never edited or added by hand."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ChatIdentity)
class ChatIdentityAdmin(admin.ModelAdmin):
    list_display = ("platform", "external_id", "name", "username", "user", "is_bot", "started_bot", "last_seen_at")
    list_filter = ("platform", "is_bot", "started_bot")
    search_fields = ("external_id", "name", "username", "user__username")
    readonly_fields = ("platform", "external_id", "first_seen_at", "last_seen_at")
    raw_id_fields = ("user",)


@admin.register(Chat)
class ChatAdmin(ReadOnlyAdmin):
    list_display = ("platform", "title", "external_id", "kind", "bot_present", "added_by", "added_at")
    list_filter = ("platform", "kind", "bot_present")
    search_fields = ("title", "external_id")


@admin.register(ChatMember)
class ChatMemberAdmin(ReadOnlyAdmin):
    list_display = ("chat", "identity", "present", "via", "last_seen_at")
    list_filter = ("via", "present")
    list_select_related = ("chat", "identity")


@admin.register(ChatLink)
class ChatLinkAdmin(ReadOnlyAdmin):
    list_display = ("chat", "room", "active", "linked_by", "linked_at", "unlinked_at")
    list_filter = ("active",)
    list_select_related = ("chat", "room", "linked_by")


@admin.register(ChatCode)
class ChatCodeAdmin(ReadOnlyAdmin):
    list_display = ("purpose", "room", "user", "created_at", "expires_at", "used_at")
    list_filter = ("purpose",)
    exclude = ("code",)


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "platform", "recipient", "status", "attempts", "room", "created_at", "sent_at")
    list_filter = ("status", "kind", "platform")
    search_fields = ("recipient", "principal", "diagnostic")
    list_select_related = ("room",)
