"""The researcher group gets the research permission (quizsite.core.roles), so the group is the role."""

from django.db import migrations

RESEARCHER_GROUP = "researcher"  # copies: migrations do not import app code that may change
CODENAME = "use_research"


def add_permission(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    content_type, _ = ContentType.objects.get_or_create(app_label="core", model="rolepermissions")
    permission, _ = Permission.objects.get_or_create(
        content_type=content_type,
        codename=CODENAME,
        defaults={"name": "Can use research pages, exports, campaigns and the API"},
    )
    group, _ = Group.objects.get_or_create(name=RESEARCHER_GROUP)
    group.permissions.add(permission)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_role_permissions"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(add_permission, migrations.RunPython.noop)]
