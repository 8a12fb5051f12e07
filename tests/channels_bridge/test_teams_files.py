"""Teams: a report's minutes reach the person as a file, with their consent (personal chats only)."""
import io

import pytest
from docx import Document

from channels_bridge.teams.send import FILE_CONSENT_TYPE, FILE_INFO_TYPE
from rooms.actions.deliveries import queue_direct
from rooms.models import ChatIdentity, Delivery, Invocation
from tests.channels_bridge.conftest import committed
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def ana(teams):
    return teams.account(1, "Ana Lima")


@pytest.fixture
def report(teams, run_tasks, ana):
    """A report with the minutes attached, sent to Ana's personal chat: the text, then the offer of the file."""
    owner = make_user("ana")
    ChatIdentity.objects.create(platform="teams", external_id=ana["id"], name="Ana Lima", user=owner,
                                tenant_id=teams.tenant_id, service_url=teams.service_url)
    room = make_discussion(owner)
    room.name = "Roles for the launch"
    room.save(update_fields=["name"])
    attachment = {"kind": "run_minutes", "roomId": room.pk, "filename": "minutes-roles.docx"}
    (delivery,) = committed(queue_direct, "user:ana", "Done: every role has one name.", room=room, attachment=attachment)
    run_tasks()
    (conversation,) = teams.conversations
    return {"delivery": delivery, "room": room, "conversation": conversation["id"]}


def _personal(teams, conversation_id):
    return teams.conversation(conversation_id, "personal")


def _offer(teams, conversation_id) -> dict:
    (card,) = [a for m in teams.sent_to(conversation_id) for a in m["activity"].get("attachments") or []
               if a["contentType"] == FILE_CONSENT_TYPE]
    return card


def test_the_minutes_are_offered_after_the_text(teams, report):
    sent = teams.sent_to(report["conversation"])
    assert [m["activity"].get("text") for m in sent][0] == "Done: every role has one name."
    card = _offer(teams, report["conversation"])
    assert card["name"] == "minutes-roles.docx"
    content = card["content"]
    assert content["acceptContext"] == content["declineContext"] == {"delivery": report["delivery"].pk}
    assert content["sizeInBytes"] > 1000 and "minutes" in content["description"]
    delivery = Delivery.objects.get(pk=report["delivery"].pk)
    assert delivery.status == "sent" and delivery.parts_sent == 2


def test_accepting_uploads_the_minutes_once_and_shows_the_file(teams, post_teams, run_tasks, report, ana):
    conv = _personal(teams, report["conversation"])
    invoke = teams.file_consent(conv, ana, _offer(teams, report["conversation"])["content"]["acceptContext"])
    assert post_teams(invoke).status_code == 200
    run_tasks()
    (upload,) = teams.uploads
    doc = Document(io.BytesIO(upload["data"]))
    assert any("Roles for the launch" in p.text for p in doc.paragraphs)
    info = invoke["value"]["uploadInfo"]
    (shown,) = [a for m in teams.sent_to(report["conversation"]) for a in m["activity"].get("attachments") or []
                if a["contentType"] == FILE_INFO_TYPE]
    assert shown["contentUrl"] == info["contentUrl"] and shown["name"] == info["name"]
    assert shown["content"] == {"uniqueId": info["uniqueId"], "fileType": "docx"}
    # Teams may deliver the same answer again, or the person may click twice: nothing more is uploaded.
    again = teams.file_consent(conv, ana, {"delivery": report["delivery"].pk})
    post_teams(again)
    run_tasks()
    assert len(teams.uploads) == 1
    uploads = Delivery.objects.filter(attachment__offer=report["delivery"].pk)
    assert uploads.count() == 1 and uploads.get().status == "sent"
    answers = Invocation.objects.filter(component="bridge.file_offer_answered").order_by("pk")
    assert [a.input.get("refused") for a in answers] == [None, "answered already"]


