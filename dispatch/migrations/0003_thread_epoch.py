from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("dispatch", "0002_thread_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="threadlease",
            name="epoch",
            field=models.BigIntegerField(default=0),
        ),
        migrations.CreateModel(
            name="ThreadEpoch",
            fields=[
                ("thread_id", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("epoch", models.BigIntegerField(default=0)),
            ],
        ),
    ]
