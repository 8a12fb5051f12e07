from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "rooms"
    verbose_name = "Rooms"

    def ready(self):
        from django.contrib.auth.signals import user_logged_out

        from rooms.actions.tokens import end_session_sockets

        # Signing out ends the live connections of that session (docs/security.md, "Live connections").
        user_logged_out.connect(end_session_sockets, dispatch_uid="rooms.end_session_sockets")
