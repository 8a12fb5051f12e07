"""A step lease loses the index Django gives every foreign key on ``room_id``: the unique ``(room, slot)`` begins
with that column and serves every lookup by room."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("facilitation", "0003_step_lease_reservations")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL("DROP INDEX IF EXISTS facilitation_steplease_room_id_a1a88c8d",
                                  "CREATE INDEX IF NOT EXISTS facilitation_steplease_room_id_a1a88c8d ON facilitation_steplease (room_id)"),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="steplease", name="room",
                    field=models.ForeignKey(db_index=False, on_delete=models.deletion.CASCADE, related_name="step_leases", to="rooms.room"),
                ),
            ],
        ),
    ]
