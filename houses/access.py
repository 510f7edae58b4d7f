"""The one place that decides who may see and do what.

Every view, consumer and proxy resolves houses, threads and entries through
these helpers. A caller who is not a member gets ``Http404``: nothing tells
them the object exists.
"""

from django.http import Http404

from houses.models import House, Membership


def access_house(user, slug: str) -> tuple[House, Membership]:
    """The house ``slug`` and the caller's membership of it, or 404."""
    if not user.is_authenticated:
        raise Http404
    membership = (
        Membership.objects.select_related("house").filter(house__slug=slug, user=user).first()
    )
    if membership is None:
        raise Http404
    return membership.house, membership


def houses_of(user):
    """Houses the caller is a member of."""
    if not user.is_authenticated:
        return House.objects.none()
    return House.objects.filter(memberships__user=user).order_by("name")
