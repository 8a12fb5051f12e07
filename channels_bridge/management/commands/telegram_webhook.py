"""python manage.py telegram_webhook set URL | delete | info"""
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from channels_bridge.telegram import client as tg
from channels_bridge.telegram.client import ALLOWED_UPDATES


class Command(BaseCommand):
    help = ("Manage the Telegram webhook: `set URL` registers it (with TELEGRAM_WEBHOOK_SECRET and the updates "
            f"{', '.join(ALLOWED_UPDATES)}), `delete` removes it, `info` shows what Telegram has.")

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["set", "delete", "info"])
        parser.add_argument("url", nargs="?", help="The public https URL of /bridge/telegram/webhook (for set).")

    def handle(self, *args, action, url=None, **options):
        from telegram.error import TelegramError

        if not tg.configured():
            raise CommandError("TELEGRAM_BOT_TOKEN is not set.")
        try:
            if action == "set":
                if not url:
                    raise CommandError("set needs the webhook URL, e.g. https://example.org/bridge/telegram/webhook")
                if not url.startswith("https://"):
                    raise CommandError("Telegram only calls https:// webhooks.")
                secret = settings.BRIDGES["TELEGRAM_WEBHOOK_SECRET"]
                if not secret:
                    raise CommandError("Set TELEGRAM_WEBHOOK_SECRET first: every webhook request is checked against it.")
                tg.client().set_webhook(url, secret)
                self.stdout.write(f"Webhook set to {url} (updates: {', '.join(ALLOWED_UPDATES)}).")
            elif action == "delete":
                tg.client().delete_webhook()
                self.stdout.write("Webhook deleted.")
            else:
                self.stdout.write(json.dumps(tg.client().get_webhook_info(), indent=2, default=str))
        except TelegramError as exc:
            raise CommandError(f"Telegram refused: {exc.message}") from exc
