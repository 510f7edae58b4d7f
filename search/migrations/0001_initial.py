import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models


def create_text_index(apps, schema_editor):
    """The full-text index each database has: a GIN index on the stored tsvector (PostgreSQL;
    fastupdate off, so a query never scans a pending list) or an FTS5 table (SQLite)."""
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX search_doc_sv ON search_doc USING gin (sv) WITH (fastupdate = off)"
        )
    elif vendor == "sqlite":
        schema_editor.execute(
            "CREATE VIRTUAL TABLE search_fts USING fts5("
            "body, tokenize = 'unicode61 remove_diacritics 0')"
        )


def drop_text_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS search_doc_sv")
    elif vendor == "sqlite":
        schema_editor.execute("DROP TABLE IF EXISTS search_fts")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("houses", "0001_initial"),
        ("threads", "0003_entry_location_deleted_by"),
    ]

    operations = [
        migrations.CreateModel(
            name="SearchDoc",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("entry_id", models.CharField(max_length=128)),
                ("author_id", models.CharField(blank=True, max_length=32)),
                ("ts", models.BigIntegerField()),
                ("body", models.TextField()),
                ("sv", django.contrib.postgres.search.SearchVectorField(null=True)),
                ("house", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="houses.house")),
                ("thread", models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="threads.thread")),
            ],
            options={
                "db_table": "search_doc",
                "indexes": [models.Index(fields=["author_id"], name="search_doc_author")],
                "constraints": [models.UniqueConstraint(fields=("thread", "entry_id"), name="one_search_doc_per_entry")],
            },
        ),
        migrations.RunPython(create_text_index, drop_text_index),
    ]