def test_declining_uploads_nothing(teams, post_teams, run_tasks, report, ana):
    conv = _personal(teams, report["conversation"])
    post_teams(teams.file_consent(conv, ana, {"delivery": report["delivery"].pk}, accept=False))
    run_tasks()
    assert teams.uploads == [] and not Delivery.objects.filter(attachment__offer=report["delivery"].pk).exists()
    answer = Invocation.objects.get(component="bridge.file_offer_answered")
    assert answer.input["accepted"] is False


@pytest.mark.parametrize("who", ["someone else", "unknown offer"])
def test_nobody_else_can_take_the_file(teams, post_teams, run_tasks, report, who):
    mallory = teams.account(9, "Mallory")
    conv = _personal(teams, "a:mallory-personal")
    context = {"delivery": report["delivery"].pk if who == "someone else" else 987654}
    post_teams(teams.file_consent(conv, mallory, context))
    run_tasks()
    assert teams.uploads == [] and not Delivery.objects.filter(attachment__has_key="upload").exists()
    answer = Invocation.objects.get(component="bridge.file_offer_answered")
    assert answer.input["refused"] == ("offered to someone else" if who == "someone else" else "unknown offer")


def test_a_failing_upload_session_is_retried_then_reported(teams, post_teams, run_tasks, report, ana, settings):
    settings.BRIDGES = {**settings.BRIDGES, "MAX_ATTEMPTS": 2}
    teams.upload_faults.extend([503, 410])
    conv = _personal(teams, report["conversation"])
    post_teams(teams.file_consent(conv, ana, {"delivery": report["delivery"].pk}))
    run_tasks()
    upload = Delivery.objects.get(attachment__offer=report["delivery"].pk)
    assert upload.status == "undeliverable" and "OneDrive" in upload.diagnostic and "410" in upload.diagnostic
    assert teams.uploads == []
    assert not [a for m in teams.sent_to(report["conversation"]) for a in m["activity"].get("attachments") or []
                if a["contentType"] == FILE_INFO_TYPE]


def test_an_upload_address_that_is_not_a_session_is_refused(teams, post_teams, run_tasks, report, ana):
    conv = _personal(teams, report["conversation"])
    invoke = teams.file_consent(conv, ana, {"delivery": report["delivery"].pk})
    invoke["value"]["uploadInfo"]["uploadUrl"] = "http://169.254.169.254/latest/meta-data"
    post_teams(invoke)
    run_tasks()
    upload = Delivery.objects.get(attachment__offer=report["delivery"].pk)
    assert upload.status == "undeliverable" and "https upload session" in upload.diagnostic
    assert teams.uploads == []


def test_declining_is_answered_once_with_where_the_minutes_can_still_be_downloaded(teams, post_teams, run_tasks, report,
                                                                                   ana, settings):
    from facilitation.goals.voice import page_url

    settings.CONVENE = {**settings.CONVENE, "PUBLIC_URL": "https://convene.example.org"}
    conv = _personal(teams, report["conversation"])
    before = len(teams.sent_to(report["conversation"]))
    decline = teams.file_consent(conv, ana, {"delivery": report["delivery"].pk}, accept=False)
    post_teams(decline)
    run_tasks()
    post_teams(teams.file_consent(conv, ana, {"delivery": report["delivery"].pk}, accept=False))  # clicked again
    run_tasks()
    answers = [m["activity"]["text"] for m in teams.sent_to(report["conversation"])[before:]]
    url = page_url(report["room"])
    assert url.startswith("https://convene.example.org/")
    assert answers == ["The minutes (minutes-roles.docx) were not sent, as you declined the file. They can still be "
                       f"downloaded from the discussion's page: {url}"]
    # A declined offer is answered: accepting it afterwards uploads nothing.
    post_teams(teams.file_consent(conv, ana, {"delivery": report["delivery"].pk}))
    run_tasks()
    assert teams.uploads == [] and len(teams.sent_to(report["conversation"])) == before + 1
    refused = [a.input.get("refused") for a in Invocation.objects.filter(component="bridge.file_offer_answered").order_by("pk")]
    assert refused == [None, "answered already", "answered already"]
