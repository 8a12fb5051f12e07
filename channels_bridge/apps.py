from django.apps import AppConfig


class ChannelsBridgeConfig(AppConfig):
    name = "channels_bridge"
    verbose_name = "Chat bridges"
