from django.urls import path

from channels_bridge import views

urlpatterns = [
    path("telegram/webhook", views.telegram_webhook, name="bridge-telegram-webhook"),
    path("teams/messages", views.teams_messages, name="bridge-teams-messages"),
]
