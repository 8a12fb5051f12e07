"""python manage.py create_api_token USERNAME [--create-user] [--password P] [--name N] [--days D]

Creates a REST/Socket.IO token for a user and prints it: the only time the key is shown
(only its digest is stored). With --create-user a missing user is created, with
--password (checked by the password validators) or without a usable password (token-only).
"""
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from config.bootstrap import ensure_schema
from rooms.actions.tokens import do_create_token
from rooms.errors import ValidationFailed


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (creating the user with --create-user)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--create-user", action="store_true", help="Create the user when it does not exist.")
        parser.add_argument("--password", default=None, help="Password for a user created with --create-user.")
        parser.add_argument("--name", default="command line", help="A label to recognise the token by.")
        parser.add_argument("--days", type=int, default=None, help="Days until the token expires (default 90, at most 365).")

    def handle(self, *args, username: str, create_user: bool, password: str | None, name: str, days: int | None, **options):
        ensure_schema(self.stderr)
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
            if user is None:
                if not create_user:
                    raise CommandError(f"No user named {username!r}. Pass --create-user to create it.")
                if password is not None:
                    try:
                        validate_password(password, User(**{User.USERNAME_FIELD: username}))
                    except ValidationError as exc:
                        raise CommandError("The password is too weak: " + " ".join(exc.messages)) from None
                user = User.objects.create_user(**{User.USERNAME_FIELD: username}, password=password)
                self.stderr.write(f"Created user {username!r}.")
            elif password is not None:
                self.stderr.write("The user exists; --password is ignored.")
            if not user.is_active:
                raise CommandError(f"The user {username!r} is deactivated; a token would not work.")
            try:
                token, key = do_create_token(user, name=name, days=days)
            except ValidationFailed as exc:
                raise CommandError(f"{exc.message} {' '.join(m for ms in exc.details.values() for m in ms)}") from None
        self.stderr.write(f"Token {token.prefix}… expires {token.expires_at:%Y-%m-%d}. It is shown only now.")
        self.stdout.write(key)
