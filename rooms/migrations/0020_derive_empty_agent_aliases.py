"""Agents made before aliases were never empty get one: derived from the name as a new agent's is (``agent`` when
the name leaves nothing to slugify), numbered past the aliases their owner and the built-ins already have."""
from django.db import migrations
from django.utils.text import slugify

FALLBACK_ALIAS = "agent"  # as rooms.actions.catalog.FALLBACK_ALIAS


def derive(apps, schema_editor):
    Agent = apps.get_model("rooms", "Agent")
    for agent in Agent.objects.filter(alias="").order_by("id"):
        # Read anew for each agent: the aliases given just before count (two built-ins of one name, say).
        mine = Agent.objects.filter(is_builtin=True) if agent.is_builtin else Agent.objects.filter(
            is_builtin=False, created_by_id=agent.created_by_id)
        taken = {a.lower() for a in (Agent.objects.filter(is_builtin=True) | mine).values_list("alias", flat=True)}
        base = slugify(agent.name)[:60] or FALLBACK_ALIAS
        alias, n = base, 1
        while alias.lower() in taken:
            n += 1
            alias = f"{base}-{n}"
        Agent.objects.filter(pk=agent.pk).update(alias=alias)


class Migration(migrations.Migration):
    dependencies = [("rooms", "0019_narrative_lists_in_search")]
    operations = [migrations.RunPython(derive, migrations.RunPython.noop)]
