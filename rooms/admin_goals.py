"""Admin page of facilitation runs: owner, state, TTL left and the room (ephemeral runs live here, not in the list)."""
from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html

from rooms.models import FacilitationRun


@admin.register(FacilitationRun)
class FacilitationRunAdmin(admin.ModelAdmin):
    list_display = ("room", "live_room", "owner", "pattern", "state", "origin", "ttl_left", "deadline", "created_at")
    list_filter = ("origin", "state", "pattern")
    search_fields = ("room__name", "room__owner__username", "initiator_name")
    list_select_related = ("room", "room__owner")
    readonly_fields = ("join_code", "artifact", "artifact_version", "confirmations", "created_at", "reaped_at")
    raw_id_fields = ("room", "initiator_user")

    @admin.display(description="link")
    def live_room(self, run):
        return format_html('<a href="/discussions/{}/">open the room</a>', run.room_id)

    @admin.display(description="owner")
    def owner(self, run):
        return run.room.owner

    @admin.display(description="TTL left")
    def ttl_left(self, run):
        left = run.expires_at - timezone.now()
        if left.total_seconds() <= 0:
            return "expired"
        hours = int(left.total_seconds() // 3600)
        return f"{hours} h {int(left.total_seconds() % 3600 // 60)} min"
