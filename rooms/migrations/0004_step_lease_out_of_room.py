"""The step lease moves to ``facilitation.StepLease`` (its rows are copied there first)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('rooms', '0003_catalog_keys_per_owner'),
        ('facilitation', '0001_step_leases'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='room',
            name='lease_token',
        ),
        migrations.RemoveField(
            model_name='room',
            name='lease_until',
        ),
        migrations.RemoveField(
            model_name='room',
            name='step_attempt',
        ),
        migrations.RemoveField(
            model_name='room',
            name='step_ready_at',
        ),
        migrations.RemoveField(
            model_name='room',
            name='step_seq',
        ),
    ]
