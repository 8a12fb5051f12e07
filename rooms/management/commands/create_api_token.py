"""python manage.py create_api_token USERNAME [--create-user] [--password P]

Prints the REST/Socket.IO token of a user: the existing one when there is one,
else a new one. With --create-user a missing user is created (with --password,
or without a usable password: token-only).
"""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Print an API token for USERNAME (creating the user with --create-user)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--create-user", action="store_true", help="Create the user when it does not exist.")
        parser.add_argument("--password", default=None, help="Password for a user created with --create-user.")

    def handle(self, *args, username: str, create_user: bool, password: str | None, **options):
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
            if user is None:
                if not create_user:
                    raise CommandError(f"No user named {username!r}. Pass --create-user to create it.")
                user = User.objects.create_user(**{User.USERNAME_FIELD: username}, password=password)
                self.stderr.write(f"Created user {username!r}.")
            elif password is not None:
                self.stderr.write("The user exists; --password is ignored.")
            token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
