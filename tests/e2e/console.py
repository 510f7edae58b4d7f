"""A page's console errors and uncaught exceptions, collected to fail the test that saw them."""


def watch_console(page, errors: list[str]) -> None:
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
