"""The search index: one ``SearchDoc`` per chat entry people can still see.

A cache of the logs, like ``threads.EntryLocation``: written at the append seam
(``search.index``), deleted by a tombstone, rebuilt by ``manage.py reindex_search``.
``id`` grows in append order, so it is the newest-first cursor. On PostgreSQL ``sv``
holds the stored ``tsvector`` (GIN-indexed); on SQLite the text lives in the FTS5
table ``search_fts`` whose rowid is ``SearchDoc.id``. Both are made by the migration.
"""

from django.contrib.postgres.search import SearchVectorField
from django.db import models

# The FTS5 table beside ``search_doc`` on SQLite (created in migration 0001).
FTS_TABLE = "search_fts"


class SearchDoc(models.Model):
    entry_id = models.CharField(max_length=128)
    # No index of its own: the unique (thread, entry_id) constraint's index leads with it.
    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    house = models.ForeignKey("houses.House", on_delete=models.CASCADE, related_name="+")
    author_id = models.CharField(max_length=32, blank=True)
    ts = models.BigIntegerField()
    body = models.TextField()
    # PostgreSQL only: to_tsvector(SEARCH_LANGUAGE, body). NULL on SQLite.
    sv = SearchVectorField(null=True)

    class Meta:
        db_table = "search_doc"
        constraints = [
            models.UniqueConstraint(fields=["thread", "entry_id"], name="one_search_doc_per_entry")
        ]
        indexes = [models.Index(fields=["author_id"], name="search_doc_author")]

    def __str__(self):
        return f"{self.entry_id} in {self.thread_id}"
