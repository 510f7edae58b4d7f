"""Django's share of the request context (``ops.context``): the route, house and thread a
view is about to serve, and, once it answered, the user it served, when the view looked.
The route is the URL's name, resolved before any middleware's ``process_view``.

No query of its own: the user is read only if the request already loaded it."""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.utils.functional import empty

from ops import context


class RequestContext:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
            self.process_view = self._process_view_async
        else:
            self.process_view = self._process_view

    def __call__(self, request):
        if self.is_async:
            return self._call_async(request)
        response = self.get_response(request)
        _after(request)
        return response

    async def _call_async(self, request):
        response = await self.get_response(request)
        _after(request)
        return response

    def _process_view(self, request, view_func, view_args, view_kwargs):
        _bind_route(request)

    async def _process_view_async(self, request, view_func, view_args, view_kwargs):
        self._process_view(request, view_func, view_args, view_kwargs)


def _bind_route(request) -> None:
    match = getattr(request, "resolver_match", None)
    if match is not None:
        context.bind(
            route=match.view_name,
            house=str(match.kwargs.get("slug") or ""),
            thread=str(match.kwargs.get("thread_id") or ""),
        )


def _after(request) -> None:
    """Once answered: the route again (a middleware before this one, CSRF for one, may have
    answered before any view was called), and the user."""
    _bind_route(request)
    _bind_user(request)


def _bind_user(request) -> None:
    """The user the view served: the API's principal, or a session user already loaded."""
    principal = getattr(request, "principal", None)
    user = getattr(principal, "user", None) if principal is not None else None
    if user is None:
        user = request.__dict__.get("_acached_user") or request.__dict__.get("_cached_user")
    if user is None:
        lazy = request.__dict__.get("user")
        wrapped = getattr(lazy, "_wrapped", empty) if lazy is not None else empty
        user = None if wrapped is empty else wrapped
    if user is not None and getattr(user, "is_authenticated", False):
        context.bind(user_id=user.pk)
