"""A room budget in USD above what ``Room.budget_usd`` holds (12 digits, 6 after the point) could be
stored on SQLite, and every read of that room then failed; such budgets become the largest one."""
from decimal import Decimal

from django.db import migrations

LARGEST = Decimal("999999.99")


def clamp(apps, schema_editor):
    Room = apps.get_model("rooms", "Room")
    Room.objects.filter(budget_usd__gt=LARGEST).update(budget_usd=LARGEST)


class Migration(migrations.Migration):
    dependencies = [("rooms", "0017_room_pause_reason")]
    operations = [migrations.RunPython(clamp, migrations.RunPython.noop)]
