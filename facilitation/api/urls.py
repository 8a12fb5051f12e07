"""Routes under /api/ (no trailing slashes), as listed in the public contract."""
from django.urls import path

from facilitation.api.views import catalog, discussions, docs, members, transcript
from facilitation.api.views.lifecycle import ACTIONS, lifecycle_view

urlpatterns = [
    path("discussions", discussions.DiscussionListView.as_view(), name="api-discussions"),
    path("discussions/<int:id>", discussions.DiscussionDetailView.as_view(), name="api-discussion"),
    path("discussions/<int:id>/moderator", discussions.ModeratorView.as_view(), name="api-discussion-moderator"),
    *[path(f"discussions/<int:id>/{verb}", lifecycle_view(verb).as_view(), name=f"api-discussion-{verb}") for verb in ACTIONS],
    path("discussions/<int:id>/turns", transcript.TurnsView.as_view(), name="api-discussion-turns"),
    path("discussions/<int:id>/export", transcript.ExportView.as_view(), name="api-discussion-export"),
    path("discussions/<int:id>/members", members.MembersView.as_view(), name="api-discussion-members"),
    path("discussions/<int:id>/members/<str:username>", members.MemberView.as_view(), name="api-discussion-member"),
    path("agents", catalog.AgentListView.as_view(), name="api-agents"),
    path("agents/<int:id>", catalog.AgentDetailView.as_view(), name="api-agent"),
    path("personas", catalog.PersonaListView.as_view(), name="api-personas"),
    path("personas/<int:id>", catalog.PersonaDetailView.as_view(), name="api-persona"),
    path("roles", catalog.RoleListView.as_view(), name="api-roles"),
    path("roles/<int:id>", catalog.RoleDetailView.as_view(), name="api-role"),
    path("schema", docs.SchemaView.as_view(), name="api-schema"),
    path("docs", docs.DocsView.as_view(), name="api-docs"),
    path("redoc", docs.RedocView.as_view(), name="api-redoc"),
    path("docs/assets/<path:path>", docs.docs_asset, name="api-docs-asset"),
]
