"""Content negotiation that never answers 406: the API speaks JSON.

``?format=`` is a filter (discussions) and a file type (exports) here, not a
renderer choice, so an unknown value falls back to the first renderer.
"""
from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class JSONFirstNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (NotAcceptable, Http404):
            return renderers[0], renderers[0].media_type
