"""The JSON shapes of a facilitation run and its artifact (REST and events)."""
from facilitation.goals import patterns
from facilitation.goals.texts import definition_of_done, readable_targets
from rooms.models import FacilitationRun


def artifact_shape(run: FacilitationRun) -> dict:
    check = patterns.check(run.pattern, run.slots, run.artifact)
    return {"pattern": run.pattern, **run.artifact, "done": check.done, "missing": check.missing,
            "confirmedBy": list(run.confirmations), "state": run.state, "version": run.artifact_version,
            # An ended run (completed, failed, stopped) waits for nobody's confirmation any more.
            "needsConfirmationFrom": [] if run.is_terminal else patterns.confirmers(
                run.pattern, run.artifact, run.initiator_name or None, run.confirm_mode)}


def run_shape(run: FacilitationRun) -> dict:
    return {"pattern": run.pattern, "slots": run.slots, "definitionOfDone": definition_of_done(run.pattern, run.slots),
            "reportTo": run.report_to, "reportToText": readable_targets(run.report_to),
            "deadline": run.deadline.isoformat(),
            "reminderMinutes": run.reminder_minutes, "ttlHours": run.ttl_hours, "expiresAt": run.expires_at.isoformat(),
            "origin": run.origin, "state": run.state, "mode": run.mode, "joinCode": run.join_code,
            "interimReports": run.interim_reports,
            "initiator": run.initiator_name or None}
