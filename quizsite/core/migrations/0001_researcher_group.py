"""The `researcher` group (quizsite.core.roles), so an administrator can add accounts to it in the admin."""

from django.db import migrations

RESEARCHER_GROUP = "researcher"  # a copy: migrations do not import app code that may change


def add_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name=RESEARCHER_GROUP)


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(add_group, migrations.RunPython.noop)]
