from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from houses.access import access_house, houses_of


@login_required
def home(request):
    return render(request, "houses/home.html", {"houses": houses_of(request.user)})


@login_required
def house_page(request, slug):
    access = access_house(request.user, slug)
    house, membership = access.house, access.membership
    threads = house.threads.filter(archived_at__isnull=True).order_by(
        "-last_entry_ts", "-created_at"
    )
    return render(
        request,
        "houses/house.html",
        {"house": house, "membership": membership, "threads": threads},
    )
