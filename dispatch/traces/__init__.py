"""The PostHog trace mirror: Pi's runs as LLM-analytics traces, content-free.

``observer()`` gives one ``TraceObserver`` per Pi invocation; see docs/traces.md.
"""

from dispatch.traces.observer import TraceObserver, observer

__all__ = ["TraceObserver", "observer"]
