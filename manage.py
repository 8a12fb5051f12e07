#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.SECRET_KEY  # loads the settings: a configuration that cannot run says so in one line
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"Cannot start: {exc}\n")
        sys.exit(2)
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
