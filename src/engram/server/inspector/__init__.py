"""The web inspector: server-rendered pages at ``/ui`` of ``engram serve``.

Signed in with an API key (sealed in an encrypted, HttpOnly, SameSite=Strict session
cookie and verified again on every request), a person sees and manages exactly what
that key's principal may: recall with score breakdowns, facts and their history, the
review queue, erasure and its audit, threads, documents and evaluation results.
"""

from engram.server.inspector._app import PREFIX, inspector_app, mount_inspector

__all__ = ["PREFIX", "inspector_app", "mount_inspector"]
