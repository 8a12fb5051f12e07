"""Chats the bot lives in, the people it has seen there, and the links between chats and rooms.

These rows are shared by the chat bridges (which write what arrives from a platform) and the
engine (which reads rosters and links, and writes ``Delivery`` rows to reach people), so they
live here at the bottom and neither side imports the other.
"""
from django.conf import settings
from django.db import models


class Platform(models.TextChoices):
    TELEGRAM = "telegram"
    TEAMS = "teams"


def written_in_a_chat(data: dict | None) -> bool:
    """A turn's ``data`` says it is a message from a Telegram or Teams chat: plain text, not Markdown
    (its formatting, if any, stayed in the platform's entities), so ``2*3*4`` stays as written wherever
    it is shown or sent. Models' turns and the room page's comments are Markdown."""
    return ((data or {}).get("source") or {}).get("platform") in Platform.values


class ChatIdentity(models.Model):
    """One account on a chat platform, as the bot has seen it (one row per account)."""

    platform = models.CharField(max_length=16, choices=Platform.choices)
    external_id = models.CharField(max_length=200, help_text="Telegram user id, or the Teams account id (29:...).")
    name = models.CharField(max_length=200, blank=True)
    username = models.CharField(max_length=200, blank=True, help_text="Telegram @username (without @), if any.")
    is_bot = models.BooleanField(default=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="chat_identities", help_text="The Convene user this account belongs to, once linked.")
    # Reaching the person directly: Telegram needs them to have started the bot; Teams needs the
    # tenant and a service URL to create a personal conversation (or a known one).
    started_bot = models.BooleanField(default=False)
    direct_conversation_id = models.CharField(max_length=300, blank=True)
    aad_object_id = models.CharField(max_length=100, blank=True)
    tenant_id = models.CharField(max_length=100, blank=True)
    service_url = models.URLField(max_length=500, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "external_id"], name="chat_identity_once")]
        verbose_name_plural = "chat identities"

    def __str__(self):
        return f"{self.platform}:{self.display_name}"

    @property
    def display_name(self) -> str:
        if self.user_id and self.user is not None:
            return self.user.get_full_name() or self.user.get_username()
        return self.name or (f"@{self.username}" if self.username else self.external_id)

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.external_id}"


class Chat(models.Model):
    """A group, channel or direct conversation the bot is (or was) part of."""

    class Kind(models.TextChoices):
        GROUP = "group"
        CHANNEL = "channel"
        DIRECT = "direct"

    platform = models.CharField(max_length=16, choices=Platform.choices)
    external_id = models.CharField(max_length=300, help_text="Telegram chat id, or the Teams conversation id.")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.GROUP)
    platform_type = models.CharField(max_length=32, blank=True, help_text="As the platform says: supergroup, groupChat, personal...")
    title = models.CharField(max_length=300, blank=True)
    bot_present = models.BooleanField(default=True)
    added_by = models.ForeignKey(ChatIdentity, null=True, blank=True, on_delete=models.SET_NULL, related_name="chats_added")
    added_at = models.DateTimeField(null=True, blank=True)
    # Teams: where to send (the activity's serviceUrl, taken from verified requests only) and the tenant.
    service_url = models.URLField(max_length=500, blank=True)
    tenant_id = models.CharField(max_length=100, blank=True)
    # The bot's status message in this chat (a Telegram message id or a Teams activity id), edited in place.
    status_message_id = models.CharField(max_length=200, blank=True)
    # A Telegram group upgraded to a supergroup gets a new id; the old one is kept here.
    previous_external_id = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "external_id"], name="chat_once")]

    def __str__(self):
        return f"{self.platform}:{self.title or self.external_id}"


class ChatMember(models.Model):
    """Someone in a chat's roster. Telegram has no member list: the roster grows from messages,
    joins, leaves and mentions; Teams fills it from the conversation members API too."""

    class Via(models.TextChoices):
        MESSAGE = "message"
        JOIN = "join"
        MENTION = "mention"
        INVITER = "inviter"
        MEMBERS_API = "members_api"

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="members")
    identity = models.ForeignKey(ChatIdentity, on_delete=models.CASCADE, related_name="memberships")
    present = models.BooleanField(default=True)
    via = models.CharField(max_length=16, choices=Via.choices, default=Via.MESSAGE)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["chat", "identity"], name="chat_member_once")]


class ChatLink(models.Model):
    """A chat joined to a room: what is said in one appears in the other. One live link per chat."""

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="links")
    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="chat_links")
    active = models.BooleanField(default=True)
    linked_by = models.ForeignKey(ChatIdentity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    code = models.ForeignKey("rooms.ChatCode", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    linked_at = models.DateTimeField(auto_now_add=True)
    unlinked_at = models.DateTimeField(null=True, blank=True)
    # The Telegram forum topic the link was made in (its ``message_thread_id``), or "": where the bot still reaches the
    # group when its General topic is closed.
    thread = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["chat"], condition=models.Q(active=True), name="chat_link_one_live_per_chat")]
        indexes = [models.Index(fields=["room", "active"], name="chat_link_room_active")]


class ChatCode(models.Model):
    """A short-lived code: sent in a group it links that chat to a room; sent to the bot in a
    direct chat it links the sender's account to a Convene user."""

    class Purpose(models.TextChoices):
        ROOM = "room"
        IDENTITY = "identity"

    code = models.CharField(max_length=64, unique=True)
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    room = models.ForeignKey("rooms.Room", null=True, blank=True, on_delete=models.CASCADE, related_name="chat_codes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_codes",
                             help_text="Who asked for the code (and, for an identity code, whose account gets linked).")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(ChatIdentity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~models.Q(purpose="room") | models.Q(room__isnull=False), name="chat_code_room_has_room"),
        ]
