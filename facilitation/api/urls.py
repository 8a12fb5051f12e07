"""Routes under /api/ (no trailing slashes), as listed in the public contract."""
from django.urls import path
from django.views.generic import RedirectView

from facilitation.actions.lifecycle import TRANSITIONS
from facilitation.api.views import (
    catalog, chat, deliberation, discussion_files, discussions, docs, members, tokens, transcript,
    workspace, workspace_manage, workspace_tasks,
)
from facilitation.api.views import goals as goal_views
from facilitation.api.views.lifecycle import lifecycle_view

urlpatterns = [
    path("discussions", discussions.DiscussionListView.as_view(), name="api-discussions"),
    path("discussions/import", discussion_files.ImportView.as_view(), name="api-discussions-import"),
    path("discussions/<int:id>", discussions.DiscussionDetailView.as_view(), name="api-discussion"),
    path("discussions/<int:id>/copy", discussions.CopyView.as_view(), name="api-discussion-copy"),
    path("discussions/<int:id>/moderator", discussions.ModeratorView.as_view(), name="api-discussion-moderator"),
    *[path(f"discussions/<int:id>/{verb}", lifecycle_view(verb).as_view(), name=f"api-discussion-{verb}") for verb in TRANSITIONS],
    path("discussions/<int:id>/votes", deliberation.VotesView.as_view(), name="api-discussion-votes"),
    path("discussions/<int:id>/advance", deliberation.AdvanceView.as_view(), name="api-discussion-advance"),
    path("discussions/<int:id>/turns", transcript.TurnsView.as_view(), name="api-discussion-turns"),
    path("discussions/<int:id>/export", transcript.ExportView.as_view(), name="api-discussion-export"),
    path("discussions/<int:id>/members", members.MembersView.as_view(), name="api-discussion-members"),
    path("discussions/<int:id>/members/<str:username>", members.MemberView.as_view(), name="api-discussion-member"),
    path("discussions/<int:id>/comments", chat.CommentsView.as_view(), name="api-discussion-comments"),
    path("discussions/<int:id>/deliveries", chat.DeliveriesView.as_view(), name="api-discussion-deliveries"),
    path("discussions/<int:id>/links", chat.LinksView.as_view(), name="api-discussion-links"),
    path("discussions/<int:id>/links/<int:link_id>", chat.LinkView.as_view(), name="api-discussion-link"),
    path("me/chat-identities", chat.ChatIdentitiesView.as_view(), name="api-chat-identities"),
    path("me/chat-identities/<int:id>", chat.ChatIdentityView.as_view(), name="api-chat-identity"),
    path("discussions/<int:id>/artifact", goal_views.ArtifactView.as_view(), name="api-discussion-artifact"),
    path("ephemeral-runs", goal_views.EphemeralRunsView.as_view(), name="api-ephemeral-runs"),
    path("me/facilitation-runs", goal_views.MyRunsView.as_view(), name="api-my-runs"),
    # workspace rooms
    path("discussions/<int:id>/observations", workspace.ObservationsView.as_view(), name="api-ws-observations"),
    path("discussions/<int:id>/rounds", workspace.RoundsView.as_view(), name="api-ws-rounds"),
    path("discussions/<int:id>/rounds/end", workspace.RoundEndView.as_view(), name="api-ws-round-end"),
    path("discussions/<int:id>/narratives", workspace.NarrativesView.as_view(), name="api-ws-narratives"),
    path("discussions/<int:id>/narratives/<int:nid>", workspace.NarrativeView.as_view(), name="api-ws-narrative"),
    path("discussions/<int:id>/tasks", workspace_tasks.TasksView.as_view(), name="api-ws-tasks"),
    path("discussions/<int:id>/tasks/<int:tid>", workspace_tasks.TaskView.as_view(), name="api-ws-task"),
    *[path(f"discussions/<int:id>/tasks/<int:tid>/{verb}", workspace_tasks.task_step_view(verb).as_view(),
           name=f"api-ws-task-{verb}") for verb in ("claim", "start", "complete")],
    path("discussions/<int:id>/participants/<int:seat_id>", workspace_manage.ParticipantView.as_view(),
         name="api-ws-participant"),
    path("discussions/<int:id>/adaptations", workspace_manage.AdaptationsView.as_view(), name="api-ws-adaptations"),
    path("discussions/<int:id>/adaptations/<int:aid>", workspace_manage.AdaptationView.as_view(), name="api-ws-adaptation"),
    path("discussions/<int:id>/search", workspace_manage.SearchView.as_view(), name="api-ws-search"),
    path("discussions/<int:id>/invocations", workspace_manage.InvocationsView.as_view(), name="api-ws-invocations"),
    path("discussions/<int:id>/complete", workspace_manage.CompleteView.as_view(), name="api-ws-complete"),
    path("discussions/<int:id>/archive", workspace_manage.ArchiveView.as_view(), name="api-ws-archive"),
    path("agents", catalog.AgentListView.as_view(), name="api-agents"),
    path("agents/<int:id>", catalog.AgentDetailView.as_view(), name="api-agent"),
    path("personas", catalog.PersonaListView.as_view(), name="api-personas"),
    path("personas/<int:id>", catalog.PersonaDetailView.as_view(), name="api-persona"),
    path("roles", catalog.RoleListView.as_view(), name="api-roles"),
    path("roles/<int:id>", catalog.RoleDetailView.as_view(), name="api-role"),
    path("me/tokens", tokens.TokenListView.as_view(), name="api-tokens"),
    path("me/tokens/<int:id>", tokens.TokenDetailView.as_view(), name="api-token"),
    path("schema", docs.SchemaView.as_view(), name="api-schema"),
    path("docs", docs.DocsView.as_view(), name="api-docs"),
    path("redoc", docs.RedocView.as_view(), name="api-redoc"),
    # The documentation pages are read in a browser, where a trailing slash is easily typed: it leads to the page.
    *[path(f"{page}/", RedirectView.as_view(pattern_name=f"api-{page}", permanent=True, query_string=True))
      for page in ("docs", "redoc")],
    path("docs/assets/<path:path>", docs.docs_asset, name="api-docs-asset"),
]
