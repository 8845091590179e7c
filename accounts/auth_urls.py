"""Sign-in routes under their conventional, un-namespaced names (``login``,
``logout``, ``password_change``) as settings.LOGIN_URL and Django expect."""

from django.contrib.auth import views as auth_views
from django.urls import path

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    # Django's LogoutView accepts POST only, so a link or a prefetch cannot sign anyone out.
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
]
