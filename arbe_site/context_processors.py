"""Template context shared by every page."""


def csp_nonce(request):
    """The response's CSP nonce as ``csp_nonce`` (django-htmx's script tags read that name).

    Lazy: a response that never renders it carries no nonce in its header.
    """
    return {"csp_nonce": getattr(request, "csp_nonce", "")}
