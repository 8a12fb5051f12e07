from django.contrib.auth import views as auth_views
from django.urls import path

from frontend import views

app_name = "frontend"

urlpatterns = [
    path("", views.discussion_list, name="discussions"),
    path("login/", auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("discussions/new/", views.discussion_new, name="discussion-new"),
    path("discussions/<int:discussion_id>/", views.discussion_room, name="discussion"),
    path("facilitators/", views.facilitators, name="facilitators"),
    path("favicon.ico", views.favicon),
]
