"""Template context shared by every page."""


def csp_nonce(request):
    """The response's CSP nonce as ``csp_nonce`` (django-htmx's script tags read that name).

    Lazy: a response that never renders it carries no nonce in its header.
    """
    return {"csp_nonce": getattr(request, "csp_nonce", "")}


def me_name(request):
    """The signed-in person's display name as ``me_name`` (the top bar's), read only when a
    page shows it; pages that already know it (house, thread) pass their own."""

    def display() -> str:
        from houses.models import Agent

        user = request.user
        if not user.is_authenticated:
            return ""
        name = Agent.objects.filter(user=user).values_list("display_name", flat=True).first()
        return name or user.get_username()

    return {"me_name": display}
