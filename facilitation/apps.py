from django.apps import AppConfig


class FacilitationConfig(AppConfig):
    name = "facilitation"
    verbose_name = "Facilitation engine"
