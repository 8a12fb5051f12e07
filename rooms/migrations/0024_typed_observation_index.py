"""The index of observations by room and type holds typed (workspace) observations only: a discussion's turns
and decisions have no type, are never looked up by it, and no longer rewrite one of its pages at every step."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rooms', '0023_chat_link_thread'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='observation',
            name='observation_room_type',
        ),
        migrations.AddIndex(
            model_name='observation',
            index=models.Index(condition=models.Q(('event_type', ''), _negated=True), fields=['room', 'event_type'], name='observation_room_typed'),
        ),
    ]
