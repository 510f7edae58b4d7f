"""What every app uses: ids, events to live pages, the API edge, loops, progress.

The site's wiring (settings, urls, ASGI, middleware) stays in ``arbe_site``, which imports
this package and is imported by none of the apps."""
