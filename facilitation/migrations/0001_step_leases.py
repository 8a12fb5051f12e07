"""Step leases move out of the room rows (copied here, then dropped from rooms by rooms 0004)."""
import django.db.models.deletion
from django.db import migrations, models


def copy_leases(apps, schema_editor):
    Room = apps.get_model("rooms", "Room")
    StepLease = apps.get_model("facilitation", "StepLease")
    rows = Room.objects.filter(step_seq__gt=0).values_list("pk", "step_seq", "step_attempt", "lease_token", "lease_until", "step_ready_at")
    StepLease.objects.bulk_create([
        StepLease(room_id=pk, slot=0, step_seq=seq, slots=1, attempt=attempt, token=token[:32], lease_until=until, ready_at=ready)
        for pk, seq, attempt, token, until, ready in rows
    ])


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('rooms', '0003_catalog_keys_per_owner'),
    ]

    operations = [
        migrations.CreateModel(
            name='StepLease',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('slot', models.PositiveSmallIntegerField(default=0)),
                ('step_seq', models.PositiveIntegerField(default=0)),
                ('slots', models.PositiveSmallIntegerField(default=1)),
                ('attempt', models.PositiveIntegerField(default=0)),
                ('token', models.CharField(blank=True, max_length=32)),
                ('lease_until', models.DateTimeField(blank=True, db_index=True, null=True)),
                ('ready_at', models.DateTimeField(blank=True, null=True)),
                ('done', models.BooleanField(default=False)),
                ('room', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='step_leases', to='rooms.room')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('room', 'slot'), name='step_lease_slot_once')],
            },
        ),
        migrations.RunPython(copy_leases, migrations.RunPython.noop),
    ]
