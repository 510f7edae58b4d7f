from django.urls import path
from django.views.generic import RedirectView

from houses import account, api, email_pages, house_settings, joining, views

urlpatterns = [
    path("", views.home, name="home"),
    path("account/", account.account_page, name="account"),
    path("account/email/", email_pages.set_email, name="account-email"),
    path("account/email/resend", email_pages.resend, name="account-email-resend"),
    path("account/email/cancel", email_pages.cancel, name="account-email-cancel"),
    path("account/email/remove", email_pages.remove, name="account-email-remove"),
    path("email/confirm/<str:token>", email_pages.confirm, name="email-confirm"),
    path("account/password/", account.PasswordChange.as_view(), name="account-password"),
    path("account/tokens/", views.tokens_page, name="tokens"),
    path("tokens/", RedirectView.as_view(pattern_name="tokens"), name="tokens-moved"),
    path("tokens/new", views.new_token, name="new-token"),
    path("tokens/<int:pk>/revoke", views.revoke_token_form, name="revoke-token"),
    path("houses/new", house_settings.new_house, name="new-house"),
    path("houses/<slug:slug>/", views.house_page, name="house"),
    path("houses/<slug:slug>/settings/", house_settings.settings_page, name="house-settings"),
    path("houses/<slug:slug>/rename", house_settings.rename_form, name="house-rename"),
    path("houses/<slug:slug>/hand-over", house_settings.hand_over_form, name="house-hand-over"),
    path("houses/<slug:slug>/leave", house_settings.leave_form, name="house-leave"),
    path("houses/<slug:slug>/threads/new", views.new_thread, name="new-thread"),
    path("houses/<slug:slug>/more", views.more_threads, name="more-threads"),
    path("houses/<slug:slug>/sidebar", views.sidebar_more, name="sidebar-more"),
    path("houses/<slug:slug>/members/", views.members_page, name="members"),
    path("houses/<slug:slug>/members/add", views.add_member_form, name="add-member"),
    path(
        "houses/<slug:slug>/members/<int:pk>/remove", views.remove_member_form, name="remove-member"
    ),
    path("houses/<slug:slug>/bots/add", views.add_bot_form, name="add-bot"),
    path("houses/<slug:slug>/bots/demo", views.add_demo_bot_form, name="add-demo-bot"),
    path("houses/<slug:slug>/bots/<str:handle>/retire", views.retire_bot_form, name="retire-bot"),
    path(
        "houses/<slug:slug>/bots/<str:handle>/involvement",
        views.bot_involvement_form,
        name="bot-involvement",
    ),
    path("houses/<slug:slug>/bots/<str:handle>/check", views.check_bot_form, name="check-bot"),
    # Invite links (houses.joining)
    path("join/<str:token>", joining.join, name="join"),
    path("houses/<slug:slug>/invites/new", joining.new_invite, name="new-invite"),
    path(
        "houses/<slug:slug>/invites/<int:pk>/revoke",
        joining.revoke_invite_form,
        name="revoke-invite",
    ),
    path("api/houses", api.houses, name="api-houses"),
    path("api/houses/<slug:slug>", api.house, name="api-house"),
    path("api/houses/<slug:slug>/members", api.members, name="api-members"),
    path("api/houses/<slug:slug>/members/<str:username>", api.member, name="api-member"),
    path("api/houses/<slug:slug>/bots", api.bots, name="api-bots"),
    path("api/houses/<slug:slug>/bots/<str:handle>", api.bot, name="api-bot"),
    path("api/houses/<slug:slug>/bots/<str:handle>/check", api.check_bot, name="api-bot-check"),
]
