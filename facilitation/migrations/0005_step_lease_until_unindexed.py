"""A step lease's ``lease_until`` loses its index: no query looks leases up by it (the sweeper goes through the
active rooms), and every step's commit sets it."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('facilitation', '0004_step_lease_room_index_covered'),
    ]

    operations = [
        migrations.AlterField(
            model_name='steplease',
            name='lease_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
