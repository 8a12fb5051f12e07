"""Admin for accounts: API tokens (listed and revoked, never shown or made here) and users,
whose deactivation, deletion or loss of staff status disconnects their live sockets at once."""
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db import transaction

from rooms import realtime
from rooms.actions.tokens import do_revoke_token, do_set_user_active
from rooms.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "created_at", "expires_at", "last_used_at")
    search_fields = ("prefix", "name", "user__username")
    list_select_related = ("user",)
    readonly_fields = ("user", "name", "prefix", "digest", "created_at", "expires_at", "last_used_at")

    def has_add_permission(self, request, obj=None):
        return False  # a key is shown once, to its owner: /account/tokens or create_api_token

    def has_change_permission(self, request, obj=None):
        return False

    def delete_model(self, request, obj):
        do_revoke_token(obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for token in queryset:
            do_revoke_token(token, actor=request.user)


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    def save_model(self, request, obj, form, change):
        switched = change and "is_active" in form.changed_data
        # Staff may view every room: sockets that joined rooms as staff must not keep receiving them.
        demoted = change and "is_staff" in form.changed_data and not obj.is_staff
        super().save_model(request, obj, form, change)
        if switched:
            do_set_user_active(obj, obj.is_active, actor=request.user)
        if demoted and obj.is_active:
            user_id = obj.pk
            transaction.on_commit(lambda: realtime.disconnect(user_id))

    def delete_model(self, request, obj):
        user_id = obj.pk
        super().delete_model(request, obj)
        transaction.on_commit(lambda: realtime.disconnect(user_id))

    def delete_queryset(self, request, queryset):
        user_ids = list(queryset.values_list("pk", flat=True))
        super().delete_queryset(request, queryset)
        for user_id in user_ids:
            transaction.on_commit(lambda uid=user_id: realtime.disconnect(uid))
