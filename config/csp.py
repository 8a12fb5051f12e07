"""Content-Security-Policy on every response (Django 5.2 has no built-in one).

The policy comes from ``settings.CONTENT_SECURITY_POLICY``; the API documentation pages
(``CONTENT_SECURITY_POLICY_DOCS_PATHS``) get ``CONTENT_SECURITY_POLICY_DOCS``. A response
that already carries a policy keeps it.
"""
from django.conf import settings

HEADER = "Content-Security-Policy"


def render(policy: dict) -> str:
    return "; ".join(f"{directive} {' '.join(sources)}".strip() for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if HEADER not in response:
            policy = settings.CONTENT_SECURITY_POLICY
            if request.path_info.startswith(tuple(getattr(settings, "CONTENT_SECURITY_POLICY_DOCS_PATHS", ()))):
                policy = settings.CONTENT_SECURITY_POLICY_DOCS
            response[HEADER] = render(policy)
        return response
