"""The table of the "limits" cache (settings.CACHES), where invite misses are counted, so
``migrate`` (and so ``make run``) is all a new install needs. Django's ``createcachetable``
makes the table of every database cache configured, and skips one that exists; with Redis
(REDIS_URL) there is none to make."""

from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("houses", "0005_houseinvite_token_prefix")]

    operations = [migrations.RunPython(create_cache_tables, migrations.RunPython.noop)]
