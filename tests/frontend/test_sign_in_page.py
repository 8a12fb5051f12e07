"""The sign-in page tells a demo user where the password is, and only under the demo."""


def test_the_demo_tell_shows_only_when_a_demo_account_is_set(client, settings, db):
    settings.CONVENE_DEMO_ACCOUNT = ""
    page = client.get("/login/").content.decode()
    assert "printed in the terminal" not in page
    settings.CONVENE_DEMO_ACCOUNT = "demo"
    page = client.get("/login/").content.decode()
    assert 'id="demo-tell"' in page and "<strong>demo</strong>" in page and "make demo" in page
