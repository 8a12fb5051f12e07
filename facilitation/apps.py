from django.apps import AppConfig


class FacilitationConfig(AppConfig):
    name = "facilitation"
    verbose_name = "Facilitation engine"

    def ready(self):
        from facilitation.discussions import steps as discussion_steps

        from facilitation.goals import flow as goal_flow
        from facilitation.workspace import steps as workspace_steps

        discussion_steps.register()
        workspace_steps.register()
        goal_flow.register()
