from django.contrib.auth import views as auth_views
from django.urls import path

from frontend import account, views
from frontend.forms import SignInForm

app_name = "frontend"

urlpatterns = [
    path("", views.discussion_list, name="discussions"),
    path("login/", views.SignInView.as_view(authentication_form=SignInForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("discussions/new/", views.discussion_new, name="discussion-new"),
    path("facilitation/new/", views.run_new, name="run-new"),
    path("discussions/<int:discussion_id>/", views.discussion_room, name="discussion"),
    path("workspaces/<int:discussion_id>/", views.workspace_desk, name="workspace"),
    path("facilitators/", views.facilitators, name="facilitators"),
    path("agents/", views.agents, name="agents"),
    path("account/tokens/", account.tokens, name="tokens"),
    path("account/chats/", account.chats, name="chats"),
    path("favicon.ico", views.favicon),
]
