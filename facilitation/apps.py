from django.apps import AppConfig


class FacilitationConfig(AppConfig):
    name = "facilitation"
    verbose_name = "Facilitation engine"

    def ready(self):
        from facilitation.discussions import steps as discussion_steps

        discussion_steps.register()
