"""The embedded Durable Streams server: a raw ASGI app over the Django database.

``create_app()`` returns the ASGI3 callable; ``arbe_site.asgi`` mounts it at
``/v1/stream/`` and ``manage.py serve_streams`` runs it alone.
"""


def create_app(*args, **kwargs):
    from streams.server.app import create_app

    return create_app(*args, **kwargs)
