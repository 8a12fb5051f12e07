"""``manage.py seed_presets``: write the built-in facilitators, roles and participants."""
from django.core.management.base import BaseCommand

from facilitation.presets.seed import seed_presets


class Command(BaseCommand):
    help = "Create or update the built-in facilitator presets, roles and bundled participants (idempotent)."

    def handle(self, *args, **options):
        counts = seed_presets()
        summary = ", ".join(f"{name}: {count}" for name, count in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Built-in presets seeded ({summary})."))
