from tests.integration.attachments.conftest import files_on_disk  # noqa: F401
