"""A chat's link keeps the Telegram forum topic it was made in: the bot posts there when the group's General topic
is closed to it."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("rooms", "0022_record_indexes")]

    operations = [
        migrations.AddField(model_name="chatlink", name="thread", field=models.CharField(blank=True, default="", max_length=32)),
    ]
