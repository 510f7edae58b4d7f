from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("houses", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="involvement",
            field=models.CharField(
                choices=[("mentions", "Mentions"), ("everything", "Everything")],
                default="mentions",
                max_length=16,
            ),
        ),
    ]
