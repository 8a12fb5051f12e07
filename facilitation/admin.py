from django.contrib import admin

from facilitation.runs.models import StepLease


@admin.register(StepLease)
class StepLeaseAdmin(admin.ModelAdmin):
    list_display = ("room", "step_seq", "slot", "slots", "attempt", "lease_until", "ready_at", "done")
    list_filter = ("done",)
    search_fields = ("room__name",)
    list_select_related = ("room",)
    readonly_fields = ("room", "slot", "step_seq", "slots", "attempt", "token", "lease_until", "ready_at", "done")

    def has_add_permission(self, request):
        return False
