"""Django admin for the rooms' data. Audit rows (invocations, events) are read-only.

Accounts (users, API tokens) are in ``rooms.admin_accounts``.
"""
from django import forms
from django.contrib import admin

from rooms.actions.catalog import alias_problem, fresh_alias, lock_aliases_of
from rooms.models import (
    Agent,
    Invocation,
    Narrative,
    Observation,
    Persona,
    PersonaAdaptation,
    Role,
    Room,
    RoomEvent,
    RoomMember,
    Seat,
    TaskAssignment,
    Turn,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that record what happened: viewable, never edited or added by hand."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "function", "is_builtin", "created_by", "updated_at")
    list_filter = ("is_builtin",)
    search_fields = ("name", "key", "function")
    readonly_fields = ("created_at", "updated_at")


@admin.register(Persona)
class PersonaAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "is_facilitator", "model_tier", "is_builtin", "created_by", "updated_at")
    list_filter = ("is_facilitator", "is_builtin", "model_tier")
    search_fields = ("name", "key", "description", "philosophy")
    readonly_fields = ("created_at", "updated_at")


class AgentAdminForm(forms.ModelForm):
    """An alias is checked as the API checks it (``rooms.actions.catalog.alias_problem``): its format, unique among
    the owner's agents and the built-ins (a built-in's among all agents), never empty (left empty, it is derived
    from the name as the API derives it), under the owner's alias lock, which the admin's transaction holds until
    the agent is saved."""

    asker = None  # the staff member filling the form in (AgentAdmin.get_form): "Your agent" only to the owner

    class Meta:
        model = Agent
        fields = "__all__"

    def clean(self):
        data = super().clean()
        if "alias" in self.errors or not data.get("name"):
            return data
        owner, builtin = data.get("created_by"), bool(data.get("is_builtin"))
        current = self.instance if self.instance.pk is not None else None
        if owner is not None:
            lock_aliases_of(owner)
        alias = (data.get("alias") or "").strip()
        if not alias:
            data["alias"] = fresh_alias(data["name"], owner, exclude_pk=current.pk if current else None)
            return data
        problem = alias_problem(alias, owner, current, builtin=builtin, asker=self.asker)
        if problem:
            self.add_error("alias", problem)
        else:
            data["alias"] = alias
        return data


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    form = AgentAdminForm
    list_display = ("name", "alias", "is_facilitator", "role", "persona", "provider", "model", "tokens_used", "cost_usd",
                    "is_builtin", "created_by")
    list_filter = ("is_facilitator", "is_builtin", "provider")
    search_fields = ("name", "alias", "description")
    list_select_related = ("role", "persona", "created_by")
    readonly_fields = ("tokens_used", "cost_usd", "created_at", "updated_at")

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)  # a class made for this request
        form.asker = request.user
        return form


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("position", "role", "agent", "user", "is_active", "tokens_used", "cost_usd")
    readonly_fields = ("tokens_used", "cost_usd")
    autocomplete_fields = ("agent",)


class MemberInline(admin.TabularInline):
    model = RoomMember
    extra = 0
    fields = ("user", "access", "added_at")
    readonly_fields = ("added_at",)


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "format", "status", "round", "max_rounds", "owner", "moderator", "tokens_used",
                    "created_at")
    list_filter = ("kind", "format", "status")
    search_fields = ("name", "topic", "owner__username")
    date_hierarchy = "created_at"
    list_select_related = ("owner", "moderator")
    inlines = [SeatInline, MemberInline]
    readonly_fields = ("seq", "engine_state", "tokens_used", "cost_usd", "created_at", "updated_at", "started_at", "ended_at")
    fieldsets = (
        (None, {"fields": ("name", "topic", "kind", "format", "status", "owner", "moderator", "conclusion")}),
        ("Progress", {"fields": ("round", "max_rounds", "started_at", "ended_at", "created_at", "updated_at")}),
        ("Budget", {"fields": ("budget_tokens", "budget_usd", "tokens_used", "cost_usd")}),
        ("Engine", {"classes": ("collapse",), "fields": ("engine_state", "seq")}),
    )


@admin.register(Seat)
class SeatAdmin(admin.ModelAdmin):
    list_display = ("room", "position", "role", "agent", "user", "is_active", "tokens_used")
    list_filter = ("role", "is_active")
    search_fields = ("room__name", "agent__name", "user__username")
    list_select_related = ("room", "agent", "user")


@admin.register(RoomMember)
class RoomMemberAdmin(admin.ModelAdmin):
    list_display = ("room", "user", "access", "added_at")
    list_filter = ("access",)
    search_fields = ("room__name", "user__username")
    list_select_related = ("room", "user")


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ("room", "number", "started_at", "ended_at")
    search_fields = ("room__name",)
    list_select_related = ("room",)


@admin.register(Observation)
class ObservationAdmin(admin.ModelAdmin):
    list_display = ("room", "seq", "round", "kind", "author_name", "author_kind", "status", "provider", "tokens", "created_at")
    list_filter = ("kind", "author_kind", "status", "provider")
    search_fields = ("room__name", "author_name", "content")
    list_select_related = ("room",)
    readonly_fields = ("created_at",)


@admin.register(Narrative)
class NarrativeAdmin(admin.ModelAdmin):
    list_display = ("room", "turn", "version", "written_by_agent", "edited_by", "updated_at")
    search_fields = ("room__name", "content")
    list_select_related = ("room", "turn", "written_by_agent", "edited_by")


@admin.register(TaskAssignment)
class TaskAssignmentAdmin(admin.ModelAdmin):
    list_display = ("title", "room", "priority", "assignee", "status", "claimed_by", "created_by", "updated_at")
    list_filter = ("status",)
    search_fields = ("title", "description", "room__name")
    list_select_related = ("room", "assignee", "claimed_by", "created_by")


@admin.register(PersonaAdaptation)
class PersonaAdaptationAdmin(admin.ModelAdmin):
    list_display = ("room", "agent", "persona", "rounds_learned", "last_round", "version", "updated_at")
    search_fields = ("room__name", "agent__name", "persona__name")
    list_select_related = ("room", "agent", "persona")


@admin.register(Invocation)
class InvocationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "component", "room", "agent", "provider", "model", "success", "input_tokens",
                    "output_tokens", "cost_usd", "latency_ms")
    list_filter = ("success", "component", "provider")
    search_fields = ("component", "model", "correlation_id", "error")
    list_select_related = ("room", "agent")
    date_hierarchy = "created_at"


@admin.register(RoomEvent)
class RoomEventAdmin(ReadOnlyAdmin):
    list_display = ("room", "seq", "type", "created_at")
    list_filter = ("type",)
    search_fields = ("room__name", "type")
    list_select_related = ("room",)


from rooms import admin_accounts  # noqa: E402,F401  (users and API tokens)
from rooms import admin_chat  # noqa: E402,F401  (chats, chat accounts, links, deliveries)
from rooms import admin_goals  # noqa: E402,F401  (facilitation runs)
