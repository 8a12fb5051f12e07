"""The sign-in page tells a demo user where the password is (only under the demo), and everyone how people are added."""


def test_the_demo_tell_shows_only_when_a_demo_account_is_set(client, settings, db):
    settings.CONVENE_DEMO_ACCOUNT = ""
    page = client.get("/login/").content.decode()
    assert "printed in the terminal" not in page
    settings.CONVENE_DEMO_ACCOUNT = "demo"
    page = client.get("/login/").content.decode()
    assert 'id="demo-tell"' in page and "<strong>demo</strong>" in page and "make demo" in page


def test_the_sign_in_page_says_how_people_are_added(client, settings, db):
    for demo in ("", "demo"):
        settings.CONVENE_DEMO_ACCOUNT = demo
        page = client.get("/login/").content.decode()
        assert 'id="new-accounts"' in page
        assert "create_api_token USERNAME --create-user --password PASSWORD" in page


def test_the_readme_says_how_to_add_people():
    from pathlib import Path

    from django.conf import settings

    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    assert "create_api_token USERNAME --create-user --password" in readme and "Adding people" in readme
