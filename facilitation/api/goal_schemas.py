"""The OpenAPI description of a facilitation run's answers: the run in a discussion's detail
(``run``), its artifact (``GET /api/discussions/{id}/artifact``) and the rows of the run lists
(``GET /api/me/facilitation-runs``, ``GET /api/ephemeral-runs``).

The run and the rows are rendered by these classes (from ``facilitation.goals.shapes.run_shape`` and
the run rows); the artifact's keys depend on the pattern, so ``facilitation.goals.shapes.artifact_shape``
writes it and ``ArtifactOut`` describes every key it may carry (the schema's tests check real answers
against it). Keys inside ``roles`` and ``slots`` are people's words: the camelCase renderer leaves
them as written (``settings.JSON_DATA_FIELDS``).
"""
from rest_framework import serializers

from facilitation.goals.patterns import PATTERNS
from rooms.models import FacilitationRun
from rooms.serializers import Out

STATES = FacilitationRun.State.choices
ORIGINS = FacilitationRun.Origin.choices


# Rendered from ``run_shape`` (a mapping with these keys) and the run's Telegram link.
class FacilitationRunOut(Out):
    pattern = serializers.ChoiceField(choices=list(PATTERNS))
    slots = serializers.DictField(help_text=(
        "What the pattern needs, as it was created: role_assignment `{roles: [..], allowMultiple}`, decision "
        "`{options: [..]}`, list `{min}`. Role names and options stay as written."))
    definition_of_done = serializers.CharField(help_text="The definition of done, in words.")
    report_to = serializers.ListField(child=serializers.CharField(), help_text='"user:<username>" or "role:<key>".')
    report_to_text = serializers.CharField(allow_blank=True, help_text="The report targets, in words.")
    deadline = serializers.DateTimeField()
    reminder_minutes = serializers.IntegerField(allow_null=True, help_text="Remind after this many quiet minutes; null: never.")
    ttl_hours = serializers.IntegerField()
    expires_at = serializers.DateTimeField(help_text="When the run (if ephemeral) is removed; its protocol stays.")
    origin = serializers.ChoiceField(choices=ORIGINS)
    state = serializers.ChoiceField(choices=STATES)
    mode = serializers.ChoiceField(choices=FacilitationRun.Mode.choices)
    join_code = serializers.CharField(allow_null=True, help_text=(
        "The code that starts the run in a chat group (`/facilitator start CODE`); its owner and staff only, "
        "null for everyone else."))
    interim_reports = serializers.BooleanField()
    initiator = serializers.CharField(allow_null=True, help_text="Who invited the facilitator (chat name), once someone did.")
    telegram_link = serializers.CharField(allow_null=True, help_text=(
        "The `?startgroup=` link that carries the join code, once the bridge knows the bot's name; else null."))


class ArtifactItemOut(Out):
    text = serializers.CharField()
    by = serializers.CharField()


# Written by ``artifact_shape`` (or, once the run was reaped, by the protocol the room kept); documented here.
class ArtifactOut(serializers.Serializer):
    pattern = serializers.ChoiceField(choices=list(PATTERNS))
    roles = serializers.DictField(child=serializers.CharField(allow_null=True), required=False, help_text=(
        "role_assignment: each role, its name exactly as in slots.roles, and who holds it (null: nobody yet)."))
    choice = serializers.CharField(allow_null=True, required=False, help_text="decision: the option chosen, or null.")
    proposals = serializers.ListField(child=serializers.CharField(), required=False,
                                      help_text="decision: the options proposed so far.")
    items = ArtifactItemOut(many=True, required=False, help_text="list: the items, with who added each.")
    done = serializers.BooleanField(help_text="The machine check: the artifact is complete (confirmations aside).")
    missing = serializers.ListField(child=serializers.CharField(), help_text="What is still needed, in words.")
    confirmed_by = serializers.ListField(child=serializers.CharField(), help_text="Who confirmed the current result.")
    state = serializers.ChoiceField(choices=STATES)
    version = serializers.IntegerField(required=False, help_text="Counts the artifact's changes (live runs).")
    needs_confirmation_from = serializers.ListField(child=serializers.CharField(), required=False, help_text=(
        "Who must confirm (live runs): the people the artifact names, or the initiator."))
    reaped = serializers.BooleanField(required=False, help_text=(
        "Present (true) once an ephemeral run was removed: the answer is the protocol the room kept, with "
        "slots, artifact, reportTo, deadline and endReason besides the result."))
    slots = serializers.DictField(required=False, help_text="Reaped runs: the run's slots.")
    artifact = serializers.DictField(required=False, help_text="Reaped runs: the final artifact (its keys are also at the top).")
    report_to = serializers.ListField(child=serializers.CharField(), required=False, help_text="Reaped runs.")
    deadline = serializers.DateTimeField(required=False, help_text="Reaped runs.")
    end_reason = serializers.CharField(allow_blank=True, required=False, help_text="Reaped runs: why the run ended.")


# One row of the run lists, rendered from a FacilitationRun (with its room and owner).
class FacilitationRunRowOut(Out):
    discussion_id = serializers.IntegerField(source="room_id")
    name = serializers.CharField(source="room.name")
    owner = serializers.CharField()
    origin = serializers.ChoiceField(choices=ORIGINS)
    state = serializers.ChoiceField(choices=STATES)
    pattern = serializers.ChoiceField(choices=list(PATTERNS))
    expires_at = serializers.DateTimeField()
    ttl_seconds_left = serializers.IntegerField(help_text="Seconds until the run expires (0 once it has).")
    deadline = serializers.DateTimeField()
    link = serializers.CharField(help_text="The room's page.")

    @staticmethod
    def get_owner(run: FacilitationRun, context) -> str:
        return run.room.owner.get_username()

    @staticmethod
    def get_expires_at(run: FacilitationRun, context) -> str:
        return run.expires_at.isoformat()

    @staticmethod
    def get_ttl_seconds_left(run: FacilitationRun, context) -> int:
        return max(0, int((run.expires_at - context["now"]).total_seconds()))

    @staticmethod
    def get_deadline(run: FacilitationRun, context) -> str:
        return run.deadline.isoformat()

    @staticmethod
    def get_link(run: FacilitationRun, context) -> str:
        return f"/discussions/{run.room_id}/"
